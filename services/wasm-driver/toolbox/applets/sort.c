/* sort.c - sort lines (-n -h -r -u -f -b -s -k -t -o -c). */
#include "../toolbox.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define SK_NUM		0x01
#define SK_REV		0x02
#define SK_FOLD		0x04
#define SK_BLANK	0x08
#define SK_HUMAN	0x10

struct sort_key {
	long	f1, c1, f2, c2;	/* 1-based; f2 = 0: to end of line */
	int	flags;
};

struct sort_ctx {
	struct sort_key	*keys;
	size_t		 nkeys;
	int		 gflags;	/* global flags */
	int		 sep;		/* -t, or -1 */
	bool		 stable;
	bool		 unique;
};

struct sort_line {
	char	*s;
	size_t	 len;
	size_t	 idx;
};

static struct sort_ctx *sort_cur;	/* qsort context; reset after use */

/* Start of field f (1-based) in s, GNU style (leading blanks included). */
static const char *
field_start(const struct sort_ctx *c, const char *s, const char *end, long f)
{
	for (long i = 1; i < f && s < end; i++) {
		if (c->sep >= 0) {
			const char *p = memchr(s, c->sep, (size_t)(end - s));

			s = p ? p + 1 : end;
		} else {
			while (s < end && isblank((unsigned char)*s))
				s++;
			while (s < end && !isblank((unsigned char)*s))
				s++;
		}
	}
	return s;
}

static const char *
field_end(const struct sort_ctx *c, const char *s, const char *end)
{
	if (c->sep >= 0) {
		const char *p = memchr(s, c->sep, (size_t)(end - s));

		return p ? p : end;
	}
	while (s < end && isblank((unsigned char)*s))
		s++;
	while (s < end && !isblank((unsigned char)*s))
		s++;
	return s;
}

static void
key_span(const struct sort_ctx *c, const struct sort_key *k,
    const struct sort_line *l, const char **a, const char **b)
{
	const char *end = l->s + l->len, *s, *e;

	s = field_start(c, l->s, end, k->f1);
	if (k->flags & SK_BLANK)
		while (s < end && isblank((unsigned char)*s))
			s++;
	if (k->c1 > 1)
		s = (long)(end - s) > k->c1 - 1 ? s + k->c1 - 1 : end;
	if (k->f2 == 0)
		e = end;
	else {
		e = field_start(c, l->s, end, k->f2);
		if (k->c2 == 0)
			e = field_end(c, e, end);
		else {
			if (k->flags & SK_BLANK)
				while (e < end && isblank((unsigned char)*e))
					e++;
			e = (long)(end - e) > k->c2 ? e + k->c2 : end;
		}
	}
	*a = s;
	*b = e > s ? e : s;
}

static double
num_value(const char *s, const char *e, bool human)
{
	char buf[128];
	size_t n = (size_t)(e - s) < sizeof(buf) - 1 ? (size_t)(e - s) :
	    sizeof(buf) - 1;
	char *end;
	double v;

	memcpy(buf, s, n);
	buf[n] = '\0';
	v = strtod(buf, &end);
	if (end == buf)
		return 0;
	if (human && *end) {
		const char *u = strchr("KMGTPE", toupper((unsigned char)*end));

		if (u != NULL)
			for (long i = 0; i <= u - "KMGTPE"; i++)
				v *= 1024;
	}
	return v;
}

static int
cmp_span(const char *a, const char *ae, const char *b, const char *be,
    int flags)
{
	int r = 0;

	if (flags & (SK_NUM | SK_HUMAN)) {
		double x = num_value(a, ae, flags & SK_HUMAN);
		double y = num_value(b, be, flags & SK_HUMAN);

		r = x < y ? -1 : x > y ? 1 : 0;
	} else {
		size_t la = (size_t)(ae - a), lb = (size_t)(be - b);
		size_t n = la < lb ? la : lb;

		for (size_t i = 0; i < n && r == 0; i++) {
			int x = (unsigned char)a[i], y = (unsigned char)b[i];

			if (flags & SK_FOLD) {
				x = toupper(x);
				y = toupper(y);
			}
			r = x - y;
		}
		if (r == 0)
			r = la < lb ? -1 : la > lb ? 1 : 0;
	}
	return (flags & SK_REV) ? -r : r;
}

static int
line_cmp_keys(const struct sort_ctx *c, const struct sort_line *x,
    const struct sort_line *y)
{
	int r;

	if (c->nkeys == 0) {
		if (c->gflags & SK_BLANK) {
			const char *a = x->s, *b = y->s;

			while (isblank((unsigned char)*a))
				a++;
			while (isblank((unsigned char)*b))
				b++;
			return cmp_span(a, x->s + x->len, b, y->s + y->len,
			    c->gflags);
		}
		return cmp_span(x->s, x->s + x->len, y->s, y->s + y->len,
		    c->gflags);
	}
	for (size_t i = 0; i < c->nkeys; i++) {
		const char *a, *ae, *b, *be;

		key_span(c, &c->keys[i], x, &a, &ae);
		key_span(c, &c->keys[i], y, &b, &be);
		if ((r = cmp_span(a, ae, b, be, c->keys[i].flags)) != 0)
			return r;
	}
	return 0;
}

static int
line_cmp(const void *pa, const void *pb)
{
	const struct sort_line *x = pa, *y = pb;
	int r = line_cmp_keys(sort_cur, x, y);

	if (r == 0 && !sort_cur->stable && !sort_cur->unique &&
	    (sort_cur->nkeys > 0 || (sort_cur->gflags & ~SK_REV) != 0)) {
		r = cmp_span(x->s, x->s + x->len, y->s, y->s + y->len,
		    sort_cur->gflags & SK_REV);
	}
	if (r == 0)
		r = x->idx < y->idx ? -1 : x->idx > y->idx;
	return r;
}

