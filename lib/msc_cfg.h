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
 * The roles a program plays: which of lib's shared options (msc_cfg_opts.c)
 * it takes. A driver program takes, besides MSC_PROG_DRIVER's, the option
 * tables of the backends it serves (struct msc_program); the all-in-one
 * server composes every role and every backend.
 */
enum msc_prog {
	MSC_PROG_EDGE = 1u << 0,
	MSC_PROG_SESSION = 1u << 1,
	MSC_PROG_INVENTORY = 1u << 2,
	MSC_PROG_DRIVER = 1u << 3,      /* a driver, of any backend */
};
#define MSC_PROG_SERVICES                                                     \
	(MSC_PROG_SESSION | MSC_PROG_INVENTORY | MSC_PROG_DRIVER)
#define MSC_PROG_ALL (MSC_PROG_EDGE | MSC_PROG_SERVICES)

/*
 * One option of a table. The offsets are into the struct the table fills:
 * struct msc_cfg for lib's table, the backend's own struct for a
 * backend's (msc_cfg_own). Several tables may define one name (two
 * backends take --image): a program with both sets both.
 * MSC_OPT_SECRET is a string that must not sit in argv: a copy is kept,
 * the argv bytes are blanked and a warning names `env` and --<name>-file.
 * MSC_OPT_SECRET_FILE (--<name>-file PATH) reads the first line of PATH
 * into the same field. MSC_OPT_BACKEND is --backend: its choices and
 * default are the program's backends.
 */
enum msc_opt_kind { MSC_OPT_STR, MSC_OPT_LONG, MSC_OPT_TRUE, MSC_OPT_NEG,
	MSC_OPT_LIST, MSC_OPT_HELP, MSC_OPT_VERSION, MSC_OPT_SECRET,
	MSC_OPT_SECRET_FILE, MSC_OPT_BACKEND };

struct msc_cfg_opt {
	const char *name;       /* without the leading "--" */
	enum msc_opt_kind kind;
	size_t off;             /* offset of the value in the table's struct */
	size_t count_off;       /* MSC_OPT_LIST: offset of the size_t count */
	const char *def;        /* default, as text; NULL = none */
	const char *metavar;
	const char *choices;    /* "a,b,c" or NULL */
	const char *group;      /* --help's heading (MSC_CFG_GROUP_*, or own) */
	const char *help;
	unsigned progs;         /* lib's table: the roles that take it (0 in
				 * a backend's table: its drivers') */
	const char *env;        /* MSC_OPT_SECRET: the variable it also
				 * comes from */
};

/* The headings of --help that lib's options use; a backend adds its own
 * ("NAME backend options"), listed between DESC and DEPL. */
#define MSC_CFG_GROUP_CORE "core options"
#define MSC_CFG_GROUP_DESC "tool description"
#define MSC_CFG_GROUP_DEPL "deployment options (split services)"

/*
 * A backend's part of the command line: its options, filling a struct
 * of `size` bytes of its own (msc_cfg_own), whose strings follow struct
 * msc_cfg's ownership rules.
 */
struct msc_cfg_table {
	const char *name;                       /* the backend's, for messages */
	const struct msc_cfg_opt *opts;
	size_t nopts;
	size_t size;
	/* Environment fallbacks, after the table's defaults; or NULL. */
	void (*env)(void *own);
	/* Bounds of its values, whenever a program takes the table (the
	 * all-in-one: whichever backend runs); prints and returns -EINVAL,
	 * or 0. NULL: none. */
	int (*check)(const void *own);
};

struct msc_backend;

/*
 * A program that reads a command line: its name and --help line, the
 * roles it plays and the backends it serves (the first is --backend's
 * default; none for the edge, session and inventory).
 */
/*
 * The stem of a driver's identity when none is given: --driver-id's
 * default is "<stem>-1", a bare --driver-url's "<stem>-<i+1>". Every
 * program of a deployment must agree on it (it is in computers' labels
 * and certificates' roles), so the build sets it once, in the top-level
 * meson.build.
 */
#ifndef MSC_DRIVER_ID_STEM
#error "MSC_DRIVER_ID_STEM is set by the top-level meson.build"
#endif

struct msc_program {
	const char *name;                       /* "msc-session" */
	const char *what;
	unsigned roles;                         /* MSC_PROG_* */
	const struct msc_backend *const *backends;
	size_t nbackends;
};

/* The programs of lib's roles alone (msc_cfg_opts.c). */
extern const struct msc_program msc_prog_edge, msc_prog_session,
    msc_prog_inventory;

