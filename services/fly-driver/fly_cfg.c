/*
 * fly_cfg.c - the Fly backend's options: the table (one entry a
 * flag), the environment fallbacks, the tool description and the rows
 * that put the backend in a program.
 */
#include "fly_cfg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(x) offsetof(struct fly_cfg, x)
#define FLY "fly backend options"
#define DEFAULT_IMAGE "debian:bookworm-slim"

static const struct msc_cfg_opt opts[] = {
	{ "fly-cli", MSC_OPT_STR, F(fly_cli), 0, "fly", "FLY_CLI", NULL, FLY,
	    "flyctl/fly executable (default: fly)",
	    0, NULL },
	{ "fly-app", MSC_OPT_STR, F(fly_app), 0, NULL, "FLY_APP", NULL, FLY,
	    "Fly App that owns sandbox Machines (default: FLY_APP_NAME)",
	    0, NULL },
	{ "fly-token", MSC_OPT_SECRET, F(fly_token), 0, NULL, "FLY_TOKEN", NULL, FLY,
	    "Fly API token (default: FLY_API_TOKEN or FLY_TOKEN)",
	    0, "FLY_API_TOKEN FLY_TOKEN" },
	{ "fly-token-file", MSC_OPT_SECRET_FILE, F(fly_token), 0, NULL, "FILE",
	    NULL, FLY, "Read the Fly API token from the first line of FILE",
	    0, NULL },
	{ "fly-image", MSC_OPT_STR, F(fly_image), 0, "debian:bookworm-slim",
	    "FLY_IMAGE", NULL, FLY, "Base OCI image for sandbox Machines",
	    0, NULL },
	{ "fly-region", MSC_OPT_STR, F(fly_region), 0, NULL, "FLY_REGION", NULL,
	    FLY, "Region for newly created Machines",
	    0, NULL },
	{ "fly-cpu-kind", MSC_OPT_STR, F(fly_cpu_kind), 0, "shared", "KIND",
	    "shared,performance", FLY, "Fly CPU kind (default: shared)",
	    0, NULL },
	{ "fly-cpus", MSC_OPT_STR, F(fly_cpus), 0, "1", "FLY_CPUS", NULL, FLY,
	    "CPUs per Machine (default: 1)",
	    0, NULL },
	{ "fly-memory", MSC_OPT_STR, F(fly_memory), 0, "512", "FLY_MEMORY", NULL,
	    FLY, "Memory per Machine in MB (default: 512)",
	    0, NULL },
	{ "fly-rootfs-size", MSC_OPT_STR, F(fly_rootfs_size), 0, NULL,
	    "FLY_ROOTFS_SIZE", NULL, FLY, "Optional root filesystem size in GB",
	    0, NULL },
	{ "fly-org", MSC_OPT_STR, F(fly_org), 0, NULL, "FLY_ORG", NULL, FLY,
	    "Organization for the auto-created app (default: FLY_ORG, else personal)",
	    0, NULL },
	{ "fly-api-url", MSC_OPT_STR, F(fly_api_url), 0, NULL, "URL", NULL, FLY,
	    "Fly Machines API base URL (default: FLY_API_HOSTNAME, else the public Machines API)",
	    0, NULL },
};

static void
env(void *own)
{
	struct fly_cfg *c = own;
	const char *v;

	if ((v = getenv("FLY_APP_NAME")) != NULL && *v != '\0')
		c->fly_app = v;
	if ((v = getenv("FLY_REGION")) != NULL && *v != '\0')
		c->fly_region = v;
	if ((v = getenv("FLY_ORG")) != NULL && *v != '\0')
		c->fly_org = v;
	if ((v = getenv("FLY_API_HOSTNAME")) != NULL && *v != '\0')
		c->fly_api_url = v;
	if ((v = getenv("FLY_API_TOKEN")) != NULL && *v != '\0')
		c->fly_token = v;
	else if ((v = getenv("FLY_TOKEN")) != NULL && *v != '\0')
		c->fly_token = v;
}

const struct msc_cfg_table fly_cfg_table = { "fly", opts,
	sizeof(opts) / sizeof(*opts), sizeof(struct fly_cfg), env, NULL };

const struct fly_cfg *
fly_cfg(const struct msc_cfg *cfg)
{
	static const struct fly_cfg none;
	const struct fly_cfg *c = msc_cfg_own(cfg, &fly_cfg_table);

	return c != NULL ? c : &none;
}

char *
fly_cfg_describe(const struct msc_cfg *cfg)
{
	char buf[4096], *base = NULL;
	const char *name = msc_cfg_shell_name(cfg, buf, sizeof(buf));
	int n;

	n = asprintf(&base,
	    "Run a command on a remote %s Fly Machine (a microVM, the "
	    "agent's own). Commands run in %s. Each call is independent, "
	    "but the filesystem persists between calls. Use "
	    "working_directory, or chain commands with &&, to run in a "
	    "specific directory, and stdin to pass input. The default "
	    "timeout is %ld seconds; pass timeout to change it. Pass "
	    "computer_id to reconnect to a named computer, or omit it "
	    "for a random one. Temporary computers are destroyed when "
	    "the session ends; temporary=false keeps the Machine and its "
	    "files.", fly_cfg(cfg)->fly_image == NULL ||
		strcmp(fly_cfg(cfg)->fly_image, DEFAULT_IMAGE) == 0
		? "Debian Linux" : fly_cfg(cfg)->fly_image, name, cfg->timeout);
	return n < 0 ? NULL : base;
}

/* Fly Machines have no egress filter the server can set per machine. */
int
fly_cfg_validate(const struct msc_cfg *cfg)
{
	static const char *const proxy[] = { "proxy-credential",
		"proxy-credential-file", NULL };

	return msc_backend_net_refuse(cfg, false, proxy, "--network-allow, "
	    "--network-deny and --proxy-credential need the docker or a cloud "
	    "backend: Fly Machines have no egress filter the server can set "
	    "per machine, so an allowlist cannot be enforced there");
}

const char fly_preview_refusal[] = "Preview URLs are not served on the "
	"fly backend: a Fly Machine's ports are published only through its "
	"app's services and a public address, which this server does not set "
	"up. They are served on the docker (Docker and Podman), e2b and modal "
	"backends.";
