/* text.c - small line tools: tac, rev, nl, paste. */
#include "../toolbox.h"

#include <stdlib.h>
#include <string.h>

/* Reads all of the named inputs (or stdin) into b; 0 or 1 on errors. */
static int
slurp(struct tb_io *io, const char *applet, int n, char **files,
    struct tb_buf *b)
{
	char buf[8192];
	size_t r;
	int rc = 0;

	for (int i = 0; i < n || (n == 0 && i == 0); i++) {
		FILE *in = tb_open_in(io, applet, n ? files[i] : "-");

		if (in == NULL) {
			rc = 1;
			continue;
		}
		while ((r = fread(buf, 1, sizeof(buf), in)) > 0)
			tb_buf_add(b, buf, r);
		tb_close_in(io, in);
	}
	return rc;
}

int
applet_tac(struct tb_io *io, int argc, char **argv)
{
	struct tb_buf b = { 0 };
	int rc = slurp(io, "tac", argc - 1, argv + 1, &b);
	size_t end = b.len;

	if (end > 0 && b.data[end - 1] != '\n') {
		/* GNU tac: a last line without newline comes first as is. */
		tb_buf_addc(&b, '\n');
		end = b.len;
		b.len--;
	}
	while (end > 0) {
		size_t start = end - 1;

		while (start > 0 && b.data[start - 1] != '\n')
			start--;
		fwrite(b.data + start, 1, end - start, io->out);
		end = start;
	}
	tb_buf_free(&b);
	return rc;
}

int
applet_rev(struct tb_io *io, int argc, char **argv)
{
	struct tb_buf b = { 0 };
	int rc = slurp(io, "rev", argc - 1, argv + 1, &b);

	for (size_t i = 0; i < b.len;) {
		char *nl = memchr(b.data + i, '\n', b.len - i);
		size_t end = nl ? (size_t)(nl - b.data) : b.len;

		for (size_t k = end; k > i; k--)
			fputc(b.data[k - 1], io->out);
		if (nl)
			fputc('\n', io->out);
		i = end + 1;
	}
	tb_buf_free(&b);
	return rc;
}

int
applet_nl(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	struct tb_buf b = { 0 };
	bool all = false;
	const char *sep = "\t";
	long long width = 6, n = 1;
	int c, rc;

	tb_opt_init(&o, io, "nl", argc, argv);
	while ((c = tb_opt_next(&o, "b:s:w:v:")) != TB_OPT_END) {
		if (c == 'b')
			all = o.arg[0] == 'a';
		else if (c == 's')
			sep = o.arg;
		else if (c == 'w' && tb_parse_ll(o.arg, &width) == 0)
			;
		else if (c == 'v' && tb_parse_ll(o.arg, &n) == 0)
			;
		else
			return 1;
	}
	rc = slurp(io, "nl", argc - o.ind, argv + o.ind, &b);
	for (size_t i = 0; i < b.len;) {
		char *nl = memchr(b.data + i, '\n', b.len - i);
		size_t end = nl ? (size_t)(nl - b.data) : b.len;

		if (end > i || all)
			fprintf(io->out, "%*lld%s", (int)width, n++, sep);
		else
			fprintf(io->out, "%*s", (int)(width + strlen(sep)), "");
		fwrite(b.data + i, 1, end - i, io->out);
		fputc('\n', io->out);
		i = end + 1;
	}
	tb_buf_free(&b);
	return rc;
}

/* Reads one line (without the newline) into b; false at end of file. */
static bool
read_line(FILE *f, struct tb_buf *b)
{
	int c;

	b->len = 0;
	if (f == NULL)
		return false;
	while ((c = getc(f)) != EOF && c != '\n')
		tb_buf_addc(b, c);
	return c != EOF || b->len > 0;
}

int
applet_paste(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	const char *delims = "\t";
	char *dash[] = { (char *)"-", NULL }, **files;
	bool serial = false;
	FILE **in;
	struct tb_buf line = { 0 }, row = { 0 };
	size_t nd;
	int c, n, rc = 0;

	tb_opt_init(&o, io, "paste", argc, argv);
	while ((c = tb_opt_next(&o, "d:s")) != TB_OPT_END) {
		if (c == 'd')
			delims = o.arg[0] ? o.arg : "\t";
		else if (c == 's')
			serial = true;
		else
			return 1;
	}
	n = argc - o.ind;
	files = n > 0 ? argv + o.ind : dash;
	n = n > 0 ? n : 1;
	nd = strlen(delims);
	in = calloc((size_t)n, sizeof(FILE *));
	if (in == NULL)
		return 1;
	for (int i = 0; i < n; i++)
		if ((in[i] = tb_open_in(io, "paste", files[i])) == NULL)
			rc = 1;
	for (int i = 0; serial && i < n; i++) {
		size_t k = 0;

		while (read_line(in[i], &line)) {
			if (k > 0)
				fputc(delims[(k - 1) % nd], io->out);
			fwrite(line.data, 1, line.len, io->out);
			k++;
		}
		if (in[i] != NULL)
			fputc('\n', io->out);
	}
	while (!serial) {
		bool any = false;

		row.len = 0;
		for (int i = 0; i < n; i++) {
			if (i > 0)
				tb_buf_addc(&row, delims[(size_t)(i - 1) % nd]);
			if (read_line(in[i], &line)) {
				any = true;
				tb_buf_add(&row, line.data, line.len);
			}
		}
		if (!any)
			break;
		fwrite(row.data, 1, row.len, io->out);
		fputc('\n', io->out);
	}
	for (int i = 0; i < n; i++)
		tb_close_in(io, in[i]);
	free(in);
	tb_buf_free(&line);
	tb_buf_free(&row);
	return rc;
}
