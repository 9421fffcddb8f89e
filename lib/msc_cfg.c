#include "msc_cfg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PROG "kilntainers"

enum opt_kind { OPT_STR, OPT_LONG, OPT_TRUE, OPT_NEG, OPT_LIST, OPT_HELP,
	OPT_VERSION };

struct opt {
	const char *name;       /* without the leading "--" */
	enum opt_kind kind;
	size_t off;             /* offset in struct msc_cfg */
	size_t count_off;       /* OPT_LIST: offset of the size_t count */
	const char *def;        /* default, as text; NULL = none */
	const char *metavar;
	const char *choices;    /* "a,b,c" or NULL */
	const char *group;
	const char *help;
};

#define F(x) offsetof(struct msc_cfg, x)
#define CORE "core options"
#define DESC "tool description"
#define DOCK "docker backend options"
#define FLY "fly backend options"
#define E2B "e2b backend options"
#define MODAL "modal backend options"
#define WASM "wasm backend options"
#define DEPL "deployment options (split services)"

static const struct opt opts[] = {
	{ "help", OPT_HELP, 0, 0, NULL, NULL, NULL, NULL,
	    "show this help message and exit" },
	{ "version", OPT_VERSION, 0, 0, NULL, NULL, NULL, NULL,
	    "show the version and exit" },
	{ "backend", OPT_STR, F(backend), 0, "docker", "BACKEND",
	    "docker,e2b,fly,go_busybox,modal,wasm", CORE,
	    "Backend to use (default: docker)" },
	{ "transport", OPT_STR, F(transport), 0, "stdio", "TRANSPORT",
	    "stdio,http", CORE, "MCP transport (default: stdio)" },
	{ "host", OPT_STR, F(host), 0, "127.0.0.1", "HOST", NULL, CORE,
	    "HTTP bind address (default: 127.0.0.1, HTTP mode only)" },
	{ "port", OPT_LONG, F(port), 0, "8435", "PORT", NULL, CORE,
	    "HTTP listen port (default: 8435, HTTP mode only)" },
	{ "timeout", OPT_LONG, F(timeout), 0, "120", "TIMEOUT", NULL, CORE,
	    "Default exec timeout in seconds (default: 120)" },
	{ "output-limit", OPT_LONG, F(output_limit), 0, "2097152",
	    "OUTPUT_LIMIT", NULL, CORE,
	    "Max combined stdout+stderr bytes per exec (default: 2097152 = 2 MiB)" },
	{ "session-timeout", OPT_LONG, F(session_timeout), 0, "300",
	    "SESSION_TIMEOUT", NULL, CORE,
	    "Idle session timeout in seconds (default: 300, HTTP mode only)" },
	{ "auth-token", OPT_STR, F(auth_token), 0, NULL, "AUTH_TOKEN", NULL,
	    CORE, "Bearer token for /mcp (default: KILNTAINERS_AUTH_TOKEN)" },
	{ "allow-unauthenticated-http", OPT_TRUE,
	    F(allow_unauthenticated_http), 0, NULL, NULL, NULL, CORE,
	    "Explicitly allow a non-loopback listener without built-in auth" },
	{ "shell", OPT_STR, F(shell), 0, "/bin/bash", "SHELL", NULL, CORE,
	    "Shell binary for command mode (e.g., /bin/bash, ash). Default: /bin/bash." },
	{ "network", OPT_NEG, F(network), 0, "1", NULL, NULL, CORE,
	    "Enable network access in sandboxes (default: enabled); --no-network disables it" },
	{ "tool-instruction-override", OPT_STR, F(tool_instruction_override),
	    0, NULL, "TOOL_INSTRUCTION_OVERRIDE", NULL, DESC,
	    "Replace the entire terminal_execute tool description" },
	{ "extended-tool-instruction", OPT_STR, F(extended_tool_instruction),
	    0, NULL, "EXTENDED_TOOL_INSTRUCTION", NULL, DESC,
	    "Append to the backend's default tool description" },
	{ "engine", OPT_STR, F(engine), 0, "docker", "ENGINE", NULL, DOCK,
	    "Container engine API flavour (default: docker). Supports podman." },
	{ "docker-host", OPT_STR, F(docker_host), 0, NULL, "DOCKER_HOST", NULL,
	    DOCK, "Engine address: unix:///path or tcp://host:port (default: DOCKER_HOST, else the local socket)" },
	{ "image", OPT_STR, F(image), 0, "debian:bookworm-slim", "IMAGE", NULL,
	    DOCK, "Docker image (default: debian:bookworm-slim)" },
	{ "cpu", OPT_STR, F(cpu), 0, NULL, "CPU", NULL, DOCK,
	    "Docker CPU limit (e.g., \"1.5\")" },
	{ "memory", OPT_STR, F(memory), 0, NULL, "MEMORY", NULL, DOCK,
	    "Docker memory limit (e.g., \"512m\")" },
	{ "docker-run-flag", OPT_LIST, F(run_flags), F(n_run_flags), NULL,
	    "DOCKER_RUN_FLAGS", NULL, DOCK,
	    "Additional docker run flag, mapped onto the Engine API. Repeatable. (e.g., --docker-run-flag \"--pids-limit=256\")" },
	{ "fly-cli", OPT_STR, F(fly_cli), 0, "fly", "FLY_CLI", NULL, FLY,
	    "flyctl/fly executable (default: fly)" },
	{ "fly-app", OPT_STR, F(fly_app), 0, NULL, "FLY_APP", NULL, FLY,
	    "Fly App that owns sandbox Machines (default: FLY_APP_NAME)" },
	{ "fly-token", OPT_STR, F(fly_token), 0, NULL, "FLY_TOKEN", NULL, FLY,
	    "Fly API token (default: FLY_API_TOKEN or FLY_TOKEN)" },
	{ "fly-image", OPT_STR, F(fly_image), 0, "debian:bookworm-slim",
	    "FLY_IMAGE", NULL, FLY, "Base OCI image for sandbox Machines" },
	{ "fly-region", OPT_STR, F(fly_region), 0, NULL, "FLY_REGION", NULL,
	    FLY, "Region for newly created Machines" },
	{ "fly-cpu-kind", OPT_STR, F(fly_cpu_kind), 0, "shared", "KIND",
	    "shared,performance", FLY, "Fly CPU kind (default: shared)" },
	{ "fly-cpus", OPT_STR, F(fly_cpus), 0, "1", "FLY_CPUS", NULL, FLY,
	    "CPUs per Machine (default: 1)" },
	{ "fly-memory", OPT_STR, F(fly_memory), 0, "512", "FLY_MEMORY", NULL,
	    FLY, "Memory per Machine in MB (default: 512)" },
	{ "fly-rootfs-size", OPT_STR, F(fly_rootfs_size), 0, NULL,
	    "FLY_ROOTFS_SIZE", NULL, FLY, "Optional root filesystem size in GB" },
	{ "fly-org", OPT_STR, F(fly_org), 0, NULL, "FLY_ORG", NULL, FLY,
	    "Organization for the auto-created app (default: FLY_ORG, else personal)" },
	{ "fly-api-url", OPT_STR, F(fly_api_url), 0, NULL, "URL", NULL, FLY,
	    "Fly Machines API base URL (default: FLY_API_HOSTNAME, else the public Machines API)" },
	{ "e2b-api-key", OPT_STR, F(e2b_api_key), 0, NULL, "E2B_API_KEY", NULL,
	    E2B, "E2B API key (overrides E2B_API_KEY environment variable)" },
	{ "e2b-template", OPT_STR, F(e2b_template), 0, "base", "E2B_TEMPLATE",
	    NULL, E2B, "E2B template name or ID (default: base)" },
	{ "e2b-sandbox-timeout", OPT_STR, F(e2b_sandbox_timeout), 0, "3600",
	    "E2B_SANDBOX_TIMEOUT", NULL, E2B,
	    "Sandbox lifetime timeout in seconds (default: 3600)" },
	{ "e2b-metadata", OPT_LIST, F(e2b_metadata), F(n_e2b_metadata), NULL,
	    "E2B_METADATA", NULL, E2B,
	    "Metadata key=value pairs (can be used multiple times)" },
	{ "e2b-env", OPT_LIST, F(e2b_env), F(n_e2b_env), NULL, "E2B_ENV", NULL,
	    E2B, "Environment variable key=value pairs (can be used multiple times)" },
	{ "modal-token-id", OPT_STR, F(modal_token_id), 0, NULL,
	    "MODAL_TOKEN_ID", NULL, MODAL,
	    "Modal token ID (overrides environment/default auth)" },
	{ "modal-token-secret", OPT_STR, F(modal_token_secret), 0, NULL,
	    "MODAL_TOKEN_SECRET", NULL, MODAL,
	    "Modal token secret (overrides environment/default auth)" },
	{ "modal-app-name", OPT_STR, F(modal_app_name), 0, "kilntainers",
	    "MODAL_APP_NAME", NULL, MODAL, "Modal app name" },
	{ "modal-cpu", OPT_STR, F(modal_cpu), 0, "1.0", "MODAL_CPU", NULL,
	    MODAL, "CPU cores (fractional, default: 1.0)" },
	{ "modal-memory", OPT_STR, F(modal_memory), 0, "512", "MODAL_MEMORY",
	    NULL, MODAL, "Memory in MiB (default: 512)" },
	{ "gpu", OPT_STR, F(gpu), 0, NULL, "GPU", NULL, MODAL,
	    "GPU type (e.g., \"A10G\", \"H100\")" },
	{ "region", OPT_STR, F(region), 0, NULL, "REGION", NULL, MODAL,
	    "Geographic region (e.g., \"us-east\")" },
	{ "sandbox-timeout", OPT_STR, F(sandbox_timeout), 0, "3600",
	    "SANDBOX_TIMEOUT", NULL, MODAL,
	    "Sandbox lifetime timeout in seconds (default: 3600, max 86400)" },
	{ "wasm-path", OPT_STR, F(wasm_path), 0, NULL, "WASM_PATH", NULL, WASM,
	    "Path to the .wasm file to execute (required for wasm backend)" },
	{ "wasm-max-memory", OPT_STR, F(wasm_max_memory), 0, "256",
	    "WASM_MAX_MEMORY", NULL, WASM, "Max WASM memory in MiB (default: 256)" },
	{ "wasm-fuel", OPT_STR, F(wasm_fuel), 0, NULL, "WASM_FUEL", NULL, WASM,
	    "WASM instruction fuel limit (default: unlimited)" },
	{ "session-url", OPT_STR, F(session_url), 0, NULL, "URL", NULL, DEPL,
	    "Address of the session service (default: in this process)" },
	{ "inventory-url", OPT_STR, F(inventory_url), 0, NULL, "URL", NULL,
	    DEPL, "Address of the inventory service (default: in this process)" },
	{ "driver-url", OPT_LIST, F(driver_urls), F(n_driver_urls), NULL,
	    "[ID=]URL", NULL, DEPL,
	    "Address of a driver service; repeat for several engine hosts "
	    "(default: one driver in this process)" },
	{ "cluster", OPT_STR, F(cluster), 0, NULL, "FILE", NULL, DEPL,
	    "Cluster configuration: 'option = value' lines (session-url, "
	    "inventory-url, driver-url, tls-ca, tls-cert, ...); flags override" },
	{ "tls-ca", OPT_STR, F(tls_ca), 0, NULL, "FILE", NULL, DEPL,
	    "The cluster CA (PEM) that every tls+tcp:// peer must be signed by" },
	{ "tls-cert", OPT_STR, F(tls_cert), 0, NULL, "FILE", NULL, DEPL,
	    "This service's certificate and private key (one PEM file)" },
	{ "allow-plain-tcp", OPT_TRUE, F(allow_plain_tcp), 0, NULL, NULL, NULL,
	    DEPL, "Allow tcp:// without TLS to other hosts (trusted networks only)" },
	{ "listen", OPT_STR, F(listen), 0, NULL, "URL", NULL, DEPL,
	    "Address a service listens on (service programs only)" },
	{ "driver-id", OPT_STR, F(driver_id), 0, "docker-1", "ID", NULL, DEPL,
	    "Identity of this driver instance (default: docker-1)" },
	{ "driver-workers", OPT_LONG, F(driver_workers), 0, "64", "N", NULL,
	    DEPL, "Engine calls a driver runs at once (default: 64)" },
};
#define NOPTS (sizeof(opts) / sizeof(*opts))

