/*
 * drivers.c - the backends this program links: one line each in
 * `backends` (the row itself, {name, options, validate, start, stop},
 * is the backend's own: services/NAME-driver/NAME_backend.c).
 */
#include "drivers.h"

#include "cloud_cfg.h"
#include "docker_cfg.h"
#include "docker_driver.h"
#include "e2b_cfg.h"
#include "fly_cfg.h"
#include "modal_cfg.h"
#include "wasm_cfg.h"

#define N(a) (sizeof(a) / sizeof(*(a)))

/* The first is --backend's default. */
static const struct msc_backend *const backends[] = {
	&dock_backend,
	&fly_backend,
	&e2b_backend,
	&modal_backend,
	&busybox_backend,
	&wasm_backend,
};

const struct msc_program drivers_program = { "mcp-sandbox-computer", NULL,
	MSC_PROG_ALL, backends, N(backends) };

const struct msc_program *const drivers_split[] = { &msc_prog_edge,
	&msc_prog_session, &msc_prog_inventory, &dock_program, &fly_program,
	&cloud_program, &wasm_program };
const size_t drivers_nsplit = N(drivers_split);

static int
docker_start_tool(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return dock_driver_start_tool(cfg, url, (struct dock_driver **)hp);
}

static int
docker_network(void *h, const char *id, const char *mode, char *msg,
    size_t msglen)
{
	return dock_driver_network(h, id, mode, msg, msglen);
}

/* The backends with operator commands of their own. */
static const struct driver_ops tools[] = {
	{ &dock_backend, docker_start_tool, docker_network,
	    dock_driver_network_log },
};

const struct driver_ops *
drivers_find(const struct msc_cfg *cfg)
{
	static struct driver_ops plain[N(backends)];

	for (size_t i = 0; i < N(tools); i++)
		if (tools[i].backend == cfg->chosen)
			return &tools[i];
	for (size_t i = 0; i < N(backends); i++)
		if (backends[i] == cfg->chosen) {
			plain[i].backend = backends[i];
			return &plain[i];
		}
	return NULL;
}
