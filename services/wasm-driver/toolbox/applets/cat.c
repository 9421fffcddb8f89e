/* cat.c - cat and tee. */
#include "../toolbox.h"

#include <stdlib.h>
#include <string.h>

struct cat_opts {
	bool	number;		/* -n */
	bool	nonblank;	/* -b */
	bool	ends;		/* -E */
	bool	squeeze;	/* -s */
	long	line;
	bool	prev_blank;
};

static int
cat_lines(struct cat_opts *c, FILE *in, FILE *out)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, in)) > 0) {
		bool has_nl = line[n - 1] == '\n';
		bool blank = n == 1 && has_nl;

		if (c->squeeze && blank && c->prev_blank)
			continue;
		c->prev_blank = blank;
		if (c->nonblank ? !blank : c->number)
			fprintf(out, "%6ld\t", ++c->line);
		fwrite(line, 1, (size_t)n - has_nl, out);
		if (has_nl)
			fputs(c->ends ? "$\n" : "\n", out);
	}
	free(line);
	return ferror(in) ? -1 : 0;
}

int
applet_cat(struct tb_io *io, int argc, char **argv)
{
	struct cat_opts c = { 0 };
	struct tb_opt o;
	int ch, rc = 0;
	bool plain;

	tb_opt_init(&o, io, "cat", argc, argv);
	while ((ch = tb_opt_next(&o, "nbEsuAv")) != TB_OPT_END) {
		switch (ch) {
		case 'n': c.number = true; break;
		case 'b': c.nonblank = true; break;
		case 'E':
		case 'A': c.ends = true; break;
		case 's': c.squeeze = true; break;
		case 'u':
		case 'v': break;
		case TB_OPT_LONG:
			tb_opt_bad_long(&o);
			return 1;
		default:
			return 1;
		}
	}
	plain = !c.number && !c.nonblank && !c.ends && !c.squeeze;
	for (int i = o.ind; i < argc || i == o.ind; i++) {
		const char *path = i < argc ? argv[i] : "-";
		FILE *in = tb_open_in(io, "cat", path);
		int r;

		if (in == NULL) {
			rc = 1;
			continue;
		}
		r = plain ? tb_copy(in, io->out) : cat_lines(&c, in, io->out);
		if (r != 0 && ferror(in)) {
			tb_errno(io, "cat", path);
			rc = 1;
		}
		tb_close_in(io, in);
		if (i >= argc)
			break;
	}
	return rc;
}

int
applet_tee(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	FILE **files;
	char buf[8192];
	size_t n;
	int c, nf = 0, rc = 0;
	bool append = false;

	tb_opt_init(&o, io, "tee", argc, argv);
	while ((c = tb_opt_next(&o, "ai")) != TB_OPT_END) {
		if (c == 'a')
			append = true;
		else if (c != 'i')
			return 1;
	}
	files = tb_xmalloc(sizeof(FILE *) * (size_t)(argc + 1));
	for (int i = o.ind; i < argc; i++) {
		FILE *f = fopen(argv[i], append ? "a" : "w");

		if (f == NULL) {
			tb_errno(io, "tee", argv[i]);
			rc = 1;
			continue;
		}
		files[nf++] = f;
	}
	while ((n = fread(buf, 1, sizeof(buf), io->in)) > 0) {
		fwrite(buf, 1, n, io->out);
		for (int i = 0; i < nf; i++)
			fwrite(buf, 1, n, files[i]);
	}
	for (int i = 0; i < nf; i++)
		if (fclose(files[i]) != 0)
			rc = 1;
	free(files);
	return rc;
}
