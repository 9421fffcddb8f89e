/*
 * awk.h - the awk applet: a tree-walking interpreter for a useful subset of
 * POSIX awk (patterns, ranges, fields, associative arrays, user functions,
 * printf, getline, output redirection, string and math builtins).
 * Private to the awk_*.c files.
 */
#ifndef TB_AWK_H
#define TB_AWK_H

#include "../toolbox.h"

/* Tokens: single characters stand for themselves. */
enum {
	T_EOF = 256, T_NEWLINE, T_NUMBER, T_STRING, T_ERE, T_NAME, T_FUNCNAME,
	T_BUILTIN, T_BEGIN, T_END, T_FUNCTION, T_IF, T_ELSE, T_WHILE, T_FOR,
	T_DO, T_BREAK, T_CONTINUE, T_NEXT, T_NEXTFILE, T_EXIT, T_RETURN,
	T_DELETE, T_GETLINE, T_PRINT, T_PRINTF, T_IN, T_ADD_ASSIGN,
	T_SUB_ASSIGN, T_MUL_ASSIGN, T_DIV_ASSIGN, T_MOD_ASSIGN, T_POW_ASSIGN,
	T_INCR, T_DECR, T_POW, T_AND, T_OR, T_EQ, T_NE, T_LE, T_GE, T_NOMATCH,
	T_APPEND
};

/* Builtin functions (T_BUILTIN tokens carry one of these). */
enum {
	B_LENGTH, B_SUBSTR, B_INDEX, B_SPLIT, B_SUB, B_GSUB, B_MATCH,
	B_SPRINTF, B_SIN, B_COS, B_ATAN2, B_EXP, B_LOG, B_SQRT, B_INT, B_RAND,
	B_SRAND, B_TOLOWER, B_TOUPPER, B_SYSTEM, B_CLOSE, B_FFLUSH
};

struct atok {
	int	 type;
	int	 sub;		/* builtin id */
	char	*s;		/* string, regex or name (arena) */
	double	 num;
	int	 line;
};

/* Values. */
#define AV_NUM		0x1	/* num is valid */
#define AV_STR		0x2	/* str is valid (owned) */
#define AV_STRNUM	0x4	/* input string that looks numeric */

struct aval {
	unsigned	 flags;	/* 0: uninitialised */
	double		 num;
	char		*str;
};

struct amap_ent {
	char		*key;
	struct aval	 v;
	struct amap_ent	*next;
};

struct amap {
	struct amap_ent	**b;
	size_t		 nb;
	size_t		 n;
};

/* A variable: a scalar or an array (arr != NULL). */
struct acell {
	struct aval	 v;
	struct amap	*arr;
	bool		 arr_ref;	/* arr borrowed (function argument) */
	struct acell	*link;		/* caller's untyped variable */
};

/* Node kinds. */
enum {
	/* expressions */
	E_NUM, E_STR, E_REGEX, E_VAR, E_LOCAL, E_FIELD, E_INDEX, E_ASSIGN,
	E_COND, E_AND, E_OR, E_NOT, E_BINOP, E_CMP, E_MATCH, E_CONCAT, E_NEG,
	E_PLUS, E_PREINC, E_PREDEC, E_POSTINC, E_POSTDEC, E_IN, E_BUILTIN,
	E_CALL, E_GETLINE, E_GROUP,
	/* statements */
	S_PRINT, S_PRINTF, S_EXPR, S_IF, S_WHILE, S_DO, S_FOR, S_FORIN,
	S_BLOCK, S_NEXT, S_NEXTFILE, S_EXIT, S_RETURN, S_BREAK, S_CONTINUE,
	S_DELETE, S_GETLINE
};

struct anode {
	int		 kind;
	int		 op;	/* operator token, builtin id, getline form */
	struct anode	*a, *b, *c, *d;
	struct anode	*next;	/* lists: arguments, statements */
	double		 num;
	char		*str;
	regex_t		*re;
	int		 idx;	/* variable, local or function index */
	int		 nargs;
	int		 line;
};

/* A pattern-action item. */
struct aitem {
	struct anode	*pat, *pat2;	/* pat2: range end */
	struct anode	*action;	/* NULL: print $0 */
	bool		 in_range;
	struct aitem	*next;
};

struct afunc {
	char		*name;
	char		**params;
	int		 nparams;
	struct anode	*body;
	bool		 defined;
};

/* An open file or pipe (output or getline input). */
struct astream {
	char		*name;
	int		 kind;	/* '>', 'a' (>>), '|' (output pipe), '<', 'c' */
	FILE		*f;
	struct tb_mem	 mem;	/* pipe data */
	struct astream	*next;
};