static const char *const groups[] = { CORE, DESC, DOCK, FLY, E2B, MODAL,
	WASM, DEPL };

void
msc_cfg_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void
usage(FILE *f)
{
	fputs("usage: " PROG " [-h] [--version] [--backend {docker,e2b,fly,"
	      "go_busybox,modal,wasm}] [--transport {stdio,http}] [...]\n",
	    f);
}

static void
help(void)
{
	usage(stdout);
	printf("\nMCP server providing isolated Linux sandboxes for LLM agent "
	       "shell execution.\n\noptions:\n  -h, --help            show "
	       "this help message and exit\n  --version             show the "
	       "version and exit\n");
	for (size_t g = 0; g < sizeof(groups) / sizeof(*groups); g++) {
		printf("\n%s:\n", groups[g]);
		for (size_t i = 0; i < NOPTS; i++) {
			const struct opt *o = &opts[i];
			char lhs[128];

			if (o->group != groups[g])
				continue;
			if (o->kind == OPT_NEG)
				snprintf(lhs, sizeof(lhs), "--%s, --no-%s",
				    o->name, o->name);
			else if (o->choices != NULL)
				snprintf(lhs, sizeof(lhs), "--%s {%s}", o->name,
				    o->choices);
			else if (o->metavar != NULL)
				snprintf(lhs, sizeof(lhs), "--%s %s", o->name,
				    o->metavar);
			else
				snprintf(lhs, sizeof(lhs), "--%s", o->name);
			if (strlen(lhs) < 22)
				printf("  %-22s%s\n", lhs, o->help);
			else
				printf("  %s\n                        %s\n", lhs,
				    o->help);
		}
	}
}

