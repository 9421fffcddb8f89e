/* headtail.c - head and tail. */
#include "../toolbox.h"

#include <stdlib.h>
#include <string.h>

struct ht {
	long long	 count;
	bool		 bytes;	/* -c */
	bool		 from;	/* tail +N / head -n -N */
	bool		 headers;
};

/* Parses "N", "+N" or "-N" with optional k/m suffix. */
static int
ht_count(struct tb_io *io, const char *applet, const char *s, struct ht *h,
    bool is_tail)
{
	long long v, mult = 1;
	struct tb_buf b = { 0 };
	size_t n = strlen(s);
	int rc;

	h->from = false;
	if (*s == '+' || *s == '-') {
		h->from = is_tail ? *s == '+' : *s == '-';
		s++;
		n--;
	}
	if (n > 0 && strchr("kKmMbB", s[n - 1]) != NULL) {
		mult = s[n - 1] == 'b' || s[n - 1] == 'B' ? 512 :
		    s[n - 1] == 'k' || s[n - 1] == 'K' ? 1024 : 1048576;
		n--;
	}
	tb_buf_add(&b, s, n);
	rc = tb_parse_ll(tb_buf_str(&b), &v);
	tb_buf_free(&b);
	if (rc != 0 || v < 0) {
		tb_err(io, applet, "invalid number '%s'", s);
		return -1;
	}
	h->count = v * mult;
	return 0;
}

static void
head_one(struct ht *h, FILE *in, FILE *out)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int c;

	if (h->bytes && !h->from) {
		for (long long i = 0; i < h->count && (c = getc(in)) != EOF;
		    i++)
			putc(c, out);
		return;
	}
	if (!h->from) {
		for (long long i = 0; i < h->count &&
		    (n = getline(&line, &cap, in)) > 0; i++)
			fwrite(line, 1, (size_t)n, out);
		free(line);
		return;
	}
	/* All but the last count lines/bytes: buffer everything. */
	struct tb_buf all = { 0 };
	char buf[8192];
	size_t r, end;

	while ((r = fread(buf, 1, sizeof(buf), in)) > 0)
		tb_buf_add(&all, buf, r);
	end = all.len;
	if (h->bytes)
		end = (long long)all.len > h->count ? all.len -
		    (size_t)h->count : 0;
	else {
		long long k = h->count;

		if (end > 0 && all.data[end - 1] != '\n' && k > 0)
			k--, end--;
		for (; end > 0 && k > 0; k--) {
			end--;
			while (end > 0 && all.data[end - 1] != '\n')
				end--;
		}
		if (k > 0)
			end = 0;
	}
	fwrite(all.data, 1, end, out);
	tb_buf_free(&all);
}

static void
tail_one(struct ht *h, FILE *in, FILE *out)
{
	struct tb_buf all = { 0 };
	char buf[8192];
	size_t r, start = 0;
	long long k;

	while ((r = fread(buf, 1, sizeof(buf), in)) > 0)
		tb_buf_add(&all, buf, r);
	if (h->bytes) {
		if (h->from)
			start = h->count > 0 ? (size_t)h->count - 1 : 0;
		else
			start = (long long)all.len > h->count ? all.len -
			    (size_t)h->count : 0;
		if (start > all.len)
			start = all.len;
	} else if (h->from) {
		for (k = 1; k < h->count && start < all.len; k++) {
			char *nl = memchr(all.data + start, '\n',
			    all.len - start);

			start = nl ? (size_t)(nl - all.data) + 1 : all.len;
		}
	} else {
		start = all.len;
		k = h->count;
		if (start > 0 && all.data[start - 1] == '\n')
			start--;
		if (k == 0)
			start = all.len;
		for (; start > 0 && k > 0; start--) {
			if (all.data[start - 1] == '\n' && --k == 0)
				break;
		}
	}
	fwrite(all.data + start, 1, all.len - start, out);
	tb_buf_free(&all);
}

static int
head_tail(struct tb_io *io, int argc, char **argv, bool is_tail)
{
	const char *applet = is_tail ? "tail" : "head";
	struct ht h = { .count = 10 };
	struct tb_opt o;
	int c, rc = 0, nfiles;
	bool quiet = false, verbose = false;

	tb_opt_init(&o, io, applet, argc, argv);
	o.numeric = true;
	/* "tail +5" (obsolete form) */
	if (is_tail && argc > 1 && argv[1][0] == '+' &&
	    argv[1][1] >= '0' && argv[1][1] <= '9') {
		if (ht_count(io, applet, argv[1], &h, true) != 0)
			return 1;
		o.ind = 2;
	}
	while ((c = tb_opt_next(&o, "n:c:qvfF")) != TB_OPT_END) {
		switch (c) {
		case '#':
		case 'n':
		case 'c':
			if (ht_count(io, applet, o.arg, &h, is_tail) != 0)
				return 1;
			h.bytes = c == 'c';
			break;
		case 'q': quiet = true; break;
		case 'v': verbose = true; break;
		case 'f':
		case 'F': break;
		case TB_OPT_LONG:
			tb_opt_bad_long(&o);
			return 1;
		default:
			return 1;
		}
	}
	nfiles = argc - o.ind;
	h.headers = verbose || (nfiles > 1 && !quiet);
	for (int i = o.ind; i < argc || i == o.ind; i++) {
		const char *path = i < argc ? argv[i] : "-";
		FILE *in = tb_open_in(io, applet, path);

		if (in == NULL) {
			rc = 1;
			continue;
		}
		if (h.headers)
			fprintf(io->out, "%s==> %s <==\n", i > o.ind ? "\n" : "",
			    strcmp(path, "-") == 0 ? "standard input" : path);
		if (is_tail)
			tail_one(&h, in, io->out);
		else
			head_one(&h, in, io->out);
		tb_close_in(io, in);
		if (i >= argc)
			break;
	}
	return rc;
}

int
applet_head(struct tb_io *io, int argc, char **argv)
{
	return head_tail(io, argc, argv, false);
}

int
applet_tail(struct tb_io *io, int argc, char **argv)
{
	return head_tail(io, argc, argv, true);
}
