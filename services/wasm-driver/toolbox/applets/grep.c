/* grep.c - search files for lines matching patterns (regex.h). */
#include "../toolbox.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#define GREP_INBUF (64 * 1024)

struct grep {
	struct tb_io	*io;
	char		**pats;
	size_t		 npats;
	regex_t		*res;
	bool		 match_all;	/* an empty pattern */
	bool		 ext, fixed, icase, invert, word, line, quiet, silent;
	bool		 number, count, list, list_none, only, recursive;
	bool		 deref, text, with_name, no_name;
	int		 with_name_set;
	long long	 max, after, before;
	char		**incl, **excl, **excl_dir;
	size_t		 nincl, nexcl, nexcl_dir;
	bool		 any;	/* a line was selected somewhere */
	bool		 error;
	char		*inbuf;		/* a large read buffer for files */
	struct tb_buf	 file;		/* a whole file, for grep_buffer */
};

static void
add_str(char ***v, size_t *n, const char *s)
{
	*v = tb_xrealloc(*v, (*n + 1) * sizeof(char *));
	(*v)[(*n)++] = tb_xstrdup(s);
}

static void
free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Adds each line of s as a pattern. */
static void
add_patterns(struct grep *g, const char *s)
{
	const char *nl;

	while ((nl = strchr(s, '\n')) != NULL) {
		char *p = tb_xmalloc((size_t)(nl - s) + 1);

		memcpy(p, s, (size_t)(nl - s));
		p[nl - s] = '\0';
		add_str(&g->pats, &g->npats, p);
		free(p);
		s = nl + 1;
	}
	add_str(&g->pats, &g->npats, s);
}

static bool
is_word_char(int c)
{
	return isalnum(c) || c == '_';
}

/* Finds the first match of pattern k in s at or after from. */
static bool
find_one(struct grep *g, size_t k, const char *s, size_t from, size_t *so,
    size_t *eo)
{
	const char *p = g->pats[k];

	if (g->fixed) {
		size_t pl = strlen(p);
		const char *m;

		for (const char *q = s + from; ; q = m + 1) {
			m = g->icase ? strcasestr(q, p) : strstr(q, p);
			if (m == NULL)
				return false;
			*so = (size_t)(m - s);
			*eo = *so + pl;
			return true;
		}
	}
	regmatch_t rm[1];

	if (regexec(&g->res[k], s + from, 1, rm, from > 0 ? REG_NOTBOL : 0)
	    != 0)
		return false;
	*so = from + (size_t)rm[0].rm_so;
	*eo = from + (size_t)rm[0].rm_eo;
	return true;
}

/*
 * Finds the leftmost acceptable match in s from `from` (honouring -w and
 * -x); true when found.
 */
static bool
find_match(struct grep *g, const char *s, size_t len, size_t from,
    size_t *so, size_t *eo)
{
	bool found = false;

	if (g->match_all) {
		*so = *eo = from;
		return !g->line || len == 0;
	}
	for (size_t k = 0; k < g->npats; k++) {
		size_t a, b, pos = from;

		while (pos <= len && find_one(g, k, s, pos, &a, &b)) {
			bool ok = true;

			if (g->line)
				ok = a == 0 && b == len;
			else if (g->word)
				ok = (a == 0 || !is_word_char(
				    (unsigned char)s[a - 1])) &&
				    (b >= len || !is_word_char(
				    (unsigned char)s[b]));
			if (ok) {
				if (!found || a < *so || (a == *so && b > *eo)) {
					*so = a;
					*eo = b;
				}
				found = true;
				break;
			}
			pos = a + 1;
		}
	}
	return found;
}

static void
print_prefix(struct grep *g, const char *name, long long lineno, char sep)
{
	if (g->with_name)
		fprintf(g->io->out, "%s%c", name, sep);
	if (g->number)
		fprintf(g->io->out, "%lld%c", lineno, sep);
}