static bool
parse_long(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0')
		return false;
	*out = v;
	return true;
}

static int
parse_error(const char *fmt, const char *a, const char *b)
{
	usage(stderr);
	fputs(PROG ": error: ", stderr);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return -EINVAL;
}

static bool
in_choices(const char *choices, const char *v)
{
	size_t n = strlen(v);

	for (const char *p = choices; *p != '\0';) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == n && strncmp(p, v, n) == 0)
			return true;
		p += len + (comma != NULL);
	}
	return false;
}

/* Finds an option by exact name or unique prefix; *neg for --no-<x>. */
static const struct opt *
find_opt(const char *name, size_t len, bool *neg, bool *ambiguous)
{
	const struct opt *hit = NULL;
	int hits = 0;

	*ambiguous = false;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < NOPTS; i++) {
			const char *n = opts[i].name;
			char nn[64];

			if (pass == 1) {
				if (opts[i].kind != OPT_NEG)
					continue;
				snprintf(nn, sizeof(nn), "no-%s", n);
				n = nn;
			}
			if (strncmp(n, name, len) != 0)
				continue;
			if (strlen(n) == len) {
				*neg = pass == 1;
				return &opts[i];
			}
			hit = &opts[i];
			*neg = pass == 1;
			hits++;
		}
	}
	if (hits > 1) {
		*ambiguous = true;
		return NULL;
	}
	return hit;
}

