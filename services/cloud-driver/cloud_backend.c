/*
 * cloud_backend.c - the cloud backends' rows (e2b, modal) and
 * msc-cloud-driver's, which serves either: what the composition root and
 * that program list. Above both their options (cloud_cfg.c, e2b_cfg.c,
 * modal_cfg.c) and their drivers (e2b_driver.c, modal_driver.c), so
 * neither calls back up.
 */
#include "cloud_cfg.h"
#include "e2b_cfg.h"
#include "e2b_driver.h"
#include "modal_cfg.h"
#include "modal_driver.h"

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

const struct msc_backend e2b_backend = { "e2b", &e2b_cfg_table,
	cloud_cfg_validate, e2b_start, e2b_stop,
	MSC_BACKEND_HELPER | MSC_BACKEND_FILES | MSC_BACKEND_SNAPSHOTS, NULL };

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

const struct msc_backend modal_backend = { "modal", &modal_cfg_table,
	cloud_cfg_validate, modal_start, modal_stop,
	MSC_BACKEND_HELPER | MSC_BACKEND_FILES | MSC_BACKEND_SNAPSHOTS, NULL };

static const struct msc_backend *const backends[] = { &e2b_backend,
	&modal_backend };

const struct msc_program cloud_program = { "msc-cloud-driver", "The driver "
	"of E2B or Modal sandboxes (--backend e2b or modal).", MSC_PROG_DRIVER,
	backends, 2 };
