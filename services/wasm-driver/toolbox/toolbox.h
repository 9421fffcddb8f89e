/*
 * toolbox.h - the multi-call toolbox run inside WASI modules (and natively
 * for tests): applet table, I/O and small shared helpers.
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

/* util.c */
/* "<applet>: <formatted message>\n" on io->err. */
void tb_err(struct tb_io *io, const char *applet, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "<applet>: <what>: <strerror(errno)>\n" on io->err. */
void tb_errno(struct tb_io *io, const char *applet, const char *what);
/* Parses a whole decimal integer; 0 or -1. */
int tb_parse_ll(const char *s, long long *vp);
/* The last component of path, borrowed (trailing slashes ignored). */
const char *tb_basename(const char *path);
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
/* tbx/tbx_proc.c: undoes what a toybox run did to the environment. */
void tbx_env_restore(void);

/* Applets. */
#define TB_APPLET(x) int applet_##x(struct tb_io *, int, char **)
TB_APPLET(awk);
TB_APPLET(toybox);	/* tbx/tbx.c: the toybox command named argv[0] */
TB_APPLET(sh);

#endif /* TB_TOOLBOX_H */