/* Searches one stream; returns the number of selected lines. */
static long long
grep_stream(struct grep *g, FILE *in, const char *name)
{
	char *line = NULL, **ring = NULL;
	size_t cap = 0, *ringlen = NULL;
	long long lineno = 0, nsel = 0, after_left = 0, last_printed = 0;
	long long nring = 0;
	ssize_t n;
	bool binary = false, need_sep = false;

	if (g->before > 0) {
		ring = calloc((size_t)g->before, sizeof(char *));
		ringlen = calloc((size_t)g->before, sizeof(size_t));
		if (ring == NULL || ringlen == NULL)
			g->before = 0;
	}
	while ((n = getline(&line, &cap, in)) > 0) {
		size_t len = (size_t)n, so, eo;
		bool sel;

		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (!g->text && memchr(line, '\0', len) != NULL) {
			/* As GNU grep: NULs end lines for matching. */
			binary = true;
			for (size_t i = 0; i < len; i++)
				if (line[i] == '\0')
					line[i] = '\n';
		}
		sel = find_match(g, line, strlen(line), 0, &so, &eo) !=
		    g->invert;
		if (!sel) {
			if (after_left > 0 && !g->count && !g->list &&
			    !g->list_none && !g->quiet && !binary) {
				print_prefix(g, name, lineno, '-');
				fwrite(line, 1, len, g->io->out);
				fputc('\n', g->io->out);
				last_printed = lineno;
				after_left--;
			} else if (g->before > 0) {
				long long slot = nring % g->before;

				free(ring[slot]);
				ring[slot] = tb_xmalloc(len + 1);
				memcpy(ring[slot], line, len + 1);
				ringlen[slot] = len;
				nring++;
			}
			continue;
		}
		nsel++;
		g->any = true;
		if (g->quiet || g->list || g->list_none)
			break;
		if (g->count || binary)
			goto next;
		if ((g->after > 0 || g->before > 0) && need_sep &&
		    lineno - (nring < g->before ? nring : g->before) >
		    last_printed + 1)
			fputs("--\n", g->io->out);
		for (long long k = nring < g->before ? nring : g->before;
		    k > 0; k--) {
			long long slot = (nring - k) % g->before;

			print_prefix(g, name, lineno - k, '-');
			fwrite(ring[slot], 1, ringlen[slot], g->io->out);
			fputc('\n', g->io->out);
		}
		nring = 0;
		if (g->only && !g->invert) {
			size_t pos = 0;

			while (pos <= len && find_match(g, line, len, pos, &so,
			    &eo)) {
				if (eo > so) {
					print_prefix(g, name, lineno, ':');
					fwrite(line + so, 1, eo - so,
					    g->io->out);
					fputc('\n', g->io->out);
				}
				pos = eo > so ? eo : so + 1;
			}
		} else if (!g->only) {
			print_prefix(g, name, lineno, ':');
			fwrite(line, 1, len, g->io->out);
			fputc('\n', g->io->out);
		}
		last_printed = lineno;
		need_sep = true;
		after_left = g->after;
next:
		if (g->max > 0 && nsel >= g->max)
			break;
	}
	if (binary && nsel > 0 && !g->count && !g->quiet && !g->list &&
	    !g->list_none)
		tb_err(g->io, "grep", "%s: binary file matches", name);
	if (g->count)
		fprintf(g->io->out, g->with_name ? "%s:%lld\n" : "%.0s%lld\n",
		    name, nsel);
	if (g->list && nsel > 0)
		fprintf(g->io->out, "%s\n", name);
	if (g->list_none && nsel == 0)
		fprintf(g->io->out, "%s\n", name);
	for (long long k = 0; ring != NULL && k < g->before; k++)
		free(ring[k]);
	free(ring);
	free(ringlen);
	free(line);
	return nsel;
}

/*
 * The common case (one fixed string, case-sensitive, whole lines printed,
 * no context, no -v -w -x -o): true when grep_buffer can take a file.
 */
