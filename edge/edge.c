#include "edge.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_http.h"
#include "mcp_stdio.h"
#include "msc_log.h"
#include "msc_main.h"
#include "xfer.h"

int
edge_run(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc *desc)
{
	struct edge_http *http;
	sigset_t set;
	int sig, status;
	char *ws;

	/* --workspace: a folder, or the start fails (not a silent "none"). */
	if (cfg->workspace != NULL) {
		if ((ws = xfer_allow_dir(cfg->workspace)) == NULL) {
			msc_log_err("--workspace %s: %s", cfg->workspace,
			    errno == ENOTDIR ? "not a folder" : strerror(errno));
			return 1;
		}
		free(ws);
	}
	if (strcmp(cfg->transport, "http") == 0) {
		if (edge_http_start(cfg, session, desc, &http) != 0)
			return 1;
		while ((sig = msc_main_wait_signal_or_hup()) == SIGHUP)
			edge_http_reload(http);
		msc_log_info("signal %d received; shutting down", sig);
		edge_http_stop(http);
		return 0;
	}
	/* The stdio loop takes the signals itself, in this thread only. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	status = edge_stdio_run(cfg, session, desc);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return status;
}
