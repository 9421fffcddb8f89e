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
#include <stdio.h>

struct msc_cfg {
	/* core */
	const char *backend;
	const char *transport;
	const char *host;
	long port;
	long session_timeout;
	long timeout;
	long output_limit;
	const char *auth_token;
	bool allow_unauthenticated_http;
	const char **allowed_hosts;     /* --allowed-host, besides loopback */
	size_t n_allowed_hosts;
	const char **allowed_origins;   /* --allowed-origin */
	size_t n_allowed_origins;
	const char *shell;
	bool network;
	/* tool description */
	const char *tool_instruction_override;
	const char *extended_tool_instruction;
	/* docker */
	const char *engine;
	const char *docker_host;
	const char *image;
	const char *cpu;
	const char *memory;
	const char **run_flags;
	size_t n_run_flags;
	/* other backends: parsed for compatibility */
	const char *fly_cli, *fly_app, *fly_token, *fly_image, *fly_region;
	const char *fly_cpu_kind, *fly_cpus, *fly_memory, *fly_rootfs_size;
	const char *fly_api_url, *fly_org;
	const char *e2b_api_key, *e2b_template, *e2b_sandbox_timeout;
	const char *modal_token_id, *modal_token_secret, *modal_app_name;
	const char *modal_cpu, *modal_memory, *gpu, *region, *sandbox_timeout;
	const char *wasm_path, *wasm_max_memory, *wasm_fuel;
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
	long driver_owner_workers;      /* per owner; 0: a quarter */
	long max_session_computers;
	long max_session_commands;      /* TerminalExec calls in flight */
	long lease_timeout;             /* s a temporary outlives renewals */
	const char *cluster;            /* --cluster FILE */
	const char *tls_ca;
	const char *tls_cert;
	bool allow_plain_tcp;
	char **owned;                   /* strings read from --cluster */
	size_t n_owned;
	/* environment */
	bool lifecycle_tools;
};

/* Result of msc_cfg_parse beyond success. */
enum {
	MSC_CFG_OK = 0,
	MSC_CFG_EXIT_HELP = 1,    /* --help or --version was printed: exit 0 */
};

/*
 * Parses argv (argparse rules: --x=y, --x y, unique prefixes, -h).
 * argv must be writable: the value of --auth-token, --fly-token,
 * --e2b-api-key and --modal-token-secret is copied, overwritten in place
 * and warned about on stderr (without the value).
 * On a parse error prints usage and "kilntainers: error: ..." to stderr
 * and returns -EINVAL (the caller exits 2). Prints help or version to
 * stdout for --help/--version and returns MSC_CFG_EXIT_HELP.
 */
int msc_cfg_parse(struct msc_cfg *cfg, int argc, char **argv);

/*
 * The reference's startup validation (§6.2) and our own checks; prints
 * "kilntainers: error: <msg>" and returns -EINVAL (the caller exits 1).
 */
int msc_cfg_validate(const struct msc_cfg *cfg);

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

#endif /* MSC_CFG_H */
