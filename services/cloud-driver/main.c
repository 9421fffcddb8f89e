/*
 * main.c - msc-cloud-driver: the cloud drivers (E2B, Modal) as their own
 * process, the one --backend names (e2b by default; any other refused).
 */
#include "cloud_cfg.h"
#include "msc_backend.h"
#include "msc_log.h"
#include "msc_main.h"

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	void *driver = NULL;
	int status;

	msc_log_init("msc-cloud-driver");
	if ((status = msc_main_config(&cfg, &cloud_program, argc, argv)) >= 0)
		goto out;
	status = 1;
	if (cfg.listen == NULL) {
		msc_cfg_error("msc-cloud-driver needs --listen");
		goto out;
	}
	msc_main_block_signals();
	if (cfg.chosen->start(&cfg, cfg.listen, &driver) != 0)
		goto out;
	msc_log_info("serving %s on %s", cfg.backend, cfg.listen);
	msc_main_wait_signal();
	cfg.chosen->stop(driver);
	status = 0;
out:
	msc_cfg_fini(&cfg);
	return status;
}
