/*
 * toolbox.h - the multi-call toolbox run inside WASI modules (and natively
 * for tests): applet table, I/O, option parsing and small shared helpers.
 *
 * Every applet is `int applet_X(struct tb_io *io, int argc, char **argv)`:
 * it reads io->in, writes io->out and io->err, returns its exit status and
 * never calls exit(). The shell runs many applets in one process, so an
 * applet frees what it allocates and keeps no state between calls.
 */
#ifndef TB_TOOLBOX_H
#define TB_TOOLBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Streams of one applet run; all borrowed from the caller. */
struct tb_io {
	FILE	*in;
	FILE	*out;
	FILE	*err;
};

typedef int (*tb_applet_fn)(struct tb_io *, int, char **);

struct tb_applet {
	const char	*name;
	tb_applet_fn	 fn;
};

/* applets.c */
/* The applet called name, or NULL. */
const struct tb_applet *tb_applet_find(const char *name);
/* Prints the applet names, one per line. */
void tb_applet_print_list(FILE *out);
/*
 * Runs the applet named by argv[0] (a "/bin/x"-style path is reduced to its
 * basename). Returns its status, or -1 when there is no such applet (nothing
 * is printed in that case).
 */
int tb_applet_run(struct tb_io *io, int argc, char **argv);

/* opt.c: getopt-like, but re-entrant and identical on glibc and musl. */
#define TB_OPT_END	(-1)
#define TB_OPT_LONG	1	/* "--name[=value]": arg points at "name..." */
#define TB_OPT_ERR	'?'	/* message already printed */

struct tb_opt {
	const char	*applet;	/* for messages */
	struct tb_io	*io;
	int		 argc;
	char		**argv;
	int		 ind;	/* first operand once TB_OPT_END is returned */
	int		 pos;	/* position inside a cluster such as -abc */
	int		 nonopt;	/* operands seen so far (moved aside) */
	char		*arg;	/* argument of the last option */
	bool		 posix;	/* stop at the first operand */
	bool		 numeric;	/* "-5" is returned as '#', arg = "5" */
};

/*
 * Starts parsing argv[1..argc-1]. spec is a getopt string ("ab:c");
 * a leading '+' stops at the first operand (default: options may follow
 * operands, as in GNU tools; argv is permuted so operands end up last).
 */
void tb_opt_init(struct tb_opt *o, struct tb_io *io, const char *applet,
    int argc, char **argv);
/* Next option character, TB_OPT_LONG, TB_OPT_ERR or TB_OPT_END. */
int tb_opt_next(struct tb_opt *o, const char *spec);
/* Prints "<applet>: unrecognized option '--<arg>'" and returns TB_OPT_ERR. */
int tb_opt_bad_long(struct tb_opt *o);

/* util.c */
/* "<applet>: <formatted message>\n" on io->err. */
void tb_err(struct tb_io *io, const char *applet, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "<applet>: <what>: <strerror(errno)>\n" on io->err. */
void tb_errno(struct tb_io *io, const char *applet, const char *what);
/*
 * Opens path for reading; "-" (or NULL) is io->in. On failure prints the
 * error and returns NULL. Close with tb_close_in().
 */
FILE *tb_open_in(struct tb_io *io, const char *applet, const char *path);
void tb_close_in(struct tb_io *io, FILE *f);
/* Parses a whole decimal integer; 0 or -1. */
int tb_parse_ll(const char *s, long long *vp);
/* "dir/name" without doubling the slash; malloc'd (NULL on ENOMEM). */
char *tb_path_join(const char *dir, const char *name);
/* The last component of path, borrowed (trailing slashes ignored). */
const char *tb_basename(const char *path);
/* True when s is a directory (following symlinks). */
bool tb_is_dir(const char *path);
/* malloc/realloc that never return NULL for n > 0 (abort on ENOMEM). */
void *tb_xmalloc(size_t n);
void *tb_xrealloc(void *p, size_t n);
char *tb_xstrdup(const char *s);

/* Growable byte buffer. */
struct tb_buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};
void tb_buf_add(struct tb_buf *b, const void *p, size_t n);
void tb_buf_addc(struct tb_buf *b, int c);
void tb_buf_adds(struct tb_buf *b, const char *s);
/* NUL-terminates (not counted in len) and returns data. */
char *tb_buf_str(struct tb_buf *b);
void tb_buf_free(struct tb_buf *b);

/* membuf.c: FILE streams over memory, for pipes and command substitution. */
#define TB_MEM_LIMIT	(64u << 20)	/* bytes one pipe stage may hold */

struct tb_mem {
	char	*data;
	size_t	 len;
	size_t	 cap;
	size_t	 pos;
	size_t	 limit;
	bool	 overflow;
};
/* Writes append to m (up to m->limit, then fail with ENOSPC). */
FILE *tb_mem_writer(struct tb_mem *m);
/* Reads m->data[m->pos..len); m stays owned by the caller. */
FILE *tb_mem_reader(struct tb_mem *m);
void tb_mem_free(struct tb_mem *m);
/* A stream that discards writes and reads as empty (for /dev/null, which
 * WASI sandboxes lack). */
FILE *tb_null_stream(const char *mode);

/* regex helpers (util.c) */
#include <regex.h>
/* regcomp with a printed error; 0 or -1. */
int tb_regcomp(struct tb_io *io, const char *applet, regex_t *re,
    const char *pat, int flags);

/*
 * bwk/bwk.c: runs prog, a program written to own its process (BWK awk,
 * toybox), as an applet: its stdin/stdout/stderr are io's, its exit()
 * ends the run, what it allocated or opened is freed or closed at the end,
 * and its variables are as before its first run (see bwk/bwk_shim.h).
 */
int bwk_run(struct tb_io *io, int argc, char **argv,
    int (*prog)(int, char **));
/* tbx/tbx_io.c: closes what a toybox run left open (bwk_run calls it). */
void tbx_io_close_all(void);

/* Applets. */
#define TB_APPLET(x) int applet_##x(struct tb_io *, int, char **)
TB_APPLET(awk);
TB_APPLET(toybox);	/* tbx/tbx.c: the toybox command named argv[0] */
TB_APPLET(diff);
TB_APPLET(env);
TB_APPLET(nproc);
TB_APPLET(sh);
TB_APPLET(time);
TB_APPLET(xargs);
TB_APPLET(yes);

#endif /* TB_TOOLBOX_H */
