/*
 * fly_backend.c - the fly backend's rows: what the composition root and
 * msc-fly-driver list. Above both its options (fly_cfg.c) and its driver
 * (fly_driver.c), so neither calls back up.
 */
#include "fly_cfg.h"
#include "fly_driver.h"

static int
start(const struct msc_cfg *cfg, const char *url, void **hp)
{
	return fly_driver_start(cfg, url, (struct fly_driver **)hp);
}

static void
stop(void *h)
{
	fly_driver_stop(h);
}

const struct msc_backend fly_backend = { "fly", &fly_cfg_table,
	fly_cfg_validate, start, stop, MSC_BACKEND_FILES, fly_preview_refusal };

static const struct msc_backend *const backends[] = { &fly_backend };

const struct msc_program fly_program = { "msc-fly-driver", "The driver of "
	"Fly Machines.", MSC_PROG_DRIVER, backends, 1 };