static bool
grep_fast_ok(const struct grep *g)
{
	return g->fixed && !g->match_all && g->npats == 1 && !g->invert &&
	    !g->icase && !g->word && !g->line && !g->only && g->before == 0 &&
	    g->after == 0 && strchr(g->pats[0], '\n') == NULL;
}

/*
 * Searches a whole file held in memory with memmem, looking at lines only
 * where the string occurs (GNU grep's way); the same output as grep_stream
 * for text without NUL bytes, which the caller checked.
 */
static long long
grep_buffer(struct grep *g, const char *buf, size_t len, const char *name)
{
	const char *p = g->pats[0], *end = buf + len, *pos = buf;
	const char *counted = buf;	/* line numbers are known up to here */
	size_t pl = strlen(p);
	long long nsel = 0, lineno = 1;

	while (pos < end) {
		const char *m = memmem(pos, (size_t)(end - pos), p, pl), *ls,
		    *le;

		if (m == NULL)
			break;
		for (ls = m; ls > pos && ls[-1] != '\n'; ls--)
			;
		le = memchr(m, '\n', (size_t)(end - m));
		if (le == NULL)
			le = end;
		nsel++;
		g->any = true;
		if (g->quiet || g->list || g->list_none)
			break;
		if (!g->count) {
			if (g->number)
				for (; counted < ls; counted++)
					lineno += *counted == '\n';
			print_prefix(g, name, lineno, ':');
			fwrite(ls, 1, (size_t)(le - ls), g->io->out);
			fputc('\n', g->io->out);
		}
		pos = le + 1;
		if (g->max > 0 && nsel >= g->max)
			break;
	}
	if (g->count)
		fprintf(g->io->out, g->with_name ? "%s:%lld\n" : "%.0s%lld\n",
		    name, nsel);
	if (g->list && nsel > 0)
		fprintf(g->io->out, "%s\n", name);
	if (g->list_none && nsel == 0)
		fprintf(g->io->out, "%s\n", name);
	return nsel;
}

/*
 * Reads the regular file fd (size bytes by its stat) into g->file; false
 * when it could not, or when it holds a NUL byte (grep_stream's binary
 * rules apply then).
 */
static bool
grep_slurp(struct grep *g, int fd, off_t size)
{
	size_t want = size > 0 ? (size_t)size + 1 : 4096;

	g->file.len = 0;
	for (;;) {
		ssize_t n;

		if (g->file.cap - g->file.len < want) {
			size_t cap = g->file.len + want;

			g->file.data = tb_xrealloc(g->file.data, cap);
			g->file.cap = cap;
		}
		n = read(fd, g->file.data + g->file.len,
		    g->file.cap - g->file.len);
		if (n < 0)
			return false;
		if (n == 0)
			break;
		g->file.len += (size_t)n;
		want = 65536;
	}
	return memchr(g->file.data, '\0', g->file.len) == NULL;
}

static bool
name_matches(char **pats, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(pats[i], name, 0) == 0)
			return true;
	return false;
}

static void grep_path(struct grep *g, const char *path, bool top);

static void
grep_dir(struct grep *g, const char *path)
{
	size_t n;
	char **names = tb_dir_names(path, &n);

	if (names == NULL) {
		if (!g->silent)
			tb_errno(g->io, "grep", path);
		g->error = true;
		return;
	}
	for (size_t i = 0; i < n && !(g->quiet && g->any); i++) {
		char *sub = tb_path_join(path, names[i]);

		if (sub != NULL)
			grep_path(g, sub, false);
		free(sub);
	}
	tb_dir_names_free(names, n);
}