static int
set_value(struct msc_cfg *cfg, const struct opt *o, const char *v)
{
	char *base = (char *)cfg;

	switch (o->kind) {
	case OPT_STR:
		if (o->choices != NULL && !in_choices(o->choices, v))
			return parse_error("argument --%s: invalid choice: '%s'",
			    o->name, v);
		*(const char **)(base + o->off) = v;
		return 0;
	case OPT_LONG:
		if (!parse_long(v, (long *)(base + o->off)))
			return parse_error(
			    "argument --%s: invalid int value: '%s'", o->name, v);
		return 0;
	case OPT_LIST: {
		const char ***arr = (const char ***)(base + o->off);
		size_t *n = (size_t *)(base + o->count_off);
		const char **grown = realloc(*arr, (*n + 1) * sizeof(**arr));

		if (grown == NULL)
			return -ENOMEM;
		grown[(*n)++] = v;
		*arr = grown;
		return 0;
	}
	default:
		return -EINVAL;
	}
}

static void
set_defaults(struct msc_cfg *cfg)
{
	const char *env;

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];
		char *base = (char *)cfg;

		if (o->def == NULL)
			continue;
		if (o->kind == OPT_STR)
			*(const char **)(base + o->off) = o->def;
		else if (o->kind == OPT_LONG)
			(void)parse_long(o->def, (long *)(base + o->off));
		else if (o->kind == OPT_NEG)
			*(bool *)(base + o->off) = o->def[0] == '1';
	}
	if ((env = getenv("KILNTAINERS_AUTH_TOKEN")) != NULL && *env != '\0')
		cfg->auth_token = env;
	if ((env = getenv("FLY_APP_NAME")) != NULL && *env != '\0')
		cfg->fly_app = env;
	if ((env = getenv("FLY_REGION")) != NULL && *env != '\0')
		cfg->fly_region = env;
	if ((env = getenv("FLY_ORG")) != NULL && *env != '\0')
		cfg->fly_org = env;
	if ((env = getenv("FLY_API_HOSTNAME")) != NULL && *env != '\0')
		cfg->fly_api_url = env;
	if ((env = getenv("FLY_API_TOKEN")) != NULL && *env != '\0')
		cfg->fly_token = env;
	else if ((env = getenv("FLY_TOKEN")) != NULL && *env != '\0')
		cfg->fly_token = env;
	cfg->lifecycle_tools = msc_cfg_truthy(getenv("ENABLE_LIFECYCLE_TOOLS"));
}

