/* sh_arith.c - $((...)) arithmetic on long long, C operator precedence. */
#include "sh.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct ar {
	struct sh	*sh;
	const char	*s;
	size_t		 pos;
	bool		 err;
	int		 skip;	/* > 0: evaluating a branch not taken */
	int		 depth;
};

static long long ar_assign(struct ar *a);

static void
ar_error(struct ar *a, const char *msg)
{
	if (!a->err)
		tb_err(a->sh->io, "sh", "arithmetic: %s in '%s'", msg, a->s);
	a->err = true;
}

static void
ws(struct ar *a)
{
	while (isspace((unsigned char)a->s[a->pos]))
		a->pos++;
}

/* Consumes op if it is next (and not the start of a longer operator). */
static bool
eat(struct ar *a, const char *op)
{
	size_t n = strlen(op);

	ws(a);
	if (strncmp(a->s + a->pos, op, n) != 0)
		return false;
	/* Don't take "<" from "<<" or "<=", "&" from "&&", etc. */
	if (n == 1 && strchr("<>&|=!*", op[0]) != NULL &&
	    (a->s[a->pos + 1] == op[0] || a->s[a->pos + 1] == '=') &&
	    !(op[0] == '!' && a->s[a->pos + 1] == '!'))
		return false;
	if (n == 2 && (op[1] == '<' || op[1] == '>') && a->s[a->pos + 2] == '=')
		return false;
	a->pos += n;
	return true;
}

static long long
var_value(struct ar *a, const char *name)
{
	char buf[32];
	const char *v = sh_getvar(a->sh, name, buf);
	char *end;
	long long x;

	if (v == NULL || *v == '\0')
		return 0;
	x = strtoll(v, &end, 0);
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0') {
		/* Like bash: a variable may hold an expression. */
		struct ar sub = { .sh = a->sh, .s = v, .depth = a->depth + 1 };

		if (a->depth > 16) {
			ar_error(a, "expression recursion too deep");
			return 0;
		}
		x = ar_assign(&sub);
		ws(&sub);
		if (sub.err || sub.s[sub.pos] != '\0')
			ar_error(a, "bad variable value");
	}
	return x;
}

static void
set_var(struct ar *a, const char *name, long long v)
{
	char num[32];

	if (a->skip)
		return;
	snprintf(num, sizeof(num), "%lld", v);
	sh_setvar(a->sh, name, num);
}

static bool
read_name(struct ar *a, char *name, size_t cap)
{
	size_t n = 0;

	ws(a);
	if (!isalpha((unsigned char)a->s[a->pos]) && a->s[a->pos] != '_')
		return false;
	while ((isalnum((unsigned char)a->s[a->pos]) || a->s[a->pos] == '_')) {
		if (n + 1 < cap)
			name[n++] = a->s[a->pos];
		a->pos++;
	}
	name[n] = '\0';
	return true;
}

static long long
ar_primary(struct ar *a)
{
	char name[128];
	long long v;

	ws(a);
	if (eat(a, "(")) {
		v = ar_assign(a);
		if (!eat(a, ")"))
			ar_error(a, "missing ')'");
		return v;
	}
	if (isdigit((unsigned char)a->s[a->pos])) {
		char *end;

		v = strtoll(a->s + a->pos, &end, 0);
		if (isalnum((unsigned char)*end) || *end == '_')
			ar_error(a, "bad number");
		a->pos = (size_t)(end - a->s);
		return v;
	}
	if (read_name(a, name, sizeof(name))) {
		v = var_value(a, name);
		if (eat(a, "++"))
			set_var(a, name, v + 1);
		else if (eat(a, "--"))
			set_var(a, name, v - 1);
		return v;
	}
	ar_error(a, a->s[a->pos] ? "syntax error" : "missing operand");
	return 0;
}

static long long
ar_unary(struct ar *a)
{
	char name[128];
	size_t save;

	if (a->err)
		return 0;
	if (eat(a, "++") || eat(a, "--")) {
		bool inc = a->s[a->pos - 1] == '+';
		long long v;

		save = a->pos;
		if (!read_name(a, name, sizeof(name))) {
			a->pos = save;
			ar_error(a, "bad increment");
			return 0;
		}
		v = var_value(a, name) + (inc ? 1 : -1);
		set_var(a, name, v);
		return v;
	}
	if (eat(a, "-"))
		return -ar_unary(a);
	if (eat(a, "+"))
		return ar_unary(a);
	if (eat(a, "!"))
		return !ar_unary(a);
	if (eat(a, "~"))
		return ~ar_unary(a);
	return ar_primary(a);
}

/*
 * x ** y: right-associative, binding tighter than * and looser than the
 * unary operators (bash: -2**2 is 4); a negative exponent is an error.
 */
