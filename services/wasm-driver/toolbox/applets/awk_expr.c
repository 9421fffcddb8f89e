/* awk_expr.c - the expression grammar of the awk parser. */
#include "awk_parse.h"

#include <stdlib.h>
#include <string.h>

static struct anode *primary(struct awk *a);
static struct anode *unary(struct awk *a);
static bool deeper(struct awk *a);

void
awk_syntax_error(struct awk *a)
{
	struct atok *t = &a->toks[a->pos];
	char what[64];

	if (a->error)
		return;
	a->error = true;
	if (t->type == T_EOF)
		snprintf(what, sizeof(what), "end of program");
	else if (t->type == T_NEWLINE)
		snprintf(what, sizeof(what), "end of line");
	else if (t->s != NULL)
		snprintf(what, sizeof(what), "%s", t->s);
	else if (t->type < 256)
		snprintf(what, sizeof(what), "%c", t->type);
	else
		snprintf(what, sizeof(what), "operator");
	tb_err(a->io, "awk", "line %d: syntax error at or near %s", t->line,
	    what);
	a->pos = a->ntoks - 1;	/* stop parsing */
}

int
awk_func_index(struct awk *a, const char *name)
{
	for (int i = 0; i < a->nfuncs; i++)
		if (strcmp(a->funcs[i].name, name) == 0)
			return i;
	a->funcs = tb_xrealloc(a->funcs, sizeof(struct afunc) *
	    (size_t)(a->nfuncs + 1));
	memset(&a->funcs[a->nfuncs], 0, sizeof(struct afunc));
	a->funcs[a->nfuncs].name = awk_strdup(a, name, strlen(name));
	return a->nfuncs++;
}

struct anode *
awk_var_node(struct awk *a, const char *name)
{
	struct anode *n;

	if (a->cur_func != NULL)
		for (int i = 0; i < a->cur_func->nparams; i++)
			if (strcmp(a->cur_func->params[i], name) == 0) {
				n = mk(a, E_LOCAL);
				n->idx = i;
				n->str = a->cur_func->params[i];
				return n;
			}
	n = mk(a, E_VAR);
	n->idx = awk_global(a, name);
	n->str = a->names[n->idx];
	return n;
}

static bool
is_lvalue(struct anode *n)
{
	return n->kind == E_VAR || n->kind == E_LOCAL || n->kind == E_FIELD ||
	    n->kind == E_INDEX;
}

static regex_t *
compile_re(struct awk *a, const char *src)
{
	regex_t *re = tb_xmalloc(sizeof(*re));

	if (tb_regcomp(a->io, "awk", re, src, REG_EXTENDED) != 0) {
		free(re);
		a->error = true;
		a->pos = a->ntoks - 1;
		return NULL;
	}
	a->regs = tb_xrealloc(a->regs, sizeof(regex_t *) *
	    (size_t)(a->nregs + 1));
	a->regs[a->nregs++] = re;
	return re;
}

/* expr (',' expr)*; returns the list, its length in *np. */
struct anode *
awk_expr_list(struct awk *a, bool nogt, int *np)
{
	struct anode *head = awk_expr(a, nogt), *tail = head;

	*np = 1;
	while (!a->error && accept(a, ',')) {
		opt_nl(a);
		tail->next = awk_expr(a, nogt);
		tail = tail->next;
		(*np)++;
	}
	return head;
}

static struct anode *
args(struct awk *a, int *np)
{
	struct anode *l = NULL;

	*np = 0;
	expect(a, '(');
	opt_nl(a);
	if (!accept(a, ')')) {
		l = awk_expr_list(a, false, np);
		opt_nl(a);
		expect(a, ')');
	}
	return l;
}

static struct anode *
getline_node(struct awk *a, int op, struct anode *cmd)
{
	struct anode *n = mk(a, E_GETLINE);
	int t = peek(a);

	n->op = op;
	n->a = cmd;
	if (t == T_NAME || t == '$') {
		n->b = primary(a);
		if (!is_lvalue(n->b))
			awk_syntax_error(a);
	}
	if (op == 0 && accept(a, '<')) {
		n->op = '<';
		n->a = primary(a);
	}
	return n;
}

