/*
 * modal_cfg.c - the Modal backend's options: the table (one entry a
 * flag), its tool description and its row for the programs that serve
 * it (cloud_cfg.c).
 */
#include "modal_cfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloud_cfg.h"

/* --image: the heading docker gives it, so that the all-in-one lists it
 * once, there. */
#define DOCK "docker backend options"

#define F(x) offsetof(struct modal_cfg, x)
#define MODAL "modal backend options"
#define DEFAULT_IMAGE "debian:bookworm-slim"

static const struct msc_cfg_opt opts[] = {
	{ "modal-token-id", MSC_OPT_STR, F(modal_token_id), 0, NULL,
	    "MODAL_TOKEN_ID", NULL, MODAL,
	    "Modal token ID (overrides environment/default auth)",
	    0, NULL },
	{ "modal-token-secret", MSC_OPT_SECRET, F(modal_token_secret), 0, NULL,
	    "MODAL_TOKEN_SECRET", NULL, MODAL,
	    "Modal token secret (overrides environment/default auth)",
	    0, "MODAL_TOKEN_SECRET" },
	{ "modal-token-secret-file", MSC_OPT_SECRET_FILE, F(modal_token_secret), 0,
	    NULL, "FILE", NULL, MODAL,
	    "Read the Modal token secret from the first line of FILE",
	    0, NULL },
	{ "modal-app-name", MSC_OPT_STR, F(modal_app_name), 0, "kilntainers",
	    "MODAL_APP_NAME", NULL, MODAL, "Modal app name",
	    0, NULL },
	{ "modal-cpu", MSC_OPT_STR, F(modal_cpu), 0, "1.0", "MODAL_CPU", NULL,
	    MODAL, "CPU cores (fractional, default: 1.0)",
	    0, NULL },
	{ "modal-memory", MSC_OPT_STR, F(modal_memory), 0, "512", "MODAL_MEMORY",
	    NULL, MODAL, "Memory in MiB (default: 512)",
	    0, NULL },
	{ "modal-ports", MSC_OPT_STR, F(modal_ports), 0, NULL, "PORTS", NULL,
	    MODAL, "Ports each new sandbox opens as encrypted tunnels, "
	    "comma-separated (at most 16), which computer_expose_port "
	    "(--tools ports) answers with; Modal opens tunnels only at "
	    "creation (default: none)",
	    0, NULL },
	{ "gpu", MSC_OPT_STR, F(gpu), 0, NULL, "GPU", NULL, MODAL,
	    "GPU type (e.g., \"A10G\", \"H100\")",
	    0, NULL },
	{ "region", MSC_OPT_STR, F(region), 0, NULL, "REGION", NULL, MODAL,
	    "Geographic region (e.g., \"us-east\")",
	    0, NULL },
	{ "sandbox-timeout", MSC_OPT_STR, F(sandbox_timeout), 0, "3600",
	    "SANDBOX_TIMEOUT", NULL, MODAL,
	    "Sandbox lifetime timeout in seconds (default: 3600, max 86400)",
	    0, NULL },
	{ "image", MSC_OPT_STR, F(image), 0, "debian:bookworm-slim", "IMAGE", NULL,
	    DOCK, "Docker image (default: debian:bookworm-slim)",
	    0, NULL },
};

const struct msc_cfg_table modal_cfg_table = { "modal", opts,
	sizeof(opts) / sizeof(*opts), sizeof(struct modal_cfg), NULL, NULL };

const struct modal_cfg *
modal_cfg(const struct msc_cfg *cfg)
{
	static const struct modal_cfg none;
	const struct modal_cfg *c = msc_cfg_own(cfg, &modal_cfg_table);

	return c != NULL ? c : &none;
}

char *
modal_cfg_describe(const struct msc_cfg *cfg)
{
	const char *image = modal_cfg(cfg)->image != NULL ?
	    modal_cfg(cfg)->image : DEFAULT_IMAGE;
	char buf[4096], *base = NULL;
	const char *name = msc_cfg_shell_name(cfg, buf, sizeof(buf));
	int n;

	n = asprintf(&base,
	    "Run a command in an isolated %s remote cloud sandbox "
	    "(Modal)%s%s, the agent's own. Commands run in %s (use args "
	    "to run a program without a shell). Each call is "
	    "independent (environment variables and the current "
	    "directory do not persist), but the filesystem persists "
	    "between calls. Use working_directory, or chain commands "
	    "with &&, to run in a specific directory. Use stdin to pass "
	    "file contents or input (for example command=\"cat > "
	    "file.txt\" with stdin). The default timeout is %ld "
	    "seconds; pass timeout to change it.",
	    strcmp(image, DEFAULT_IMAGE) == 0 ? "Debian Linux"
						   : "Linux",
	    strcmp(image, DEFAULT_IMAGE) == 0 ? ""
		: " built from the container image ",
	    strcmp(image, DEFAULT_IMAGE) == 0 ? "" : image,
	    name, cfg->timeout);
	return n < 0 ? NULL : base;
}

