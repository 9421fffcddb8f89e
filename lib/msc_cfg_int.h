/* msc_cfg_int.h - the option table shared by msc_cfg.c and msc_cfg_opts.c. */
#ifndef MSC_CFG_INT_H
#define MSC_CFG_INT_H

#include <stddef.h>
#include <stdio.h>

#include "msc_cfg.h"

#define PROG "kilntainers"

/*
 * OPT_SECRET is a string that must not sit in argv: a copy is kept, the
 * argv bytes are blanked and a warning names the environment variable
 * (msc_cfg_secret.c) and --<name>-file.
 * OPT_SECRET_FILE (--<name>-file PATH) reads the first line of PATH into
 * the same field (msc_cfg_secret_read).
 */
enum opt_kind { OPT_STR, OPT_LONG, OPT_TRUE, OPT_NEG, OPT_LIST, OPT_HELP,
	OPT_VERSION, OPT_SECRET, OPT_SECRET_FILE };

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
	unsigned progs;         /* the programs that take it: MSC_PROG_* */
};

extern const struct opt msc_cfg_opts[];
extern const size_t msc_cfg_nopts;

/*
 * Reads the secret for --<o->name> (an OPT_SECRET_FILE) from path: its
 * first line without the line end, at most 8 KiB. Warns on stderr when
 * the file is readable by group or others; refuses one writable by them,
 * an empty line and a read error, with "kilntainers: error: ..." on
 * stderr. Never prints the secret. Returns 0 and *outp (malloc'd, the
 * caller frees), or -EINVAL / -ENOMEM. Blocks on file I/O.
 */
int msc_cfg_secret_read(const struct opt *o, unsigned prog, const char *path,
    char **outp);

/*
 * A secret given on the command line (borrowed argv bytes at val): warns
 * on stderr that --<o->name> shows in ps (naming its environment variable
 * and the -file flag), then overwrites val in place. Returns a malloc'd
 * copy of the secret made first, or NULL when out of memory.
 */
char *msc_cfg_secret_from_argv(const struct opt *o, char *val);

/*
 * Adds every secret of cfg (its OPT_SECRET fields, and the variables a
 * driver reads its secret from) to msc_redact, so that no log line or
 * message of this process carries it. 0 or -ENOSPC / -ENOMEM.
 */
int msc_cfg_secrets_redact(const struct msc_cfg *cfg);

/* The usage line of program `prog` (to f) and its --help text (stdout). */
void msc_cfg_usage(FILE *f, unsigned prog);
void msc_cfg_help(unsigned prog);

/* Whose option o is, as text ("msc-edge and mcp-sandbox-computer"). */
void msc_cfg_owners(const struct opt *o, char *buf, size_t len);

#endif /* MSC_CFG_INT_H */
