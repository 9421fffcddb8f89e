/* awk_parse.c - recursive-descent parser from tokens to a syntax tree. */
#include "awk_parse.h"

#include <stdlib.h>
#include <string.h>

static struct anode *stmt(struct awk *a);

int
awk_global(struct awk *a, const char *name)
{
	for (int i = 0; i < a->nglobals; i++)
		if (strcmp(a->names[i], name) == 0)
			return i;
	a->names = tb_xrealloc(a->names, sizeof(char *) *
	    (size_t)(a->nglobals + 1));
	a->globals = tb_xrealloc(a->globals, sizeof(struct acell) *
	    (size_t)(a->nglobals + 1));
	a->names[a->nglobals] = tb_xstrdup(name);
	memset(&a->globals[a->nglobals], 0, sizeof(struct acell));
	return a->nglobals++;
}

/* Ends a simple statement: ';', newline, or before '}' / end. */
static void
end_simple(struct awk *a)
{
	int t = peek(a);

	if (t == ';' || t == T_NEWLINE) {
		adv(a);
		opt_nl(a);
	} else if (t != '}' && t != T_EOF)
		awk_syntax_error(a);
}

static struct anode *
print_stmt(struct awk *a)
{
	struct anode *n = mk(a, peek(a) == T_PRINT ? S_PRINT : S_PRINTF);
	int t;

	adv(a);
	t = peek(a);
	if (t != ';' && t != T_NEWLINE && t != '}' && t != '>' &&
	    t != T_APPEND && t != '|' && t != T_EOF) {
		n->a = awk_expr_list(a, true, &n->nargs);
		if (n->nargs == 1 && n->a->kind == E_GROUP) {
			n->nargs = n->a->nargs;
			n->a = n->a->a;
		}
	}
	if (n->kind == S_PRINTF && n->nargs == 0)
		awk_syntax_error(a);
	t = peek(a);
	if (t == '>' || t == T_APPEND || t == '|') {
		adv(a);
		n->op = t == T_APPEND ? 'a' : t;
		n->b = awk_concat(a, true);
	}
	return n;
}

static struct anode *
simple_stmt(struct awk *a)
{
	struct anode *n;
	int t = peek(a);

	switch (t) {
	case T_PRINT:
	case T_PRINTF:
		return print_stmt(a);
	case T_NEXT:
	case T_NEXTFILE:
	case T_BREAK:
	case T_CONTINUE:
		adv(a);
		return mk(a, t == T_NEXT ? S_NEXT : t == T_NEXTFILE ?
		    S_NEXTFILE : t == T_BREAK ? S_BREAK : S_CONTINUE);
	case T_EXIT:
	case T_RETURN:
		adv(a);
		n = mk(a, t == T_EXIT ? S_EXIT : S_RETURN);
		if (peek(a) != ';' && peek(a) != T_NEWLINE && peek(a) != '}' &&
		    peek(a) != T_EOF)
			n->a = awk_expr(a, false);
		return n;
	case T_DELETE: {
		struct atok *name;

		adv(a);
		name = &a->toks[a->pos];
		if (!expect(a, T_NAME))
			return mk(a, S_BLOCK);
		n = mk(a, S_DELETE);
		n->a = awk_var_node(a, name->s);
		if (accept(a, '[')) {
			n->b = awk_expr_list(a, false, &n->nargs);
			expect(a, ']');
		}
		return n;
	}
	}
	n = mk(a, S_EXPR);
	n->a = awk_expr(a, false);
	return n;
}

static struct anode *
block(struct awk *a)
{
	struct anode *n = mk(a, S_BLOCK), **tail = &n->a;

	if (!expect(a, '{'))
		return n;
	for (;;) {
		while (peek(a) == ';' || peek(a) == T_NEWLINE)
			adv(a);
		if (peek(a) == '}' || peek(a) == T_EOF || a->error)
			break;
		*tail = stmt(a);
		tail = &(*tail)->next;
	}
	expect(a, '}');
	return n;
}

/* A statement used as a loop or if body (possibly empty: ';'). */
static struct anode *
body(struct awk *a)
{
	opt_nl(a);
	if (accept(a, ';'))
		return mk(a, S_BLOCK);
	return stmt(a);
}

static struct anode *
for_stmt(struct awk *a)
{
	struct anode *n;

	adv(a);
	expect(a, '(');
	if (peek(a) == T_NAME && peek2(a) == T_IN &&
	    a->pos + 3 < a->ntoks && a->toks[a->pos + 2].type == T_NAME &&
	    a->toks[a->pos + 3].type == ')') {
		n = mk(a, S_FORIN);
		n->a = awk_var_node(a, a->toks[a->pos].s);
		n->b = awk_var_node(a, a->toks[a->pos + 2].s);
		a->pos += 4;
		n->c = body(a);
		return n;
	}
	n = mk(a, S_FOR);
	if (peek(a) != ';')
		n->a = simple_stmt(a);
	expect(a, ';');
	opt_nl(a);
	if (peek(a) != ';')
		n->b = awk_expr(a, false);
	expect(a, ';');
	opt_nl(a);
	if (peek(a) != ')')
		n->c = simple_stmt(a);
	expect(a, ')');
	n->d = body(a);
	return n;
}