static long long
ar_power(struct ar *a)
{
	long long x = ar_unary(a), y;
	unsigned long long r = 1, b;

	if (a->err || !eat(a, "**"))
		return x;
	y = ar_power(a);
	if (a->err)
		return 0;
	if (y < 0) {
		if (!a->skip)
			ar_error(a, "exponent less than 0");
		return 0;
	}
	for (b = (unsigned long long)x; y > 0; y >>= 1) {
		if (y & 1)
			r *= b;
		b *= b;
	}
	return (long long)r;
}

/* Binary levels, lowest precedence last. */
static const char *const levels[][5] = {
	{ "*", "/", "%", NULL },
	{ "+", "-", NULL },
	{ "<<", ">>", NULL },
	{ "<=", ">=", "<", ">", NULL },
	{ "==", "!=", NULL },
	{ "&", NULL },
	{ "^", NULL },
	{ "|", NULL },
};

static long long
apply(struct ar *a, const char *op, long long x, long long y)
{
	switch (op[0]) {
	case '*': return (long long)((unsigned long long)x *
	    (unsigned long long)y);
	case '/':
	case '%':
		if (y == 0) {
			if (!a->skip)
				ar_error(a, "division by zero");
			return 0;
		}
		if (x == (-9223372036854775807LL - 1) && y == -1)
			return op[0] == '/' ? x : 0;
		return op[0] == '/' ? x / y : x % y;
	case '+': return (long long)((unsigned long long)x +
	    (unsigned long long)y);
	case '-': return (long long)((unsigned long long)x -
	    (unsigned long long)y);
	case '<':
		if (op[1] == '<')
			return (long long)((unsigned long long)x << (y & 63));
		return op[1] == '=' ? x <= y : x < y;
	case '>':
		if (op[1] == '>')
			return x >> (y & 63);
		return op[1] == '=' ? x >= y : x > y;
	case '=': return x == y;
	case '!': return x != y;
	case '&': return x & y;
	case '^': return x ^ y;
	case '|': return x | y;
	}
	return 0;
}

static long long
ar_binary(struct ar *a, int level)
{
	long long x = level == 0 ? ar_power(a) : ar_binary(a, level - 1);

	for (;;) {
		const char *op = NULL;

		for (int k = 0; levels[level][k] != NULL; k++)
			if (eat(a, levels[level][k])) {
				op = levels[level][k];
				break;
			}
		if (op == NULL || a->err)
			return x;
		long long y = level == 0 ? ar_power(a) :
		    ar_binary(a, level - 1);

		x = apply(a, op, x, y);
	}
}

static long long
ar_logic(struct ar *a, bool is_or)
{
	long long x = is_or ? ar_logic(a, false) : ar_binary(a, 7);

	while (!a->err && eat(a, is_or ? "||" : "&&")) {
		bool decided = is_or ? x != 0 : x == 0;
		long long y;

		if (decided)
			a->skip++;
		y = is_or ? ar_logic(a, false) : ar_binary(a, 7);
		if (decided)
			a->skip--;
		else
			x = y != 0;
		if (decided)
			x = is_or ? 1 : 0;
	}
	return x;
}

static long long
ar_ternary(struct ar *a)
{
	long long c = ar_logic(a, true), x, y;

	if (!eat(a, "?"))
		return c;
	if (!c)
		a->skip++;
	x = ar_assign(a);
	if (!c)
		a->skip--;
	if (!eat(a, ":")) {
		ar_error(a, "expected ':'");
		return 0;
	}
	if (c)
		a->skip++;
	y = ar_ternary(a);
	if (c)
		a->skip--;
	return c ? x : y;
}

static long long
ar_assign(struct ar *a)
{
	static const char *const ops[] = { "=", "+=", "-=", "*=", "/=", "%=",
		"<<=", ">>=", "&=", "^=", "|=" };
	size_t save;
	char name[128];

	ws(a);
	save = a->pos;
	if (read_name(a, name, sizeof(name))) {
		ws(a);
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			size_t n = strlen(ops[k]);
			long long v, old;

			if (strncmp(a->s + a->pos, ops[k], n) != 0 ||
			    (n == 1 && a->s[a->pos + 1] == '='))
				continue;
			a->pos += n;
			v = ar_assign(a);
			if (n > 1) {
				char op[3] = { ops[k][0], 0, 0 };

				if (n == 3)
					op[1] = ops[k][1];
				old = var_value(a, name);
				v = apply(a, op, old, v);
			}
			set_var(a, name, v);
			return v;
		}
		a->pos = save;
	}
	return ar_ternary(a);
}

int
sh_arith(struct sh *sh, const char *expr, long long *vp)
{
	struct ar a = { .sh = sh, .s = expr };
	long long v;

	ws(&a);
	if (a.s[a.pos] == '\0') {
		*vp = 0;
		return 0;
	}
	v = ar_assign(&a);
	ws(&a);
	if (!a.err && a.s[a.pos] != '\0')
		ar_error(&a, "syntax error");
	if (a.err)
		return -1;
	*vp = v;
	return 0;
}
