/*
 * msc_cfg.c - the parser engine (msc_cfg.h): a program's defaults, its
 * command line and the --cluster file applied to the option tables it
 * takes (lib's, msc_cfg_opts.c, and its backends'), and what was given.
 * Secrets (msc_cfg_secret.c), the tool groups (msc_cfg_tools.c) and the
 * words of values (msc_cfg_value.c) are below it; the startup checks
 * (msc_cfg_validate.c) and the arguments of each program of a split
 * command line (msc_cfg_select.c) above.
 */
#include "msc_cfg.h"
#include "msc_cfg_int.h"
#include "msc_backend.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

static char *own(struct msc_cfg *cfg, char *str);

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
parse_error(const struct msc_program *prog, const char *fmt, const char *a, const char *b)
{
	msc_cfg_usage(stderr, prog);
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

/*
 * The option tables of cfg: t == 0 is lib's (its entries of `roles`),
 * t > 0 the backends' (cfg->parts[t - 1]). Their count is 1 + nparts.
 */
static const struct msc_cfg_opt *
table_opts(const struct msc_cfg *cfg, size_t t, size_t *n, char **base)
{
	if (t == 0) {
		*n = msc_cfg_nopts;
		*base = (char *)cfg;
		return msc_cfg_opts;
	}
	*n = cfg->parts[t - 1].table->nopts;
	*base = cfg->parts[t - 1].own;
	return cfg->parts[t - 1].table->opts;
}

static bool
takes(const struct msc_cfg_opt *o, size_t t, unsigned roles)
{
	return t > 0 || (o->progs & roles) != 0;
}

/*
 * Finds an option of cfg's tables (lib's for `roles`) by exact name or
 * unique prefix; *neg for --no-<x>. Tables defining one name count once.
 */
static const struct msc_cfg_opt *
find_opt(const struct msc_cfg *cfg, const char *name, size_t len,
    unsigned roles, bool *neg, bool *ambiguous)
{
	const struct msc_cfg_opt *hit = NULL;
	int hits = 0;

	*ambiguous = false;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t <= cfg->nparts; t++) {
			size_t nopts;
			char *base;
			const struct msc_cfg_opt *opts = table_opts(cfg, t,
			    &nopts, &base);

			for (size_t i = 0; i < nopts; i++) {
				const char *n = opts[i].name;
				char nn[64];

				if (!takes(&opts[i], t, roles))
					continue;
				if (pass == 1) {
					if (opts[i].kind != MSC_OPT_NEG)
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
				if (hit != NULL &&
				    strcmp(hit->name, opts[i].name) == 0)
					continue;
				hit = &opts[i];
				*neg = pass == 1;
				hits++;
			}
		}
	}
	if (hits > 1) {
		*ambiguous = true;
		return NULL;
	}
	return hit;
}

static int
set_one(struct msc_cfg *cfg, const struct msc_cfg_opt *o, char *base,
    const char *v)
{
	switch (o->kind) {
	case MSC_OPT_SECRET_FILE: {
		char *secret;
		int rv = msc_cfg_secret_read(o, cfg->program, v, &secret);

		if (rv != 0)
			return rv;
		if (own(cfg, secret) == NULL)
			return -ENOMEM;
		*(const char **)(base + o->off) = secret;
		return 0;
	}
	case MSC_OPT_BACKEND:
		for (size_t i = 0; i < cfg->program->nbackends; i++)
			if (strcmp(cfg->program->backends[i]->name, v) == 0) {
				*(const char **)(base + o->off) = v;
				cfg->chosen = cfg->program->backends[i];
				return 0;
			}
		return parse_error(cfg->program,
		    "argument --%s: invalid choice: '%s'", o->name, v);
	case MSC_OPT_SECRET:
	case MSC_OPT_STR:
		if (o->choices != NULL && !in_choices(o->choices, v))
			return parse_error(cfg->program,
			    "argument --%s: invalid choice: '%s'", o->name, v);
		*(const char **)(base + o->off) = v;
		return 0;
	case MSC_OPT_LONG:
		if (!parse_long(v, (long *)(base + o->off)))
			return parse_error(cfg->program,
			    "argument --%s: invalid int value: '%s'", o->name, v);
		return 0;
	case MSC_OPT_LIST: {
		const char ***arr = (const char ***)(base + o->off);
		size_t *n = (size_t *)(base + o->count_off);
		const char **grown = realloc(*arr, (*n + 1) * sizeof(**arr));

		if (grown == NULL)
			return -ENOMEM;
		grown[(*n)++] = v;
		*arr = grown;
		return 0;
	}
	case MSC_OPT_TRUE:
	case MSC_OPT_NEG:
		*(bool *)(base + o->off) = v != NULL;
		return 0;
	default:
		return -EINVAL;
	}
}

