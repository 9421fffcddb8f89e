/* sh_parse.c - recursive-descent parser from tokens to a command tree. */
#include "sh.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static struct sh_node *p_list(struct sh_lex *lx);
static struct sh_node *p_command(struct sh_lex *lx);

bool
sh_is_name(const char *s, size_t n)
{
	if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

static struct sh_node *
new_node(enum sh_kind k)
{
	struct sh_node *n = calloc(1, sizeof(*n));

	if (n == NULL)
		abort();
	n->kind = k;
	return n;
}

static void
redirs_free(struct sh_redir *r)
{
	while (r != NULL) {
		struct sh_redir *next = r->next;

		free(r->word);
		free(r->body);
		free(r);
		r = next;
	}
}

void
sh_node_free(struct sh_node *n)
{
	if (n == NULL)
		return;
	if (n->refs > 0) {
		n->refs--;
		return;
	}
	/* Long lists are SEQ chains along b: walk them without recursing. */
	while (n->kind == N_SEQ && n->refs == 0 && n->b != NULL &&
	    n->b->kind == N_SEQ && n->b->refs == 0) {
		struct sh_node *next = n->b;

		sh_node_free(n->a);
		redirs_free(n->redirs);
		free(n);
		n = next;
	}
	sh_node_free(n->a);
	sh_node_free(n->b);
	sh_node_free(n->c);
	for (int i = 0; i < n->nwords; i++)
		free(n->words[i]);
	free(n->words);
	free(n->name);
	redirs_free(n->redirs);
	for (struct sh_case_item *it = n->items, *next; it != NULL; it = next) {
		next = it->next;
		for (int i = 0; i < it->npats; i++)
			free(it->pats[i]);
		free(it->pats);
		sh_node_free(it->body);
		free(it);
	}
	free(n);
}

static struct sh_node *
pair(enum sh_kind k, struct sh_node *a, struct sh_node *b)
{
	struct sh_node *n = new_node(k);

	n->a = a;
	n->b = b;
	return n;
}

/* True when the loaded token is the unquoted word kw. */
static bool
is_kw(struct sh_lex *lx, const char *kw)
{
	return sh_lex_peek(lx) == T_WORD && strcmp(lx->text, kw) == 0;
}

static const char *
tok_name(struct sh_lex *lx)
{
	switch (sh_lex_peek(lx)) {
	case T_EOF: return "end of file";
	case T_WORD: return lx->text;
	case T_NEWLINE: return "newline";
	case T_SEMI: return ";";
	case T_DSEMI: return ";;";
	case T_AMP: return "&";
	case T_PIPE: return "|";
	case T_AND: return "&&";
	case T_OR: return "||";
	case T_LPAREN: return "(";
	case T_RPAREN: return ")";
	case T_REDIR: return "redirection";
	}
	return "?";
}

static bool
expect_kw(struct sh_lex *lx, const char *kw)
{
	if (!is_kw(lx, kw)) {
		if (!lx->error) {
			char msg[64];

			snprintf(msg, sizeof(msg), "expected '%s' but found",
			    kw);
			sh_lex_error(lx, msg, tok_name(lx));
		}
		return false;
	}
	sh_lex_next(lx);
	return true;
}

static void
skip_newlines(struct sh_lex *lx)
{
	while (sh_lex_peek(lx) == T_NEWLINE)
		sh_lex_next(lx);
}

static bool
at_list_end(struct sh_lex *lx)
{
	static const char *const kws[] = { "then", "else", "elif", "fi", "do",
		"done", "esac", "}" };
	enum sh_tok t = sh_lex_peek(lx);

	if (t == T_EOF || t == T_RPAREN || t == T_DSEMI)
		return true;
	for (size_t i = 0; t == T_WORD && i < sizeof(kws) / sizeof(kws[0]);
	    i++)
		if (strcmp(lx->text, kws[i]) == 0)
			return true;
	return false;
}

/* Parses one redirection (the T_REDIR token is loaded). */
static struct sh_redir *
p_redir(struct sh_lex *lx)
{
	struct sh_redir *r = calloc(1, sizeof(*r));

	if (r == NULL)
		abort();
	r->kind = lx->rkind;
	r->strip_tabs = lx->rstrip;
	r->fd = lx->rfd >= 0 ? lx->rfd : (r->kind == R_IN || r->kind ==
	    R_DUP_IN || r->kind == R_HEREDOC || r->kind == R_HERESTR ||
	    r->kind == R_RDWR) ? 0 : 1;
	sh_lex_next(lx);
	if (sh_lex_peek(lx) != T_WORD) {
		sh_lex_error(lx, "unexpected", tok_name(lx));
		free(r);
		return NULL;
	}
	r->word = sh_lex_take(lx);
	if (r->kind == R_HEREDOC) {
		/* The delimiter: quotes removed; quoted means no expansion. */
		char *w = r->word, *o = w;

		r->quoted = strpbrk(w, "'\"\\") != NULL;
		for (char *p = w; *p; p++)
			if (*p != '\'' && *p != '"' && *p != '\\')
				*o++ = *p;
		*o = '\0';
		if (sh_lex_heredoc(lx, r) != 0) {
			redirs_free(r);
			return NULL;
		}
	}
	return r;
}

/* Appends redirections following a compound command. */
static bool
p_redirs(struct sh_lex *lx, struct sh_redir **tail)
{
	while (*tail != NULL)
		tail = &(*tail)->next;
	while (sh_lex_peek(lx) == T_REDIR) {
		if ((*tail = p_redir(lx)) == NULL)
			return false;
		tail = &(*tail)->next;
	}
	return true;
}

static void
add_word(struct sh_node *n, char *w)
{
	n->words = tb_xrealloc(n->words, sizeof(char *) *
	    (size_t)(n->nwords + 2));
	n->words[n->nwords++] = w;
	n->words[n->nwords] = NULL;
}

static struct sh_node *
p_simple(struct sh_lex *lx)
{
	struct sh_node *n = new_node(N_CMD);
	struct sh_redir **tail = &n->redirs;

	for (;;) {
		enum sh_tok t = sh_lex_peek(lx);

		if (t == T_REDIR) {
			if ((*tail = p_redir(lx)) == NULL)
				goto fail;
			tail = &(*tail)->next;
		} else if (t == T_WORD) {
			add_word(n, sh_lex_take(lx));
			/* name() compound: a function definition. */
			if (n->nwords == 1 && n->redirs == NULL &&
			    sh_lex_peek(lx) == T_LPAREN &&
			    sh_is_name(n->words[0], strlen(n->words[0]))) {
				struct sh_node *f = new_node(N_FUNC);

				sh_lex_next(lx);
				if (sh_lex_peek(lx) != T_RPAREN) {
					sh_lex_error(lx, "unexpected",
					    tok_name(lx));
					sh_node_free(f);
					goto fail;
				}
				sh_lex_next(lx);
				skip_newlines(lx);
				f->name = n->words[0];
				n->nwords = 0;
				sh_node_free(n);
				if ((f->a = p_command(lx)) == NULL) {
					sh_node_free(f);
					return NULL;
				}
				return f;
			}
		} else
			break;
	}
	if (n->nwords == 0 && n->redirs == NULL) {
		sh_lex_error(lx, "unexpected", tok_name(lx));
		goto fail;
	}
	return n;
fail:
	sh_node_free(n);
	return NULL;
}

static struct sh_node *
p_if(struct sh_lex *lx)
{
	struct sh_node *n = new_node(N_IF);

	sh_lex_next(lx);	/* if or elif */
	if ((n->a = p_list(lx)) == NULL || !expect_kw(lx, "then") ||
	    (n->b = p_list(lx)) == NULL)
		goto fail;
	if (is_kw(lx, "elif")) {
		if ((n->c = p_if(lx)) == NULL)
			goto fail;
		return n;
	}
	if (is_kw(lx, "else")) {
		sh_lex_next(lx);
		if ((n->c = p_list(lx)) == NULL)
			goto fail;
	}
	if (!expect_kw(lx, "fi"))
		goto fail;
	return n;
fail:
	sh_node_free(n);
	return NULL;
}

static struct sh_node *
p_loop_body(struct sh_lex *lx, struct sh_node *n)
{
	skip_newlines(lx);
	if (!expect_kw(lx, "do") || (n->b = p_list(lx)) == NULL ||
	    !expect_kw(lx, "done")) {
		sh_node_free(n);
		return NULL;
	}
	return n;
}

static struct sh_node *
p_while(struct sh_lex *lx)
{
	struct sh_node *n = new_node(is_kw(lx, "while") ? N_WHILE : N_UNTIL);

	sh_lex_next(lx);
	if ((n->a = p_list(lx)) == NULL) {
		sh_node_free(n);
		return NULL;
	}
	return p_loop_body(lx, n);
}

static struct sh_node *
p_for(struct sh_lex *lx)
{
	struct sh_node *n = new_node(N_FOR);

	sh_lex_next(lx);
	if (sh_lex_peek(lx) != T_WORD || !sh_is_name(lx->text,
	    strlen(lx->text))) {
		sh_lex_error(lx, "bad for loop variable", tok_name(lx));
		sh_node_free(n);
		return NULL;
	}
	n->name = sh_lex_take(lx);
	skip_newlines(lx);
	if (is_kw(lx, "in")) {
		sh_lex_next(lx);
		n->has_in = true;
		while (sh_lex_peek(lx) == T_WORD)
			add_word(n, sh_lex_take(lx));
	}
	if (sh_lex_peek(lx) == T_SEMI || sh_lex_peek(lx) == T_NEWLINE)
		sh_lex_next(lx);
	return p_loop_body(lx, n);
}

static struct sh_node *
p_case(struct sh_lex *lx)
{
	struct sh_node *n = new_node(N_CASE);
	struct sh_case_item **tail = &n->items;

	sh_lex_next(lx);
	if (sh_lex_peek(lx) != T_WORD) {
		sh_lex_error(lx, "unexpected", tok_name(lx));
		goto fail;
	}
	n->name = sh_lex_take(lx);
	skip_newlines(lx);
	if (!expect_kw(lx, "in"))
		goto fail;
	skip_newlines(lx);
	while (!is_kw(lx, "esac")) {
		struct sh_case_item *it = calloc(1, sizeof(*it));

		if (it == NULL)
			abort();
		*tail = it;
		tail = &it->next;
		if (sh_lex_peek(lx) == T_LPAREN)
			sh_lex_next(lx);
		for (;;) {
			if (sh_lex_peek(lx) != T_WORD) {
				sh_lex_error(lx, "unexpected", tok_name(lx));
				goto fail;
			}
			it->pats = tb_xrealloc(it->pats, sizeof(char *) *
			    (size_t)(it->npats + 1));
			it->pats[it->npats++] = sh_lex_take(lx);
			if (sh_lex_peek(lx) != T_PIPE)
				break;
			sh_lex_next(lx);
		}
		if (sh_lex_peek(lx) != T_RPAREN) {
			sh_lex_error(lx, "expected ')' but found",
			    tok_name(lx));
			goto fail;
		}
		sh_lex_next(lx);
		if ((it->body = p_list(lx)) == NULL)
			goto fail;
		if (sh_lex_peek(lx) == T_DSEMI) {
			sh_lex_next(lx);
			skip_newlines(lx);
		} else if (!is_kw(lx, "esac")) {
			sh_lex_error(lx, "expected ';;' but found",
			    tok_name(lx));
			goto fail;
		}
	}
	sh_lex_next(lx);
	return n;
fail:
	sh_node_free(n);
	return NULL;
}

static struct sh_node *p_command_nested(struct sh_lex *lx);

/* Bounds the parser's recursion (nested compound commands). */
static struct sh_node *
p_command(struct sh_lex *lx)
{
	struct sh_node *n;

	if (lx->depth >= SH_MAX_NEST) {
		sh_lex_error(lx, "commands nested too deeply", NULL);
		return NULL;
	}
	lx->depth++;
	n = p_command_nested(lx);
	lx->depth--;
	return n;
}

static struct sh_node *
p_command_nested(struct sh_lex *lx)
{
	struct sh_node *n = NULL;
	enum sh_tok t = sh_lex_peek(lx);

	if (t == T_LPAREN) {
		sh_lex_next(lx);
		n = new_node(N_SUBSHELL);
		if ((n->a = p_list(lx)) == NULL)
			goto fail;
		if (sh_lex_peek(lx) != T_RPAREN) {
			sh_lex_error(lx, "expected ')' but found",
			    tok_name(lx));
			goto fail;
		}
		sh_lex_next(lx);
	} else if (is_kw(lx, "{")) {
		sh_lex_next(lx);
		n = new_node(N_GROUP);
		if ((n->a = p_list(lx)) == NULL || !expect_kw(lx, "}"))
			goto fail;
	} else if (is_kw(lx, "if")) {
		n = p_if(lx);
	} else if (is_kw(lx, "while") || is_kw(lx, "until")) {
		n = p_while(lx);
	} else if (is_kw(lx, "for")) {
		n = p_for(lx);
	} else if (is_kw(lx, "case")) {
		n = p_case(lx);
	} else if (is_kw(lx, "function")) {
		sh_lex_next(lx);
		if (sh_lex_peek(lx) != T_WORD) {
			sh_lex_error(lx, "unexpected", tok_name(lx));
			return NULL;
		}
		n = new_node(N_FUNC);
		n->name = sh_lex_take(lx);
		if (sh_lex_peek(lx) == T_LPAREN) {
			sh_lex_next(lx);
			if (sh_lex_peek(lx) != T_RPAREN) {
				sh_lex_error(lx, "unexpected", tok_name(lx));
				goto fail;
			}
			sh_lex_next(lx);
		}
		skip_newlines(lx);
		if ((n->a = p_command(lx)) == NULL)
			goto fail;
		return n;
	} else if (at_list_end(lx) && t == T_WORD) {
		sh_lex_error(lx, "unexpected", tok_name(lx));
		return NULL;
	} else
		return p_simple(lx);
	if (n == NULL || !p_redirs(lx, &n->redirs))
		goto fail;
	return n;
fail:
	sh_node_free(n);
	return NULL;
}

static struct sh_node *
p_pipeline(struct sh_lex *lx)
{
	struct sh_node *n;
	bool bang = false;

	if (is_kw(lx, "!")) {
		sh_lex_next(lx);
		bang = true;
	}
	if ((n = p_command(lx)) == NULL)
		return NULL;
	while (sh_lex_peek(lx) == T_PIPE) {
		struct sh_node *r;

		sh_lex_next(lx);
		skip_newlines(lx);
		if ((r = p_command(lx)) == NULL) {
			sh_node_free(n);
			return NULL;
		}
		n = pair(N_PIPE, n, r);
	}
	return bang ? pair(N_NOT, n, NULL) : n;
}

static struct sh_node *
p_and_or(struct sh_lex *lx)
{
	struct sh_node *n = p_pipeline(lx);

	while (n != NULL && (sh_lex_peek(lx) == T_AND ||
	    sh_lex_peek(lx) == T_OR)) {
		enum sh_kind k = lx->tok == T_AND ? N_AND : N_OR;
		struct sh_node *r;

		sh_lex_next(lx);
		skip_newlines(lx);
		if ((r = p_pipeline(lx)) == NULL) {
			sh_node_free(n);
			return NULL;
		}
		n = pair(k, n, r);
	}
	return n;
}

/*
 * A list: and-or lists separated by ; & or newlines, up to a keyword that
 * ends it. An empty list is a syntax error except at top level; it is
 * returned as an empty group so callers can tell it from an error.
 */
static struct sh_node *
p_list(struct sh_lex *lx)
{
	struct sh_node *n = NULL, *x, **tail = &n;

	skip_newlines(lx);
	while (!at_list_end(lx)) {
		if ((x = p_and_or(lx)) == NULL) {
			sh_node_free(n);
			return NULL;
		}
		/* SEQ(a, SEQ(b, c)): run and freed iteratively along b. */
		if (*tail == NULL)
			*tail = x;
		else {
			*tail = pair(N_SEQ, *tail, x);
			tail = &(*tail)->b;
		}
		if (sh_lex_peek(lx) == T_SEMI || lx->tok == T_AMP ||
		    lx->tok == T_NEWLINE) {
			sh_lex_next(lx);
			skip_newlines(lx);
		} else
			break;
	}
	if (lx->error) {
		sh_node_free(n);
		return NULL;
	}
	return n ? n : new_node(N_GROUP);
}

int
sh_parse(struct sh *sh, const char *src, struct sh_node **out)
{
	struct sh_lex lx = { .sh = sh, .src = src, .len = strlen(src) };
	struct sh_node *n = p_list(&lx);

	if (n != NULL && sh_lex_peek(&lx) != T_EOF) {
		sh_lex_error(&lx, "unexpected", tok_name(&lx));
		sh_node_free(n);
		n = NULL;
	}
	sh_lex_next(&lx);
	if (n == NULL)
		return -1;
	*out = n;
	return 0;
}