static void
grep_path(struct grep *g, const char *path, bool top)
{
	struct stat st;
	FILE *in;
	int r = top || g->deref ? stat(path, &st) : lstat(path, &st);

	if (r != 0) {
		if (!g->silent)
			tb_errno(g->io, "grep", path);
		g->error = true;
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!g->recursive) {
			if (!g->silent)
				tb_err(g->io, "grep", "%s: Is a directory", path);
			g->error = true;
			return;
		}
		if (!top && name_matches(g->excl_dir, g->nexcl_dir,
		    tb_basename(path)))
			return;
		grep_dir(g, path);
		return;
	}
	if (!S_ISREG(st.st_mode) && !top)
		return;
	if (!top && ((g->nincl > 0 && !name_matches(g->incl, g->nincl,
	    tb_basename(path))) || name_matches(g->excl, g->nexcl,
	    tb_basename(path))))
		return;
	if (grep_fast_ok(g) && S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY);

		if (fd < 0) {
			if (!g->silent)
				tb_errno(g->io, "grep", path);
			g->error = true;
			return;
		}
		if (grep_slurp(g, fd, st.st_size)) {
			close(fd);
			grep_buffer(g, g->file.data, g->file.len, path);
			return;
		}
		close(fd);
	}
	if ((in = fopen(path, "r")) == NULL) {
		if (!g->silent)
			tb_errno(g->io, "grep", path);
		g->error = true;
		return;
	}
	/* Big reads: each one crosses into the WASI host. */
	if (g->inbuf == NULL)
		g->inbuf = malloc(GREP_INBUF);
	if (g->inbuf != NULL)
		setvbuf(in, g->inbuf, _IOFBF, GREP_INBUF);
	grep_stream(g, in, path);
	fclose(in);
}

/* Handles a long option; 0 or -1. */
static int
grep_long(struct grep *g, struct tb_opt *o)
{
	const char *a = o->arg, *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a) : strlen(a);

	if (eq && n == 7 && strncmp(a, "include", 7) == 0)
		add_str(&g->incl, &g->nincl, eq + 1);
	else if (eq && n == 7 && strncmp(a, "exclude", 7) == 0)
		add_str(&g->excl, &g->nexcl, eq + 1);
	else if (eq && n == 11 && strncmp(a, "exclude-dir", 11) == 0)
		add_str(&g->excl_dir, &g->nexcl_dir, eq + 1);
	else if (n == 5 && strncmp(a, "color", 5) == 0)
		return 0;
	else if (strcmp(a, "colour") == 0 || strncmp(a, "colour=", 7) == 0)
		return 0;
	else {
		tb_opt_bad_long(o);
		return -1;
	}
	return 0;
}

static int
grep_num(struct grep *g, const char *s, long long *vp)
{
	if (tb_parse_ll(s, vp) != 0 || *vp < 0) {
		tb_err(g->io, "grep", "invalid number '%s'", s);
		return -1;
	}
	return 0;
}

/*
 * True when pattern p means the same as a fixed string: no character a
 * basic (or, with ext, extended) regex treats specially. Such patterns
 * take the strstr path, far faster than regexec.
 */
static bool
plain_pattern(const char *p, bool ext)
{
	for (; *p != '\0'; p++)
		if (strchr(".[]*^$\\", *p) != NULL ||
		    (ext && strchr("+?(){}|", *p) != NULL))
			return false;
	return true;
}

static int
grep_compile(struct grep *g)
{
	int flags = REG_NEWLINE | (g->ext ? REG_EXTENDED : 0) |
	    (g->icase ? REG_ICASE : 0);

	for (size_t i = 0; i < g->npats; i++)
		if (g->pats[i][0] == '\0')
			g->match_all = true;
	if (!g->fixed) {
		bool plain = true;

		for (size_t i = 0; i < g->npats && plain; i++)
			plain = plain_pattern(g->pats[i], g->ext);
		g->fixed = plain;
	}
	if (g->match_all || g->fixed)
		return 0;
	g->res = calloc(g->npats, sizeof(regex_t));
	if (g->res == NULL)
		return -1;
	for (size_t i = 0; i < g->npats; i++) {
		if (tb_regcomp(g->io, "grep", &g->res[i], g->pats[i], flags)
		    != 0) {
			for (size_t k = 0; k < i; k++)
				regfree(&g->res[k]);
			free(g->res);
			g->res = NULL;
			return -1;
		}
	}
	return 0;
}