/*
 * Sets option o's value v (for a flag: non-NULL for on) in every table
 * of cfg that defines its name, and records it as given.
 */
static int
set_value(struct msc_cfg *cfg, const struct msc_cfg_opt *o, const char *v)
{
	const struct msc_cfg_opt **grown;
	int rv;

	for (size_t t = 0; t <= cfg->nparts; t++) {
		size_t nopts;
		char *base;
		const struct msc_cfg_opt *opts = table_opts(cfg, t, &nopts,
		    &base);

		for (size_t i = 0; i < nopts; i++)
			if (takes(&opts[i], t, cfg->prog) &&
			    strcmp(opts[i].name, o->name) == 0 &&
			    (rv = set_one(cfg, &opts[i], base, v)) != 0)
				return rv;
	}
	grown = realloc(cfg->given, (cfg->ngiven + 1) * sizeof(*grown));
	if (grown == NULL)
		return -ENOMEM;
	grown[cfg->ngiven++] = o;
	cfg->given = grown;
	return 0;
}

/* The table's defaults, at base. */
static void
table_defaults(const struct msc_cfg_opt *opts, size_t nopts, char *base)
{
	for (size_t i = 0; i < nopts; i++) {
		const struct msc_cfg_opt *o = &opts[i];

		if (o->def == NULL)
			continue;
		if (o->kind == MSC_OPT_STR)
			*(const char **)(base + o->off) = o->def;
		else if (o->kind == MSC_OPT_LONG)
			(void)parse_long(o->def, (long *)(base + o->off));
		else if (o->kind == MSC_OPT_NEG)
			*(bool *)(base + o->off) = o->def[0] == '1';
	}
}

