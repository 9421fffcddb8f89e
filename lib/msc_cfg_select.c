/*
 * msc_cfg_select.c - one command line for a split deployment (msc_cfg.h):
 * which of its arguments each program takes, by the option tables of
 * every program started from it. It parses nothing into a struct
 * msc_cfg; the rule of whether a word is an option's value is the
 * parser's (msc_cfg_takes_next).
 */
#include "msc_cfg.h"
#include "msc_cfg_int.h"

#include <string.h>

/* Whether program p takes option name, and the option (for its kind). */
static const struct msc_cfg_opt *
program_opt(const struct msc_program *p, const char *name, size_t len)
{
	const struct msc_cfg_table *tables[16];
	size_t n = msc_cfg_tables_of(p, tables, 16);

	for (size_t t = 0; t <= n; t++) {
		const struct msc_cfg_opt *opts = t == 0 ? msc_cfg_opts :
		    tables[t - 1]->opts;
		size_t nopts = t == 0 ? msc_cfg_nopts : tables[t - 1]->nopts;

		for (size_t i = 0; i < nopts; i++) {
			const char *on = opts[i].name;
			bool no = strncmp(name, "no-", 3) == 0 &&
			    opts[i].kind == MSC_OPT_NEG && len > 3 &&
			    strlen(on) == len - 3 &&
			    strncmp(on, name + 3, len - 3) == 0;

			if (t == 0 && (opts[i].progs & p->roles) == 0)
				continue;
			if (no || (strlen(on) == len &&
			    strncmp(on, name, len) == 0))
				return &opts[i];
		}
	}
	return NULL;
}

int
msc_cfg_select(const struct msc_program *prog,
    const struct msc_program *const *all, size_t nall, int argc, char **argv,
    char **out)
{
	int n = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		const struct msc_cfg_opt *o = NULL;
		size_t len;
		int words = 1;

		if (strncmp(a, "--", 2) == 0 && a[2] != '\0') {
			a += 2;
			eq = strchr(a, '=');
			len = eq ? (size_t)(eq - a) : strlen(a);
			for (size_t p = 0; p < nall && o == NULL; p++)
				o = program_opt(all[p], a, len);
			if (o != NULL && eq == NULL && i + 1 < argc &&
			    msc_cfg_takes_next(o, argv[i + 1]))
				words = 2;
			if (o != NULL && program_opt(prog, a, len) == NULL) {
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
