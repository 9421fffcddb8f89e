/* awk_parse.h - token helpers shared by awk_parse.c and awk_expr.c. */
#ifndef TB_AWK_PARSE_H
#define TB_AWK_PARSE_H

#include "awk.h"

/* Prints a syntax error at the current token (once) and stops parsing. */
void awk_syntax_error(struct awk *a);
/* Expressions (awk_expr.c); nogt: '>' is a print redirection. */
struct anode *awk_expr(struct awk *a, bool nogt);
struct anode *awk_expr_list(struct awk *a, bool nogt, int *np);
struct anode *awk_concat(struct awk *a, bool nogt);
struct anode *awk_var_node(struct awk *a, const char *name);
int awk_func_index(struct awk *a, const char *name);

static inline int
peek(struct awk *a)
{
	return a->toks[a->pos].type;
}

static inline int
peek2(struct awk *a)
{
	return a->pos + 1 < a->ntoks ? a->toks[a->pos + 1].type : T_EOF;
}

static inline void
adv(struct awk *a)
{
	if (peek(a) != T_EOF)
		a->pos++;
}

static inline bool
accept(struct awk *a, int t)
{
	if (peek(a) != t)
		return false;
	adv(a);
	return true;
}

static inline bool
expect(struct awk *a, int t)
{
	if (accept(a, t))
		return true;
	awk_syntax_error(a);
	return false;
}

static inline void
opt_nl(struct awk *a)
{
	while (peek(a) == T_NEWLINE)
		adv(a);
}

static inline struct anode *
mk(struct awk *a, int kind)
{
	struct anode *n = awk_alloc(a, sizeof(*n));

	n->kind = kind;
	n->line = a->toks[a->pos].line;
	return n;
}

static inline struct anode *
mk2(struct awk *a, int kind, int op, struct anode *l, struct anode *r)
{
	struct anode *n = mk(a, kind);

	n->op = op;
	n->a = l;
	n->b = r;
	return n;
}

#endif /* TB_AWK_PARSE_H */
