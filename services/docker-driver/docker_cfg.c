/*
 * docker_cfg.c - the docker backend's options: the table (one entry a
 * flag), the environment fallbacks, the bounds and the tool description
 * (the rows that put the backend in a program: docker_backend.c).
 */
#include "docker_cfg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(x) offsetof(struct dock_cfg, x)
#define DOCK "docker backend options"
#define DEFAULT_IMAGE "debian:bookworm-slim"

static const struct msc_cfg_opt opts[] = {
	{ "proxy-dns-server", MSC_OPT_STR, F(proxy_dns), 0, NULL, "ADDRESS", NULL,
	    DOCK, "DNS server the allowlist proxy resolves names with "
	    "(default: the host's /etc/resolv.conf)",
	    0, NULL },
	{ "proxy-credential", MSC_OPT_LIST, F(proxy_creds), F(n_proxy_creds), NULL,
	    "DOMAIN=HEADER:ENVVAR", NULL, DOCK,
	    "Allowlist mode: the proxy adds HEADER, its value read from the "
	    "server's environment variable ENVVAR, to plain HTTP requests for "
	    "DOMAIN; the value never enters a computer. Repeatable.",
	    0, NULL },
	{ "proxy-credential-file", MSC_OPT_STR, F(proxy_cred_file), 0, NULL,
	    "FILE", NULL, DOCK,
	    "Read --proxy-credential entries from FILE, one per line "
	    "(# starts a comment)",
	    0, NULL },
	{ "preview-domain", MSC_OPT_STR, F(preview_domain), 0, "localhost",
	    "DOMAIN", NULL, DOCK, "Preview URLs (--tools ports) are "
	    "http://CAPABILITY.DOMAIN:PORT/; name a wildcard domain that "
	    "reaches --preview-listen (default: localhost, which browsers "
	    "send to loopback)",
	    0, NULL },
	{ "preview-listen", MSC_OPT_STR, F(preview_listen), 0, "127.0.0.1:8790",
	    "HOST:PORT", NULL, DOCK, "Where the preview listener binds, "
	    "started at the first exposed port (default: 127.0.0.1:8790; "
	    "port 0 picks a free one)",
	    0, NULL },
	{ "engine", MSC_OPT_STR, F(engine), 0, "docker", "ENGINE", NULL, DOCK,
	    "Container engine API flavour (default: docker). Supports podman.",
	    0, NULL },
	{ "docker-host", MSC_OPT_STR, F(docker_host), 0, NULL, "DOCKER_HOST", NULL,
	    DOCK, "Engine address: unix:///path or tcp://host:port (default: DOCKER_HOST, else the local socket)",
	    0, NULL },
	{ "runtime", MSC_OPT_STR, F(runtime), 0, NULL, "NAME", NULL, DOCK,
	    "OCI runtime the engine runs computers with, e.g. runsc (gVisor); "
	    "the engine must know it, checked at start (default: "
	    "KILNTAINERS_RUNTIME, else the engine's default runtime)",
	    0, NULL },
	{ "image", MSC_OPT_STR, F(image), 0, "debian:bookworm-slim", "IMAGE", NULL,
	    DOCK, "Docker image (default: debian:bookworm-slim)",
	    0, NULL },
	{ "warm-pool", MSC_OPT_LONG, F(warm_pool), 0, "-1", "N", NULL, DOCK,
	    "Started containers kept ready for new temporary computers "
	    "(default: 2; 0 turns the pool off)",
	    0, NULL },
	{ "warm-pool-max", MSC_OPT_LONG, F(warm_pool_max), 0, "32", "N", NULL,
	    DOCK, "What the warm pool grows to while new computers find it "
	    "empty, shrinking back to --warm-pool when they stop (default: 32)",
	    0, NULL },
	{ "warm-pool-shrink-after", MSC_OPT_LONG, F(warm_pool_shrink_after), 0,
	    "30", "SECONDS", NULL, DOCK,
	    "Seconds without a miss, with the pool full, before a grown warm "
	    "pool takes one off toward --warm-pool (default: 30)",
	    0, NULL },
	{ "cpu", MSC_OPT_STR, F(cpu), 0, NULL, "CPU", NULL, DOCK,
	    "Docker CPU limit (e.g., \"1.5\")",
	    0, NULL },
	{ "memory", MSC_OPT_STR, F(memory), 0, NULL, "MEMORY", NULL, DOCK,
	    "Docker memory limit (e.g., \"512m\")",
	    0, NULL },
	{ "disk-quota", MSC_OPT_STR, F(disk_quota), 0, "1G", "SIZE", NULL, MSC_CFG_GROUP_CORE,
	    "Most bytes one computer may store, e.g. 500M, 1G or 1GiB; 0: no "
	    "bound. go_busybox and wasm count them; Docker and Podman use the "
	    "storage driver's size option where the engine has one, and "
	    "computer_list says when it has none "
	    "(default: KILNTAINERS_DISK_QUOTA, else 1G)",
	    0, NULL },
	{ "docker-run-flag", MSC_OPT_LIST, F(run_flags), F(n_run_flags), NULL,
	    "DOCKER_RUN_FLAGS", NULL, DOCK,
	    "Additional docker run flag, mapped onto the Engine API. Repeatable. (e.g., --docker-run-flag \"--pids-limit=256\")",
	    0, NULL },
	{ "driver-creations", MSC_OPT_LONG, F(driver_creations), 0, "8", "N",
	    NULL, MSC_CFG_GROUP_DEPL, "Computers a docker driver creates at once; the rest "
	    "wait their turn (default: 8)",
	    0, NULL },
	{ "driver-output-buffer", MSC_OPT_STR, F(driver_output_buffer), 0,
	    "256M", "SIZE", NULL, MSC_CFG_GROUP_DEPL,
	    "Output a docker driver holds at once for the commands that wait "
	    "on their computers, over all of them (each also stops at "
	    "--output-limit), split evenly between the principals holding "
	    "output and one more; "
	    "past it the command whose output would pass it is killed with "
	    "an error naming this flag (default: 256M)",
	    0, NULL },
};

