/*
 * diff.c - compare two files line by line: Myers' O(ND) algorithm in linear
 * space (divide and conquer on the middle snake); normal, unified (-u, -U)
 * and brief (-q) output.
 */
#include "../toolbox.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct dfile {
	const char	*name;
	char		*data;
	size_t		 len;
	char		**line;		/* start of each line */
	size_t		*llen;		/* length without the newline */
	unsigned	*hash;		/* equivalence value */
	bool		*mark;		/* deleted (a) / inserted (b) */
	size_t		 n;
	bool		 noeol;		/* last line lacks a newline */
	struct stat	 st;
};

struct diff {
	struct tb_io	*io;
	struct dfile	 f[2];
	int		*vf, *vb;	/* diagonals, offset by voff */
	size_t		 voff;
	bool		 icase, iwhite, ispace, unified, brief;
	long		 context;
};

static int
load(struct diff *d, struct dfile *f)
{
	FILE *in = tb_open_in(d->io, "diff", f->name);
	struct tb_buf b = { 0 };
	char buf[8192];
	size_t r, cap = 0;

	if (in == NULL)
		return -1;
	memset(&f->st, 0, sizeof(f->st));
	if (in != d->io->in && fileno(in) >= 0)
		fstat(fileno(in), &f->st);
	while ((r = fread(buf, 1, sizeof(buf), in)) > 0)
		tb_buf_add(&b, buf, r);
	tb_close_in(d->io, in);
	f->data = tb_buf_str(&b);
	f->len = b.len;
	for (size_t i = 0; i < f->len;) {
		char *nl = memchr(f->data + i, '\n', f->len - i);
		size_t end = nl ? (size_t)(nl - f->data) : f->len;

		if (f->n == cap) {
			cap = cap ? cap * 2 : 64;
			f->line = tb_xrealloc(f->line, cap * sizeof(char *));
			f->llen = tb_xrealloc(f->llen, cap * sizeof(size_t));
		}
		f->line[f->n] = f->data + i;
		f->llen[f->n++] = end - i;
		f->noeol = nl == NULL;
		i = end + 1;
	}
	f->hash = tb_xmalloc((f->n + 1) * sizeof(unsigned));
	f->mark = calloc(f->n + 1, sizeof(bool));
	if (f->mark == NULL)
		return -1;
	return 0;
}

static unsigned
line_hash(const struct diff *d, const struct dfile *f, size_t i)
{
	const unsigned char *s = (const unsigned char *)f->line[i];
	unsigned h = 5381;
	bool space = false;

	for (size_t k = 0; k < f->llen[i]; k++) {
		int c = s[k];

		if ((d->iwhite || d->ispace) && isspace(c)) {
			space = true;
			continue;
		}
		if (space && d->ispace)
			h = h * 33 + ' ';
		space = false;
		h = h * 33 + (unsigned)(d->icase ? tolower(c) : c);
	}
	if (i == f->n - 1 && f->noeol)
		h = h * 33 + 0x5a5a;
	return h;
}

/* Exact comparison of line i of a and line j of b under the options. */
static bool
same(const struct diff *d, size_t i, size_t j)
{
	const struct dfile *a = &d->f[0], *b = &d->f[1];
	const unsigned char *p, *q, *pe, *qe;

	if (a->hash[i] != b->hash[j])
		return false;
	p = (const unsigned char *)a->line[i];
	q = (const unsigned char *)b->line[j];
	pe = p + a->llen[i];
	qe = q + b->llen[j];
	if (!d->iwhite && !d->ispace && !d->icase)
		return pe - p == qe - q && memcmp(p, q, (size_t)(pe - p)) == 0;
	for (;;) {
		if (d->iwhite || d->ispace) {
			bool sp = false, sq = false;

			while (p < pe && isspace(*p))
				p++, sp = true;
			while (q < qe && isspace(*q))
				q++, sq = true;
			if (d->ispace && sp != sq && p < pe && q < qe)
				return false;
		}
		if (p == pe || q == qe)
			return p == pe && q == qe;
		if ((d->icase ? tolower(*p) : *p) !=
		    (d->icase ? tolower(*q) : *q))
			return false;
		p++;
		q++;
	}
}

/*
 * Finds a middle snake of a[a0..a1) x b[b0..b1) (both non-empty, first and
 * last lines differing). Returns the end of the left part in *xl,*yl and
 * the start of the right part in *xr,*yr.
 */
