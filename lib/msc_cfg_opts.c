/*
 * msc_cfg_opts.c - the options every service shares: names, kinds,
 * defaults, help texts and groups (the reference's core ones, the tool
 * description, the deployment ones), each marked with the roles that take
 * it; and --help. A backend's options are in its own folder's table.
 */
#include "msc_cfg_int.h"
#include "msc_backend.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define F(x) offsetof(struct msc_cfg, x)
#define CORE MSC_CFG_GROUP_CORE
#define DESC MSC_CFG_GROUP_DESC
#define DEPL MSC_CFG_GROUP_DEPL

const struct msc_cfg_opt msc_cfg_opts[] = {
	{ "help", MSC_OPT_HELP, 0, 0, NULL, NULL, NULL, NULL,
	    "show this help message and exit",
	    MSC_PROG_ALL, NULL },
	{ "version", MSC_OPT_VERSION, 0, 0, NULL, NULL, NULL, NULL,
	    "show the version and exit",
	    MSC_PROG_ALL, NULL },
	{ "backend", MSC_OPT_BACKEND, F(backend), 0, NULL, "BACKEND",
	    NULL, CORE,
	    "Backend to use",
	    MSC_PROG_DRIVER, NULL },
	{ "transport", MSC_OPT_STR, F(transport), 0, "stdio", "TRANSPORT",
	    "stdio,http", CORE, "MCP transport (default: stdio)",
	    MSC_PROG_EDGE, NULL },
	{ "host", MSC_OPT_STR, F(host), 0, "127.0.0.1", "HOST", NULL, CORE,
	    "HTTP bind address (default: 127.0.0.1, HTTP mode only)",
	    MSC_PROG_EDGE, NULL },
	{ "port", MSC_OPT_LONG, F(port), 0, "8435", "PORT", NULL, CORE,
	    "HTTP listen port (default: 8435, HTTP mode only)",
	    MSC_PROG_EDGE, NULL },
	{ "timeout", MSC_OPT_LONG, F(timeout), 0, "120", "TIMEOUT", NULL, CORE,
	    "Default exec timeout in seconds (default: 120)",
	    MSC_PROG_SESSION | MSC_PROG_DRIVER, NULL },
	{ "output-limit", MSC_OPT_LONG, F(output_limit), 0, "2097152",
	    "OUTPUT_LIMIT", NULL, CORE,
	    "Max combined stdout+stderr bytes per exec (default: 2097152 = 2 MiB)",
	    MSC_PROG_SESSION, NULL },
	{ "reply-output-limit", MSC_OPT_LONG, F(reply_output_limit), 0, "8192",
	    "BYTES", NULL, CORE,
	    "Most stdout+stderr bytes one reply carries: longer output comes as "
	    "its head and tail, and is saved whole in the computer at a path "
	    "the reply names; 0: the whole output, up to --output-limit, as "
	    "the reference (default: 8192)",
	    MSC_PROG_SESSION, NULL },
	{ "session-timeout", MSC_OPT_LONG, F(session_timeout), 0, "300",
	    "SESSION_TIMEOUT", NULL, CORE,
	    "Idle session timeout in seconds (default: 300, HTTP mode only)",
	    MSC_PROG_EDGE | MSC_PROG_SESSION, NULL },
	{ "max-session-computers", MSC_OPT_LONG, F(max_session_computers), 0,
	    "16", "N", NULL, CORE,
	    "Computers one session may hold at once (default: 16)",
	    MSC_PROG_SESSION, NULL },
	{ "max-sandboxes", MSC_OPT_LONG, F(max_sandboxes), 0, "1024", "N",
	    NULL, CORE,
	    "Live sandbox handles (MCP 2026-07-28) the server holds at once "
	    "(default: 1024)",
	    MSC_PROG_SESSION, NULL },
	{ "max-session-commands", MSC_OPT_LONG, F(max_session_commands), 0, "16",
	    "N", NULL, CORE,
	    "Commands one session may have in flight at once; more are "
	    "refused (default: 16)",
	    MSC_PROG_SESSION, NULL },
	{ "max-session-tasks", MSC_OPT_LONG, F(max_session_tasks), 0, "64", "N",
	    NULL, CORE,
	    "MCP tasks one session may hold at once, working or kept; past "
	    "it a call is answered without a task (default: 64)",
	    MSC_PROG_SESSION, NULL },
	{ "task-ttl", MSC_OPT_LONG, F(task_ttl), 0, "3600", "SECONDS", NULL, CORE,
	    "How long an MCP task's result is kept past its command's timeout "
	    "(default: 3600)",
	    MSC_PROG_SESSION, NULL },
	{ "max-pending-calls", MSC_OPT_LONG, F(max_pending_calls), 0, "4096",
	    "N", NULL, CORE,
	    "Tool calls the session service has in flight at once, all "
	    "sessions together; more are refused (default: 4096)",
	    MSC_PROG_SESSION, NULL },
	{ "max-principal-sessions", MSC_OPT_LONG, F(max_principal_sessions), 0,
	    "25000", "N", NULL, CORE,
	    "Sessions and handles one principal of --tokens-file may hold; "
	    "past it its least recently used unused session is ended, else "
	    "refused (default: 25000; 0: no share)",
	    MSC_PROG_SESSION, NULL },
	{ "max-principal-sandboxes", MSC_OPT_LONG, F(max_principal_sandboxes), 0,
	    "256", "N", NULL, CORE,
	    "Live sandbox handles one principal of --tokens-file may hold "
	    "(default: 256; 0: no share)",
	    MSC_PROG_SESSION, NULL },
	{ "max-principal-calls", MSC_OPT_LONG, F(max_principal_calls), 0, "1024",
	    "N", NULL, CORE,
	    "Tool calls one principal of --tokens-file may have in flight, all "
	    "its sessions together (default: 1024; 0: no share)",
	    MSC_PROG_SESSION, NULL },
	{ "max-principal-tasks", MSC_OPT_LONG, F(max_principal_tasks), 0, "1024",
	    "N", NULL, CORE,
	    "MCP tasks one principal of --tokens-file may hold, working or "
	    "kept (default: 1024; 0: no share)",
	    MSC_PROG_SESSION, NULL },
	{ "auth-token", MSC_OPT_SECRET, F(auth_token), 0, NULL, "AUTH_TOKEN", NULL,
	    CORE, "Bearer token for /mcp (default: KILNTAINERS_AUTH_TOKEN)",
	    MSC_PROG_EDGE, "KILNTAINERS_AUTH_TOKEN" },
	{ "auth-token-file", MSC_OPT_SECRET_FILE, F(auth_token), 0, NULL, "FILE",
	    NULL, CORE, "Read the bearer token from the first line of FILE",
	    MSC_PROG_EDGE, NULL },
	{ "tokens-file", MSC_OPT_STR, F(tokens_file), 0, NULL, "PATH", NULL, CORE,
	    "Principals for /mcp: one 'NAME TOKEN' per line, '#' comments; "
	    "re-read on SIGHUP (default: KILNTAINERS_TOKENS_FILE)",
	    MSC_PROG_EDGE, NULL },
	{ "allow-unauthenticated-http", MSC_OPT_TRUE,
	    F(allow_unauthenticated_http), 0, NULL, NULL, NULL, CORE,
	    "Explicitly allow a non-loopback listener without built-in auth",
	    MSC_PROG_EDGE, NULL },
	{ "allowed-host", MSC_OPT_LIST, F(allowed_hosts), F(n_allowed_hosts), NULL,
	    "NAME[:PORT]", NULL, CORE,
	    "Host header to accept on /mcp besides the loopback names (default: KILNTAINERS_ALLOWED_HOSTS). Repeatable.",
	    MSC_PROG_EDGE, NULL },
	{ "allowed-origin", MSC_OPT_LIST, F(allowed_origins), F(n_allowed_origins),
	    NULL, "ORIGIN", NULL, CORE,
	    "Origin to accept on /mcp besides loopback ones, e.g. https://app.example (default: KILNTAINERS_ALLOWED_ORIGINS). Repeatable.",
	    MSC_PROG_EDGE, NULL },
	{ "max-address-connections", MSC_OPT_LONG, F(max_address_connections), 0,
	    "256", "N", NULL, CORE,
	    "HTTP connections one client address (an IPv6 one by its /64) may "
	    "hold at once; past it its oldest idle one is closed, else the new "
	    "one is refused (default: 256, or "
	    "KILNTAINERS_MAX_ADDRESS_CONNECTIONS)",
	    MSC_PROG_EDGE, NULL },
	{ "trusted-proxy", MSC_OPT_LIST, F(trusted_proxies), F(n_trusted_proxies),
	    NULL, "ADDR[,ADDR...]", NULL, CORE,
	    "Reverse proxy (an address or ADDR/PREFIX) whose X-Forwarded-For "
	    "or Forwarded header names the client; from anyone else those "
	    "headers are ignored (default: KILNTAINERS_TRUSTED_PROXIES). "
	    "Repeatable.",
	    MSC_PROG_EDGE, NULL },
	{ "shell", MSC_OPT_STR, F(shell), 0, "/bin/bash", "SHELL", NULL, CORE,
	    "Shell binary for command mode (e.g., /bin/bash, ash). Default: /bin/bash.",
	    MSC_PROG_DRIVER, NULL },
	{ "network", MSC_OPT_NEG, F(network), 0, "1", NULL, NULL, CORE,
	    "Enable network access in sandboxes (default: enabled); --no-network disables it",
	    MSC_PROG_EDGE | MSC_PROG_DRIVER, NULL },
	{ "network-allow", MSC_OPT_LIST, F(net_allow), F(n_net_allow), NULL,
	    "DOMAIN[,DOMAIN...]", NULL, CORE,
	    "Allowlist mode by default: computers reach only these domains "
	    "(wildcards such as *.pypi.example), over HTTP and HTTPS through "
	    "the server's proxy. Repeatable.",
	    MSC_PROG_DRIVER, NULL },
	{ "network-deny", MSC_OPT_LIST, F(net_deny), F(n_net_deny), NULL,
	    "DOMAIN[,DOMAIN...]", NULL, CORE,
	    "Domains refused even when --network-allow covers them. "
	    "Repeatable.",
	    MSC_PROG_DRIVER, NULL },
	{ "lease-timeout", MSC_OPT_LONG, F(lease_timeout), 0, "30", "SECONDS",
	    NULL, CORE, "A temporary computer whose server (or driver) is "
	    "gone ends by itself this long after the last renewal of its "
	    "lease (default: 30)",
	    MSC_PROG_DRIVER, NULL },
	{ "tools", MSC_OPT_STR, F(tools), 0, NULL, "GROUPS", NULL, DESC,
	    "Tool groups to offer, comma-separated: terminal (always on), "
	    "lifecycle (as ENABLE_LIFECYCLE_TOOLS=true), processes "
	    "(background processes), files (file_read, file_write, "
	    "file_edit, computer_upload, computer_download), snapshots (snapshots, rollback and forks), ports "
	    "(preview URLs: computer_expose_port, computer_unexpose_port) "
	    "(default: KILNTAINERS_TOOLS, else terminal)",
	    MSC_PROG_EDGE, NULL },
	{ "workspace", MSC_OPT_STR, F(workspace), 0, NULL, "DIR", NULL, DESC,
	    "A local folder computer_upload and computer_download (--tools "
	    "files) may read and write, besides the client's MCP roots; over "
	    "HTTP the only one (default: KILNTAINERS_WORKSPACE, else none)",
	    MSC_PROG_EDGE, NULL },
	{ "max-background-processes", MSC_OPT_LONG, F(max_background_processes),
	    0, "16", "N", NULL, DESC,
	    "Background processes (--tools processes) one computer runs at "
	    "once; more are refused (default: 16)",
	    MSC_PROG_EDGE, NULL },
	{ "process-log-limit", MSC_OPT_LONG, F(process_log_limit), 0, "1048576",
	    "BYTES", NULL, DESC,
	    "Output a background process keeps in its computer, the newest "
	    "bytes (default: 1048576)",
	    MSC_PROG_EDGE, NULL },
	{ "max-snapshots", MSC_OPT_LONG, F(max_snapshots), 0, "50", "N", NULL,
	    CORE, "Snapshots (--tools snapshots) a driver keeps at once; "
	    "more are refused until some are deleted (default: "
	    "KILNTAINERS_MAX_SNAPSHOTS, else 50)",
	    MSC_PROG_DRIVER, NULL },
	{ "max-principal-snapshots", MSC_OPT_LONG, F(max_principal_snapshots), 0,
	    "25", "N", NULL, CORE, "Snapshots one principal of --tokens-file "
	    "may keep in a driver, of --max-snapshots (default: "
	    "KILNTAINERS_MAX_PRINCIPAL_SNAPSHOTS, else 25; 0: no share)",
	    MSC_PROG_DRIVER, NULL },
	{ "share-snapshots", MSC_OPT_TRUE, F(share_snapshots), 0, NULL, NULL,
	    NULL, CORE, "Every principal may list, restore and fork every "
	    "snapshot (default: KILNTAINERS_SHARE_SNAPSHOTS; else a snapshot "
	    "is its maker's alone; deleting stays the maker's)",
	    MSC_PROG_DRIVER, NULL },
	{ "tool-instruction-override", MSC_OPT_STR, F(tool_instruction_override),
	    0, NULL, "TOOL_INSTRUCTION_OVERRIDE", NULL, DESC,
	    "Replace the entire terminal_execute tool description",
	    MSC_PROG_EDGE, NULL },
	{ "extended-tool-instruction", MSC_OPT_STR, F(extended_tool_instruction),
	    0, NULL, "EXTENDED_TOOL_INSTRUCTION", NULL, DESC,
	    "Append to the backend's default tool description",
	    MSC_PROG_EDGE, NULL },
	{ "session-url", MSC_OPT_STR, F(session_url), 0, NULL, "URL", NULL, DEPL,
	    "Address of the session service (default: in this process)",
	    MSC_PROG_EDGE, NULL },
	{ "inventory-url", MSC_OPT_STR, F(inventory_url), 0, NULL, "URL", NULL,
	    DEPL, "Address of the inventory service (default: in this process)",
	    MSC_PROG_SESSION, NULL },
	{ "driver-url", MSC_OPT_LIST, F(driver_urls), F(n_driver_urls), NULL,
	    "[ID=]URL", NULL, DEPL,
	    "Address of a driver service; repeat for several engine hosts "
	    "(default: one driver in this process)",
	    MSC_PROG_SESSION | MSC_PROG_INVENTORY, NULL },
	{ "cluster", MSC_OPT_STR, F(cluster), 0, NULL, "FILE", NULL, DEPL,
	    "Cluster configuration: 'option = value' lines (session-url, "
	    "inventory-url, driver-url, tls-ca, tls-cert, ...); flags override",
	    MSC_PROG_ALL, NULL },
	{ "tls-ca", MSC_OPT_STR, F(tls_ca), 0, NULL, "FILE", NULL, DEPL,
	    "The cluster CA (PEM) that every tls+tcp:// peer must be signed by",
	    MSC_PROG_ALL, NULL },
	{ "tls-cert", MSC_OPT_STR, F(tls_cert), 0, NULL, "FILE", NULL, DEPL,
	    "This service's certificate and private key (one PEM file)",
	    MSC_PROG_ALL, NULL },
	{ "allow-plain-tcp", MSC_OPT_TRUE, F(allow_plain_tcp), 0, NULL, NULL, NULL,
	    DEPL, "Allow tcp:// without TLS, loopback included: no "
	    "authentication, any peer may call anything (trusted networks "
	    "only)",
	    MSC_PROG_ALL, NULL },
	{ "listen", MSC_OPT_STR, F(listen), 0, NULL, "URL", NULL, DEPL,
	    "Address a service listens on (service programs only)",
	    MSC_PROG_SERVICES, NULL },
	{ "driver-id", MSC_OPT_STR, F(driver_id), 0, MSC_DRIVER_ID_STEM "-1",
	    "ID", NULL, DEPL, "Identity of this driver instance (default: "
	    MSC_DRIVER_ID_STEM "-1)",
	    MSC_PROG_DRIVER, NULL },
	{ "driver-workers", MSC_OPT_LONG, F(driver_workers), 0, "64", "N", NULL,
	    DEPL, "Engine calls a driver runs at once (default: 64)",
	    MSC_PROG_DRIVER, NULL },
	{ "driver-owner-workers", MSC_OPT_LONG, F(driver_owner_workers), 0, "0",
	    "N", NULL, DEPL, "Commands of one session a driver runs at once; "
	    "the rest wait their turn (default: 0 = a quarter of "
	    "--driver-workers, at least 1)",
	    MSC_PROG_DRIVER, NULL },
};
const size_t msc_cfg_nopts = sizeof(msc_cfg_opts) / sizeof(*msc_cfg_opts);


