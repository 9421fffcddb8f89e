/*
 * opt.c - option parsing for applets. Works like GNU getopt (options may
 * follow operands, "--" ends options) but keeps its state in a struct, so
 * applets can run many times in one process, and behaves the same on glibc
 * (native tests) and musl (wasi-libc).
 */
#include "toolbox.h"

#include <string.h>

void
tb_opt_init(struct tb_opt *o, struct tb_io *io, const char *applet, int argc,
    char **argv)
{
	memset(o, 0, sizeof(*o));
	o->io = io;
	o->applet = applet;
	o->argc = argc;
	o->argv = argv;
	o->ind = 1;
}

/* Moves argv[from] to argv[to] (to <= from), shifting the rest right. */
static void
opt_rotate(struct tb_opt *o, int from, int to)
{
	char *e = o->argv[from];

	memmove(o->argv + to + 1, o->argv + to,
	    (size_t)(from - to) * sizeof(char *));
	o->argv[to] = e;
}

int
tb_opt_bad_long(struct tb_opt *o)
{
	tb_err(o->io, o->applet, "unrecognized option '--%s'", o->arg);
	return TB_OPT_ERR;
}

static int
opt_cluster(struct tb_opt *o, const char *spec)
{
	int cur = o->ind - o->nonopt - 1;
	char *a = o->argv[cur];
	int c = (unsigned char)a[o->pos];
	const char *s = c == ':' ? NULL : strchr(spec, c);

	o->arg = NULL;
	if (s == NULL) {
		tb_err(o->io, o->applet, "invalid option -- '%c'", c);
		o->pos = 0;
		return TB_OPT_ERR;
	}
	if (s[1] != ':') {
		if (a[++o->pos] == '\0')
			o->pos = 0;
		return c;
	}
	if (a[o->pos + 1] != '\0') {
		/* Argument glued on: "-n5" or "-an5". */
		o->arg = a + o->pos + 1;
		o->pos = 0;
		return c;
	}
	o->pos = 0;
	if (o->ind >= o->argc) {
		tb_err(o->io, o->applet, "option requires an argument -- '%c'",
		    c);
		return TB_OPT_ERR;
	}
	opt_rotate(o, o->ind, cur + 1);
	o->ind++;
	o->arg = o->argv[cur + 1];
	return c;
}

int
tb_opt_next(struct tb_opt *o, const char *spec)
{
	bool posix = spec[0] == '+';
	char *a;

	if (posix)
		spec++;
	if (o->pos > 0)
		return opt_cluster(o, spec);
	for (;;) {
		int first = o->ind - o->nonopt;

		if (o->ind >= o->argc) {
			o->ind = first;
			return TB_OPT_END;
		}
		a = o->argv[o->ind];
		if (strcmp(a, "--") == 0) {
			opt_rotate(o, o->ind, first);
			o->ind = first + 1;
			o->nonopt = 0;
			return TB_OPT_END;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (posix || o->posix) {
				o->ind = first;
				return TB_OPT_END;
			}
			o->nonopt++;
			o->ind++;
			continue;
		}
		opt_rotate(o, o->ind, first);
		o->ind++;
		if (a[1] == '-') {
			o->arg = a + 2;
			return TB_OPT_LONG;
		}
		if (o->numeric && a[1] >= '0' && a[1] <= '9') {
			o->arg = a + 1;
			return '#';
		}
		o->pos = 1;
		return opt_cluster(o, spec);
	}
}