/* One table's filled struct in a parsed cfg (msc_cfg_own). */
struct msc_cfg_part {
	const struct msc_cfg_table *table;
	void *own;                              /* table->size bytes */
};

struct msc_cfg {
	unsigned prog;                  /* the roles parsing: MSC_PROG_* */
	const struct msc_program *program;
	/* --backend and its row; NULL in a program that serves none */
	const char *backend;
	const struct msc_backend *chosen;
	struct msc_cfg_part *parts;     /* the backends' tables, filled */
	size_t nparts;
	const struct msc_cfg_opt **given;       /* options set by argv or
						 * --cluster, in order */
	size_t ngiven;
	/* core */
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
	/* tool description */
	const char *tool_instruction_override;
	const char *extended_tool_instruction;
	/* deployment */
	const char *session_url;
	const char *inventory_url;
	const char *driver_url;         /* the first driver's address */
	const char **driver_urls;       /* every --driver-url, "[ID=]URL" */
	size_t n_driver_urls;
	const char *listen;
	const char *driver_id;
	long driver_workers;
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
 * Parses argv for program `prog`: argparse rules (--x=y, --x y, unique
 * prefixes, -h) over the options of its roles (lib's table) and of its
 * backends' tables; an option of another role is refused, naming whose
 * it is; another backend's is not known. The --cluster file is shared
 * by every service: its lines for other programs are skipped.
 * argv must be writable: the value of an MSC_OPT_SECRET (--auth-token, a
 * backend's token) is copied, overwritten in place and warned about on
 * stderr (without the value).
 * --backend must name one of the program's backends (cfg->chosen).
 * On a parse error prints usage and "kilntainers: error: ..." to stderr
 * and returns -EINVAL (the caller exits 2). Prints help or version to
 * stdout for --help/--version and returns MSC_CFG_EXIT_HELP.
 */
int msc_cfg_parse(struct msc_cfg *cfg, const struct msc_program *prog,
    int argc, char **argv);

/*
 * The reference's startup validation (section 6.2) and our own checks of
 * the shared options, then each table's check and the chosen backend's
 * validate; prints "kilntainers: error: <msg>" and returns -EINVAL (the
 * caller exits 1).
 */
int msc_cfg_validate(const struct msc_cfg *cfg);

/*
 * The struct that `table` filled (borrowed from cfg), or NULL when the
 * program does not take that table. A backend reads its own settings
 * through it (for example dock_cfg()).
 */
const void *msc_cfg_own(const struct msc_cfg *cfg,
    const struct msc_cfg_table *table);

/* Whether option --name was given (argv or --cluster), by any table. */
bool msc_cfg_given(const struct msc_cfg *cfg, const char *name);

/* The file name of --shell ("bash" for "/bin/bash"), written into buf,
 * for the backends' tool descriptions. */
const char *msc_cfg_shell_name(const struct msc_cfg *cfg, char *buf,
    size_t len);

/*
 * The arguments of argv[1..] that program `prog` takes: its options with
 * their values, and whatever is no option of any of the `nall` programs
 * in `all` (its parse refuses that). out has room for argc entries; they
 * are borrowed from argv, and out[n] = NULL. Returns n. Lets one command
 * line start split services (msc_cfg_select.c).
 */
int msc_cfg_select(const struct msc_program *prog,
    const struct msc_program *const *all, size_t nall, int argc, char **argv,
    char **out);

void msc_cfg_fini(struct msc_cfg *cfg);

/*
 * Splits driver entry i ("ID=URL" or "URL") into id and url (borrowed
 * from cfg; a bare URL gets the id "<MSC_DRIVER_ID_STEM>-<i+1>"). Returns 0
 * or -ENOENT.
 */
int msc_cfg_driver(const struct msc_cfg *cfg, size_t i, char *id, size_t idlen,
    const char **urlp);

/* The words of values (msc_cfg_value.c), for the parser and the checks. */

/* Prints "kilntainers: error: <msg>" to stderr. */
void msc_cfg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* True for "true", "1", "yes", "on" (any case). */
bool msc_cfg_truthy(const char *s);

/*
 * A size: bytes, or a number (fractions allowed) with K, M, G or T and
 * an optional "i" and "B", in any case ("500M", "1g", "1GiB", "1.5GB"),
 * all powers of 1024, as container engines read them. 0 or -EINVAL.
 */
int msc_cfg_size(const char *s, uint64_t *out);
/* n as text for people: "1 GiB", "500 MiB", "1536 KiB", "1000 bytes". */
void msc_cfg_size_text(uint64_t n, char *buf, size_t len);

#endif /* MSC_CFG_H */
