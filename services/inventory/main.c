/* main.c - msc-inventory: the inventory service as its own process. */
#include "inventory.h"
#include "msc_fleet.h"
#include "msc_log.h"
#include "msc_main.h"

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	struct inv_service *s = NULL;
	struct msc_fleet *fleet = NULL;
	int status;

	msc_log_init("msc-inventory");
	if ((status = msc_main_config(&cfg, &msc_prog_inventory, argc,
	    argv)) >= 0)
		goto out;
	status = 1;
	if (cfg.listen == NULL || cfg.driver_url == NULL) {
		msc_cfg_error("msc-inventory needs --listen and --driver-url");
		goto out;
	}
	msc_main_block_signals();
	if (msc_fleet_open(&cfg, NULL, &fleet) != 0 ||
	    inv_start(cfg.listen, fleet, &s) != 0)
		goto out;
	msc_log_info("serving on %s", cfg.listen);
	msc_main_wait_signal();
	inv_stop(s);
	status = 0;
out:
	msc_fleet_close(fleet);
	msc_cfg_fini(&cfg);
	return status;
}