static struct anode *
primary(struct awk *a)
{
	struct atok *t = &a->toks[a->pos];
	struct anode *n;
	int cnt;

	switch (t->type) {
	case T_NUMBER:
		adv(a);
		n = mk(a, E_NUM);
		n->num = t->num;
		return n;
	case T_STRING:
		adv(a);
		n = mk(a, E_STR);
		n->str = t->s;
		return n;
	case T_ERE:
		adv(a);
		n = mk(a, E_REGEX);
		n->str = t->s;
		n->re = compile_re(a, t->s);
		return n;
	case '(':
		adv(a);
		opt_nl(a);
		n = awk_expr_list(a, false, &cnt);
		opt_nl(a);
		expect(a, ')');
		if (cnt > 1) {
			struct anode *g = mk(a, E_GROUP);

			g->a = n;
			g->nargs = cnt;
			return g;
		}
		return n;
	case '$':
		adv(a);
		if (peek(a) == T_INCR || peek(a) == T_DECR) {
			int op = peek(a);

			adv(a);
			n = mk2(a, op == T_INCR ? E_PREINC : E_PREDEC, 0,
			    primary(a), NULL);
		} else if (peek(a) == '-' || peek(a) == '+' || peek(a) == '!')
			n = unary(a);
		else
			n = primary(a);
		return mk2(a, E_FIELD, 0, n, NULL);
	case T_INCR:
	case T_DECR:
		adv(a);
		n = primary(a);
		if (!is_lvalue(n))
			awk_syntax_error(a);
		return mk2(a, t->type == T_INCR ? E_PREINC : E_PREDEC, 0, n,
		    NULL);
	case '-':
	case '+':
	case '!':
		return unary(a);
	case T_NAME:
		adv(a);
		if (accept(a, '[')) {
			n = mk(a, E_INDEX);
			n->a = awk_var_node(a, t->s);
			n->b = awk_expr_list(a, false, &n->nargs);
			expect(a, ']');
			return n;
		}
		return awk_var_node(a, t->s);
	case T_FUNCNAME:
		adv(a);
		n = mk(a, E_CALL);
		n->idx = awk_func_index(a, t->s);
		n->str = t->s;
		n->a = args(a, &n->nargs);
		return n;
	case T_BUILTIN:
		adv(a);
		n = mk(a, E_BUILTIN);
		n->op = t->sub;
		if (peek(a) == '(')
			n->a = args(a, &n->nargs);
		else if (t->sub != B_LENGTH)
			awk_syntax_error(a);
		return n;
	case T_GETLINE:
		adv(a);
		return getline_node(a, 0, NULL);
	}
	awk_syntax_error(a);
	return mk(a, E_NUM);
}

static struct anode *
postfix(struct awk *a)
{
	struct anode *n = primary(a);

	if (is_lvalue(n) && (peek(a) == T_INCR || peek(a) == T_DECR)) {
		int op = peek(a);

		adv(a);
		return mk2(a, op == T_INCR ? E_POSTINC : E_POSTDEC, 0, n, NULL);
	}
	return n;
}

static struct anode *
power(struct awk *a)
{
	struct anode *n = postfix(a);

	if (peek(a) == '^' || peek(a) == T_POW) {
		adv(a);
		return mk2(a, E_BINOP, '^', n, unary(a));
	}
	return n;
}

static struct anode *
unary(struct awk *a)
{
	int t = peek(a);
	struct anode *n;

	if (!deeper(a))
		return mk(a, E_NUM);
	if (t == '!' || t == '-' || t == '+') {
		adv(a);
		n = mk2(a, t == '!' ? E_NOT : t == '-' ? E_NEG : E_PLUS, 0,
		    unary(a), NULL);
	} else
		n = power(a);
	a->pdepth--;
	return n;
}

static struct anode *
mult(struct awk *a)
{
	struct anode *n = unary(a);

	while (peek(a) == '*' || peek(a) == '/' || peek(a) == '%') {
		int op = peek(a);

		adv(a);
		n = mk2(a, E_BINOP, op, n, unary(a));
	}
	return n;
}

static struct anode *
additive(struct awk *a)
{
	struct anode *n = mult(a);

	while (peek(a) == '+' || peek(a) == '-') {
		int op = peek(a);

		adv(a);
		n = mk2(a, E_BINOP, op, n, mult(a));
	}
	return n;
}

