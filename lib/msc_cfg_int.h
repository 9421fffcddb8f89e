/* msc_cfg_int.h - the parser engine's parts shared by msc_cfg.c,
 * msc_cfg_opts.c, msc_cfg_secret.c, msc_cfg_select.c and
 * msc_cfg_value.c. */
#ifndef MSC_CFG_INT_H
#define MSC_CFG_INT_H

#include <stddef.h>
#include <stdio.h>

#include "msc_cfg.h"

#define PROG "kilntainers"

/* lib's table: the options of the roles (msc_cfg_opts.c). */
extern const struct msc_cfg_opt msc_cfg_opts[];
extern const size_t msc_cfg_nopts;

/*
 * Reads the secret for --<o->name> (an MSC_OPT_SECRET_FILE) from path:
 * its first line without the line end, at most 8 KiB. Warns on stderr
 * when the file is readable by group or others; refuses one writable by
 * them, an empty line and a read error, with "kilntainers: error: ..." on
 * stderr (after prog's usage line). Never prints the secret. Returns 0
 * and *outp (malloc'd, the caller frees), or -EINVAL / -ENOMEM. Blocks on
 * file I/O.
 */
int msc_cfg_secret_read(const struct msc_cfg_opt *o,
    const struct msc_program *prog, const char *path, char **outp);

/*
 * A secret given on the command line (borrowed argv bytes at val): warns
 * on stderr that --<o->name> shows in ps (naming o->env and the -file
 * flag), then overwrites val in place. Returns a malloc'd copy of the
 * secret made first, or NULL when out of memory.
 */
char *msc_cfg_secret_from_argv(const struct msc_cfg_opt *o, char *val);

/*
 * Adds every secret of cfg (the secret options of every table it parsed,
 * and the variables they also come from) to msc_redact, so that no log
 * line or message of this process carries it. 0 or -ENOSPC / -ENOMEM.
 */
int msc_cfg_secrets_redact(const struct msc_cfg *cfg);

/* Whether `next`, after --<o> without '=', is its value (msc_cfg.c). */
bool msc_cfg_takes_next(const struct msc_cfg_opt *o, const char *next);

/* The usage line of program `prog` (to f) and its --help text (stdout). */
void msc_cfg_usage(FILE *f, const struct msc_program *prog);
void msc_cfg_help(const struct msc_program *prog);

/* Whose option o of lib's table is, as text ("msc-edge,
 * mcp-sandbox-computer"). */
void msc_cfg_owners(const struct msc_cfg_opt *o, char *buf, size_t len);

/*
 * The option tables a program parses, in order: lib's (index -1, only
 * the entries of prog->roles) and each distinct table of its backends.
 * msc_cfg_tables_of lists the latter into out (room for n), returning
 * their count.
 */
size_t msc_cfg_tables_of(const struct msc_program *prog,
    const struct msc_cfg_table **out, size_t n);

#endif /* MSC_CFG_INT_H */
