/* main.c - msc-session: the session service as its own process. */
#include "msc_fleet.h"
#include "msc_log.h"
#include "msc_main.h"
#include "session.h"

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	struct sess_service *s = NULL;
	struct msc_fleet *fleet = NULL;
	int status;

	msc_log_init("msc-session");
	if ((status = msc_main_config(&cfg, &msc_prog_session, argc, argv)) >= 0)
		goto out;
	status = 1;
	if (cfg.listen == NULL || cfg.inventory_url == NULL ||
	    cfg.driver_url == NULL) {
		msc_cfg_error("msc-session needs --listen, --inventory-url and "
			      "--driver-url");
		goto out;
	}
	msc_main_block_signals();
	if (msc_fleet_open(&cfg, NULL, &fleet) != 0 ||
	    sess_start(&cfg, cfg.listen, cfg.inventory_url, fleet, &s) != 0)
		goto out;
	msc_log_info("serving on %s", cfg.listen);
	msc_main_wait_signal();
	sess_stop(s);
	status = 0;
out:
	msc_fleet_close(fleet);
	msc_cfg_fini(&cfg);
	return status;
}