static int
parse_args(struct msc_cfg *cfg, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val = NULL;
		const struct opt *o;
		bool neg = false, ambiguous;
		size_t len;
		int rv;

		if (strcmp(a, "-h") == 0)
			a = "--help";
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
			return parse_error("unrecognized arguments: %s%s", a, "");
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		o = find_opt(a, len, &neg, &ambiguous);
		if (o == NULL)
			return parse_error(ambiguous
				? "ambiguous option: --%s%s"
				: "unrecognized arguments: --%s%s",
			    a, "");
		switch (o->kind) {
		case OPT_HELP:
			help();
			return MSC_CFG_EXIT_HELP;
		case OPT_VERSION:
			printf("mcp-sandbox-computer %s\n", MSC_VERSION);
			return MSC_CFG_EXIT_HELP;
		case OPT_TRUE:
		case OPT_NEG:
			if (eq != NULL)
				return parse_error(
				    "argument --%s: ignored explicit argument '%s'",
				    o->name, eq + 1);
			*(bool *)((char *)cfg + o->off) = !neg;
			continue;
		default:
			break;
		}
		if (eq != NULL)
			val = eq + 1;
		else if (i + 1 < argc &&
		    (strncmp(argv[i + 1], "-", 1) != 0 || o->kind == OPT_LIST ||
			parse_long(argv[i + 1], &(long){ 0 })))
			val = argv[++i];
		else
			return parse_error("argument --%s: expected one argument%s",
			    o->name, "");
		if ((rv = set_value(cfg, o, val)) != 0)
			return rv;
	}
	return MSC_CFG_OK;
}

/* Keeps a string read from the cluster file alive with the cfg. */
static char *
own(struct msc_cfg *cfg, char *str)
{
	char **grown = realloc(cfg->owned, (cfg->n_owned + 1) * sizeof(*grown));

	if (grown == NULL) {
		free(str);
		return NULL;
	}
	cfg->owned = grown;
	cfg->owned[cfg->n_owned++] = str;
	return str;
}