static struct anode *stmt_nested(struct awk *a);

static struct anode *
stmt(struct awk *a)
{
	struct anode *n;

	if (a->pdepth >= 200) {
		if (!a->error)
			tb_err(a->io, "awk", "statements nested too deeply");
		a->error = true;
		a->pos = a->ntoks - 1;
		return mk(a, S_BLOCK);
	}
	a->pdepth++;
	n = stmt_nested(a);
	a->pdepth--;
	return n;
}

static struct anode *
stmt_nested(struct awk *a)
{
	struct anode *n;
	int t = peek(a);
	size_t save;

	switch (t) {
	case '{':
		n = block(a);
		return n;
	case T_IF:
		adv(a);
		n = mk(a, S_IF);
		expect(a, '(');
		n->a = awk_expr(a, false);
		expect(a, ')');
		n->b = body(a);
		save = (size_t)a->pos;
		while (peek(a) == ';' || peek(a) == T_NEWLINE)
			adv(a);
		if (accept(a, T_ELSE))
			n->c = body(a);
		else
			a->pos = (int)save;
		return n;
	case T_WHILE:
		adv(a);
		n = mk(a, S_WHILE);
		expect(a, '(');
		n->a = awk_expr(a, false);
		expect(a, ')');
		if (peek(a) == ';') {
			adv(a);
			n->b = mk(a, S_BLOCK);
			return n;
		}
		n->b = body(a);
		return n;
	case T_DO:
		adv(a);
		n = mk(a, S_DO);
		n->b = body(a);
		while (peek(a) == ';' || peek(a) == T_NEWLINE)
			adv(a);
		expect(a, T_WHILE);
		expect(a, '(');
		n->a = awk_expr(a, false);
		expect(a, ')');
		end_simple(a);
		return n;
	case T_FOR:
		return for_stmt(a);
	case ';':
		adv(a);
		return mk(a, S_BLOCK);
	}
	n = simple_stmt(a);
	end_simple(a);
	return n;
}

static void
function_def(struct awk *a)
{
	struct atok *name;
	struct afunc *f;
	int idx;

	adv(a);
	name = &a->toks[a->pos];
	if (name->type != T_NAME && name->type != T_FUNCNAME) {
		awk_syntax_error(a);
		return;
	}
	adv(a);
	idx = awk_func_index(a, name->s);
	f = &a->funcs[idx];
	if (f->defined) {
		tb_err(a->io, "awk", "function '%s' redefined", name->s);
		a->error = true;
		return;
	}
	expect(a, '(');
	while (!a->error && peek(a) == T_NAME) {
		f->params = tb_xrealloc(f->params, sizeof(char *) *
		    (size_t)(f->nparams + 1));
		f->params[f->nparams++] = a->toks[a->pos].s;
		adv(a);
		opt_nl(a);
		if (!accept(a, ','))
			break;
		opt_nl(a);
	}
	expect(a, ')');
	opt_nl(a);
	a->cur_func = f;
	f->body = block(a);
	a->cur_func = NULL;
	f = &a->funcs[idx];	/* block() may have grown funcs */
	f->defined = true;
}

static struct aitem *
add_item(struct awk *a, struct aitem **list)
{
	struct aitem *it = awk_alloc(a, sizeof(*it));

	while (*list != NULL)
		list = &(*list)->next;
	*list = it;
	return it;
}

int
awk_parse(struct awk *a)
{
	while (!a->error) {
		struct aitem *it;
		int t;

		while (peek(a) == T_NEWLINE || peek(a) == ';')
			adv(a);
		t = peek(a);
		if (t == T_EOF)
			break;
		if (t == T_FUNCTION) {
			function_def(a);
			continue;
		}
		if (t == T_BEGIN || t == T_END) {
			adv(a);
			opt_nl(a);
			it = add_item(a, t == T_BEGIN ? &a->begin : &a->end);
			it->action = block(a);
			continue;
		}
		it = add_item(a, &a->items);
		if (t != '{') {
			it->pat = awk_expr(a, false);
			if (accept(a, ',')) {
				opt_nl(a);
				it->pat2 = awk_expr(a, false);
			}
		}
		if (peek(a) == '{')
			it->action = block(a);
		else if (peek(a) != T_NEWLINE && peek(a) != ';' &&
		    peek(a) != T_EOF)
			awk_syntax_error(a);
	}
	for (int i = 0; !a->error && i < a->nfuncs; i++)
		if (!a->funcs[i].defined) {
			tb_err(a->io, "awk", "calling undefined function %s",
			    a->funcs[i].name);
			a->error = true;
		}
	return a->error ? -1 : 0;
}