static int
set_defaults(struct msc_cfg *cfg, const struct msc_program *prog)
{
	const struct msc_cfg_table *tables[16];
	size_t n = msc_cfg_tables_of(prog, tables, 16);
	const char *env;

	memset(cfg, 0, sizeof(*cfg));
	cfg->program = prog;
	cfg->prog = prog->roles;
	table_defaults(msc_cfg_opts, msc_cfg_nopts, (char *)cfg);
	if (prog->nbackends > 0) {
		cfg->chosen = prog->backends[0];
		cfg->backend = cfg->chosen->name;
	}
	if ((cfg->parts = calloc(n > 0 ? n : 1, sizeof(*cfg->parts))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct msc_cfg_part *p = &cfg->parts[cfg->nparts];

		if ((p->own = calloc(1, tables[i]->size)) == NULL)
			return -ENOMEM;
		p->table = tables[i];
		cfg->nparts++;
		table_defaults(p->table->opts, p->table->nopts, p->own);
		if (p->table->env != NULL)
			p->table->env(p->own);
	}
	if ((env = getenv("KILNTAINERS_AUTH_TOKEN")) != NULL && *env != '\0')
		cfg->auth_token = env;
	if ((env = getenv("KILNTAINERS_TOKENS_FILE")) != NULL && *env != '\0')
		cfg->tokens_file = env;
	/* A bad number is refused by the bounds check, naming both. */
	if ((env = getenv("KILNTAINERS_MAX_ADDRESS_CONNECTIONS")) != NULL &&
	    *env != '\0' && !parse_long(env, &cfg->max_address_connections))
		cfg->max_address_connections = -1;
	cfg->lifecycle_tools = msc_cfg_truthy(getenv("ENABLE_LIFECYCLE_TOOLS"));
	if ((env = getenv("KILNTAINERS_TOOLS")) != NULL && *env != '\0')
		cfg->tools = env;
	if ((env = getenv("KILNTAINERS_WORKSPACE")) != NULL && *env != '\0')
		cfg->workspace = env;
	/* A bad number is refused by the bounds check (msc_cfg_tools.c). */
	if ((env = getenv("KILNTAINERS_MAX_SNAPSHOTS")) != NULL &&
	    *env != '\0' && !parse_long(env, &cfg->max_snapshots))
		cfg->max_snapshots = -1;
	if ((env = getenv("KILNTAINERS_MAX_PRINCIPAL_SNAPSHOTS")) != NULL &&
	    *env != '\0' && !parse_long(env, &cfg->max_principal_snapshots))
		cfg->max_principal_snapshots = -1;
	cfg->share_snapshots = msc_cfg_truthy(getenv(
	    "KILNTAINERS_SHARE_SNAPSHOTS"));
	return 0;
}

bool
msc_cfg_takes_next(const struct msc_cfg_opt *o, const char *next)
{
	if (o->kind == MSC_OPT_TRUE || o->kind == MSC_OPT_NEG ||
	    o->kind == MSC_OPT_HELP || o->kind == MSC_OPT_VERSION)
		return false;
	return strncmp(next, "-", 1) != 0 || o->kind == MSC_OPT_LIST ||
	    parse_long(next, &(long){ 0 });
}

/*
 * An option of another role: refused on the command line, naming its
 * programs; skipped in the cluster file, which every service reads.
 */
static int
foreign_option(const struct msc_cfg *cfg, const struct msc_cfg_opt *o,
    bool cmdline)
{
	char owners[256];

	if (!cmdline)
		return MSC_CFG_OK;
	msc_cfg_owners(o, owners, sizeof(owners));
	return parse_error(cfg->program, "argument --%s: not an option of this "
	    "program; it is one of %s", o->name, owners);
}

/* Whether the program serves the backend named `name`. */
static bool
serves(const struct msc_program *prog, const char *name)
{
	for (size_t i = 0; i < prog->nbackends; i++)
		if (strcmp(prog->backends[i]->name, name) == 0)
			return true;
	return false;
}

/*
 * Applies argv[1..]; cmdline is false for the cluster file's lines, whose
 * strings the cfg owns already (a secret there is not in ps). A cluster
 * line that is no option of this program is another's: skipped, and so
 * is a `backend` line naming a backend this program does not serve (the
 * cluster's other drivers'). The all-in-one, which has them all, refuses
 * both.
 */
static int
parse_args(struct msc_cfg *cfg, int argc, char **argv, bool cmdline)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		char *val = NULL;
		const struct msc_cfg_opt *o;
		bool neg = false, ambiguous;
		size_t len;
		int rv;

		if (strcmp(a, "-h") == 0)
			a = "--help";
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
			return parse_error(cfg->program, "unrecognized "
			    "arguments: %s%s", a, "");
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		o = find_opt(cfg, a, len, cfg->prog, &neg, &ambiguous);
		if (o == NULL && !ambiguous &&
		    (o = find_opt(cfg, a, len, MSC_PROG_ALL, &neg,
			&ambiguous)) != NULL) {
			if ((rv = foreign_option(cfg, o, cmdline)) != 0)
				return rv;
			continue;
		}
		if (o == NULL && !cmdline && !ambiguous &&
		    cfg->prog != MSC_PROG_ALL)
			continue;
		if (o == NULL)
			return parse_error(cfg->program, ambiguous
				? "ambiguous option: --%s%s"
				: "unrecognized arguments: --%s%s",
			    a, "");
		if (o->kind == MSC_OPT_BACKEND && !cmdline && eq != NULL &&
		    cfg->prog != MSC_PROG_ALL && !serves(cfg->program, eq + 1))
			continue;
		switch (o->kind) {
		case MSC_OPT_HELP:
			msc_cfg_help(cfg->program);
			return MSC_CFG_EXIT_HELP;
		case MSC_OPT_VERSION:
			printf("mcp-sandbox-computer %s\n", MSC_VERSION);
			return MSC_CFG_EXIT_HELP;
		case MSC_OPT_TRUE:
		case MSC_OPT_NEG:
			if (eq != NULL)
				return parse_error(cfg->program,
				    "argument --%s: ignored explicit argument '%s'",
				    o->name, eq + 1);
			if ((rv = set_value(cfg, o, neg ? NULL : "")) != 0)
				return rv;
			continue;
		default:
			break;
		}
		if (eq != NULL)
			val = argv[i] + (eq - argv[i]) + 1;
		else if (i + 1 < argc && msc_cfg_takes_next(o, argv[i + 1]))
			val = argv[++i];
		else
			return parse_error(cfg->program,
			    "argument --%s: expected one argument%s",
			    o->name, "");
		if (o->kind == MSC_OPT_SECRET && cmdline &&
		    (val = own(cfg, msc_cfg_secret_from_argv(o, val))) == NULL)
			return -ENOMEM;
		if ((rv = set_value(cfg, o, val)) != 0)
			return rv;
	}
	return MSC_CFG_OK;
}

