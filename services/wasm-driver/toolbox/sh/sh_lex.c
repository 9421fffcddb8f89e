/* sh_lex.c - the shell tokenizer: words are kept raw (quotes included). */
#include "sh.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void
sh_lex_error(struct sh_lex *lx, const char *msg, const char *what)
{
	if (lx->error)
		return;
	lx->error = true;
	if (what != NULL)
		tb_err(lx->sh->io, "sh", "syntax error: %s '%s'", msg, what);
	else
		tb_err(lx->sh->io, "sh", "syntax error: %s", msg);
}

static size_t skip_construct(const char *s, size_t i, size_t len, int nest);

static size_t
skip_parens(const char *s, size_t i, size_t len, int nest)
{
	int depth = 0;

	while (i < len) {
		char c = s[i];

		if (c == '\\') {
			i += 2;
		} else if (c == '\'' || c == '"' || c == '`' || c == '$') {
			size_t j = skip_construct(s, i, len, nest + 1);

			if (j == (size_t)-1)
				return j;
			i = j > i ? j : i + 1;
		} else if (c == '(') {
			depth++;
			i++;
		} else if (c == ')') {
			i++;
			if (--depth == 0)
				return i;
		} else
			i++;
	}
	return (size_t)-1;
}

size_t
sh_skip_construct(const char *s, size_t i, size_t len)
{
	return skip_construct(s, i, len, 0);
}

/* nest bounds the recursion of nested quotes and substitutions. */
static size_t
skip_construct(const char *s, size_t i, size_t len, int nest)
{
	size_t j;
	int depth;

	if (nest > SH_MAX_NEST)
		return (size_t)-1;
	switch (s[i]) {
	case '\'':
		for (j = i + 1; j < len; j++)
			if (s[j] == '\'')
				return j + 1;
		return (size_t)-1;
	case '"':
		for (j = i + 1; j < len;) {
			if (s[j] == '\\')
				j += 2;
			else if (s[j] == '"')
				return j + 1;
			else if (s[j] == '$' || s[j] == '`') {
				size_t k = skip_construct(s, j, len, nest + 1);

				if (k == (size_t)-1)
					return k;
				j = k > j ? k : j + 1;
			} else
				j++;
		}
		return (size_t)-1;
	case '`':
		for (j = i + 1; j < len;) {
			if (s[j] == '\\')
				j += 2;
			else if (s[j] == '`')
				return j + 1;
			else
				j++;
		}
		return (size_t)-1;
	case '$':
		if (i + 1 < len && s[i + 1] == '(')
			return skip_parens(s, i + 1, len, nest + 1);
		if (i + 1 < len && s[i + 1] == '{') {
			for (j = i + 2, depth = 1; j < len;) {
				if (s[j] == '\\')
					j += 2;
				else if (s[j] == '\'' || s[j] == '"' ||
				    s[j] == '`' || (s[j] == '$' && j + 1 < len
				    && (s[j + 1] == '(' || s[j + 1] == '{'))) {
					size_t k = skip_construct(s, j, len, nest + 1);

					if (k == (size_t)-1)
						return k;
					j = k;
				} else if (s[j] == '{') {
					depth++;
					j++;
				} else if (s[j] == '}') {
					if (--depth == 0)
						return j + 1;
					j++;
				} else
					j++;
			}
			return (size_t)-1;
		}
		return i + 1;
	}
	return i + 1;
}

static bool
is_meta(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' ||
	    c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}

/* Reads the bodies of the queued heredocs, starting at lx->pos. */
static void
read_heredocs(struct sh_lex *lx)
{
	for (int k = 0; k < lx->npending; k++) {
		struct sh_redir *r = lx->pending[k];
		struct tb_buf body = { 0 };

		while (lx->pos < lx->len) {
			const char *line = lx->src + lx->pos;
			const char *nl = memchr(line, '\n', lx->len - lx->pos);
			size_t n = nl ? (size_t)(nl - line) : lx->len - lx->pos;

			lx->pos += n + (nl != NULL);
			if (r->strip_tabs)
				while (n > 0 && *line == '\t')
					line++, n--;
			if (n == strlen(r->word) && strncmp(line, r->word, n)
			    == 0)
				break;
			tb_buf_add(&body, line, n);
			tb_buf_addc(&body, '\n');
		}
		r->body = tb_buf_str(&body);
	}
	lx->npending = 0;
}

int
sh_lex_heredoc(struct sh_lex *lx, struct sh_redir *r)
{
	if (lx->npending == SH_MAX_PENDING) {
		sh_lex_error(lx, "too many here-documents", NULL);
		return -1;
	}
	lx->pending[lx->npending++] = r;
	return 0;
}

static void
set_redir(struct sh_lex *lx, enum sh_rkind k, size_t oplen)
{
	lx->tok = T_REDIR;
	lx->rkind = k;
	lx->pos += oplen;
}