const struct msc_program msc_prog_edge = { "msc-edge", "The MCP edge "
	"(stdio or Streamable HTTP) in front of a session service at "
	"--session-url.", MSC_PROG_EDGE, NULL, 0 };
const struct msc_program msc_prog_session = { "msc-session", "The session "
	"service: sessions, their computers and commands, over the inventory "
	"and drivers.", MSC_PROG_SESSION, NULL, 0 };
const struct msc_program msc_prog_inventory = { "msc-inventory", "The "
	"inventory service: which driver holds which computer, who owns it, "
	"placement.", MSC_PROG_INVENTORY, NULL, 0 };

/* The programs of each role, for an option of another role. */
static const struct {
	unsigned role;
	const char *names;
} role_names[] = {
	{ MSC_PROG_EDGE, "msc-edge" },
	{ MSC_PROG_SESSION, "msc-session" },
	{ MSC_PROG_INVENTORY, "msc-inventory" },
	{ MSC_PROG_DRIVER, "the drivers (msc-*-driver)" },
};

void
msc_cfg_owners(const struct msc_cfg_opt *o, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(role_names) / sizeof(*role_names) &&
	    used < len; i++) {
		if ((o->progs & role_names[i].role) == 0)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s, ",
		    role_names[i].names);
	}
	if (used < len)
		snprintf(buf + used, len - used, "mcp-sandbox-computer");
}

