#include "msc_cfg.h"
#include "msc_cfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
parse_error(unsigned prog, const char *fmt, const char *a, const char *b)
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
 * Finds an option of the programs in `progs` by exact name or unique
 * prefix; *neg for --no-<x>.
 */
static const struct opt *
find_opt(const char *name, size_t len, unsigned progs, bool *neg,
    bool *ambiguous)
{
	const struct opt *hit = NULL;
	int hits = 0;

	*ambiguous = false;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < msc_cfg_nopts; i++) {
			const char *n = msc_cfg_opts[i].name;
			char nn[64];

			if ((msc_cfg_opts[i].progs & progs) == 0)
				continue;
			if (pass == 1) {
				if (msc_cfg_opts[i].kind != OPT_NEG)
					continue;
				snprintf(nn, sizeof(nn), "no-%s", n);
				n = nn;
			}
			if (strncmp(n, name, len) != 0)
				continue;
			if (strlen(n) == len) {
				*neg = pass == 1;
				return &msc_cfg_opts[i];
			}
			hit = &msc_cfg_opts[i];
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
	case OPT_SECRET_FILE: {
		char *secret;
		int rv = msc_cfg_secret_read(o, cfg->prog, v, &secret);

		if (rv != 0)
			return rv;
		if (own(cfg, secret) == NULL)
			return -ENOMEM;
		*(const char **)(base + o->off) = secret;
		return 0;
	}
	case OPT_SECRET:
	case OPT_STR:
		if (o->choices != NULL && !in_choices(o->choices, v))
			return parse_error(cfg->prog, "argument --%s: invalid choice: '%s'",
			    o->name, v);
		*(const char **)(base + o->off) = v;
		return 0;
	case OPT_LONG:
		if (!parse_long(v, (long *)(base + o->off)))
			return parse_error(cfg->prog,
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
	for (size_t i = 0; i < msc_cfg_nopts; i++) {
		const struct opt *o = &msc_cfg_opts[i];
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
	if ((env = getenv("KILNTAINERS_TOKENS_FILE")) != NULL && *env != '\0')
		cfg->tokens_file = env;
	/* A bad number is refused by the bounds check, naming both. */
	if ((env = getenv("KILNTAINERS_MAX_ADDRESS_CONNECTIONS")) != NULL &&
	    *env != '\0' && !parse_long(env, &cfg->max_address_connections))
		cfg->max_address_connections = -1;
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
	if ((env = getenv("KILNTAINERS_DISK_QUOTA")) != NULL && *env != '\0')
		cfg->disk_quota = env;
	if ((env = getenv("KILNTAINERS_RUNTIME")) != NULL && *env != '\0')
		cfg->runtime = env;
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
}

/* Whether `next`, after --<o> without '=', is its value. */
static bool
takes_next(const struct opt *o, const char *next)
{
	if (o->kind == OPT_TRUE || o->kind == OPT_NEG || o->kind == OPT_HELP ||
	    o->kind == OPT_VERSION)
		return false;
	return strncmp(next, "-", 1) != 0 || o->kind == OPT_LIST ||
	    parse_long(next, &(long){ 0 });
}

/*
 * An option of another program: refused on the command line, naming its
 * programs; skipped in the cluster file, which every service reads.
 */
static int
foreign_option(const struct msc_cfg *cfg, const struct opt *o, bool cmdline)
{
	char owners[256];

	if (!cmdline)
		return MSC_CFG_OK;
	msc_cfg_owners(o, owners, sizeof(owners));
	return parse_error(cfg->prog, "argument --%s: not an option of this "
	    "program; it is one of %s", o->name, owners);
}

/*
 * Applies argv[1..]; cmdline is false for the cluster file's lines, whose
 * strings the cfg owns already (a secret there is not in ps).
 */
static int
parse_args(struct msc_cfg *cfg, int argc, char **argv, bool cmdline)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		char *val = NULL;
		const struct opt *o;
		bool neg = false, ambiguous;
		size_t len;
		int rv;

		if (strcmp(a, "-h") == 0)
			a = "--help";
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
			return parse_error(cfg->prog, "unrecognized arguments: "
			    "%s%s", a, "");
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		o = find_opt(a, len, cmdline ? cfg->prog : MSC_PROG_ALL, &neg,
		    &ambiguous);
		if (o == NULL && !ambiguous && cmdline &&
		    (o = find_opt(a, len, MSC_PROG_ALL, &neg, &ambiguous)) != NULL)
			return foreign_option(cfg, o, cmdline);
		if (o == NULL)
			return parse_error(cfg->prog, ambiguous
				? "ambiguous option: --%s%s"
				: "unrecognized arguments: --%s%s",
			    a, "");
		if ((o->progs & cfg->prog) == 0) {
			if ((rv = foreign_option(cfg, o, cmdline)) != 0)
				return rv;
			continue;
		}
		switch (o->kind) {
		case OPT_HELP:
			msc_cfg_help(cfg->prog);
			return MSC_CFG_EXIT_HELP;
		case OPT_VERSION:
			printf("mcp-sandbox-computer %s\n", MSC_VERSION);
			return MSC_CFG_EXIT_HELP;
		case OPT_TRUE:
		case OPT_NEG:
			if (eq != NULL)
				return parse_error(cfg->prog,
				    "argument --%s: ignored explicit argument '%s'",
				    o->name, eq + 1);
			*(bool *)((char *)cfg + o->off) = !neg;
			continue;
		default:
			break;
		}
		if (eq != NULL)
			val = argv[i] + (eq - argv[i]) + 1;
		else if (i + 1 < argc && takes_next(o, argv[i + 1]))
			val = argv[++i];
		else
			return parse_error(cfg->prog,
			    "argument --%s: expected one argument%s",
			    o->name, "");
		if (o->kind == OPT_SECRET && cmdline &&
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
msc_cfg_parse(struct msc_cfg *cfg, unsigned prog, int argc, char **argv)
{
	int rv;

	set_defaults(cfg);
	cfg->prog = prog;
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

int
msc_cfg_select(unsigned prog, int argc, char **argv, char **out)
{
	int n = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		const struct opt *o;
		bool neg, ambiguous;
		size_t len;
		int words = 1;

		if (strncmp(a, "--", 2) == 0 && a[2] != '\0') {
			a += 2;
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a) : strlen(a);
			o = find_opt(a, len, MSC_PROG_ALL, &neg, &ambiguous);
			if (o != NULL && eq == NULL && i + 1 < argc &&
			    takes_next(o, argv[i + 1]))
				words = 2;
			if (o != NULL && (o->progs & prog) == 0) {
				i += words - 1;
				continue;
			}
		}
		/* Ours, or not an option: the program's parse says so. */
		for (int w = 0; w < words; w++)
			out[n++] = argv[i + w];
		i += words - 1;
	}
	out[n] = NULL;
	return n;
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

void
msc_cfg_fini(struct msc_cfg *cfg)
{
	for (size_t i = 0; i < cfg->n_owned; i++) {
		explicit_bzero(cfg->owned[i], strlen(cfg->owned[i]));
		free(cfg->owned[i]);
	}
	free(cfg->owned);
	free(cfg->driver_urls);
	cfg->owned = NULL;
	cfg->driver_urls = NULL;
	cfg->n_owned = cfg->n_driver_urls = 0;
	free(cfg->run_flags);
	free(cfg->e2b_metadata);
	free(cfg->e2b_env);
	free(cfg->allowed_hosts);
	free(cfg->allowed_origins);
	free(cfg->trusted_proxies);
	free(cfg->net_allow);
	free(cfg->net_deny);
	free(cfg->proxy_creds);
	cfg->run_flags = NULL;
	cfg->e2b_metadata = cfg->e2b_env = NULL;
	cfg->allowed_hosts = cfg->allowed_origins = NULL;
	cfg->trusted_proxies = NULL;
}

int
msc_cfg_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmgt";
	const char *u;
	double v, mul = 1;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	/* Digits and a point only: no exponent, hex, inf or nan. */
	if (errno != 0 || !(v >= 0) ||
	    end != s + strspn(s, "0123456789."))
		return -EINVAL;
	if (*end != '\0' && (u = strchr(units, tolower(
	    (unsigned char)*end))) != NULL) {
		for (const char *p = units; p <= u; p++)
			mul *= 1024;
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0' || v * mul >= 0x1p63)
		return -EINVAL;
	*out = (uint64_t)(v * mul);
	return 0;
}

void
msc_cfg_size_text(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB",
		"TiB" };
	int u = 0;

	while (u < 4 && n >= 1024 && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)n, units[u]);
}

bool
msc_cfg_truthy(const char *s)
{
	return s != NULL &&
	    (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 ||
		strcasecmp(s, "yes") == 0 || strcasecmp(s, "on") == 0);
}
