/* main.c - msc-docker-driver: the Docker driver as its own process. */
#include "docker_cfg.h"
#include "docker_driver.h"
#include "msc_log.h"
#include "msc_main.h"

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	struct dock_driver *d = NULL;
	int status;

	msc_log_init("msc-docker-driver");
	if ((status = msc_main_config(&cfg, &dock_program, argc,
	    argv)) >= 0)
		goto out;
	status = 1;
	if (cfg.listen == NULL) {
		msc_cfg_error("msc-docker-driver needs --listen");
		goto out;
	}
	msc_main_block_signals();
	if (dock_driver_start(&cfg, cfg.listen, &d) != 0)
		goto out;
	msc_log_info("serving on %s", cfg.listen);
	msc_main_wait_signal();
	dock_driver_stop(d);
	status = 0;
out:
	msc_cfg_fini(&cfg);
	return status;
}
