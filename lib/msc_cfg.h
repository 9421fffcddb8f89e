/*
 * msc_cfg.h - the command line shared by every program (the all-in-one
 * server, each service, the edge): the reference's flags, defaults,
 * environment fallbacks, parse errors (exit 2) and startup validation
 * (exit 1), plus the service addresses of a split deployment.
 *
 * Strings in struct msc_cfg are borrowed from argv or the environment,
 * except the arrays of repeatable flags (run_flags, allowed_hosts, ...),
 * owned by the cfg, and secrets given as flags or read by --*-file, which
 * are copies owned by the cfg (free all with msc_cfg_fini). A secret
 * flag's argv bytes are blanked (ps shows "*").
 */
#ifndef MSC_CFG_H
#define MSC_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The programs that read a command line. Each parses, and lists in
 * --help, only the options marked for it (msc_cfg_opts.c); the all-in-one
 * server and the operator command line compose every service and take
 * them all.
 */
enum msc_prog {
	MSC_PROG_EDGE = 1u << 0,
	MSC_PROG_SESSION = 1u << 1,
	MSC_PROG_INVENTORY = 1u << 2,
	MSC_PROG_DOCKER_DRIVER = 1u << 3,
	MSC_PROG_FLY_DRIVER = 1u << 4,
	MSC_PROG_CLOUD_DRIVER = 1u << 5,
	MSC_PROG_WASM_DRIVER = 1u << 6,
};
#define MSC_PROG_DRIVERS                                                      \
	(MSC_PROG_DOCKER_DRIVER | MSC_PROG_FLY_DRIVER | MSC_PROG_CLOUD_DRIVER |  \
	    MSC_PROG_WASM_DRIVER)
#define MSC_PROG_SERVICES                                                     \
	(MSC_PROG_SESSION | MSC_PROG_INVENTORY | MSC_PROG_DRIVERS)
#define MSC_PROG_ALL (MSC_PROG_EDGE | MSC_PROG_SERVICES)

struct msc_cfg {
	unsigned prog;                  /* the program parsing: MSC_PROG_* */
	/* core */
	const char *backend;
	const char *transport;
	const char *host;
	long port;
	long session_timeout;
	long timeout;
	long output_limit;
	long reply_output_limit;        /* 0: the whole output (reference) */
	const char *auth_token;
	const char *tokens_file;        /* NAME TOKEN lines: the principals */
	bool allow_unauthenticated_http;
	const char **allowed_hosts;     /* --allowed-host, besides loopback */
	size_t n_allowed_hosts;
	const char **allowed_origins;   /* --allowed-origin */
	size_t n_allowed_origins;
	long max_address_connections;  /* HTTP connections per client */
	const char **trusted_proxies;   /* --trusted-proxy ADDR[/PREFIX] */
	size_t n_trusted_proxies;
	const char *shell;
	bool network;
	const char **net_allow;         /* --network-allow */
	size_t n_net_allow;
	const char **net_deny;          /* --network-deny */
	size_t n_net_deny;
	const char *proxy_dns;          /* --proxy-dns-server */
	const char **proxy_creds;       /* --proxy-credential */
	size_t n_proxy_creds;
	const char *proxy_cred_file;    /* --proxy-credential-file */
	/* tool description */
	const char *tool_instruction_override;
	const char *extended_tool_instruction;
	/* docker */
	const char *engine;
	const char *docker_host;
	const char *image;
	const char *runtime;            /* --runtime NAME, or NULL */
	const char *cpu;
	const char *memory;
	const char **run_flags;
	size_t n_run_flags;
	/* the Fly, E2B, Modal and WASM backends' options (their drivers') */
	const char *fly_cli, *fly_app, *fly_token, *fly_image, *fly_region;
	const char *fly_cpu_kind, *fly_cpus, *fly_memory, *fly_rootfs_size;
	const char *fly_api_url, *fly_org;
	const char *e2b_api_key, *e2b_template, *e2b_sandbox_timeout;
	const char *modal_token_id, *modal_token_secret, *modal_app_name;
	const char *modal_cpu, *modal_memory, *gpu, *region, *sandbox_timeout;
	const char *modal_ports;        /* --modal-ports: tunnels (issue 30) */
	const char *wasm_path, *wasm_max_memory, *wasm_fuel;
	const char *disk_quota;         /* --disk-quota SIZE, per computer */
	const char **e2b_metadata, **e2b_env;
	size_t n_e2b_metadata, n_e2b_env;
	/* deployment */
	const char *session_url;
	const char *inventory_url;
	const char *driver_url;         /* the first driver's address */
	const char **driver_urls;       /* every --driver-url, "[ID=]URL" */
	size_t n_driver_urls;
	const char *listen;
	const char *driver_id;
	long driver_workers;
	long driver_creations;           /* docker: creations at once */
	long warm_pool;                 /* docker: ready containers; -1: default */
	long warm_pool_max;             /* docker: what a burst grows it to */
	long warm_pool_shrink_after;    /* docker: s without a miss, per step down */
	long driver_owner_workers;      /* per owner; 0: a quarter */
	long max_session_computers;
	long max_sandboxes;             /* live sandbox handles */
	long max_session_commands;      /* a session's calls in flight */
	long max_pending_calls;         /* all sessions' calls in flight */
	long max_session_tasks;         /* MCP tasks held per session */
	long task_ttl;                  /* s a task is kept past its timeout */
	/* Each named principal's share (--tokens-file); 0: none. */
	long max_principal_sessions;
	long max_principal_sandboxes;
	long max_principal_calls;
	long max_principal_tasks;
	long lease_timeout;             /* s a temporary outlives renewals */
	const char *cluster;            /* --cluster FILE */
	const char *tls_ca;
	const char *tls_cert;
	bool allow_plain_tcp;
	char **owned;                   /* strings read from --cluster */
	size_t n_owned;
	const char *tools;              /* --tools / KILNTAINERS_TOOLS */
	/* --workspace / KILNTAINERS_WORKSPACE: a local folder that
	 * computer_upload and computer_download may use (NULL: none). */
	const char *workspace;
	long max_background_processes;  /* per computer */
	long process_log_limit;         /* bytes a background log keeps */
	long max_snapshots;             /* --max-snapshots, per driver */
	long max_principal_snapshots;   /* a principal's share of them */
	const char *preview_domain;     /* --preview-domain (issue 30) */
	const char *preview_listen;     /* --preview-listen HOST:PORT */
	bool share_snapshots;           /* any principal may use any one */
	/* environment, and --tools */
	bool lifecycle_tools;
	unsigned tool_groups;           /* MSC_TOOLS_* bits */
};

