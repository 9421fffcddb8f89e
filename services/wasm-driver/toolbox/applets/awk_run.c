/* awk_run.c - evaluation of expressions and execution of statements. */
#include "awk.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define AWK_MAX_CALLS	150

void
awk_runtime_error(struct awk *a, const char *fmt, ...)
{
	va_list ap;

	if (a->fatal)
		return;
	fflush(a->io->out);
	fputs("awk: ", a->io->err);
	va_start(ap, fmt);
	vfprintf(a->io->err, fmt, ap);
	va_end(ap);
	fputc('\n', a->io->err);
	a->exiting = a->fatal = true;
	a->exit_code = 2;
}

struct acell *
awk_cell(struct awk *a, struct anode *n)
{
	if (n->kind == E_LOCAL)
		return &a->frame->locals[n->idx];
	return &a->globals[n->idx];
}

static struct amap *
get_array(struct awk *a, struct anode *n)
{
	struct acell *c;

	if (n->kind != E_VAR && n->kind != E_LOCAL) {
		awk_runtime_error(a, "can't use an expression as an array");
		return NULL;
	}
	c = awk_cell(a, n);
	if (c->arr != NULL)
		return c->arr;
	if (c->v.flags != 0) {
		awk_runtime_error(a, "can't use scalar %s as array", n->str);
		return NULL;
	}
	if (c->link != NULL) {
		/* An untyped argument becomes an array in the caller too. */
		if (c->link->arr == NULL && c->link->v.flags == 0)
			c->link->arr = amap_new();
		if (c->link->arr != NULL) {
			c->arr = c->link->arr;
			c->arr_ref = true;
			return c->arr;
		}
	}
	c->arr = amap_new();
	return c->arr;
}

/* The subscript string of an index list. */
static char *
subscript(struct awk *a, struct anode *list)
{
	struct tb_buf b = { 0 };

	for (struct anode *e = list; e != NULL; e = e->next) {
		struct aval v = awk_eval(a, e);

		if (e != list)
			tb_buf_adds(&b, aval_tostr(a, &a->globals[V_SUBSEP].v));
		tb_buf_adds(&b, aval_tostr(a, &v));
		aval_free(&v);
	}
	return tb_buf_str(&b);
}

static int
field_index(struct awk *a, struct anode *n)
{
	struct aval v = awk_eval(a, n);
	double d = aval_tonum(&v);

	aval_free(&v);
	if (d < 0 || d > 1e7) {
		awk_runtime_error(a, "trying to access out of range field %g",
		    d);
		return -1;
	}
	return (int)d;
}

void
awk_assign_node(struct awk *a, struct anode *n, struct aval v)
{
	struct acell *c;
	struct amap *m;
	struct aval *slot;
	char *key;
	int i;

	switch (n->kind) {
	case E_VAR:
	case E_LOCAL:
		c = awk_cell(a, n);
		if (c->arr != NULL) {
			awk_runtime_error(a, "can't assign to %s; it's an array "
			    "name", n->str);
			break;
		}
		aval_free(&c->v);
		c->v = v;
		if (n->kind == E_VAR && n->idx == V_NF)
			awk_set_nf(a, (int)aval_tonum(&c->v));
		return;
	case E_FIELD:
		if ((i = field_index(a, n->a)) < 0)
			break;
		awk_set_field(a, i, v);
		return;
	case E_INDEX:
		if ((m = get_array(a, n->a)) == NULL)
			break;
		key = subscript(a, n->b);
		slot = amap_get(m, key, true);
		free(key);
		aval_free(slot);
		*slot = v;
		return;
	}
	aval_free(&v);
}

