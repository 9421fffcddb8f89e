/*
 * main.c - mcp-sandbox-computer, the composition root: every service in
 * one process over inproc://, with the MCP edge in front: stdio (the
 * launch an MCP client such as Claude Code or Claude Desktop uses) or
 * Streamable HTTP; or, given a subcommand, the operator command line
 * (or split-args, which scripts/run-split uses).
 * On exit the session service ends every session, so every temporary
 * computer is removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drivers.h"
#include "inventory.h"
#include "msc_fleet.h"
#include "msc_log.h"
#include "msc_main.h"
#include "msc_rpc.h"
#include "session.h"
#include "split_args.h"
#include "edge.h"

#define URL_DRIVER "inproc://msc-driver"
#define URL_INVENTORY "inproc://msc-inventory"
#define URL_SESSION "inproc://msc-session"

/* How long the start waits for the driver's tool description. */
#define DESCRIPTION_WAIT_MS 15000

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	const struct msc_backend *backend;
	void *driver = NULL;
	struct inv_service *inv = NULL;
	struct sess_service *sess = NULL;
	struct msc_client *session = NULL;
	struct msc_fleet *fleet = NULL;
	struct edge_desc *desc = NULL;
	int status;

	if (cli_is_command(argc, argv))
		return cli_main(argc, argv);
	if (argc > 1 && strcmp(argv[1], "split-args") == 0)
		return split_args_main(argc - 1, argv + 1);
	msc_log_init("mcp-sandbox-computer");
	if ((status = msc_main_config(&cfg, &drivers_program, argc, argv)) >= 0)
		goto out;
	status = 1;
	backend = cfg.chosen;
	/* Signals reach the edge only, never NNG's or the pool's threads. */
	msc_main_block_signals();
	if (backend->start(&cfg, URL_DRIVER, &driver) != 0 ||
	    msc_fleet_open(&cfg, URL_DRIVER, &fleet) != 0 ||
	    inv_start(URL_INVENTORY, fleet, &inv) != 0 ||
	    sess_start(&cfg, URL_SESSION, URL_INVENTORY, fleet, &sess) != 0 ||
	    msc_client_open(URL_SESSION, NULL, &session) != 0 ||
	    edge_desc_start(&cfg, session, &desc) != 0)
		goto stop;
	/* Every service is in this process: a backend without a
	 * description for this configuration is a startup error. */
	if (edge_desc_get(desc, DESCRIPTION_WAIT_MS) == NULL) {
		msc_cfg_error("Backend does not provide tool instructions "
		    "describing the sandbox. Supply --tool-instruction-override "
		    "to describe the capabilities of this sandbox (example 'a "
		    "Debian Linux bash shell' or 'A minimal BusyBox shell with "
		    "the following commands: ...').");
		goto stop;
	}
	status = edge_run(&cfg, session, desc);
stop:
	edge_desc_stop(desc);
	msc_client_close(session);
	sess_stop(sess);
	inv_stop(inv);
	msc_fleet_close(fleet);
	if (driver != NULL)
		backend->stop(driver);
out:
	msc_cfg_fini(&cfg);
	return status;
}
