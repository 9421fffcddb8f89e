/* cut.c - cut -f/-c/-b with -d, -s, --complement, --output-delimiter. */
#include "../toolbox.h"

#include <stdlib.h>
#include <string.h>

struct range {
	long long	lo, hi;	/* 1-based, inclusive; hi = LLONG_MAX open */
};

struct cut_opts {
	struct range	*r;
	size_t		 nr;
	char		 delim;
	const char	*odelim;
	bool		 fields, only_delimited, complement;
};

static int
parse_list(struct tb_io *io, struct cut_opts *c, const char *list)
{
	const char *s = list;

	while (*s) {
		struct range r = { 1, 0 };
		char *end;

		if (*s != '-') {
			r.lo = strtoll(s, &end, 10);
			if (end == s || r.lo < 1)
				goto bad;
			s = end;
		}
		if (*s == '-') {
			s++;
			if (*s >= '0' && *s <= '9') {
				r.hi = strtoll(s, &end, 10);
				s = end;
			} else
				r.hi = (long long)(~0ull >> 1);
		} else
			r.hi = r.lo;
		if (r.hi < r.lo || (*s != ',' && *s != '\0'))
			goto bad;
		if (*s == ',')
			s++;
		c->r = tb_xrealloc(c->r, (c->nr + 1) * sizeof(*c->r));
		c->r[c->nr++] = r;
	}
	if (c->nr > 0)
		return 0;
bad:
	tb_err(io, "cut", "invalid field or byte list '%s'", list);
	return -1;
}

static bool
selected(const struct cut_opts *c, long long i)
{
	bool in = false;

	for (size_t k = 0; k < c->nr && !in; k++)
		in = i >= c->r[k].lo && i <= c->r[k].hi;
	return in != c->complement;
}

static void
cut_line(const struct cut_opts *c, const char *line, size_t len, FILE *out)
{
	bool first = true;

	if (!c->fields) {
		for (size_t i = 0; i < len; i++)
			if (selected(c, (long long)i + 1))
				fputc(line[i], out);
		fputc('\n', out);
		return;
	}
	if (memchr(line, c->delim, len) == NULL) {
		if (!c->only_delimited) {
			fwrite(line, 1, len, out);
			fputc('\n', out);
		}
		return;
	}
	long long f = 1;

	for (size_t start = 0; start <= len; f++) {
		const char *d = memchr(line + start, c->delim, len - start);
		size_t end = d ? (size_t)(d - line) : len;

		if (selected(c, f)) {
			if (!first) {
				if (c->odelim)
					fputs(c->odelim, out);
				else
					fputc(c->delim, out);
			}
			fwrite(line + start, 1, end - start, out);
			first = false;
		}
		start = end + 1;
	}
	fputc('\n', out);
}

int
applet_cut(struct tb_io *io, int argc, char **argv)
{
	struct cut_opts c = { .delim = '\t' };
	struct tb_opt o;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ch, rc = 0;
	const char *list = NULL;

	tb_opt_init(&o, io, "cut", argc, argv);
	while ((ch = tb_opt_next(&o, "b:c:f:d:sn")) != TB_OPT_END) {
		switch (ch) {
		case 'b':
		case 'c':
		case 'f':
			list = o.arg;
			c.fields = ch == 'f';
			break;
		case 'd':
			if (strlen(o.arg) > 1) {
				tb_err(io, "cut", "the delimiter must be a "
				    "single character");
				goto fail;
			}
			c.delim = o.arg[0] ? o.arg[0] : '\n';
			break;
		case 's': c.only_delimited = true; break;
		case 'n': break;
		case TB_OPT_LONG:
			if (strcmp(o.arg, "complement") == 0)
				c.complement = true;
			else if (strncmp(o.arg, "output-delimiter=", 17) == 0)
				c.odelim = o.arg + 17;
			else {
				tb_opt_bad_long(&o);
				goto fail;
			}
			break;
		default:
			goto fail;
		}
	}
	if (list == NULL) {
		tb_err(io, "cut", "you must specify a list of bytes, "
		    "characters, or fields");
		goto fail;
	}
	if (parse_list(io, &c, list) != 0)
		goto fail;
	for (int i = o.ind; i < argc || i == o.ind; i++) {
		FILE *in = tb_open_in(io, "cut", i < argc ? argv[i] : "-");

		if (in == NULL) {
			rc = 1;
			continue;
		}
		while ((n = getline(&line, &cap, in)) > 0) {
			if (line[n - 1] == '\n')
				n--;
			cut_line(&c, line, (size_t)n, io->out);
		}
		tb_close_in(io, in);
		if (i >= argc)
			break;
	}
	free(line);
	free(c.r);
	return rc;
fail:
	free(c.r);
	return 1;
}