static struct aval
call(struct awk *a, struct anode *n)
{
	struct afunc *f = &a->funcs[n->idx];
	struct aframe fr, *saved = a->frame;
	struct anode *arg = n->a;
	struct aval r;
	int nl = f->nparams > n->nargs ? f->nparams : n->nargs;

	if (a->depth >= AWK_MAX_CALLS) {
		awk_runtime_error(a, "function call nesting too deep");
		return aval_num(0);
	}
	fr.n = nl;
	fr.locals = calloc((size_t)(nl > 0 ? nl : 1), sizeof(struct acell));
	if (fr.locals == NULL)
		abort();
	for (int i = 0; i < n->nargs; i++, arg = arg->next) {
		if (arg->kind == E_VAR || arg->kind == E_LOCAL) {
			struct acell *c = awk_cell(a, arg);

			if (c->arr != NULL) {
				fr.locals[i].arr = c->arr;
				fr.locals[i].arr_ref = true;
				continue;
			}
			if (c->v.flags == 0) {
				fr.locals[i].link = c;
				continue;
			}
		}
		fr.locals[i].v = awk_eval(a, arg);
	}
	a->frame = &fr;
	a->depth++;
	a->retval = aval_num(0);
	a->retval.flags = 0;
	awk_exec(a, f->body);
	a->depth--;
	a->frame = saved;
	r = a->retval;
	a->retval.flags = 0;
	a->retval.str = NULL;
	for (int i = 0; i < nl; i++) {
		aval_free(&fr.locals[i].v);
		if (!fr.locals[i].arr_ref)
			amap_free(fr.locals[i].arr);
	}
	free(fr.locals);
	return r;
}

static struct aval
incdec(struct awk *a, struct anode *n, double delta, bool post)
{
	struct aval old = awk_eval(a, n->a);
	double d = aval_tonum(&old);

	aval_free(&old);
	awk_assign_node(a, n->a, aval_num(d + delta));
	return aval_num(post ? d : d + delta);
}

static double
arith(struct awk *a, int op, double x, double y)
{
	switch (op) {
	case '+': case T_ADD_ASSIGN: return x + y;
	case '-': case T_SUB_ASSIGN: return x - y;
	case '*': case T_MUL_ASSIGN: return x * y;
	case '/': case T_DIV_ASSIGN:
		if (y == 0) {
			awk_runtime_error(a, "division by zero");
			return 0;
		}
		return x / y;
	case '%': case T_MOD_ASSIGN:
		if (y == 0) {
			awk_runtime_error(a, "division by zero in %%");
			return 0;
		}
		return fmod(x, y);
	default: return pow(x, y);
	}
}

static bool
match_node(struct awk *a, struct anode *re_node, const char *s)
{
	regex_t *re;

	if (re_node->kind == E_REGEX)
		re = re_node->re;
	else {
		struct aval v = awk_eval(a, re_node);

		re = awk_dynre(a, aval_tostr(a, &v));
		aval_free(&v);
	}
	return re != NULL && regexec(re, s, 0, NULL, 0) == 0;
}