/* Well-known globals: registered first, in this order. */
enum {
	V_NR, V_NF, V_FNR, V_FS, V_OFS, V_ORS, V_RS, V_FILENAME, V_SUBSEP,
	V_RSTART, V_RLENGTH, V_CONVFMT, V_OFMT, V_ENVIRON, V_ARGC, V_ARGV,
	V_NSPECIAL
};

struct aframe {
	struct acell	*locals;
	int		 n;
};

struct arena_chunk;

struct awk {
	struct tb_io		*io;
	/* program */
	struct atok		*toks;
	int			 ntoks, pos;
	struct aitem		*begin, *end, *items;
	struct afunc		*funcs;
	int			 nfuncs;
	struct afunc		*cur_func;	/* while parsing its body */
	char			**names;	/* globals */
	struct acell		*globals;
	int			 nglobals;
	struct arena_chunk	*arena;
	regex_t			**regs;		/* compiled literals */
	int			 nregs;
	bool			 error;
	int			 pdepth;	/* parser recursion */
	/* records */
	struct aval		*fields;	/* [0] is $0 */
	int			 nf, fcap;
	char			**argv;		/* operands */
	int			 argc, argi;
	FILE			*in;
	bool			 in_open;
	struct tb_buf		 rec;
	/* run state */
	struct aframe		*frame;
	int			 depth;
	struct astream		*streams;
	struct { char *src; regex_t re; } recache[16];
	int			 recache_next;
	struct aval		 retval;
	int			 exit_code;
	bool			 exiting;
	bool			 fatal;		/* runtime error: exit 2 */
	bool			 used_file;	/* an input operand was read */
	unsigned		 seed;
	double			 prev_seed;
};

/* awk_lex.c */
int awk_lex(struct awk *a, const char *src);
void *awk_alloc(struct awk *a, size_t n);
char *awk_strdup(struct awk *a, const char *s, size_t n);
void awk_arena_free(struct awk *a);

/* awk_parse.c */
int awk_parse(struct awk *a);
int awk_global(struct awk *a, const char *name);

/* awk_val.c */
void aval_free(struct aval *v);
struct aval aval_num(double d);
struct aval aval_str(const char *s);		/* copies s */
struct aval aval_take(char *s);			/* takes ownership of s */
struct aval aval_strnum(const char *s);		/* input data */
struct aval aval_copy(const struct aval *v);
double aval_tonum(struct aval *v);
/* The string form; borrowed from v (cached in it). */
const char *aval_tostr(struct awk *a, struct aval *v);
const char *aval_tostr_out(struct awk *a, struct aval *v);	/* OFMT */
bool aval_true(struct aval *v);
int aval_cmp(struct awk *a, struct aval *x, struct aval *y);
bool awk_looks_numeric(const char *s);
struct amap *amap_new(void);
void amap_free(struct amap *m);
struct aval *amap_get(struct amap *m, const char *key, bool create);
void amap_del(struct amap *m, const char *key);
void amap_clear(struct amap *m);
/* The keys, malloc'd array of borrowed strings (valid until changed). */
char **amap_keys(struct amap *m, size_t *np);
void awk_set_record(struct awk *a, const char *s, size_t n);
void awk_set_field(struct awk *a, int i, struct aval v);
struct aval *awk_field(struct awk *a, int i);
void awk_set_nf(struct awk *a, int nf);
void awk_rebuild_record(struct awk *a);
/* Splits s by fs into arr (1-based); returns the count. */
int awk_split(struct awk *a, const char *s, const char *fs, struct amap *arr);
regex_t *awk_dynre(struct awk *a, const char *src);

/* awk_run.c */
struct aval awk_eval(struct awk *a, struct anode *n);
int awk_exec(struct awk *a, struct anode *n);	/* an R_* code */
struct acell *awk_cell(struct awk *a, struct anode *n);
void awk_assign_node(struct awk *a, struct anode *n, struct aval v);
void awk_runtime_error(struct awk *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
enum { R_OK, R_NEXT, R_NEXTFILE, R_EXIT, R_RETURN, R_BREAK, R_CONTINUE };

/* awk_lib.c */
struct aval awk_builtin(struct awk *a, struct anode *n);
char *awk_format(struct awk *a, const char *fmt, struct anode *args);
FILE *awk_output(struct awk *a, int kind, const char *name);
int awk_close(struct awk *a, const char *name);
void awk_close_all(struct awk *a);
struct aval awk_getline(struct awk *a, struct anode *n);
/* Reads the next main-input record into rec; false at end. */
bool awk_next_record(struct awk *a, FILE *f, struct tb_buf *rec);
bool awk_main_record(struct awk *a);

#endif /* TB_AWK_H */
