/* wc.c - line, word, character and byte counts. */
#include "../toolbox.h"

#include <sys/stat.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { WC_LINES, WC_WORDS, WC_CHARS, WC_BYTES, WC_MAXLINE, WC_N };

static void
wc_count(FILE *in, unsigned long long v[WC_N])
{
	bool inword = false;
	unsigned long long col = 0;
	int c;

	while ((c = getc(in)) != EOF) {
		v[WC_BYTES]++;
		if ((c & 0xc0) != 0x80)
			v[WC_CHARS]++;
		if (c == '\n') {
			v[WC_LINES]++;
			if (col > v[WC_MAXLINE])
				v[WC_MAXLINE] = col;
			col = 0;
		} else if ((c & 0xc0) != 0x80)
			col += c == '\t' ? 8 - col % 8 : 1;
		if (isspace(c))
			inword = false;
		else if (!inword) {
			inword = true;
			v[WC_WORDS]++;
		}
	}
	if (col > v[WC_MAXLINE])
		v[WC_MAXLINE] = col;
}

static void
wc_print(FILE *out, const bool show[WC_N], const unsigned long long v[WC_N],
    int width, const char *name)
{
	static const int order[] = { WC_LINES, WC_WORDS, WC_CHARS, WC_BYTES,
		WC_MAXLINE };
	bool first = true;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!show[order[i]])
			continue;
		fprintf(out, first ? "%*llu" : " %*llu", width, v[order[i]]);
		first = false;
	}
	if (name != NULL)
		fprintf(out, " %s", name);
	fputc('\n', out);
}

int
applet_wc(struct tb_io *io, int argc, char **argv)
{
	bool show[WC_N] = { false };
	unsigned long long (*counts)[WC_N], total[WC_N] = { 0 };
	struct tb_opt o;
	int c, rc = 0, nfiles, ncols = 0, width = 1;
	char **names;
	bool any = false, *ok;

	tb_opt_init(&o, io, "wc", argc, argv);
	while ((c = tb_opt_next(&o, "lwcmL")) != TB_OPT_END) {
		switch (c) {
		case 'l': show[WC_LINES] = true; break;
		case 'w': show[WC_WORDS] = true; break;
		case 'm': show[WC_CHARS] = true; break;
		case 'c': show[WC_BYTES] = true; break;
		case 'L': show[WC_MAXLINE] = true; break;
		case TB_OPT_LONG:
			tb_opt_bad_long(&o);
			return 1;
		default:
			return 1;
		}
		any = true;
	}
	if (!any)
		show[WC_LINES] = show[WC_WORDS] = show[WC_BYTES] = true;
	for (int k = 0; k < WC_N; k++)
		ncols += show[k];
	nfiles = argc - o.ind;
	names = argv + o.ind;
	counts = calloc(nfiles > 0 ? (size_t)nfiles : 1, sizeof(*counts));
	ok = calloc(nfiles > 0 ? (size_t)nfiles : 1, sizeof(bool));
	if (counts == NULL || ok == NULL) {
		free(counts);
		free(ok);
		return 1;
	}
	for (int i = 0; i < (nfiles > 0 ? nfiles : 1); i++) {
		FILE *in = tb_open_in(io, "wc", nfiles > 0 ? names[i] : "-");

		if (in == NULL) {
			rc = 1;
			continue;
		}
		wc_count(in, counts[i]);
		tb_close_in(io, in);
		ok[i] = true;
		for (int k = 0; k < WC_N; k++) {
			total[k] = k == WC_MAXLINE ? (counts[i][k] > total[k] ?
			    counts[i][k] : total[k]) : total[k] + counts[i][k];
		}
	}
	/* GNU's width: the digits of the regular files' total size, at
	 * least 7 when one input is not a regular file (stdin, a pipe);
	 * 1 for a single count of a single input. */
	if (ncols > 1 || nfiles > 1) {
		unsigned long long size = 0;
		int minimum = 1;

		for (int i = 0; i < (nfiles > 0 ? nfiles : 1); i++) {
			struct stat st;

			if (!ok[i])
				continue;
			if (nfiles > 0 && strcmp(names[i], "-") != 0 &&
			    stat(names[i], &st) == 0 && S_ISREG(st.st_mode))
				size += (unsigned long long)st.st_size;
			else
				minimum = 7;
		}
		for (; size >= 10; size /= 10)
			width++;
		if (width < minimum)
			width = minimum;
	}
	for (int i = 0; i < (nfiles > 0 ? nfiles : 1); i++)
		if (ok[i])
			wc_print(io->out, show, counts[i], width,
			    nfiles > 0 && strcmp(names[i], "-") != 0 ?
			    names[i] : nfiles > 0 ? "-" : NULL);
	if (nfiles > 1)
		wc_print(io->out, show, total, width, "total");
	free(counts);
	free(ok);
	return rc;
}
