/* xargs.c - build command lines from stdin and run them in-process. */
#include "../toolbox.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct xargs {
	struct tb_io	*io;
	char		**cmd;		/* the command and its initial args */
	int		 ncmd;
	long long	 max_args;	/* -n; 0 = unlimited */
	const char	*repl;		/* -I */
	bool		 trace, no_empty;
	int		 rc;
	bool		 stop;
};

/* Reads the next item; returns it (malloc'd) or NULL at end of input. */
static char *
next_item(struct xargs *x, FILE *in, int delim, bool lines)
{
	struct tb_buf b = { 0 };
	int c, quote = 0;
	bool have = false;

	if (delim >= 0 || lines) {
		while ((c = getc(in)) != EOF && c != (lines ? '\n' : delim)) {
			tb_buf_addc(&b, c);
			have = true;
		}
		if (c == EOF && !have) {
			tb_buf_free(&b);
			return NULL;
		}
		return tb_buf_str(&b);
	}
	while ((c = getc(in)) != EOF && isspace(c))
		;
	for (; c != EOF; c = getc(in)) {
		if (quote) {
			if (c == quote)
				quote = 0;
			else
				tb_buf_addc(&b, c);
			continue;
		}
		if (isspace(c))
			break;
		have = true;
		if (c == '\'' || c == '"')
			quote = c;
		else if (c == '\\') {
			if ((c = getc(in)) == EOF)
				break;
			tb_buf_addc(&b, c);
		} else
			tb_buf_addc(&b, c);
	}
	if (quote) {
		tb_err(x->io, "xargs", "unmatched %s quote", quote == '"' ?
		    "double" : "single");
		x->rc = 1;
		x->stop = true;
	}
	if (!have) {
		tb_buf_free(&b);
		return NULL;
	}
	return tb_buf_str(&b);
}

static void
run(struct xargs *x, char **items, size_t n)
{
	struct tb_buf av = { 0 }, owned = { 0 };
	struct tb_mem empty = { 0 };
	struct tb_io io = *x->io;
	int rc;

	for (int i = 0; i < x->ncmd; i++) {
		char *a = x->cmd[i];

		if (x->repl != NULL && strstr(a, x->repl) != NULL && n > 0) {
			struct tb_buf s = { 0 };
			size_t rl = strlen(x->repl);

			for (const char *p = a; *p;) {
				if (strncmp(p, x->repl, rl) == 0) {
					tb_buf_adds(&s, items[0]);
					p += rl;
				} else
					tb_buf_addc(&s, *p++);
			}
			a = tb_buf_str(&s);
			tb_buf_add(&owned, &a, sizeof(a));
		}
		tb_buf_add(&av, &a, sizeof(a));
	}
	if (x->repl == NULL)
		for (size_t i = 0; i < n; i++)
			tb_buf_add(&av, &items[i], sizeof(char *));
	tb_buf_add(&av, &(char *){ NULL }, sizeof(char *));
	if (x->trace) {
		for (char **p = (char **)av.data; *p; p++)
			fprintf(x->io->err, p == (char **)av.data ? "%s" :
			    " %s", *p);
		fputc('\n', x->io->err);
	}
	io.in = tb_mem_reader(&empty);
	if (io.in == NULL)
		io.in = x->io->in;
	fflush(x->io->out);
	rc = tb_applet_run(&io, (int)(av.len / sizeof(char *)) - 1,
	    (char **)av.data);
	if (io.in != x->io->in)
		fclose(io.in);
	if (rc < 0) {
		tb_err(x->io, "xargs", "%s: No such file or directory",
		    x->cmd[0]);
		x->rc = 127;
		x->stop = true;
	} else if (rc == 255) {
		x->rc = 124;
		x->stop = true;
	} else if (rc != 0 && x->rc == 0)
		x->rc = 123;
	for (size_t i = 0; i < owned.len / sizeof(char *); i++)
		free(((char **)owned.data)[i]);
	tb_buf_free(&owned);
	tb_buf_free(&av);
}

int
applet_xargs(struct tb_io *io, int argc, char **argv)
{
	struct xargs x = { .io = io };
	struct tb_opt o;
	char *echo[] = { (char *)"echo", NULL }, **items = NULL, *it;
	size_t n = 0, cap = 0;
	int c, delim = -1;
	long long v;
	bool lines = false;

	tb_opt_init(&o, io, "xargs", argc, argv);
	while ((c = tb_opt_next(&o, "+n:I:i0d:trL:P:s:xE:")) != TB_OPT_END) {
		switch (c) {
		case 'n':
		case 'L':
			if (tb_parse_ll(o.arg, &v) != 0 || v < 1) {
				tb_err(io, "xargs", "invalid number '%s'",
				    o.arg);
				return 1;
			}
			x.max_args = v;
			lines = c == 'L';
			break;
		case 'I': x.repl = o.arg; lines = true; x.max_args = 1; break;
		case 'i': x.repl = "{}"; lines = true; x.max_args = 1; break;
		case '0': delim = '\0'; break;
		case 'd': delim = (unsigned char)o.arg[0]; break;
		case 't': x.trace = true; break;
		case 'r': x.no_empty = true; break;
		case 'P': case 's': case 'x': case 'E': break;
		default:
			return 1;
		}
	}
	x.cmd = o.ind < argc ? argv + o.ind : echo;
	x.ncmd = o.ind < argc ? argc - o.ind : 1;
	while (!x.stop && (it = next_item(&x, io->in, delim, lines)) != NULL) {
		if (n == cap)
			items = tb_xrealloc(items, (cap = cap ? cap * 2 : 64) *
			    sizeof(char *));
		items[n++] = it;
		if (x.max_args > 0 && (long long)n >= x.max_args) {
			run(&x, items, n);
			while (n > 0)
				free(items[--n]);
		}
	}
	if (!x.stop && (n > 0 || (!x.no_empty && x.max_args == 0 &&
	    x.repl == NULL)))
		run(&x, items, n);
	while (n > 0)
		free(items[--n]);
	free(items);
	return x.rc;
}