struct aval
awk_eval(struct awk *a, struct anode *n)
{
	struct aval x, y, r;
	struct amap *m;
	char *key;
	int i, c;

	if (a->fatal)
		return aval_num(0);
	switch (n->kind) {
	case E_NUM:
		return aval_num(n->num);
	case E_STR:
		return aval_str(n->str);
	case E_REGEX:
		return aval_num(regexec(n->re, aval_tostr(a, awk_field(a, 0)),
		    0, NULL, 0) == 0);
	case E_VAR:
	case E_LOCAL: {
		struct acell *cell = awk_cell(a, n);

		if (cell->arr != NULL) {
			awk_runtime_error(a, "can't use array %s in scalar "
			    "context", n->str);
			return aval_num(0);
		}
		if (cell->link != NULL && cell->v.flags == 0)
			return aval_copy(&cell->link->v);
		return aval_copy(&cell->v);
	}
	case E_FIELD:
		if ((i = field_index(a, n->a)) < 0)
			return aval_num(0);
		return aval_copy(awk_field(a, i));
	case E_INDEX:
		if ((m = get_array(a, n->a)) == NULL)
			return aval_num(0);
		key = subscript(a, n->b);
		r = aval_copy(amap_get(m, key, true));
		free(key);
		return r;
	case E_ASSIGN:
		y = awk_eval(a, n->b);
		if (n->op != '=') {
			x = awk_eval(a, n->a);
			r = aval_num(arith(a, n->op, aval_tonum(&x),
			    aval_tonum(&y)));
			aval_free(&x);
			aval_free(&y);
			y = r;
		}
		awk_assign_node(a, n->a, aval_copy(&y));
		return y;
	case E_COND:
		x = awk_eval(a, n->a);
		c = aval_true(&x);
		aval_free(&x);
		return awk_eval(a, c ? n->b : n->c);
	case E_AND:
	case E_OR:
		x = awk_eval(a, n->a);
		c = aval_true(&x);
		aval_free(&x);
		if (c == (n->kind == E_OR))
			return aval_num(c);
		x = awk_eval(a, n->b);
		c = aval_true(&x);
		aval_free(&x);
		return aval_num(c);
	case E_NOT:
		x = awk_eval(a, n->a);
		c = !aval_true(&x);
		aval_free(&x);
		return aval_num(c);
	case E_NEG:
	case E_PLUS:
		x = awk_eval(a, n->a);
		r = aval_num(n->kind == E_NEG ? -aval_tonum(&x) :
		    aval_tonum(&x));
		aval_free(&x);
		return r;
	case E_BINOP:
		x = awk_eval(a, n->a);
		y = awk_eval(a, n->b);
		r = aval_num(arith(a, n->op, aval_tonum(&x), aval_tonum(&y)));
		aval_free(&x);
		aval_free(&y);
		return r;
	case E_CMP:
		x = awk_eval(a, n->a);
		y = awk_eval(a, n->b);
		c = aval_cmp(a, &x, &y);
		aval_free(&x);
		aval_free(&y);
		switch (n->op) {
		case '<': return aval_num(c < 0);
		case T_LE: return aval_num(c <= 0);
		case T_EQ: return aval_num(c == 0);
		case T_NE: return aval_num(c != 0);
		case T_GE: return aval_num(c >= 0);
		default: return aval_num(c > 0);
		}
	case E_MATCH:
		x = awk_eval(a, n->a);
		c = match_node(a, n->b, aval_tostr(a, &x));
		aval_free(&x);
		return aval_num(n->op == '~' ? c : !c);
	case E_CONCAT: {
		struct tb_buf b = { 0 };

		x = awk_eval(a, n->a);
		y = awk_eval(a, n->b);
		tb_buf_adds(&b, aval_tostr(a, &x));
		tb_buf_adds(&b, aval_tostr(a, &y));
		aval_free(&x);
		aval_free(&y);
		return aval_take(tb_buf_str(&b));
	}
	case E_PREINC: return incdec(a, n, 1, false);
	case E_PREDEC: return incdec(a, n, -1, false);
	case E_POSTINC: return incdec(a, n, 1, true);
	case E_POSTDEC: return incdec(a, n, -1, true);
	case E_IN:
		if ((m = get_array(a, n->b)) == NULL)
			return aval_num(0);
		key = subscript(a, n->a->kind == E_GROUP ? n->a->a : n->a);
		c = amap_get(m, key, false) != NULL;
		free(key);
		return aval_num(c);
	case E_GROUP:
		return aval_take(subscript(a, n->a));
	case E_BUILTIN:
		return awk_builtin(a, n);
	case E_CALL:
		return call(a, n);
	case E_GETLINE:
		return awk_getline(a, n);
	}
	return aval_num(0);
}

static int
exec_print(struct awk *a, struct anode *n)
{
	FILE *out = a->io->out;
	struct aval v;

	if (n->b != NULL) {
		v = awk_eval(a, n->b);
		out = awk_output(a, n->op, aval_tostr(a, &v));
		aval_free(&v);
		if (out == NULL)
			return R_OK;
	}
	if (n->kind == S_PRINTF) {
		v = awk_eval(a, n->a);
		char *s = awk_format(a, aval_tostr(a, &v), n->a->next);

		fputs(s, out);
		free(s);
		aval_free(&v);
		return R_OK;
	}
	if (n->nargs == 0)
		fputs(aval_tostr(a, awk_field(a, 0)), out);
	for (struct anode *e = n->a; e != NULL; e = e->next) {
		v = awk_eval(a, e);
		if (e != n->a)
			fputs(aval_tostr(a, &a->globals[V_OFS].v), out);
		fputs(aval_tostr_out(a, &v), out);
		aval_free(&v);
	}
	fputs(aval_tostr(a, &a->globals[V_ORS].v), out);
	return R_OK;
}