size_t
msc_cfg_tables_of(const struct msc_program *prog,
    const struct msc_cfg_table **out, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < prog->nbackends; i++) {
		const struct msc_cfg_table *t = prog->backends[i]->options;
		bool seen = t == NULL;

		for (size_t j = 0; j < k && !seen; j++)
			seen = out[j] == t;
		if (!seen && k < n)
			out[k++] = t;
	}
	return k;
}

/* "a,b,c": the program's backends, sorted, into buf. */
static void
backend_choices(const struct msc_program *prog, char *buf, size_t len)
{
	const char *last = "";
	size_t used = 0;

	buf[0] = '\0';
	for (size_t n = 0; n < prog->nbackends; n++) {
		const char *next = NULL;

		for (size_t i = 0; i < prog->nbackends; i++) {
			const char *b = prog->backends[i]->name;

			if (strcmp(b, last) > 0 &&
			    (next == NULL || strcmp(b, next) < 0))
				next = b;
		}
		if (next == NULL || used >= len)
			break;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
		    used > 0 ? "," : "", next);
		last = next;
	}
}

void
msc_cfg_usage(FILE *f, const struct msc_program *prog)
{
	char choices[256];

	if (prog->roles != MSC_PROG_ALL) {
		fprintf(f, "usage: %s [-h] [--version] [OPTION...]\n",
		    prog->name);
		return;
	}
	backend_choices(prog, choices, sizeof(choices));
	fprintf(f, "usage: " PROG " [-h] [--version] [--backend {%s}] "
	    "[--transport {stdio,http}] [...]\n", choices);
}

