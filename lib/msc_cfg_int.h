/* msc_cfg_int.h - the option table shared by msc_cfg.c and msc_cfg_opts.c. */
#ifndef MSC_CFG_INT_H
#define MSC_CFG_INT_H

#include <stddef.h>
#include <stdio.h>

#include "msc_cfg.h"

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

extern const struct opt msc_cfg_opts[];
extern const size_t msc_cfg_nopts;

/* The usage line (to f) and the --help text (to stdout). */
void msc_cfg_usage(FILE *f);
void msc_cfg_help(void);

#endif /* MSC_CFG_INT_H */
