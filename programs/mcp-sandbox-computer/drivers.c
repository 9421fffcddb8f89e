/* drivers.c - the backends this program links, by --backend name. */
#include "drivers.h"

#include <string.h>

#include "docker_driver.h"
#include "e2b_driver.h"
#include "fly_driver.h"
#include "modal_driver.h"
#include "wasm_driver.h"

static int
docker_start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return dock_driver_start(cfg, url, (struct dock_driver **)hp);
}

static int
docker_start_tool(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return dock_driver_start_tool(cfg, url, (struct dock_driver **)hp);
}

static void
docker_stop(void *h)
{
	dock_driver_stop(h);
}

static int
docker_network(void *h, const char *id, const char *mode, char *msg,
    size_t msglen)
{
	return dock_driver_network(h, id, mode, msg, msglen);
}

static int
fly_start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return fly_driver_start(cfg, url, (struct fly_driver **)hp);
}

static void
fly_stop(void *h)
{
	fly_driver_stop(h);
}

static int
e2b_start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return e2b_driver_start(cfg, url, (struct e2b_driver **)hp);
}

static void
e2b_stop(void *h)
{
	e2b_driver_stop(h);
}

static int
modal_start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return modal_driver_start(cfg, url, (struct modal_driver **)hp);
}

static void
modal_stop(void *h)
{
	modal_driver_stop(h);
}

static int
wasm_start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return wasm_driver_start(cfg, url, (struct wasm_driver **)hp);
}

static void
wasm_stop(void *h)
{
	wasm_driver_stop(h);
}

static const struct driver_ops drivers[] = {
	{ "docker", docker_start, docker_start_tool, docker_stop,
	    docker_network, dock_driver_network_log },
	{ "fly", fly_start, NULL, fly_stop, NULL, NULL },
	{ "e2b", e2b_start, NULL, e2b_stop, NULL, NULL },
	{ "modal", modal_start, NULL, modal_stop, NULL, NULL },
	{ "go_busybox", wasm_start, NULL, wasm_stop, NULL, NULL },
	{ "wasm", wasm_start, NULL, wasm_stop, NULL, NULL },
};

const struct driver_ops *
drivers_find(const struct msc_cfg *cfg)
{
	for (size_t i = 0; i < sizeof(drivers) / sizeof(*drivers); i++)
		if (strcmp(cfg->backend, drivers[i].backend) == 0)
			return &drivers[i];
	msc_cfg_error("the %s backend is not available in this build; "
		      "use --backend docker, fly, e2b, modal, go_busybox "
		      "or wasm", cfg->backend);
	return NULL;
}