static void
help_option(const struct msc_program *prog, const struct msc_cfg_opt *o)
{
	char lhs[320], choices[256], help[512];
	const char *text = o->help;

	if (o->kind == MSC_OPT_BACKEND) {
		backend_choices(prog, choices, sizeof(choices));
		snprintf(help, sizeof(help), "%s (default: %s)", o->help,
		    prog->nbackends > 0 ? prog->backends[0]->name : "none");
		text = help;
		snprintf(lhs, sizeof(lhs), "--%s {%s}", o->name, choices);
	} else if (o->kind == MSC_OPT_NEG)
		snprintf(lhs, sizeof(lhs), "--%s, --no-%s", o->name, o->name);
	else if (o->choices != NULL)
		snprintf(lhs, sizeof(lhs), "--%s {%s}", o->name, o->choices);
	else if (o->metavar != NULL)
		snprintf(lhs, sizeof(lhs), "--%s %s", o->name, o->metavar);
	else
		snprintf(lhs, sizeof(lhs), "--%s", o->name);
	if (strlen(lhs) < 22)
		printf("  %-22s%s\n", lhs, text);
	else
		printf("  %s\n                        %s\n", lhs, text);
}

#define MAX_TABLES 16

/*
 * Prints the options of heading `group`: lib's of prog's roles, then
 * each table's, an option once even when several tables define it.
 */
