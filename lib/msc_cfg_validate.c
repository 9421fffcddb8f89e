/*
 * msc_cfg_validate.c - the startup checks of a parsed command line: the
 * reference's (section 6.2), our bounds, and the network policy flags.
 */
#include "msc_cfg.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "msc_backend.h"
#include "msc_netpolicy.h"

/*
 * The network policy flags: entries are names (msc_netpolicy.h) and need
 * the network. What a backend cannot honour it refuses itself
 * (msc_backend_net_refuse).
 */
static int
net_flags_check(const struct msc_cfg *cfg)
{
	char **v = NULL, err[512];
	size_t n = 0;
	int rv;

	if ((rv = msc_net_list_parse(cfg->net_allow, cfg->n_net_allow, &v, &n,
	    err, sizeof(err))) != 0)
		msc_cfg_error("--network-allow: %s", err);
	msc_net_list_free(v, n);
	v = NULL;
	n = 0;
	if (rv == 0 && (rv = msc_net_list_parse(cfg->net_deny,
	    cfg->n_net_deny, &v, &n, err, sizeof(err))) != 0)
		msc_cfg_error("--network-deny: %s", err);
	msc_net_list_free(v, n);
	if (rv == 0 && !cfg->network && (cfg->n_net_allow || cfg->n_net_deny)) {
		msc_cfg_error("--network-allow and --network-deny need the "
		    "network: drop --no-network");
		rv = -EINVAL;
	}
	return rv;
}

int
msc_backend_net_refuse(const struct msc_cfg *cfg, bool allow_ok,
    const char *const *extra, const char *why)
{
	bool refuse = cfg->n_net_deny > 0 || (!allow_ok && cfg->n_net_allow > 0);

	for (size_t i = 0; !refuse && extra != NULL && extra[i] != NULL; i++)
		refuse = msc_cfg_given(cfg, extra[i]);
	if (!refuse)
		return 0;
	msc_cfg_error("%s", why);
	return -EINVAL;
}

/* Each table's own bounds, then the chosen backend's checks. */
static int
backend_checks(const struct msc_cfg *cfg)
{
	for (size_t i = 0; i < cfg->nparts; i++)
		if (cfg->parts[i].table->check != NULL &&
		    cfg->parts[i].table->check(cfg->parts[i].own) != 0)
			return -EINVAL;
	if (cfg->chosen != NULL && cfg->chosen->validate != NULL &&
	    cfg->chosen->validate(cfg) != 0)
		return -EINVAL;
	return 0;
}