static void
grep_free(struct grep *g)
{
	if (g->res != NULL)
		for (size_t i = 0; i < g->npats; i++)
			regfree(&g->res[i]);
	free(g->res);
	free_strs(g->pats, g->npats);
	free_strs(g->incl, g->nincl);
	free_strs(g->excl, g->nexcl);
	free_strs(g->excl_dir, g->nexcl_dir);
	free(g->inbuf);
	tb_buf_free(&g->file);
}

static int
grep_file_patterns(struct grep *g, const char *path)
{
	FILE *f = tb_open_in(g->io, "grep", path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (f == NULL)
		return -1;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		add_str(&g->pats, &g->npats, line);
	}
	free(line);
	tb_close_in(g->io, f);
	return 0;
}

int
applet_grep(struct tb_io *io, int argc, char **argv)
{
	struct grep g = { .io = io };
	struct tb_opt o;
	bool have_pat = false;
	long long ctx;
	int c, rc = 2, nfiles;

	tb_opt_init(&o, io, "grep", argc, argv);
	while ((c = tb_opt_next(&o, "rRinvlLcEFGwxqsHhe:f:oA:B:C:m:aIZz"))
	    != TB_OPT_END) {
		switch (c) {
		case 'R': g.deref = true;
			/* FALLTHROUGH */
		case 'r': g.recursive = true; break;
		case 'i': g.icase = true; break;
		case 'n': g.number = true; break;
		case 'v': g.invert = true; break;
		case 'l': g.list = true; break;
		case 'L': g.list_none = true; break;
		case 'c': g.count = true; break;
		case 'E': g.ext = true; g.fixed = false; break;
		case 'F': g.fixed = true; g.ext = false; break;
		case 'G': g.ext = g.fixed = false; break;
		case 'w': g.word = true; break;
		case 'x': g.line = true; break;
		case 'q': g.quiet = true; break;
		case 's': g.silent = true; break;
		case 'H': g.with_name_set = 1; break;
		case 'h': g.with_name_set = -1; break;
		case 'o': g.only = true; break;
		case 'a': g.text = true; break;
		case 'I': case 'Z': case 'z': break;
		case 'e':
			add_patterns(&g, o.arg);
			have_pat = true;
			break;
		case 'f':
			if (grep_file_patterns(&g, o.arg) != 0)
				goto out;
			have_pat = true;
			break;
		case 'A':
		case 'B':
		case 'C':
			if (grep_num(&g, o.arg, &ctx) != 0)
				goto out;
			if (c != 'B')
				g.after = ctx;
			if (c != 'A')
				g.before = ctx;
			break;
		case 'm':
			if (grep_num(&g, o.arg, &g.max) != 0)
				goto out;
			break;
		case TB_OPT_LONG:
			if (grep_long(&g, &o) != 0)
				goto out;
			break;
		default:
			goto out;
		}
	}
	if (!have_pat) {
		if (o.ind >= argc) {
			tb_err(io, "grep", "no pattern given\n"
			    "Usage: grep [OPTIONS] PATTERN [FILE]...");
			goto out;
		}
		add_patterns(&g, argv[o.ind++]);
	}
	if (grep_compile(&g) != 0)
		goto out;
	nfiles = argc - o.ind;
	g.with_name = g.with_name_set > 0 || (g.with_name_set == 0 &&
	    (nfiles > 1 || g.recursive));
	if (nfiles == 0 && g.recursive)
		grep_dir(&g, "");
	else if (nfiles == 0)
		grep_stream(&g, io->in, "(standard input)");
	for (int i = o.ind; i < argc && !(g.quiet && g.any); i++) {
		if (strcmp(argv[i], "-") == 0)
			grep_stream(&g, io->in, "(standard input)");
		else
			grep_path(&g, argv[i], true);
	}
	rc = g.error && !(g.quiet && g.any) ? 2 : g.any ? 0 : 1;
out:
	grep_free(&g);
	return rc;
}