static void
help_group(const struct msc_program *prog,
    const struct msc_cfg_table *const *tables, size_t ntables,
    const char *group)
{
	bool header = false;

	for (size_t t = 0; t <= ntables; t++) {
		const struct msc_cfg_opt *opts = t == 0 ? msc_cfg_opts :
		    tables[t - 1]->opts;
		size_t nopts = t == 0 ? msc_cfg_nopts : tables[t - 1]->nopts;

		for (size_t i = 0; i < nopts; i++) {
			const struct msc_cfg_opt *o = &opts[i];
			bool dup = false;

			if (strcmp(o->group != NULL ? o->group : "", group) != 0 ||
			    (t == 0 && (o->progs & prog->roles) == 0))
				continue;
			/* Defined by an earlier table (--image)? */
			for (size_t j = 0; t > 0 && j < msc_cfg_nopts && !dup; j++)
				dup = (msc_cfg_opts[j].progs & prog->roles) != 0 &&
				    strcmp(msc_cfg_opts[j].name, o->name) == 0;
			for (size_t u = 1; u < t && !dup; u++)
				for (size_t j = 0; j < tables[u - 1]->nopts; j++)
					if (strcmp(tables[u - 1]->opts[j].name,
					    o->name) == 0)
						dup = true;
			if (dup)
				continue;
			if (!header)
				printf("\n%s:\n", group);
			header = true;
			help_option(prog, o);
		}
	}
}

