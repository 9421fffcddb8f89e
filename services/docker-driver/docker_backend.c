/*
 * docker_backend.c - the docker backend's rows: what the composition
 * root (programs/mcp-sandbox-computer/drivers.c) and msc-docker-driver
 * list. Above both its options (docker_cfg.c) and its driver
 * (docker_driver.c), so neither calls back up.
 */
#include "docker_cfg.h"
#include "docker_driver.h"

static int
start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return dock_driver_start(cfg, url, (struct dock_driver **)hp);
}

static void
stop(void *h)
{
	dock_driver_stop(h);
}

/* Docker runs the allowlist proxy: every network flag is its own. */
const struct msc_backend dock_backend = { "docker", &dock_cfg_table, NULL,
	start, stop,
	MSC_BACKEND_HELPER | MSC_BACKEND_FILES | MSC_BACKEND_SNAPSHOTS, NULL };

static const struct msc_backend *const backends[] = { &dock_backend };

const struct msc_program dock_program = { "msc-docker-driver", "The driver "
	"of one Docker or Podman engine.", MSC_PROG_DRIVER, backends, 1 };
