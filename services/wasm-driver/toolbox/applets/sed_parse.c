/* sed_parse.c - parses sed scripts into commands (see sed.h). */
#include "sed.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct sp {
	struct tb_io		*io;
	struct sed_script	*s;
	const char		*p;
	int			 blocks[64];
	int			 nblocks;
};

static int
sp_err(struct sp *sp, const char *msg)
{
	tb_err(sp->io, "sed", "-e expression: %s", msg);
	return -1;
}

static void
skip_ws(struct sp *sp)
{
	while (*sp->p == ' ' || *sp->p == '\t')
		sp->p++;
}

/*
 * Reads a delimited part ending at an unescaped delim; converts \n, \t and
 * \<delim>. With is_re, other escapes are kept for regcomp. Returns the
 * malloc'd text, or NULL when unterminated.
 */
static char *
read_part(struct sp *sp, char delim, bool is_re)
{
	struct tb_buf b = { 0 };
	const char *p = sp->p;
	bool bracket = false;

	for (; *p; p++) {
		if (is_re && bracket) {
			if (*p == ']' && p[-1] != '[' && !(p[-1] == '^' &&
			    p[-2] == '['))
				bracket = false;
			tb_buf_addc(&b, *p);
			continue;
		}
		if (*p == delim)
			break;
		if (is_re && *p == '[') {
			bracket = true;
			tb_buf_addc(&b, *p);
			continue;
		}
		if (*p == '\\' && p[1] != '\0') {
			p++;
			if (*p == delim && delim != '&')
				tb_buf_addc(&b, *p);
			else if (*p == 'n')
				tb_buf_addc(&b, '\n');
			else if (*p == 't')
				tb_buf_addc(&b, '\t');
			else if (*p == '\n' && !is_re)
				tb_buf_addc(&b, '\n');
			else {
				tb_buf_addc(&b, '\\');
				tb_buf_addc(&b, *p);
			}
			continue;
		}
		tb_buf_addc(&b, *p);
	}
	if (*p != delim) {
		tb_buf_free(&b);
		return NULL;
	}
	sp->p = p + 1;
	return tb_buf_str(&b);
}

static int
compile(struct sp *sp, const char *pat, int icase, regex_t **out)
{
	regex_t *re;

	if (*pat == '\0') {
		*out = NULL;	/* the last regex used */
		return 0;
	}
	re = tb_xmalloc(sizeof(*re));
	if (tb_regcomp(sp->io, "sed", re, pat, (sp->s->ere ? REG_EXTENDED :
	    0) | icase) != 0) {
		free(re);
		return -1;
	}
	sp->s->regs = tb_xrealloc(sp->s->regs, sizeof(regex_t *) *
	    (size_t)(sp->s->nregs + 1));
	sp->s->regs[sp->s->nregs++] = re;
	*out = re;
	return 0;
}

static int
parse_addr(struct sp *sp, struct sed_addr *a, bool second)
{
	char *pat, delim;
	int icase = 0;

	if (isdigit((unsigned char)*sp->p)) {
		a->type = A_LINE;
		a->n = strtol(sp->p, (char **)&sp->p, 10);
		if (*sp->p == '~') {
			a->type = A_STEP;
			a->step = strtol(sp->p + 1, (char **)&sp->p, 10);
		}
		return 0;
	}
	if (second && (*sp->p == '+' || *sp->p == '~')) {
		a->type = *sp->p == '+' ? A_REL : A_MULT;
		sp->p++;
		if (!isdigit((unsigned char)*sp->p))
			return sp_err(sp, "expected a number");
		a->n = strtol(sp->p, (char **)&sp->p, 10);
		return 0;
	}
	if (*sp->p == '$') {
		a->type = A_LAST;
		sp->p++;
		return 0;
	}
	if (*sp->p != '/' && *sp->p != '\\')
		return 0;
	if (*sp->p == '\\')
		sp->p++;
	delim = *sp->p++;
	if (delim == '\0' || (pat = read_part(sp, delim, true)) == NULL)
		return sp_err(sp, "unterminated address regex");
	while (*sp->p == 'I' || *sp->p == 'M') {
		if (*sp->p == 'I')
			icase = REG_ICASE;
		sp->p++;
	}
	a->type = A_RE;
	if (compile(sp, pat, icase, &a->re) != 0) {
		free(pat);
		return -1;
	}
	free(pat);
	return 0;
}

/* Text of a, i, c: "a text" or "a\" newline "text" (GNU forms). */
static char *
read_text(struct sp *sp)
{
	struct tb_buf b = { 0 };

	skip_ws(sp);
	if (sp->p[0] == '\\' && sp->p[1] == '\n')
		sp->p += 2;
	else if (sp->p[0] == '\\')
		sp->p++;
	while (*sp->p && *sp->p != '\n') {
		if (*sp->p == '\\' && sp->p[1] != '\0') {
			sp->p++;
			tb_buf_addc(&b, *sp->p == 't' ? '\t' : *sp->p);
			sp->p++;
			continue;
		}
		tb_buf_addc(&b, *sp->p++);
	}
	return tb_buf_str(&b);
}

