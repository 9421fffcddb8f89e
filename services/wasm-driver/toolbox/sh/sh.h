/*
 * sh.h - the toolbox shell: a small POSIX-like sh that runs applets
 * in-process. Private to the sh_*.c files.
 *
 * Pipelines run their stages one after another, each stage's output held in
 * memory (capped at TB_MEM_LIMIT) and fed to the next stage as its input.
 * Variables are environment variables (all exported).
 */
#ifndef TB_SH_H
#define TB_SH_H

#include "../toolbox.h"

#define SH_MAX_DEPTH	48	/* nested $(...), eval, sh -c, . */
#define SH_MAX_NEST	200	/* nested compound commands in a script */

/* Tokens. */
enum sh_tok {
	T_EOF, T_WORD, T_NEWLINE, T_SEMI, T_DSEMI, T_AMP, T_PIPE, T_AND, T_OR,
	T_LPAREN, T_RPAREN, T_REDIR
};

/* Redirection kinds. */
enum sh_rkind {
	R_IN,		/* <  */
	R_OUT,		/* >, >| */
	R_APPEND,	/* >> */
	R_DUP_OUT,	/* >&N, >&- */
	R_DUP_IN,	/* <&N */
	R_BOTH,		/* &> */
	R_BOTH_APPEND,	/* &>> */
	R_HEREDOC,	/* << and <<- */
	R_HERESTR,	/* <<< */
	R_RDWR		/* <> */
};

struct sh_redir {
	enum sh_rkind	 kind;
	int		 fd;		/* the redirected descriptor */
	char		*word;		/* target (raw), or heredoc delimiter */
	char		*body;		/* heredoc text */
	bool		 quoted;	/* heredoc delimiter was quoted */
	bool		 strip_tabs;	/* <<- */
	struct sh_redir	*next;
};

enum sh_kind {
	N_CMD, N_PIPE, N_AND, N_OR, N_SEQ, N_NOT, N_SUBSHELL, N_GROUP, N_IF,
	N_WHILE, N_UNTIL, N_FOR, N_CASE, N_FUNC
};

struct sh_case_item {
	char			**pats;	/* raw patterns */
	int			 npats;
	struct sh_node		*body;
	struct sh_case_item	*next;
};

struct sh_node {
	enum sh_kind		 kind;
	struct sh_node		*a, *b, *c;
	char			**words;	/* raw words (CMD, FOR list) */
	int			 nwords;
	char			*name;		/* FOR variable, CASE word, FUNC */
	bool			 has_in;	/* FOR ... in */
	struct sh_redir		*redirs;
	struct sh_case_item	*items;
	int			 refs;		/* FUNC bodies are shared */
};

struct sh_func {
	char		*name;
	struct sh_node	*body;
	struct sh_func	*next;
};

/* A variable shadowed by `local`, restored when its function returns. */
struct sh_local {
	char		*name;
	char		*old;		/* NULL: it was unset */
	int		 frame;		/* sh->funcs of the declaring call */
	struct sh_local	*next;
};

/* Shell state for one `sh` applet run. */
struct sh {
	struct tb_io	*io;		/* the shell's own streams */
	int		 status;	/* $? */
	char		*arg0;
	char		**params;	/* $1..; owned */
	int		 nparams;
	bool		 exiting;
	int		 breaking;	/* break N pending */
	int		 continuing;	/* continue N pending */
	bool		 returning;
	int		 loops;		/* enclosing loop count */
	int		 funcs;		/* enclosing function calls */
	int		 depth;		/* nesting of parse+run */
	int		 cond;		/* inside a condition (no set -e) */
	unsigned	 nsubst;	/* $(...) run so far */
	bool		 errexit, xtrace, nounset, pipefail, noglob;
	struct sh_func	*functions;
	struct sh_local	*locals;	/* innermost first */
};

/* sh_lex.c: the tokenizer, driven by the parser. */
#define SH_MAX_PENDING	16

struct sh_lex {
	struct sh	*sh;
	const char	*src;
	size_t		 pos;
	size_t		 len;
	enum sh_tok	 tok;
	char		*text;		/* T_WORD: raw word (owned) */
	enum sh_rkind	 rkind;		/* T_REDIR */
	int		 rfd;		/* T_REDIR: fd, -1 for the default */
	bool		 rstrip;	/* T_REDIR: <<- */
	bool		 have;		/* a token is loaded */
	bool		 error;		/* syntax error already printed */
	struct sh_redir	*pending[SH_MAX_PENDING];	/* heredocs */
	int		 npending;
	int		 depth;		/* parser nesting */
};

/* Loads the next token if none is loaded; returns its type. */
enum sh_tok sh_lex_peek(struct sh_lex *lx);
/* Drops the loaded token (its text too unless taken). */
void sh_lex_next(struct sh_lex *lx);
/* Takes ownership of the loaded word's text and drops the token. */
char *sh_lex_take(struct sh_lex *lx);
/* Queues a heredoc to be read after the next newline; 0 or -1. */
int sh_lex_heredoc(struct sh_lex *lx, struct sh_redir *r);
/* Prints "sh: syntax error: <msg>" once and marks the error. */
void sh_lex_error(struct sh_lex *lx, const char *msg, const char *what);
/* Skips over a $..., `...`, '...' or "..." construct starting at s[i];
 * returns the index after it, or (size_t)-1 when unterminated. */