static bool
cond_true(struct awk *a, struct anode *n)
{
	struct aval v;
	bool t;

	if (n == NULL)
		return true;
	v = awk_eval(a, n);
	t = aval_true(&v);
	aval_free(&v);
	return t && !a->exiting;
}

/* Runs a loop body; returns R_OK to go on, R_BREAK to stop, else r. */
static int
loop_body(struct awk *a, struct anode *body)
{
	int r = awk_exec(a, body);

	if (r == R_CONTINUE)
		return R_OK;
	return r;
}

static int
exec_forin(struct awk *a, struct anode *n)
{
	struct amap *m = get_array(a, n->b);
	char **keys, **copy;
	size_t nk;
	int r = R_OK;

	if (m == NULL)
		return R_OK;
	keys = amap_keys(m, &nk);
	copy = tb_xmalloc(sizeof(char *) * (nk + 1));
	for (size_t i = 0; i < nk; i++)
		copy[i] = tb_xstrdup(keys[i]);
	free(keys);
	for (size_t i = 0; i < nk && r == R_OK; i++) {
		awk_assign_node(a, n->a, aval_strnum(copy[i]));
		r = loop_body(a, n->c);
	}
	for (size_t i = 0; i < nk; i++)
		free(copy[i]);
	free(copy);
	return r == R_BREAK ? R_OK : r;
}

int
awk_exec(struct awk *a, struct anode *n)
{
	struct aval v;
	int r = R_OK;

	if (n == NULL)
		return R_OK;
	if (a->exiting)
		return R_EXIT;
	switch (n->kind) {
	case S_BLOCK:
		for (struct anode *s = n->a; s != NULL && r == R_OK; s = s->next)
			r = awk_exec(a, s);
		return r;
	case S_EXPR:
		v = awk_eval(a, n->a);
		aval_free(&v);
		return a->exiting ? R_EXIT : R_OK;
	case S_PRINT:
	case S_PRINTF:
		return exec_print(a, n);
	case S_IF:
		return awk_exec(a, cond_true(a, n->a) ? n->b : n->c);
	case S_WHILE:
		while (r == R_OK && cond_true(a, n->a))
			r = loop_body(a, n->b);
		return r == R_BREAK ? R_OK : r;
	case S_DO:
		do
			r = loop_body(a, n->b);
		while (r == R_OK && cond_true(a, n->a));
		return r == R_BREAK ? R_OK : r;
	case S_FOR:
		if ((r = awk_exec(a, n->a)) != R_OK)
			return r;
		while (r == R_OK && cond_true(a, n->b)) {
			r = loop_body(a, n->d);
			if (r == R_OK)
				r = awk_exec(a, n->c);
		}
		return r == R_BREAK ? R_OK : r;
	case S_FORIN:
		return exec_forin(a, n);
	case S_NEXT: return R_NEXT;
	case S_NEXTFILE: return R_NEXTFILE;
	case S_BREAK: return R_BREAK;
	case S_CONTINUE: return R_CONTINUE;
	case S_EXIT:
		if (n->a != NULL) {
			v = awk_eval(a, n->a);
			a->exit_code = (int)aval_tonum(&v);
			aval_free(&v);
		}
		a->exiting = true;
		return R_EXIT;
	case S_RETURN:
		v = n->a ? awk_eval(a, n->a) : aval_num(0);
		if (n->a == NULL)
			v.flags = 0;
		aval_free(&a->retval);
		a->retval = v;
		return R_RETURN;
	case S_DELETE: {
		struct amap *m = get_array(a, n->a);

		if (m == NULL)
			return R_OK;
		if (n->b == NULL)
			amap_clear(m);
		else {
			char *key = subscript(a, n->b);

			amap_del(m, key);
			free(key);
		}
		return R_OK;
	}
	}
	return R_OK;
}