/* A label or file name: to the end of line (labels also stop at ;). */
static char *
read_word(struct sp *sp, bool label)
{
	const char *start;

	skip_ws(sp);
	start = sp->p;
	while (*sp->p && *sp->p != '\n' && !(label && (*sp->p == ';' ||
	    *sp->p == '}')))
		sp->p++;
	return strndup(start, (size_t)(sp->p - start));
}

static FILE *
wfile(struct sp *sp, const char *name)
{
	struct sed_script *s = sp->s;
	FILE *f;

	for (int i = 0; i < s->nfiles; i++)
		if (strcmp(s->fnames[i], name) == 0)
			return s->files[i];
	if (strcmp(name, "/dev/stdout") == 0)
		return sp->io->out;
	if (strcmp(name, "/dev/stderr") == 0)
		return sp->io->err;
	if ((f = fopen(name, "w")) == NULL) {
		tb_errno(sp->io, "sed", name);
		return NULL;
	}
	s->files = tb_xrealloc(s->files, sizeof(FILE *) *
	    (size_t)(s->nfiles + 1));
	s->fnames = tb_xrealloc(s->fnames, sizeof(char *) *
	    (size_t)(s->nfiles + 1));
	s->files[s->nfiles] = f;
	s->fnames[s->nfiles++] = tb_xstrdup(name);
	return f;
}

static int
parse_s(struct sp *sp, struct sed_cmd *c)
{
	char delim = *sp->p++, *pat, *fname;
	int icase = 0;

	if (delim == '\0' || delim == '\n' || delim == '\\')
		return sp_err(sp, "unterminated `s' command");
	if ((pat = read_part(sp, delim, true)) == NULL)
		return sp_err(sp, "unterminated `s' command");
	if ((c->repl = read_part(sp, delim, false)) == NULL) {
		free(pat);
		return sp_err(sp, "unterminated `s' command");
	}
	for (;;) {
		if (*sp->p == 'g')
			c->global = true;
		else if (*sp->p == 'p')
			c->print = true;
		else if (*sp->p == 'i' || *sp->p == 'I')
			icase = REG_ICASE;
		else if (*sp->p == 'm' || *sp->p == 'M' || *sp->p == 'e')
			;
		else if (isdigit((unsigned char)*sp->p)) {
			c->nth = strtol(sp->p, (char **)&sp->p, 10);
			if (c->nth == 0) {
				free(pat);
				return sp_err(sp, "number option to `s' "
				    "command may not be zero");
			}
			continue;
		} else if (*sp->p == 'w') {
			sp->p++;
			fname = read_word(sp, false);
			c->wfile = wfile(sp, fname);
			free(fname);
			if (c->wfile == NULL) {
				free(pat);
				return -1;
			}
			break;
		} else
			break;
		sp->p++;
	}
	if (compile(sp, pat, icase, &c->re) != 0) {
		free(pat);
		return -1;
	}
	free(pat);
	return 0;
}

static int
parse_y(struct sp *sp, struct sed_cmd *c)
{
	char delim = *sp->p++, *a, *b;
	int rc = 0;

	if (delim == '\0' || (a = read_part(sp, delim, false)) == NULL)
		return sp_err(sp, "unterminated `y' command");
	if ((b = read_part(sp, delim, false)) == NULL) {
		free(a);
		return sp_err(sp, "unterminated `y' command");
	}
	for (int k = 0; k < 256; k++)
		c->ymap[k] = (unsigned char)k;
	/* read_part kept "\\" pairs: reduce them. */
	for (char *s = a, *d = a; ; s++) {
		if (*s == '\\' && s[1] == '\\')
			s++;
		if ((*d++ = *s) == '\0')
			break;
	}
	for (char *s = b, *d = b; ; s++) {
		if (*s == '\\' && s[1] == '\\')
			s++;
		if ((*d++ = *s) == '\0')
			break;
	}
	if (strlen(a) != strlen(b))
		rc = sp_err(sp, "strings for `y' command are different lengths");
	else
		for (size_t k = 0; a[k]; k++)
			c->ymap[(unsigned char)a[k]] = (unsigned char)b[k];
	free(a);
	free(b);
	return rc;
}

/* Resolves b/t/T labels; 0 or -1. */
static int
resolve_labels(struct sp *sp)
{
	struct sed_script *s = sp->s;

	for (int i = 0; i < s->n; i++) {
		struct sed_cmd *c = &s->cmds[i];

		if (strchr("btT", c->cmd) == NULL)
			continue;
		c->jump = s->n;	/* no label: end of script */
		if (c->text == NULL || c->text[0] == '\0')
			continue;
		int k;

		for (k = 0; k < s->n; k++)
			if (s->cmds[k].cmd == ':' &&
			    strcmp(s->cmds[k].text, c->text) == 0)
				break;
		if (k == s->n) {
			tb_err(sp->io, "sed", "can't find label for jump to "
			    "'%s'", c->text);
			return -1;
		}
		c->jump = k;
	}
	return 0;
}