void
msc_cfg_help(const struct msc_program *prog)
{
	const struct msc_cfg_table *tables[MAX_TABLES];
	size_t ntables = msc_cfg_tables_of(prog, tables, MAX_TABLES);
	const char *what = prog->roles == MSC_PROG_ALL
	    ? "MCP server providing isolated Linux sandboxes for LLM agent "
	      "shell execution." : prog->what;

	msc_cfg_usage(stdout, prog);
	printf("\n%s\n\noptions:\n  -h, --help            show this help "
	       "message and exit\n  --version             show the version "
	       "and exit\n", what);
	help_group(prog, tables, ntables, CORE);
	help_group(prog, tables, ntables, DESC);
	/* The backends' own headings, in the order they first appear. */
	for (size_t t = 0; t < ntables; t++)
		for (size_t i = 0; i < tables[t]->nopts; i++) {
			const char *g = tables[t]->opts[i].group;
			bool seen = strcmp(g, CORE) == 0 ||
			    strcmp(g, DESC) == 0 || strcmp(g, DEPL) == 0;

			for (size_t u = 0; u <= t && !seen; u++)
				for (size_t j = 0; j < (u < t ?
				    tables[u]->nopts : i) && !seen; j++)
					seen = strcmp(tables[u]->opts[j].group,
					    g) == 0;
			if (!seen)
				help_group(prog, tables, ntables, g);
		}
	help_group(prog, tables, ntables, DEPL);
}