static int
parse_flags(const char *s, int *flags)
{
	for (; *s; s++) {
		switch (*s) {
		case 'n': *flags |= SK_NUM; break;
		case 'g': *flags |= SK_NUM; break;
		case 'h': *flags |= SK_HUMAN; break;
		case 'r': *flags |= SK_REV; break;
		case 'f': *flags |= SK_FOLD; break;
		case 'b': *flags |= SK_BLANK; break;
		case 'd': case 'i': case 'V': case 'M': break;
		default: return -1;
		}
	}
	return 0;
}

/* "F[.C][flags][,F[.C][flags]]" */
static int
parse_key(struct sort_ctx *c, const char *spec)
{
	struct sort_key k = { 0 };
	char *end;
	const char *s = spec;
	char fl[16];
	size_t n;

	k.f1 = strtol(s, &end, 10);
	if (end == s || k.f1 < 1)
		return -1;
	s = end;
	if (*s == '.') {
		k.c1 = strtol(s + 1, &end, 10);
		s = end;
	}
	n = strcspn(s, ",");
	if (n >= sizeof(fl))
		return -1;
	memcpy(fl, s, n);
	fl[n] = '\0';
	if (parse_flags(fl, &k.flags) != 0)
		return -1;
	s += n;
	if (*s == ',') {
		k.f2 = strtol(s + 1, &end, 10);
		if (end == s + 1 || k.f2 < 1)
			return -1;
		s = end;
		if (*s == '.') {
			k.c2 = strtol(s + 1, &end, 10);
			s = end;
		}
		if (parse_flags(s, &k.flags) != 0)
			return -1;
	}
	c->keys = tb_xrealloc(c->keys, (c->nkeys + 1) * sizeof(k));
	c->keys[c->nkeys++] = k;
	return 0;
}

static int
read_lines(struct tb_io *io, FILE *in, struct sort_line **lp, size_t *np,
    size_t *capp)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	(void)io;
	while ((n = getline(&line, &cap, in)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if (*np == *capp)
			*lp = tb_xrealloc(*lp, (*capp = *capp ? *capp * 2 : 256)
			    * sizeof(**lp));
		(*lp)[*np].s = tb_xmalloc((size_t)n + 1);
		memcpy((*lp)[*np].s, line, (size_t)n + 1);
		(*lp)[*np].len = (size_t)n;
		(*lp)[*np].idx = *np;
		(*np)++;
	}
	free(line);
	return 0;
}

int
applet_sort(struct tb_io *io, int argc, char **argv)
{
	struct sort_ctx c = { .sep = -1 };
	struct sort_line *lines = NULL;
	size_t n = 0, cap = 0;
	struct tb_opt o;
	const char *outpath = NULL;
	FILE *out;
	bool check = false;
	int ch, rc = 0;

	tb_opt_init(&o, io, "sort", argc, argv);
	while ((ch = tb_opt_next(&o, "nhrufbsgk:t:o:cCVdiM")) != TB_OPT_END) {
		char f[2] = { (char)ch, 0 };

		switch (ch) {
		case 'n': case 'h': case 'r': case 'f': case 'b': case 'g':
		case 'V': case 'd': case 'i': case 'M':
			parse_flags(f, &c.gflags);
			break;
		case 'u': c.unique = true; break;
		case 's': c.stable = true; break;
		case 'c': case 'C': check = true; break;
		case 'k':
			if (parse_key(&c, o.arg) != 0) {
				tb_err(io, "sort", "invalid key '%s'", o.arg);
				rc = 2;
				goto out;
			}
			break;
		case 't':
			if (strlen(o.arg) != 1 && strcmp(o.arg, "\\t") != 0) {
				tb_err(io, "sort", "multi-character tab '%s'",
				    o.arg);
				rc = 2;
				goto out;
			}
			c.sep = o.arg[0] == '\\' ? '\t' : (unsigned char)o.arg[0];
			break;
		case 'o': outpath = o.arg; break;
		case TB_OPT_LONG:
			tb_opt_bad_long(&o);
			rc = 2;
			goto out;
		default:
			rc = 2;
			goto out;
		}
	}
	/* Keys without their own flags inherit the global ones. */
	for (size_t i = 0; i < c.nkeys; i++)
		if (c.keys[i].flags == 0)
			c.keys[i].flags = c.gflags;
	for (int i = o.ind; i < argc || i == o.ind; i++) {
		FILE *in = tb_open_in(io, "sort", i < argc ? argv[i] : "-");

		if (in == NULL) {
			rc = 2;
			goto out;
		}
		read_lines(io, in, &lines, &n, &cap);
		tb_close_in(io, in);
		if (i >= argc)
			break;
	}
	sort_cur = &c;
	if (check) {
		for (size_t i = 1; i < n; i++) {
			int r = line_cmp_keys(&c, &lines[i - 1], &lines[i]);

			if (r > 0 || (r == 0 && c.unique)) {
				tb_err(io, "sort", "-:%zu: disorder: %s", i + 1,
				    lines[i].s);
				rc = 1;
				break;
			}
		}
		sort_cur = NULL;
		goto out;
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	sort_cur = NULL;
	out = io->out;
	if (outpath != NULL && (out = fopen(outpath, "w")) == NULL) {
		tb_errno(io, "sort", outpath);
		rc = 2;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (c.unique && i > 0 &&
		    line_cmp_keys(&c, &lines[i - 1], &lines[i]) == 0)
			continue;
		fwrite(lines[i].s, 1, lines[i].len, out);
		fputc('\n', out);
	}
	if (out != io->out && fclose(out) != 0)
		rc = 2;
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i].s);
	free(lines);
	free(c.keys);
	return rc;
}