static void
middle_snake(struct diff *d, long a0, long a1, long b0, long b1, long *xl,
    long *yl, long *xr, long *yr)
{
	long n = a1 - a0, m = b1 - b0, delta = n - m, max = (n + m + 1) / 2;
	bool odd = (delta & 1) != 0;
	int *vf = d->vf + d->voff, *vb = d->vb + d->voff;

	vf[1] = 0;
	vb[1] = 0;
	for (long D = 0; D <= max; D++) {
		for (long k = -D; k <= D; k += 2) {
			long x, y, xs;

			x = (k == -D || (k != D && vf[k - 1] < vf[k + 1])) ?
			    vf[k + 1] : vf[k - 1] + 1;
			xs = x;
			y = x - k;
			while (x < n && y < m && same(d, (size_t)(a0 + x),
			    (size_t)(b0 + y)))
				x++, y++;
			vf[k] = (int)x;
			if (odd && delta - k >= -(D - 1) && delta - k <= D - 1 &&
			    x + vb[delta - k] >= n) {
				*xl = a0 + xs;
				*yl = b0 + xs - k;
				*xr = a0 + x;
				*yr = b0 + y;
				return;
			}
		}
		for (long k = -D; k <= D; k += 2) {
			long u, v, us;

			u = (k == -D || (k != D && vb[k - 1] < vb[k + 1])) ?
			    vb[k + 1] : vb[k - 1] + 1;
			us = u;
			v = u - k;
			while (u < n && v < m && same(d, (size_t)(a1 - u - 1),
			    (size_t)(b1 - v - 1)))
				u++, v++;
			vb[k] = (int)u;
			if (!odd && delta - k >= -D && delta - k <= D &&
			    u + vf[delta - k] >= n) {
				*xl = a1 - u;
				*yl = b1 - v;
				*xr = a1 - us;
				*yr = b1 - (us - k);
				return;
			}
		}
	}
	/* Not reached for valid input: fall back to "replace all". */
	*xl = *xr = a1;
	*yl = *yr = b0;
}

static void
compare(struct diff *d, long a0, long a1, long b0, long b1)
{
	long xl, yl, xr, yr;

	while (a0 < a1 && b0 < b1 && same(d, (size_t)a0, (size_t)b0))
		a0++, b0++;
	while (a1 > a0 && b1 > b0 && same(d, (size_t)(a1 - 1),
	    (size_t)(b1 - 1)))
		a1--, b1--;
	if (a0 == a1 || b0 == b1) {
		for (long i = a0; i < a1; i++)
			d->f[0].mark[i] = true;
		for (long j = b0; j < b1; j++)
			d->f[1].mark[j] = true;
		return;
	}
	middle_snake(d, a0, a1, b0, b1, &xl, &yl, &xr, &yr);
	compare(d, a0, xl, b0, yl);
	compare(d, xr, a1, yr, b1);
}

static void
put_line(struct diff *d, const struct dfile *f, size_t i, const char *pfx)
{
	FILE *out = d->io->out;

	fputs(pfx, out);
	fwrite(f->line[i], 1, f->llen[i], out);
	fputc('\n', out);
	if (i == f->n - 1 && f->noeol)
		fputs("\\ No newline at end of file\n", out);
}

static void
range(FILE *out, size_t lo, size_t hi)
{
	/* 1-based inclusive lo..hi; lo > hi means "after line hi". */
	if (lo >= hi)
		fprintf(out, "%zu", lo > hi ? hi : lo);
	else
		fprintf(out, "%zu,%zu", lo, hi);
}

struct change {
	size_t	i0, i1, j0, j1;
};

/* The change blocks, in order; *np receives their number. */
static struct change *
changes(struct diff *d, size_t *np)
{
	struct dfile *a = &d->f[0], *b = &d->f[1];
	struct change *c = NULL;
	size_t i = 0, j = 0, n = 0, cap = 0;

	while (i < a->n || j < b->n) {
		size_t i0 = i, j0 = j;

		if (i < a->n && j < b->n && !a->mark[i] && !b->mark[j]) {
			i++, j++;
			continue;
		}
		while (i < a->n && a->mark[i])
			i++;
		while (j < b->n && b->mark[j])
			j++;
		if (i == i0 && j == j0) {
			i++, j++;
			continue;
		}
		if (n == cap)
			c = tb_xrealloc(c, (cap = cap ? cap * 2 : 16) *
			    sizeof(*c));
		c[n++] = (struct change){ i0, i, j0, j };
	}
	*np = n;
	return c;
}

static void
print_normal(struct diff *d)
{
	size_t n;
	struct change *c = changes(d, &n);
	FILE *out = d->io->out;

	for (size_t h = 0; h < n; h++) {
		struct change *x = &c[h];

		range(out, x->i0 + 1, x->i1);
		fputc(x->i1 == x->i0 ? 'a' : x->j1 == x->j0 ? 'd' : 'c', out);
		range(out, x->j0 + 1, x->j1);
		fputc('\n', out);
		for (size_t k = x->i0; k < x->i1; k++)
			put_line(d, &d->f[0], k, "< ");
		if (x->i1 > x->i0 && x->j1 > x->j0)
			fputs("---\n", out);
		for (size_t k = x->j0; k < x->j1; k++)
			put_line(d, &d->f[1], k, "> ");
	}
	free(c);
}

static void
uni_range(FILE *out, size_t start, size_t len)
{
	if (len == 1)
		fprintf(out, "%zu", start + 1);
	else
		fprintf(out, "%zu,%zu", len == 0 ? start : start + 1, len);
}