static void
lex_operator(struct sh_lex *lx)
{
	const char *s = lx->src + lx->pos;
	size_t left = lx->len - lx->pos;

	lx->rfd = -1;
	lx->rstrip = false;
	if (isdigit((unsigned char)s[0])) {
		size_t n = 0;

		while (n < left && isdigit((unsigned char)s[n]))
			n++;
		lx->rfd = atoi(s);
		lx->pos += n;
		s += n;
		left -= n;
	}
#define OP(str) (left >= sizeof(str) - 1 && \
    strncmp(s, str, sizeof(str) - 1) == 0)
	if (OP("<<<"))
		set_redir(lx, R_HERESTR, 3);
	else if (OP("<<-")) {
		set_redir(lx, R_HEREDOC, 3);
		lx->rstrip = true;
	} else if (OP("<<"))
		set_redir(lx, R_HEREDOC, 2);
	else if (OP("<&"))
		set_redir(lx, R_DUP_IN, 2);
	else if (OP("<>"))
		set_redir(lx, R_RDWR, 2);
	else if (OP("<"))
		set_redir(lx, R_IN, 1);
	else if (OP(">>"))
		set_redir(lx, R_APPEND, 2);
	else if (OP(">&"))
		set_redir(lx, R_DUP_OUT, 2);
	else if (OP(">|"))
		set_redir(lx, R_OUT, 2);
	else if (OP(">"))
		set_redir(lx, R_OUT, 1);
	else if (OP("&>>"))
		set_redir(lx, R_BOTH_APPEND, 3);
	else if (OP("&>"))
		set_redir(lx, R_BOTH, 2);
	else if (OP("&&"))
		lx->tok = T_AND, lx->pos += 2;
	else if (OP("&"))
		lx->tok = T_AMP, lx->pos += 1;
	else if (OP("||"))
		lx->tok = T_OR, lx->pos += 2;
	else if (OP("|"))
		lx->tok = T_PIPE, lx->pos += 1;
	else if (OP(";;"))
		lx->tok = T_DSEMI, lx->pos += 2;
	else if (OP(";"))
		lx->tok = T_SEMI, lx->pos += 1;
	else if (OP("("))
		lx->tok = T_LPAREN, lx->pos += 1;
	else if (OP(")"))
		lx->tok = T_RPAREN, lx->pos += 1;
#undef OP
}

enum sh_tok
sh_lex_peek(struct sh_lex *lx)
{
	const char *s = lx->src;
	size_t start, i;

	if (lx->have)
		return lx->tok;
	if (lx->error) {
		lx->tok = T_EOF;
		return T_EOF;
	}
	lx->have = true;
	for (;;) {
		while (lx->pos < lx->len && (s[lx->pos] == ' ' ||
		    s[lx->pos] == '\t'))
			lx->pos++;
		if (lx->pos + 1 < lx->len && s[lx->pos] == '\\' &&
		    s[lx->pos + 1] == '\n') {
			lx->pos += 2;
			continue;
		}
		if (lx->pos < lx->len && s[lx->pos] == '#') {
			while (lx->pos < lx->len && s[lx->pos] != '\n')
				lx->pos++;
		}
		break;
	}
	if (lx->pos >= lx->len) {
		lx->tok = T_EOF;
		return T_EOF;
	}
	if (s[lx->pos] == '\n') {
		lx->pos++;
		lx->tok = T_NEWLINE;
		if (lx->npending > 0)
			read_heredocs(lx);
		return T_NEWLINE;
	}
	/* An IO number: digits right before < or >. */
	for (i = lx->pos; i < lx->len && isdigit((unsigned char)s[i]); i++)
		;
	if (is_meta(s[lx->pos]) || (i > lx->pos && i < lx->len &&
	    (s[i] == '<' || s[i] == '>'))) {
		lex_operator(lx);
		return lx->tok;
	}
	start = lx->pos;
	for (i = start; i < lx->len && !is_meta(s[i]);) {
		if (s[i] == '\\') {
			i += 2;
		} else if (s[i] == '\'' || s[i] == '"' || s[i] == '`' ||
		    s[i] == '$') {
			size_t j = sh_skip_construct(s, i, lx->len);

			if (j == (size_t)-1) {
				sh_lex_error(lx, s[i] == '\'' || s[i] == '"' ?
				    "unterminated quoted string" :
				    "unterminated substitution", NULL);
				lx->tok = T_EOF;
				return T_EOF;
			}
			i = j;
		} else
			i++;
	}
	if (i > lx->len)
		i = lx->len;
	lx->pos = i;
	lx->tok = T_WORD;
	lx->text = tb_xmalloc(i - start + 1);
	memcpy(lx->text, s + start, i - start);
	lx->text[i - start] = '\0';
	return T_WORD;
}

void
sh_lex_next(struct sh_lex *lx)
{
	sh_lex_peek(lx);
	free(lx->text);
	lx->text = NULL;
	lx->have = false;
}

char *
sh_lex_take(struct sh_lex *lx)
{
	char *t;

	sh_lex_peek(lx);
	t = lx->text;
	lx->text = NULL;
	lx->have = false;
	return t;
}