/*
 * Keeps str (malloc'd: a cluster file line, a secret) alive with the cfg;
 * frees it and returns NULL when out of memory, or when str is NULL.
 */
static char *
own(struct msc_cfg *cfg, char *str)
{
	char **grown;

	if (str == NULL)
		return NULL;
	grown = realloc(cfg->owned, (cfg->n_owned + 1) * sizeof(*grown));
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
		rv = parse_args(cfg, 2, argv, false);
	}
	fclose(f);
	return rv;
}

int
msc_cfg_parse(struct msc_cfg *cfg, const struct msc_program *prog, int argc,
    char **argv)
{
	int rv;

	if ((rv = set_defaults(cfg, prog)) != 0)
		return rv;
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
	if ((rv = parse_args(cfg, argc, argv, true)) != 0)
		return rv;
	if ((rv = msc_cfg_tools_parse(cfg)) != 0)
		return rv;
	if (cfg->n_driver_urls > 0)
		(void)msc_cfg_driver(cfg, 0, (char[64]){ 0 }, 64,
		    &cfg->driver_url);
	if ((rv = msc_cfg_secrets_redact(cfg)) != 0)
		return rv;
	return MSC_CFG_OK;
}

const void *
msc_cfg_own(const struct msc_cfg *cfg, const struct msc_cfg_table *table)
{
	for (size_t i = 0; i < cfg->nparts; i++)
		if (cfg->parts[i].table == table)
			return cfg->parts[i].own;
	return NULL;
}

bool
msc_cfg_given(const struct msc_cfg *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->ngiven; i++)
		if (strcmp(cfg->given[i]->name, name) == 0)
			return true;
	return false;
}

const char *
msc_cfg_shell_name(const struct msc_cfg *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%s", cfg->shell);
	return basename(buf);
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
		snprintf(id, idlen, MSC_DRIVER_ID_STEM "-%zu", i + 1);
		*urlp = e;
	}
	return 0;
}

/* Frees the arrays of a table's repeatable options, at base. */
static void
table_fini(const struct msc_cfg_opt *opts, size_t nopts, char *base)
{
	for (size_t i = 0; i < nopts; i++)
		if (opts[i].kind == MSC_OPT_LIST) {
			free(*(void **)(base + opts[i].off));
			*(void **)(base + opts[i].off) = NULL;
			*(size_t *)(base + opts[i].count_off) = 0;
		}
}

void
msc_cfg_fini(struct msc_cfg *cfg)
{
	for (size_t i = 0; i < cfg->n_owned; i++) {
		explicit_bzero(cfg->owned[i], strlen(cfg->owned[i]));
		free(cfg->owned[i]);
	}
	free(cfg->owned);
	cfg->owned = NULL;
	cfg->n_owned = 0;
	table_fini(msc_cfg_opts, msc_cfg_nopts, (char *)cfg);
	for (size_t i = 0; i < cfg->nparts; i++) {
		table_fini(cfg->parts[i].table->opts, cfg->parts[i].table->nopts,
		    cfg->parts[i].own);
		free(cfg->parts[i].own);
	}
	free(cfg->parts);
	cfg->parts = NULL;
	cfg->nparts = 0;
	free(cfg->given);
	cfg->given = NULL;
	cfg->ngiven = 0;
}
