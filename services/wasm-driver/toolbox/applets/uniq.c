/* uniq.c - uniq (-c -d -u -i -f -s). */
#include "../toolbox.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct uniq_opts {
	bool		count, dups, uniques, icase;
	long long	skip_fields, skip_chars;
};

/* The part of line that is compared. */
static const char *
uniq_key(const struct uniq_opts *u, const char *s)
{
	for (long long f = 0; f < u->skip_fields; f++) {
		while (*s == ' ' || *s == '\t')
			s++;
		while (*s && *s != ' ' && *s != '\t' && *s != '\n')
			s++;
	}
	for (long long c = 0; c < u->skip_chars && *s && *s != '\n'; c++)
		s++;
	return s;
}

static void
uniq_emit(const struct uniq_opts *u, FILE *out, const char *line,
    long long n)
{
	if ((u->dups && n < 2) || (u->uniques && n > 1))
		return;
	if (u->count)
		fprintf(out, "%7lld %s", n, line);
	else
		fputs(line, out);
}

int
applet_uniq(struct tb_io *io, int argc, char **argv)
{
	struct uniq_opts u = { 0 };
	struct tb_opt o;
	FILE *in, *out = io->out;
	char *prev = NULL, *line = NULL;
	size_t pcap = 0, cap = 0;
	ssize_t len;
	long long n = 0;
	int c, rc = 0;

	tb_opt_init(&o, io, "uniq", argc, argv);
	while ((c = tb_opt_next(&o, "cduif:s:")) != TB_OPT_END) {
		switch (c) {
		case 'c': u.count = true; break;
		case 'd': u.dups = true; break;
		case 'u': u.uniques = true; break;
		case 'i': u.icase = true; break;
		case 'f':
		case 's':
			if (tb_parse_ll(o.arg, c == 'f' ? &u.skip_fields :
			    &u.skip_chars) != 0) {
				tb_err(io, "uniq", "invalid number '%s'", o.arg);
				return 1;
			}
			break;
		case TB_OPT_LONG:
			tb_opt_bad_long(&o);
			return 1;
		default:
			return 1;
		}
	}
	if ((in = tb_open_in(io, "uniq", o.ind < argc ? argv[o.ind] : "-"))
	    == NULL)
		return 1;
	if (o.ind + 1 < argc && (out = fopen(argv[o.ind + 1], "w")) == NULL) {
		tb_errno(io, "uniq", argv[o.ind + 1]);
		tb_close_in(io, in);
		return 1;
	}
	while ((len = getline(&line, &cap, in)) > 0) {
		if (line[len - 1] != '\n') {
			if ((size_t)len + 2 > cap)
				line = tb_xrealloc(line, cap = (size_t)len + 2);
			line[len++] = '\n';
			line[len] = '\0';
		}
		if (prev != NULL) {
			const char *a = uniq_key(&u, prev), *b = uniq_key(&u, line);

			if ((u.icase ? strcasecmp(a, b) : strcmp(a, b)) == 0) {
				n++;
				continue;
			}
			uniq_emit(&u, out, prev, n);
		}
		if ((size_t)len + 1 > pcap)
			prev = tb_xrealloc(prev, pcap = (size_t)len + 1);
		memcpy(prev, line, (size_t)len + 1);
		n = 1;
	}
	if (prev != NULL)
		uniq_emit(&u, out, prev, n);
	free(prev);
	free(line);
	tb_close_in(io, in);
	if (out != io->out && fclose(out) != 0)
		rc = 1;
	return rc;
}
