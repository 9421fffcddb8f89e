/*
 * e2b_cfg.c - the E2B backend's options: the table (one entry a
 * flag), its tool description and its row for the programs that serve
 * it (cloud_cfg.c).
 */
#include "e2b_cfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud_cfg.h"

#define F(x) offsetof(struct e2b_cfg, x)
#define E2B "e2b backend options"
#define DEFAULT_IMAGE "debian:bookworm-slim"

static const struct msc_cfg_opt opts[] = {
	{ "e2b-api-key", MSC_OPT_SECRET, F(e2b_api_key), 0, NULL, "E2B_API_KEY",
	    NULL, E2B, "E2B API key (overrides E2B_API_KEY environment variable)",
	    0, "E2B_API_KEY" },
	{ "e2b-api-key-file", MSC_OPT_SECRET_FILE, F(e2b_api_key), 0, NULL, "FILE",
	    NULL, E2B, "Read the E2B API key from the first line of FILE",
	    0, NULL },
	{ "e2b-template", MSC_OPT_STR, F(e2b_template), 0, "base", "E2B_TEMPLATE",
	    NULL, E2B, "E2B template name or ID (default: base)",
	    0, NULL },
	{ "e2b-sandbox-timeout", MSC_OPT_STR, F(e2b_sandbox_timeout), 0, "3600",
	    "E2B_SANDBOX_TIMEOUT", NULL, E2B,
	    "Sandbox lifetime timeout in seconds (default: 3600)",
	    0, NULL },
	{ "e2b-metadata", MSC_OPT_LIST, F(e2b_metadata), F(n_e2b_metadata), NULL,
	    "E2B_METADATA", NULL, E2B,
	    "Metadata key=value pairs (can be used multiple times)",
	    0, NULL },
	{ "e2b-env", MSC_OPT_LIST, F(e2b_env), F(n_e2b_env), NULL, "E2B_ENV", NULL,
	    E2B, "Environment variable key=value pairs (can be used multiple times)",
	    0, NULL },
};

const struct msc_cfg_table e2b_cfg_table = { "e2b", opts,
	sizeof(opts) / sizeof(*opts), sizeof(struct e2b_cfg), NULL, NULL };

const struct e2b_cfg *
e2b_cfg(const struct msc_cfg *cfg)
{
	static const struct e2b_cfg none;
	const struct e2b_cfg *c = msc_cfg_own(cfg, &e2b_cfg_table);

	return c != NULL ? c : &none;
}

char *
e2b_cfg_describe(const struct msc_cfg *cfg)
{
	char buf[4096], *base = NULL;
	const char *name = msc_cfg_shell_name(cfg, buf, sizeof(buf));
	int n;

	n = e2b_cfg(cfg)->e2b_template == NULL ||
		strcmp(e2b_cfg(cfg)->e2b_template, "base") == 0
	    ? asprintf(&base,
		  "Run a command in an isolated Linux remote cloud "
		  "sandbox (E2B). Commands run in %s. Each call is "
		  "independent (environment variables and the current "
		  "directory do not persist). Use working_directory, "
		  "or chain commands with &&, to run in a specific "
		  "directory. Use stdin to pass file contents or input "
		  "(for example command=\"cat > file.txt\" with "
		  "stdin). The default timeout is %ld seconds; pass "
		  "timeout to change it.", name, cfg->timeout)
	    : (base = NULL, 0);
	return n < 0 ? NULL : base;
}