size_t sh_skip_construct(const char *s, size_t i, size_t len);

/* sh_parse.c */
/*
 * Parses a whole script. Returns 0 and the tree in *out (NULL for an empty
 * script), or -1 after printing a syntax error on io->err.
 */
int sh_parse(struct sh *sh, const char *src, struct sh_node **out);
void sh_node_free(struct sh_node *n);
/* True when s is a valid variable name of length n. */
bool sh_is_name(const char *s, size_t n);

/* sh_expand.c */
/* Expands one raw word into fields (split, globbed). */
int sh_expand_fields(struct sh *sh, const char *raw, char ***fieldsp,
    int *nfieldsp);
/* Expands one raw word into one string (no split, no glob). */
char *sh_expand_str(struct sh *sh, const char *raw);
/* Expands a heredoc body ($, `, \ only). */
char *sh_expand_heredoc(struct sh *sh, const char *body);
/* Expands a case pattern (quoted parts escaped for fnmatch). */
char *sh_expand_pattern(struct sh *sh, const char *raw);
void sh_free_fields(char **f, int n);

/* sh_arith.c: evaluates $((expr)) text (already expanded); 0 or -1. */
int sh_arith(struct sh *sh, const char *expr, long long *vp);

/* sh_redir.c */
#define SH_REDIR_MAX	16

/* What a set of redirections opened, to be closed afterwards. */
struct sh_rstate {
	FILE		*files[SH_REDIR_MAX];
	int		 nfiles;
	struct tb_mem	*mems[SH_REDIR_MAX];
	int		 nmems;
};

/* Applies redirections to *io (streams recorded in rs); 0 or -1 with a
 * message printed. Call sh_rstate_close() in both cases. */
int sh_redirect(struct sh *sh, struct sh_redir *r, struct tb_io *io,
    struct sh_rstate *rs);
void sh_rstate_close(struct sh_rstate *rs);

/* sh_exec.c */
/* Runs a tree with io; returns its status (also in sh->status). */
int sh_run(struct sh *sh, struct sh_node *n, struct tb_io *io);
/* Parses and runs src; returns the status (2 on a syntax error). */
int sh_eval(struct sh *sh, const char *src, struct tb_io *io);
/* Runs src with stdout captured into a malloc'd string (trailing newlines
 * removed), for $(...). */
char *sh_capture(struct sh *sh, const char *src);

/* sh_builtin.c: builtins (argv[0] is the name); each returns a status. */
int sh_bi_cd(struct sh *, struct tb_io *, int, char **);
int sh_bi_exit(struct sh *, struct tb_io *, int, char **);
int sh_bi_export(struct sh *, struct tb_io *, int, char **);
int sh_bi_unset(struct sh *, struct tb_io *, int, char **);
int sh_bi_set(struct sh *, struct tb_io *, int, char **);
int sh_bi_shift(struct sh *, struct tb_io *, int, char **);
int sh_bi_read(struct sh *, struct tb_io *, int, char **);
int sh_bi_eval(struct sh *, struct tb_io *, int, char **);
int sh_bi_source(struct sh *, struct tb_io *, int, char **);
int sh_bi_return(struct sh *, struct tb_io *, int, char **);
int sh_bi_break(struct sh *, struct tb_io *, int, char **);
int sh_bi_local(struct sh *, struct tb_io *, int, char **);
int sh_bi_let(struct sh *, struct tb_io *, int, char **);
/* set -X / set -o NAME; 0 or -1 for an unknown option. */
int sh_set_option(struct sh *sh, char c, bool on);
int sh_set_long(struct sh *sh, const char *name, bool on);
/* Reads a whole file ("-": io->in); NULL (message printed) on error. */
char *sh_read_file(struct sh *sh, struct tb_io *io, const char *path);

/* sh_main.c */
/*
 * Runs builtin argv[0] if there is one: returns its status, or -1 when
 * argv[0] is no builtin.
 */
int sh_builtin(struct sh *sh, struct tb_io *io, int argc, char **argv);
/* Sets a variable; 0 or -1 (bad name). */
int sh_setvar(struct sh *sh, const char *name, const char *value);
/* Reads a variable (special parameters included); NULL when unset. The
 * result is borrowed until the next call. */
const char *sh_getvar(struct sh *sh, const char *name, char buf[32]);
/* Restores the variables that `local` shadowed in frames >= frame. */
void sh_locals_pop(struct sh *sh, int frame);
/* Runs a function; -1 when name is no function. */
int sh_call_function(struct sh *sh, struct tb_io *io, int argc, char **argv);

#endif /* TB_SH_H */