/* Applies "name = value" lines of `path` as if given as --name=value. */
static int
load_cluster(struct msc_cfg *cfg, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int lineno = 0, rv = 0;

	if (f == NULL) {
		msc_cfg_error("cannot read --cluster '%s'", path);
		return -EINVAL;
	}
	while (rv == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *k = line, *eq, *v, *arg, *argv[2];
		size_t n;

		lineno++;
		while (*k == ' ' || *k == '\t')
			k++;
		if (*k == '#' || *k == '\n' || *k == '\0')
			continue;
		if ((eq = strchr(k, '=')) == NULL) {
			msc_cfg_error("%s:%d: expected 'option = value'", path,
			    lineno);
			rv = -EINVAL;
			break;
		}
		v = eq + 1;
		while (eq > k && (eq[-1] == ' ' || eq[-1] == '\t'))
			eq--;
		*eq = '\0';
		while (*v == ' ' || *v == '\t')
			v++;
		n = strcspn(v, "\r\n");
		while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		v[n] = '\0';
		if (asprintf(&arg, "--%s=%s", k, v) < 0 ||
		    own(cfg, arg) == NULL) {
			rv = -ENOMEM;
			break;
		}
		argv[0] = "cluster";
		argv[1] = arg;
		rv = parse_args(cfg, 2, argv);
	}
	fclose(f);
	return rv;
}

int
msc_cfg_parse(struct msc_cfg *cfg, int argc, char **argv)
{
	int rv;

	set_defaults(cfg);
	/* The cluster file first, so that flags override it. */
	for (int i = 1; i < argc; i++) {
		const char *path = NULL;

		if (strncmp(argv[i], "--cluster=", 10) == 0)
			path = argv[i] + 10;
		else if (strcmp(argv[i], "--cluster") == 0 && i + 1 < argc)
			path = argv[i + 1];
		if (path != NULL && (rv = load_cluster(cfg, path)) != 0)
			return rv;
	}
	if ((rv = parse_args(cfg, argc, argv)) != 0)
		return rv;
	if (cfg->n_driver_urls > 0)
		(void)msc_cfg_driver(cfg, 0, (char[64]){ 0 }, 64,
		    &cfg->driver_url);
	return MSC_CFG_OK;
}

int
msc_cfg_driver(const struct msc_cfg *cfg, size_t i, char *id, size_t idlen,
    const char **urlp)
{
	const char *e, *eq;

	if (i >= cfg->n_driver_urls)
		return -ENOENT;
	e = cfg->driver_urls[i];
	eq = strchr(e, '=');
	/* "ID=URL", unless the '=' is inside the URL ("...?x=y"). */
	if (eq != NULL && strstr(e, "://") > eq) {
		snprintf(id, idlen, "%.*s", (int)(eq - e), e);
		*urlp = eq + 1;
	} else {
		snprintf(id, idlen, "docker-%zu", i + 1);
		*urlp = e;
	}
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
	if (!http && cfg->session_timeout != 300) {
		msc_cfg_error("--session-timeout is only valid with --transport "
			      "http. In stdio mode, the session lives as long as "
			      "the process.");
		return -EINVAL;
	}
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
	if (http && !loopback &&
	    (cfg->auth_token == NULL || *cfg->auth_token == '\0') &&
	    !cfg->allow_unauthenticated_http) {
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
	if (strcmp(cfg->engine, "docker") != 0 &&
	    strcmp(cfg->engine, "podman") != 0) {
		msc_cfg_error("--engine must be docker or podman, got: %s",
		    cfg->engine);
		return -EINVAL;
	}
	return 0;
}

void
msc_cfg_fini(struct msc_cfg *cfg)
{
	for (size_t i = 0; i < cfg->n_owned; i++)
		free(cfg->owned[i]);
	free(cfg->owned);
	free(cfg->driver_urls);
	cfg->owned = NULL;
	cfg->driver_urls = NULL;
	cfg->n_owned = cfg->n_driver_urls = 0;
	free(cfg->run_flags);
	free(cfg->e2b_metadata);
	free(cfg->e2b_env);
	cfg->run_flags = NULL;
	cfg->e2b_metadata = cfg->e2b_env = NULL;
}

bool
msc_cfg_truthy(const char *s)
{
	return s != NULL &&
	    (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 ||
		strcasecmp(s, "yes") == 0 || strcasecmp(s, "on") == 0);
}
