/*
 * main.c - msc-edge: the MCP edge alone (stdio or HTTP), talking to a
 * session service at --session-url (see scripts/run-split).
 */
#include <stdio.h>
#include <stdlib.h>

#include "msc_log.h"
#include "msc_main.h"
#include "msc_rpc.h"
#include "edge.h"

int
main(int argc, char **argv)
{
	struct msc_cfg cfg;
	struct msc_client *session = NULL;
	struct edge_desc *desc = NULL;
	int status;

	msc_log_init("msc-edge");
	if ((status = msc_main_config(&cfg, &msc_prog_edge, argc, argv)) >= 0)
		goto out;
	status = 1;
	if (cfg.session_url == NULL) {
		msc_cfg_error("msc-edge needs --session-url");
		goto out;
	}
	msc_main_block_signals();
	if (msc_client_open(cfg.session_url, "session", &session) != 0) {
		msc_cfg_error("invalid --session-url '%s'", cfg.session_url);
		goto out;
	}
	if (edge_desc_start(&cfg, session, &desc) == 0)
		status = edge_run(&cfg, session, desc);
	edge_desc_stop(desc);
	msc_client_close(session);
out:
	msc_cfg_fini(&cfg);
	return status;
}
