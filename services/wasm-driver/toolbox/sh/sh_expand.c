/*
 * sh_expand.c - word expansion: tilde, parameters (${...} operators),
 * command substitution, arithmetic, field splitting, globbing and quote
 * removal.
 */
#include "sh.h"

#include <fnmatch.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>

enum xmode { X_FIELDS, X_STR, X_PATTERN, X_HEREDOC };

struct xstate {
	struct sh	*sh;
	enum xmode	 mode;
	struct tb_buf	 cur;	/* the field's text */
	struct tb_buf	 pat;	/* the same with quoted glob chars escaped */
	bool		 has;	/* the field exists (even if empty) */
	bool		 globby;	/* unquoted glob characters seen */
	char		**out;
	int		 nout;
	bool		 failed;	/* ${x?} error, bad arithmetic */
};

static void expand_raw(struct xstate *x, const char *s, size_t len, bool dq);

static void
push(struct xstate *x, const char *s)
{
	x->out = tb_xrealloc(x->out, sizeof(char *) * (size_t)(x->nout + 2));
	x->out[x->nout++] = tb_xstrdup(s);
	x->out[x->nout] = NULL;
}

static void
end_field(struct xstate *x)
{
	glob_t g;

	if (!x->has)
		return;
	tb_buf_str(&x->cur);
	tb_buf_str(&x->pat);
	if (x->mode == X_FIELDS && x->globby && !x->sh->noglob &&
	    glob(x->pat.data, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			push(x, g.gl_pathv[i]);
		globfree(&g);
	} else
		push(x, x->cur.data);
	x->cur.len = x->pat.len = 0;
	x->has = x->globby = false;
}

static void
add_quoted(struct xstate *x, const char *s, size_t n)
{
	tb_buf_add(&x->cur, s, n);
	for (size_t i = 0; i < n; i++) {
		if (strchr("*?[]\\", s[i]) != NULL && s[i] != '\0')
			tb_buf_addc(&x->pat, '\\');
		tb_buf_addc(&x->pat, s[i]);
	}
	x->has = true;
}

static void
add_unquoted(struct xstate *x, const char *s, size_t n)
{
	tb_buf_add(&x->cur, s, n);
	tb_buf_add(&x->pat, s, n);
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			x->globby = true;
	x->has = true;
}

/* Adds the result of an expansion: split on IFS unless quoted. */
static void
add_expansion(struct xstate *x, const char *s, bool quoted)
{
	const char *ifs;

	if (quoted || x->mode != X_FIELDS) {
		if (quoted || x->mode == X_PATTERN)
			add_quoted(x, s, strlen(s));
		else
			add_unquoted(x, s, strlen(s));
		return;
	}
	if ((ifs = getenv("IFS")) == NULL)
		ifs = " \t\n";
	for (; *s; s++) {
		if (strchr(ifs, *s) != NULL) {
			end_field(x);
			continue;
		}
		add_unquoted(x, s, 1);
	}
}

/* Expands s as a string (used for ${x:-word} words and arithmetic). */
static char *
sub_expand(struct sh *sh, const char *s, size_t n, enum xmode mode)
{
	struct xstate y = { .sh = sh, .mode = mode };
	char *r;

	expand_raw(&y, s, n, false);
	r = tb_xstrdup(tb_buf_str(mode == X_PATTERN ? &y.pat : &y.cur));
	tb_buf_free(&y.cur);
	tb_buf_free(&y.pat);
	sh_free_fields(y.out, y.nout);
	return r;
}

/* Removes the shortest/longest prefix/suffix matching pat. */
static char *
trim(const char *v, const char *pat, bool suffix, bool longest)
{
	size_t n = strlen(v);
	char *tmp = tb_xstrdup(v);

	for (size_t k = 0; k <= n; k++) {
		size_t len = longest ? n - k : k;
		int m;

		if (suffix)
			m = fnmatch(pat, v + n - len, 0);
		else {
			char save = tmp[len];

			tmp[len] = '\0';
			m = fnmatch(pat, tmp, 0);
			tmp[len] = save;
		}
		if (m == 0) {
			char *r = suffix ? strndup(v, n - len) :
			    tb_xstrdup(v + len);

			free(tmp);
			return r;
		}
	}
	free(tmp);
	return tb_xstrdup(v);
}

/* ${v/pat/rep} and ${v//pat/rep}. */
static char *
replace(const char *v, const char *pat, const char *rep, bool all)
{
	struct tb_buf b = { 0 };
	size_t n = strlen(v), i = 0;
	char *tmp = tb_xstrdup(v);
	bool done = false;

	while (i <= n) {
		size_t best = 0;
		bool found = false;

		for (size_t e = n; !done && e > i && !found; e--) {
			char save = tmp[e];

			tmp[e] = '\0';
			if (fnmatch(pat, tmp + i, 0) == 0) {
				found = true;
				best = e;
			}
			tmp[e] = save;
		}
		if (found) {
			tb_buf_adds(&b, rep);
			i = best;
			done = !all;
			continue;
		}
		if (i < n)
			tb_buf_addc(&b, v[i]);
		i++;
	}
	free(tmp);
	return tb_buf_str(&b);
}

/* Adds "$@" (quoted: one field per parameter) or $@ / $* / "$*". */
static void
add_params(struct xstate *x, bool quoted, bool star)
{
	struct sh *sh = x->sh;

	if (!quoted || star) {
		struct tb_buf b = { 0 };
		const char *ifs = getenv("IFS");
		char sep = ifs == NULL ? ' ' : ifs[0];

		for (int i = 0; i < sh->nparams; i++) {
			if (i > 0 && sep != '\0')
				tb_buf_addc(&b, sep);
			tb_buf_adds(&b, sh->params[i]);
		}
		if (sh->nparams > 0 || quoted)
			add_expansion(x, tb_buf_str(&b), quoted);
		tb_buf_free(&b);
		return;
	}
	for (int i = 0; i < sh->nparams; i++) {
		if (i > 0) {
			x->has = true;
			end_field(x);
		}
		add_quoted(x, sh->params[i], strlen(sh->params[i]));
	}
}

static size_t
name_len(const char *s, size_t n)
{
	size_t k = 0;

	if (n == 0)
		return 0;
	if (s[0] >= '0' && s[0] <= '9') {
		while (k < n && s[k] >= '0' && s[k] <= '9')
			k++;
		return k;
	}
	if (strchr("?#@*$!-", s[0]) != NULL)
		return 1;
	while (k < n && (s[k] == '_' || (s[k] >= 'a' && s[k] <= 'z') ||
	    (s[k] >= 'A' && s[k] <= 'Z') || (k > 0 && s[k] >= '0' &&
	    s[k] <= '9')))
		k++;
	return k;
}

static const char *
lookup(struct xstate *x, const char *name, size_t n, char buf[32])
{
	char nm[256];
	const char *v;

	if (n >= sizeof(nm))
		n = sizeof(nm) - 1;
	memcpy(nm, name, n);
	nm[n] = '\0';
	v = sh_getvar(x->sh, nm, buf);
	if (v == NULL && x->sh->nounset && strcmp(nm, "@") != 0 &&
	    strcmp(nm, "*") != 0) {
		tb_err(x->sh->io, "sh", "%s: parameter not set", nm);
		x->failed = true;
	}
	return v;
}

static void
expand_brace(struct xstate *x, const char *in, size_t n, bool q)
{
	char buf[32], num[32], nm[256];
	const char *val, *rest;
	size_t nl;
	char *word = NULL, *r = NULL;
	bool colon;

	if (n > 1 && in[0] == '#') {
		nl = name_len(in + 1, n - 1);
		val = lookup(x, in + 1, nl, buf);
		snprintf(num, sizeof(num), "%zu", val ? strlen(val) : 0);
		add_expansion(x, num, q);
		return;
	}
	nl = name_len(in, n);
	if (nl == 0) {
		tb_err(x->sh->io, "sh", "${%.*s}: bad substitution", (int)n, in);
		x->failed = true;
		return;
	}
	if (nl == 1 && (in[0] == '@' || in[0] == '*') && nl == n) {
		add_params(x, q, in[0] == '*');
		return;
	}
	rest = in + nl;
	n -= nl;
	snprintf(nm, sizeof(nm), "%.*s", (int)nl, in);
	val = n == 0 || !strchr("-=+?", rest[n > 1 && rest[0] == ':' ? 1 :
	    0]) ? lookup(x, in, nl, buf) : sh_getvar(x->sh, nm, buf);
	if (n == 0) {
		add_expansion(x, val ? val : "", q);
		return;
	}
	colon = rest[0] == ':' && n > 1 && strchr("-=+?", rest[1]) != NULL;
	if (colon) {
		rest++;
		n--;
	}
	bool unset = colon ? (val == NULL || *val == '\0') : val == NULL;
	char op = rest[0];

	switch (op) {
	case '-':
	case '=':
	case '+':
	case '?':
		word = sub_expand(x->sh, rest + 1, n - 1, X_STR);
		if (op == '-')
			r = tb_xstrdup(unset ? word : val);
		else if (op == '+')
			r = tb_xstrdup(unset ? "" : word);
		else if (op == '=') {
			if (unset && sh_setvar(x->sh, nm, word) != 0) {
				tb_err(x->sh->io, "sh", "%s: bad variable name",
				    nm);
				x->failed = true;
			}
			r = tb_xstrdup(unset ? word : val);
		} else {
			if (unset) {
				tb_err(x->sh->io, "sh", "%s: %s", nm, *word ?
				    word : "parameter null or not set");
				x->failed = true;
			}
			r = tb_xstrdup(val ? val : "");
		}
		break;
	case '#':
	case '%': {
		bool longest = n > 1 && rest[1] == op;

		word = sub_expand(x->sh, rest + 1 + longest, n - 1 - longest,
		    X_PATTERN);
		r = trim(val ? val : "", word, op == '%', longest);
		break;
	}
	case '/': {
		bool all = n > 1 && rest[1] == '/';
		const char *p = rest + 1 + all, *end = rest + n;
		const char *slash = memchr(p, '/', (size_t)(end - p));
		char *rep = sub_expand(x->sh, slash ? slash + 1 : end,
		    slash ? (size_t)(end - slash - 1) : 0, X_STR);

		word = sub_expand(x->sh, p, (size_t)((slash ? slash : end) - p),
		    X_PATTERN);
		r = replace(val ? val : "", word, rep, all);
		free(rep);
		break;
	}
	case ':': {
		/* ${v:offset[:length]} */
		char *spec = sub_expand(x->sh, rest + 1, n - 1, X_STR);
		char *c2 = strchr(spec, ':');
		long long off = 0, len = -1;
		size_t vl = val ? strlen(val) : 0;

		if (c2 != NULL)
			*c2++ = '\0';
		if (sh_arith(x->sh, spec, &off) != 0 || (c2 != NULL &&
		    sh_arith(x->sh, c2, &len) != 0))
			x->failed = true;
		if (off < 0)
			off = (long long)vl + off < 0 ? 0 : (long long)vl + off;
		if ((size_t)off > vl)
			off = (long long)vl;
		if (len < 0 || (size_t)(off + len) > vl)
			len = (long long)vl - off;
		r = strndup(val ? val + off : "", (size_t)len);
		free(spec);
		break;
	}
	default:
		tb_err(x->sh->io, "sh", "${%s%.*s}: bad substitution", nm,
		    (int)n, rest);
		x->failed = true;
		return;
	}
	if (r != NULL)
		add_expansion(x, r, q);
	free(word);
	free(r);
}

/* Expands the $ construct at s[i]; returns the index after it. */
static size_t
expand_dollar(struct xstate *x, const char *s, size_t i, size_t len, bool q)
{
	char buf[32];
	size_t j, nl;
	const char *v;

	if (i + 1 >= len) {
		add_quoted(x, "$", 1);
		return i + 1;
	}
	if (s[i + 1] == '(' || s[i + 1] == '{') {
		j = sh_skip_construct(s, i, len);
		if (j == (size_t)-1 || j > len)
			j = len;
		if (s[i + 1] == '(' && i + 2 < len && s[i + 2] == '(' &&
		    j >= i + 5 && s[j - 2] == ')') {
			char *e = sub_expand(x->sh, s + i + 3, j - i - 5, X_STR);
			long long v2 = 0;
			char num[32];

			if (sh_arith(x->sh, e, &v2) != 0)
				x->failed = true;
			free(e);
			snprintf(num, sizeof(num), "%lld", v2);
			add_expansion(x, num, q);
		} else if (s[i + 1] == '(') {
			char *cmd = strndup(s + i + 2, j - i - 3);
			char *out = sh_capture(x->sh, cmd);

			add_expansion(x, out, q);
			free(cmd);
			free(out);
		} else
			expand_brace(x, s + i + 2, j - i - 3, q);
		return j;
	}
	nl = name_len(s + i + 1, len - i - 1);
	if (nl == 0) {
		add_quoted(x, "$", 1);
		return i + 1;
	}
	if (s[i + 1] >= '0' && s[i + 1] <= '9')
		nl = 1;	/* $10 is ${1}0 */
	if (nl == 1 && (s[i + 1] == '@' || s[i + 1] == '*')) {
		add_params(x, q, s[i + 1] == '*');
		return i + 2;
	}
	v = lookup(x, s + i + 1, nl, buf);
	add_expansion(x, v ? v : "", q);
	return i + 1 + nl;
}

/* `...`: removes the backslashes that protect $ ` and \. */
static void
expand_backquote(struct xstate *x, const char *s, size_t n, bool q)
{
	struct tb_buf b = { 0 };
	char *out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && strchr("$`\\", s[i + 1]))
			i++;
		tb_buf_addc(&b, s[i]);
	}
	out = sh_capture(x->sh, tb_buf_str(&b));
	add_expansion(x, out, q);
	free(out);
	tb_buf_free(&b);
}