/*
 * Tool groups (--tools, msc_cfg_tools.c): terminal_execute and
 * computer_release are always on; the others are the operator's choice.
 */
enum {
	MSC_TOOLS_TERMINAL = 1u << 0,
	MSC_TOOLS_LIFECYCLE = 1u << 1,
	MSC_TOOLS_PROCESSES = 1u << 2,
	MSC_TOOLS_FILES = 1u << 3,
	MSC_TOOLS_SNAPSHOTS = 1u << 4,  /* issue 31 */
	MSC_TOOLS_PORTS = 1u << 5,      /* issue 30 */
};

/*
 * Sets cfg->tool_groups (and lifecycle_tools) from cfg->tools and
 * ENABLE_LIFECYCLE_TOOLS; an unknown group is an error (printed).
 */
int msc_cfg_tools_parse(struct msc_cfg *cfg);

/* Result of msc_cfg_parse beyond success. */
enum {
	MSC_CFG_OK = 0,
	MSC_CFG_EXIT_HELP = 1,    /* --help or --version was printed: exit 0 */
};

/*
 * Parses argv for program `prog` (an MSC_PROG_* bit, or MSC_PROG_ALL):
 * argparse rules (--x=y, --x y, unique prefixes, -h) over the options of
 * that program; another program's option is refused, naming whose it is.
 * The --cluster file is shared by every service: its lines for other
 * programs are skipped.
 * argv must be writable: the value of --auth-token, --fly-token,
 * --e2b-api-key and --modal-token-secret is copied, overwritten in place
 * and warned about on stderr (without the value).
 * On a parse error prints usage and "kilntainers: error: ..." to stderr
 * and returns -EINVAL (the caller exits 2). Prints help or version to
 * stdout for --help/--version and returns MSC_CFG_EXIT_HELP.
 */
int msc_cfg_parse(struct msc_cfg *cfg, unsigned prog, int argc, char **argv);

/*
 * The reference's startup validation (§6.2) and our own checks; prints
 * "kilntainers: error: <msg>" and returns -EINVAL (the caller exits 1).
 */
int msc_cfg_validate(const struct msc_cfg *cfg);

/*
 * The arguments of argv[1..] that program `prog` takes: its options with
 * their values, and whatever is no known option (its parse refuses that).
 * out has room for argc entries; they are borrowed from argv, and
 * out[n] = NULL. Returns n. Lets one command line start split services.
 */
int msc_cfg_select(unsigned prog, int argc, char **argv, char **out);

/* The MSC_PROG_* bit of program `name` ("msc-session"); 0 or -ENOENT. */
int msc_cfg_prog_by_name(const char *name, unsigned *progp);

/* Prints "kilntainers: error: <msg>" to stderr. */
void msc_cfg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void msc_cfg_fini(struct msc_cfg *cfg);

/*
 * Splits driver entry i ("ID=URL" or "URL") into id and url (borrowed
 * from cfg; a bare URL gets the id "docker-<i+1>"). Returns 0 or -ENOENT.
 */
int msc_cfg_driver(const struct msc_cfg *cfg, size_t i, char *id, size_t idlen,
    const char **urlp);

/* True for "true", "1", "yes", "on" (any case). */
bool msc_cfg_truthy(const char *s);

/*
 * A size: bytes, or a number (fractions allowed) with K, M, G or T and
 * an optional "i" and "B", in any case ("500M", "1g", "1GiB", "1.5GB"),
 * all powers of 1024 as docker reads them. 0 or -EINVAL.
 */
int msc_cfg_size(const char *s, uint64_t *out);
/* n as text for people: "1 GiB", "500 MiB", "1536 KiB", "1000 bytes". */
void msc_cfg_size_text(uint64_t n, char *buf, size_t len);

#endif /* MSC_CFG_H */