static bool
starts_operand(int t)
{
	return t == T_NUMBER || t == T_STRING || t == T_ERE || t == T_NAME ||
	    t == T_FUNCNAME || t == T_BUILTIN || t == '$' || t == '(' ||
	    t == T_INCR || t == T_DECR || t == '-' || t == '!';
}

struct anode *
awk_concat(struct awk *a, bool nogt)
{
	struct anode *n = additive(a);

	(void)nogt;
	/* '-' and '!' after an operand are subtraction / a comparison. */
	while (!a->error && starts_operand(peek(a)) && peek(a) != '-' &&
	    peek(a) != '!')
		n = mk2(a, E_CONCAT, 0, n, additive(a));
	return n;
}

static struct anode *
rel(struct awk *a, bool nogt)
{
	struct anode *n = awk_concat(a, nogt);
	int t;

	while (!nogt && peek(a) == '|' && peek2(a) == T_GETLINE) {
		adv(a);
		adv(a);
		n = getline_node(a, '|', n);
	}
	t = peek(a);
	if (t == '<' || t == T_LE || t == T_EQ || t == T_NE || t == T_GE ||
	    (t == '>' && !nogt)) {
		adv(a);
		n = mk2(a, E_CMP, t, n, awk_concat(a, nogt));
	}
	return n;
}

static struct anode *
match_expr(struct awk *a, bool nogt)
{
	struct anode *n = rel(a, nogt);

	while (peek(a) == '~' || peek(a) == T_NOMATCH) {
		int op = peek(a);

		adv(a);
		n = mk2(a, E_MATCH, op, n, rel(a, nogt));
	}
	return n;
}

static struct anode *
in_expr(struct awk *a, bool nogt)
{
	struct anode *n = match_expr(a, nogt);

	while (peek(a) == T_IN) {
		struct atok *t;

		adv(a);
		t = &a->toks[a->pos];
		if (!expect(a, T_NAME))
			break;
		n = mk2(a, E_IN, 0, n, awk_var_node(a, t->s));
	}
	return n;
}

static struct anode *
and_expr(struct awk *a, bool nogt)
{
	struct anode *n = in_expr(a, nogt);

	while (accept(a, T_AND)) {
		opt_nl(a);
		n = mk2(a, E_AND, 0, n, in_expr(a, nogt));
	}
	return n;
}

static struct anode *
or_expr(struct awk *a, bool nogt)
{
	struct anode *n = and_expr(a, nogt);

	while (accept(a, T_OR)) {
		opt_nl(a);
		n = mk2(a, E_OR, 0, n, and_expr(a, nogt));
	}
	return n;
}

static struct anode *expr_nested(struct awk *a, bool nogt);

/* Bounds the parser's recursion on deeply nested input. */
static bool
deeper(struct awk *a)
{
	if (a->pdepth >= 200) {
		if (!a->error)
			tb_err(a->io, "awk", "expression nested too deeply");
		a->error = true;
		a->pos = a->ntoks - 1;
		return false;
	}
	a->pdepth++;
	return true;
}

struct anode *
awk_expr(struct awk *a, bool nogt)
{
	struct anode *n;

	if (!deeper(a))
		return mk(a, E_NUM);
	n = expr_nested(a, nogt);
	a->pdepth--;
	return n;
}

static struct anode *
expr_nested(struct awk *a, bool nogt)
{
	struct anode *n = or_expr(a, nogt);
	int t = peek(a);

	if (accept(a, '?')) {
		struct anode *c = mk(a, E_COND);

		opt_nl(a);
		c->a = n;
		c->b = awk_expr(a, nogt);
		opt_nl(a);
		expect(a, ':');
		opt_nl(a);
		c->c = awk_expr(a, nogt);
		return c;
	}
	if (is_lvalue(n) && (t == '=' || t == T_ADD_ASSIGN ||
	    t == T_SUB_ASSIGN || t == T_MUL_ASSIGN || t == T_DIV_ASSIGN ||
	    t == T_MOD_ASSIGN || t == T_POW_ASSIGN)) {
		adv(a);
		opt_nl(a);
		return mk2(a, E_ASSIGN, t, n, awk_expr(a, nogt));
	}
	return n;
}