static void
expand_raw(struct xstate *x, const char *s, size_t len, bool dq)
{
	bool heredoc = x->mode == X_HEREDOC;
	size_t i = 0, j;

	if (!dq && !heredoc && len > 0 && s[0] == '~') {
		size_t n = 1;

		while (n < len && s[n] != '/')
			n++;
		if (n == 1) {
			const char *home = getenv("HOME");

			add_quoted(x, home ? home : "/", strlen(home ? home :
			    "/"));
			i = 1;
		}
	}
	while (i < len) {
		char c = s[i];

		if (c == '\'' && !dq && !heredoc) {
			const char *e = memchr(s + i + 1, '\'', len - i - 1);

			j = e ? (size_t)(e - s) : len;
			add_quoted(x, s + i + 1, j - i - 1);
			i = j + 1;
		} else if (c == '"' && !dq && !heredoc) {
			j = sh_skip_construct(s, i, len);
			if (j == (size_t)-1 || j > len)
				j = len + 1;
			x->has = true;
			if (!(j - i - 2 == 2 && strncmp(s + i + 1, "$@", 2) == 0
			    && x->sh->nparams == 0))
				expand_raw(x, s + i + 1, j - i - 2, true);
			else if (x->cur.len == 0)
				x->has = false;
			i = j;
		} else if (c == '\\') {
			char nx = i + 1 < len ? s[i + 1] : '\0';

			if (i + 1 >= len) {
				add_quoted(x, "\\", 1);
				i++;
				continue;
			}
			if (nx == '\n') {
				i += 2;
				continue;
			}
			if ((dq || heredoc) && strchr(heredoc ? "$`\\" :
			    "$`\"\\", nx) == NULL)
				add_quoted(x, s + i, 2);
			else
				add_quoted(x, s + i + 1, 1);
			i += 2;
		} else if (c == '$') {
			i = expand_dollar(x, s, i, len, dq || heredoc);
		} else if (c == '`') {
			j = sh_skip_construct(s, i, len);
			if (j == (size_t)-1 || j > len)
				j = len + 1;
			expand_backquote(x, s + i + 1, j - i - 2, dq || heredoc);
			i = j;
		} else {
			if (dq || heredoc)
				add_quoted(x, s + i, 1);
			else
				add_unquoted(x, s + i, 1);
			i++;
		}
	}
}