static void
env(void *own)
{
	struct dock_cfg *c = own;
	const char *v;

	if ((v = getenv("KILNTAINERS_DISK_QUOTA")) != NULL && *v != '\0')
		c->disk_quota = v;
	if ((v = getenv("KILNTAINERS_RUNTIME")) != NULL && *v != '\0')
		c->runtime = v;
}

static int
check(const void *own)
{
	const struct dock_cfg *c = own;
	uint64_t bytes;

	if (c->driver_creations < 1 || c->driver_creations > 4096) {
		msc_cfg_error("--driver-creations must be between 1 and 4096.");
		return -EINVAL;
	}
	if (msc_cfg_size(c->driver_output_buffer, &bytes) != 0 ||
	    bytes < 1 << 20) {
		msc_cfg_error("argument --driver-output-buffer: invalid value: "
		    "'%s' (a size of at least 1M, such as 64M or 1G)",
		    c->driver_output_buffer);
		return -EINVAL;
	}
	if (c->warm_pool < -1 || c->warm_pool > 256) {
		msc_cfg_error("--warm-pool must be between 0 and 256.");
		return -EINVAL;
	}
	if (c->warm_pool_max < 0 || c->warm_pool_max > 256) {
		msc_cfg_error("--warm-pool-max must be between 0 and 256.");
		return -EINVAL;
	}
	if (c->warm_pool_shrink_after < 1 || c->warm_pool_shrink_after > 86400) {
		msc_cfg_error("--warm-pool-shrink-after must be between 1 and "
		    "86400.");
		return -EINVAL;
	}
	if (strcmp(c->engine, "docker") != 0 &&
	    strcmp(c->engine, "podman") != 0) {
		msc_cfg_error("--engine must be docker or podman, got: %s",
		    c->engine);
		return -EINVAL;
	}
	return 0;
}

const struct msc_cfg_table dock_cfg_table = { "docker", opts,
	sizeof(opts) / sizeof(*opts), sizeof(struct dock_cfg), env, check };

const struct dock_cfg *
dock_cfg(const struct msc_cfg *cfg)
{
	static const struct dock_cfg none;
	const struct dock_cfg *c = msc_cfg_own(cfg, &dock_cfg_table);

	return c != NULL ? c : &none;
}

char *
dock_cfg_describe(const struct msc_cfg *cfg)
{
	const char *image = dock_cfg(cfg)->image != NULL ?
	    dock_cfg(cfg)->image : DEFAULT_IMAGE;
	char buf[4096], *base = NULL;
	const char *name = msc_cfg_shell_name(cfg, buf, sizeof(buf));
	int n;

	if (strcmp(image, DEFAULT_IMAGE) == 0)
		n = asprintf(&base,
		    "Run a command in an isolated Debian Linux sandbox computer "
		    "(the agent's own). Commands run in %s. Each call is "
		    "independent (environment variables and the current "
		    "directory do not persist), but the filesystem persists "
		    "between calls. Use working_directory, or chain commands "
		    "with &&, to run in a specific directory. Use stdin to pass "
		    "file contents or input (for example command=\"cat > "
		    "file.txt\" with stdin). The default timeout is %ld "
		    "seconds; pass timeout to change it. Omit computer_id to "
		    "use this session's own computer, or pass one to attach a "
		    "named computer; temporary=false keeps it after the "
		    "session ends.", name, cfg->timeout);
	else
		n = asprintf(&base,
		    "Run a command in an isolated Linux sandbox computer built "
		    "from the container image %s. Commands run in %s (use args "
		    "to run a program without a shell). Each call is "
		    "independent, but the filesystem persists between calls. "
		    "Use working_directory to run in a specific directory and "
		    "stdin to pass input. The default timeout is %ld seconds; "
		    "pass timeout to change it. Omit computer_id to use this "
		    "session's own computer, or pass one to attach a named "
		    "computer; temporary=false keeps it after the session "
		    "ends.", image, name, cfg->timeout);
	return n < 0 ? NULL : base;
}