int
msc_cfg_validate(const struct msc_cfg *cfg)
{
	bool http = strcmp(cfg->transport, "http") == 0;
	bool loopback = strcmp(cfg->host, "127.0.0.1") == 0 ||
	    strcmp(cfg->host, "localhost") == 0 || strcmp(cfg->host, "::1") == 0;

	if (!http && strcmp(cfg->host, "127.0.0.1") != 0) {
		msc_cfg_error("--host is only valid with --transport http. In "
			      "stdio mode, there is no HTTP server to bind.");
		return -EINVAL;
	}
	if (!http && cfg->port != 8435) {
		msc_cfg_error("--port is only valid with --transport http. In "
			      "stdio mode, there is no HTTP server to bind.");
		return -EINVAL;
	}
	/* Only the edge knows the transport (a session service takes
	 * --session-timeout for the handles it keeps). */
	if (!http && cfg->session_timeout != 300 &&
	    (cfg->prog & MSC_PROG_EDGE) != 0) {
		msc_cfg_error("--session-timeout is only valid with --transport "
			      "http. In stdio mode, the session lives as long as "
			      "the process.");
		return -EINVAL;
	}
	if (net_flags_check(cfg) != 0 || backend_checks(cfg) != 0)
		return -EINVAL;
	if (cfg->tool_instruction_override != NULL &&
	    cfg->extended_tool_instruction != NULL) {
		msc_cfg_error("Cannot use both --tool-instruction-override and "
			      "--extended-tool-instruction. Use override to "
			      "replace the description entirely, or extended to "
			      "append to the backend default.");
		return -EINVAL;
	}
	if (cfg->timeout < 1) {
		msc_cfg_error("--timeout must be at least 1 second.");
		return -EINVAL;
	}
	if (cfg->output_limit < 1) {
		msc_cfg_error("--output-limit must be at least 1 byte.");
		return -EINVAL;
	}
	if (cfg->reply_output_limit != 0 && (cfg->reply_output_limit < 1024 ||
	    cfg->reply_output_limit > 16777216)) {
		msc_cfg_error("--reply-output-limit must be 0 (the whole output) "
		    "or 1024 to 16777216 bytes.");
		return -EINVAL;
	}
	if (cfg->tokens_file != NULL && !http &&
	    (cfg->prog & MSC_PROG_EDGE) != 0) {
		msc_cfg_error("--tokens-file is only valid with --transport "
			      "http. In stdio mode, the one client is the only "
			      "principal.");
		return -EINVAL;
	}
	if (cfg->tokens_file != NULL && cfg->auth_token != NULL &&
	    *cfg->auth_token != '\0') {
		msc_cfg_error("Use either --tokens-file or KILNTAINERS_AUTH_TOKEN/"
			      "--auth-token, not both: put the token in the "
			      "file under a name of its own.");
		return -EINVAL;
	}
	if (http && !loopback &&
	    (cfg->auth_token == NULL || *cfg->auth_token == '\0') &&
	    cfg->tokens_file == NULL && !cfg->allow_unauthenticated_http) {
		msc_cfg_error("A non-loopback HTTP listener can execute arbitrary "
			      "sandbox commands. Set KILNTAINERS_AUTH_TOKEN/"
			      "--auth-token, or explicitly pass "
			      "--allow-unauthenticated-http behind a trusted "
			      "private network.");
		return -EINVAL;
	}
	if (cfg->timeout > 86400 * 7) {
		msc_cfg_error("--timeout must be at most 604800 seconds.");
		return -EINVAL;
	}
	if (cfg->driver_workers < 1 || cfg->driver_workers > 4096) {
		msc_cfg_error("--driver-workers must be between 1 and 4096.");
		return -EINVAL;
	}
	if (cfg->driver_owner_workers < 0 || cfg->driver_owner_workers > 4096) {
		msc_cfg_error("--driver-owner-workers must be between 0 and "
			      "4096.");
		return -EINVAL;
	}
	if (cfg->max_session_computers < 1 ||
	    cfg->max_session_computers > 4096) {
		msc_cfg_error("--max-session-computers must be between 1 and "
			      "4096.");
		return -EINVAL;
	}
	if (cfg->max_sandboxes < 1 || cfg->max_sandboxes > 100000) {
		msc_cfg_error("--max-sandboxes must be between 1 and 100000.");
		return -EINVAL;
	}
	if (cfg->lease_timeout < 1 || cfg->lease_timeout > 86400) {
		msc_cfg_error("--lease-timeout must be between 1 and 86400 "
			      "seconds.");
		return -EINVAL;
	}
	if (cfg->max_session_commands < 1 || cfg->max_session_commands > 1024) {
		msc_cfg_error("--max-session-commands must be between 1 and "
			      "1024.");
		return -EINVAL;
	}
	if (cfg->max_session_tasks < 1 || cfg->max_session_tasks > 1024) {
		msc_cfg_error("--max-session-tasks must be between 1 and 1024.");
		return -EINVAL;
	}
	if (cfg->task_ttl < 1 || cfg->task_ttl > 604800) {
		msc_cfg_error("--task-ttl must be between 1 and 604800 seconds.");
		return -EINVAL;
	}
	if (cfg->max_pending_calls < 1 || cfg->max_pending_calls > 1000000) {
		msc_cfg_error("--max-pending-calls must be between 1 and "
			      "1000000.");
		return -EINVAL;
	}
	if (cfg->max_principal_sessions < 0 ||
	    cfg->max_principal_sessions > 100000 ||
	    cfg->max_principal_sandboxes < 0 ||
	    cfg->max_principal_sandboxes > 100000 ||
	    cfg->max_principal_calls < 0 ||
	    cfg->max_principal_calls > 1000000 ||
	    cfg->max_principal_tasks < 0 || cfg->max_principal_tasks > 100000) {
		msc_cfg_error("--max-principal-sessions, -sandboxes and -tasks "
			      "must be between 0 and 100000, "
			      "--max-principal-calls between 0 and 1000000 "
			      "(0: no share).");
		return -EINVAL;
	}
	if (cfg->max_address_connections < 1 ||
	    cfg->max_address_connections > 4096) {
		msc_cfg_error("--max-address-connections (or "
			      "KILNTAINERS_MAX_ADDRESS_CONNECTIONS) must be "
			      "between 1 and 4096.");
		return -EINVAL;
	}
	return 0;
}
