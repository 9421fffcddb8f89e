/*
 * main.c - msc-cloud-driver: the cloud drivers (E2B, Modal) as their own
 * process: --backend modal serves Modal, anything else E2B.
 */
#include <string.h>

#include "e2b_driver.h"
#include "modal_driver.h"
#include "msc_log.h"
#include "msc_main.h"

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	struct e2b_driver *e2b = NULL;
	struct modal_driver *modal = NULL;
	int status, rv;

	msc_log_init("msc-cloud-driver");
	if ((status = msc_main_config(&cfg, MSC_PROG_CLOUD_DRIVER, argc, argv)) >= 0)
		goto out;
	status = 1;
	if (cfg.listen == NULL) {
		msc_cfg_error("msc-cloud-driver needs --listen");
		goto out;
	}
	msc_main_block_signals();
	if (strcmp(cfg.backend, "modal") == 0)
		rv = modal_driver_start(&cfg, cfg.listen, &modal);
	else
		rv = e2b_driver_start(&cfg, cfg.listen, &e2b);
	if (rv != 0)
		goto out;
	msc_log_info("serving %s on %s", cfg.backend, cfg.listen);
	msc_main_wait_signal();
	modal_driver_stop(modal);
	e2b_driver_stop(e2b);
	status = 0;
out:
	msc_cfg_fini(&cfg);
	return status;
}