static int
parse_cmd(struct sp *sp, struct sed_cmd *c)
{
	c->cmd = *sp->p++;
	switch (c->cmd) {
	case '{':
		if (sp->nblocks == 64)
			return sp_err(sp, "blocks nested too deeply");
		sp->blocks[sp->nblocks++] = sp->s->n;
		return 0;
	case '}':
		if (sp->nblocks == 0)
			return sp_err(sp, "unexpected `}'");
		sp->s->cmds[sp->blocks[--sp->nblocks]].jump = sp->s->n;
		return 0;
	case 'a': case 'i': case 'c':
		c->text = read_text(sp);
		return 0;
	case ':':
		if (c->a1.type != A_NONE)
			return sp_err(sp, ": doesn't want any addresses");
		c->text = read_word(sp, true);
		if (c->text[0] == '\0')
			return sp_err(sp, "\":\" lacks a label");
		return 0;
	case 'b': case 't': case 'T':
		c->text = read_word(sp, true);
		return 0;
	case 'r': case 'R':
		c->text = read_word(sp, false);
		c->cmd = 'r';
		return 0;
	case 'w': case 'W':
		c->text = read_word(sp, false);
		c->wfile = wfile(sp, c->text);
		return c->wfile ? 0 : -1;
	case 's':
		return parse_s(sp, c);
	case 'y':
		return parse_y(sp, c);
	case 'q': case 'Q': case 'l': case 'L':
		skip_ws(sp);
		if (isdigit((unsigned char)*sp->p))
			c->code = strtol(sp->p, (char **)&sp->p, 10);
		return 0;
	case '=': case 'd': case 'D': case 'g': case 'G': case 'h': case 'H':
	case 'x': case 'n': case 'N': case 'p': case 'P': case 'z': case 'F':
		return 0;
	}
	tb_err(sp->io, "sed", "-e expression: unknown command: `%c'", c->cmd);
	return -1;
}

int
sed_parse(struct tb_io *io, struct sed_script *s, const char *text)
{
	struct sp sp = { .io = io, .s = s, .p = text };

	if (text[0] == '#' && text[1] == 'n' && (text[2] == '\n' ||
	    text[2] == '\0'))
		s->quiet_hint = true;
	for (;;) {
		struct sed_cmd c = { .a1.type = A_NONE };

		while (*sp.p == ' ' || *sp.p == '\t' || *sp.p == '\n' ||
		    *sp.p == ';')
			sp.p++;
		if (*sp.p == '\0')
			break;
		if (*sp.p == '#') {
			while (*sp.p && *sp.p != '\n')
				sp.p++;
			continue;
		}
		if (parse_addr(&sp, &c.a1, false) != 0)
			return -1;
		skip_ws(&sp);
		if (*sp.p == ',' && c.a1.type != A_NONE) {
			sp.p++;
			skip_ws(&sp);
			if (parse_addr(&sp, &c.a2, true) != 0)
				return -1;
			if (c.a2.type == A_NONE)
				return sp_err(&sp, "unexpected `,'");
		}
		skip_ws(&sp);
		while (*sp.p == '!') {
			c.negate = true;
			sp.p++;
			skip_ws(&sp);
		}
		if (*sp.p == '\0')
			return sp_err(&sp, "missing command");
		s->cmds = tb_xrealloc(s->cmds, sizeof(c) * (size_t)(s->n + 1));
		s->cmds[s->n] = c;
		if (parse_cmd(&sp, &s->cmds[s->n]) != 0) {
			s->n++;
			return -1;
		}
		s->n++;
		skip_ws(&sp);
		if (s->cmds[s->n - 1].cmd != '{' && *sp.p != '\0' && *sp.p != ';' && *sp.p != '\n' &&
		    *sp.p != '}' && *sp.p != '#')
			return sp_err(&sp, "extra characters after command");
	}
	if (sp.nblocks > 0)
		return sp_err(&sp, "unmatched `{'");
	return resolve_labels(&sp);
}

void
sed_script_free(struct sed_script *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->cmds[i].repl);
		free(s->cmds[i].text);
	}
	free(s->cmds);
	for (int i = 0; i < s->nregs; i++) {
		regfree(s->regs[i]);
		free(s->regs[i]);
	}
	free(s->regs);
	for (int i = 0; i < s->nfiles; i++) {
		fclose(s->files[i]);
		free(s->fnames[i]);
	}
	free(s->files);
	free(s->fnames);
	memset(s, 0, sizeof(*s));
}