static void
file_header(struct diff *d, const char *mark, const struct dfile *f)
{
	char when[64] = "";
	struct tm tm;
	time_t t = f->st.st_mtim.tv_sec;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	fprintf(d->io->out, "%s %s\t%s.%09ld +0000\n", mark, f->name, when,
	    (long)f->st.st_mtim.tv_nsec);
}

static void
print_unified(struct diff *d)
{
	struct dfile *a = &d->f[0], *b = &d->f[1];
	size_t n, ctx = (size_t)d->context;
	struct change *c = changes(d, &n);
	FILE *out = d->io->out;

	file_header(d, "---", a);
	file_header(d, "+++", b);
	for (size_t h = 0; h < n;) {
		size_t last = h, as, ae, bs, be, i, j;

		while (last + 1 < n && c[last + 1].i0 - c[last].i1 <= 2 * ctx)
			last++;
		as = c[h].i0 > ctx ? c[h].i0 - ctx : 0;
		bs = c[h].j0 - (c[h].i0 - as);
		ae = c[last].i1 + ctx < a->n ? c[last].i1 + ctx : a->n;
		be = c[last].j1 + (ae - c[last].i1);
		fputs("@@ -", out);
		uni_range(out, as, ae - as);
		fputs(" +", out);
		uni_range(out, bs, be - bs);
		fputs(" @@\n", out);
		i = as;
		j = bs;
		for (size_t k = h; k <= last; k++) {
			for (; i < c[k].i0; i++, j++)
				put_line(d, a, i, " ");
			for (; i < c[k].i1; i++)
				put_line(d, a, i, "-");
			for (; j < c[k].j1; j++)
				put_line(d, b, j, "+");
		}
		for (; i < ae; i++, j++)
			put_line(d, a, i, " ");
		h = last + 1;
	}
	free(c);
}

static void
dfile_free(struct dfile *f)
{
	free(f->data);
	free(f->line);
	free(f->llen);
	free(f->hash);
	free(f->mark);
}

int
applet_diff(struct tb_io *io, int argc, char **argv)
{
	struct diff d = { .io = io, .context = 3 };
	struct tb_opt o;
	char *joined[2] = { NULL, NULL };
	long long ll;
	size_t total, ndiff = 0;
	int c, rc = 2;

	tb_opt_init(&o, io, "diff", argc, argv);
	while ((c = tb_opt_next(&o, "uU:qiwbBaNs")) != TB_OPT_END) {
		switch (c) {
		case 'u': d.unified = true; break;
		case 'U':
			if (tb_parse_ll(o.arg, &ll) != 0 || ll < 0) {
				tb_err(io, "diff", "invalid context length "
				    "'%s'", o.arg);
				return 2;
			}
			d.unified = true;
			d.context = (long)ll;
			break;
		case 'q': d.brief = true; break;
		case 'i': d.icase = true; break;
		case 'w': d.iwhite = true; break;
		case 'b': d.ispace = true; break;
		case 'B': case 'a': case 'N': case 's': break;
		case TB_OPT_LONG:
			tb_opt_bad_long(&o);
			return 2;
		default:
			return 2;
		}
	}
	if (argc - o.ind != 2) {
		tb_err(io, "diff", argc - o.ind < 2 ? "missing operand after "
		    "'%s'" : "extra operand '%s'", argv[argc - 1]);
		return 2;
	}
	for (int k = 0; k < 2; k++) {
		const char *name = argv[o.ind + k], *other = argv[o.ind + 1 - k];

		d.f[k].name = name;
		/* "diff file dir" compares with dir/file. */
		if (tb_is_dir(name) && !tb_is_dir(other)) {
			joined[k] = tb_path_join(name, tb_basename(other));
			d.f[k].name = joined[k];
		} else if (tb_is_dir(name)) {
			tb_err(io, "diff", "%s: Is a directory (directories "
			    "are not supported)", name);
			goto out;
		}
	}
	if (load(&d, &d.f[0]) != 0 || load(&d, &d.f[1]) != 0)
		goto out;
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < d.f[k].n; i++)
			d.f[k].hash[i] = line_hash(&d, &d.f[k], i);
	total = d.f[0].n + d.f[1].n;
	d.voff = total + 2;
	d.vf = tb_xmalloc((2 * total + 5) * sizeof(int));
	d.vb = tb_xmalloc((2 * total + 5) * sizeof(int));
	compare(&d, 0, (long)d.f[0].n, 0, (long)d.f[1].n);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < d.f[k].n; i++)
			ndiff += d.f[k].mark[i];
	rc = ndiff > 0;
	if (rc == 0)
		goto out;
	if (d.brief)
		fprintf(io->out, "Files %s and %s differ\n", d.f[0].name,
		    d.f[1].name);
	else if (d.unified)
		print_unified(&d);
	else
		print_normal(&d);
out:
	free(d.vf);
	free(d.vb);
	dfile_free(&d.f[0]);
	dfile_free(&d.f[1]);
	free(joined[0]);
	free(joined[1]);
	return rc;
}