void
sh_free_fields(char **f, int n)
{
	for (int i = 0; i < n; i++)
		free(f[i]);
	free(f);
}

int
sh_expand_fields(struct sh *sh, const char *raw, char ***fieldsp,
    int *nfieldsp)
{
	struct xstate x = { .sh = sh, .mode = X_FIELDS };

	expand_raw(&x, raw, strlen(raw), false);
	end_field(&x);
	tb_buf_free(&x.cur);
	tb_buf_free(&x.pat);
	if (x.failed) {
		sh_free_fields(x.out, x.nout);
		return -1;
	}
	*fieldsp = x.out;
	*nfieldsp = x.nout;
	return 0;
}

static char *
expand_one(struct sh *sh, const char *raw, enum xmode mode)
{
	struct xstate x = { .sh = sh, .mode = mode };
	char *r;

	expand_raw(&x, raw, strlen(raw), false);
	r = tb_xstrdup(tb_buf_str(mode == X_PATTERN ? &x.pat : &x.cur));
	tb_buf_free(&x.cur);
	tb_buf_free(&x.pat);
	sh_free_fields(x.out, x.nout);
	if (x.failed) {
		free(r);
		return NULL;
	}
	return r;
}

char *
sh_expand_str(struct sh *sh, const char *raw)
{
	return expand_one(sh, raw, X_STR);
}

char *
sh_expand_heredoc(struct sh *sh, const char *body)
{
	return expand_one(sh, body, X_HEREDOC);
}

char *
sh_expand_pattern(struct sh *sh, const char *raw)
{
	return expand_one(sh, raw, X_PATTERN);
}
