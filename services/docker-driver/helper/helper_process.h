/*
 * helper_process.h - the parts of background processes (issue 28) shared
 * by helper_process.c (the state, list, output, kill) and
 * helper_process_start.c (start and the supervisor).
 */
#ifndef MSC_HELPER_PROCESS_H
#define MSC_HELPER_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define HX_PROC_ROOT		"/tmp/kiln-processes"
#define HX_PROC_KEEP_ENDED	64      /* ended folders kept per computer */
#define HX_PROC_STDIN_MAX	(2 * 1024 * 1024)
#define HX_PROC_POLL_MS		50
#define HX_PROC_WAIT_MAX_MS	30000
#define HX_PROC_LOG_MIN		1024
#define HX_PROC_LOCK_MS		3000    /* the longest wait for a lock */
#define HX_PROC_PID_WAIT_MS	2000    /* kill's wait for a new one's pid */
#define HX_PROC_SCAN_MAX	(64 * 1024 * 1024) /* a pattern's window */
#define HX_EXIT_ERR		2

/* A JSON answer being built (exits on out of memory). */
struct out {
	char *p;
	size_t len, cap;
};

/* One line on stderr; returns HX_EXIT_ERR. */
int hxp_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A whole decimal number within [lo, hi]. */
bool hxp_parse_num(const char *s, long long lo, long long hi,
    long long *out);
/* A process id as start makes them: "p" and a decimal number. */
bool hxp_valid_id(const char *id);
/*
 * Whether path is a folder only this user can change: a directory, not a
 * link, owned by the effective user, not writable by group or others. The
 * sandboxed code may run as several users; one of them must not make
 * another's supervisor write where it points, or read what it planted.
 */
bool hxp_private_dir(const char *path);
/* 0 if HX_PROC_ROOT is private or absent; else prints why it is not
 * used and returns HX_EXIT_ERR. */
int hxp_root_refused(void);
/*
 * Opens dir/name (O_RDONLY, O_WRONLY or O_RDWR, with O_CLOEXEC) if it is a
 * regular file: a link, fifo or device put in its place neither redirects
 * nor blocks the call. The descriptor or -errno (-EINVAL: not a file).
 */
int hxp_open_file(const char *dir, const char *name, int flags);
/* Writes dir/name whole (a temporary file renamed); 0 or -errno. */
int hxp_write_file(const char *dir, const char *name, const void *p,
    size_t len);
/* At most cap-1 bytes of dir/name, NUL-terminated; the length or -errno. */
ssize_t hxp_read_small(const char *dir, const char *name, char *buf,
    size_t cap);
/* The number dir/name begins with, within [lo, hi]; false if none. */
bool hxp_read_num(const char *dir, const char *name, long long lo,
    long long hi, long long *out);
/* flock(fd, op), waiting at most ms; 0 or -errno (-EWOULDBLOCK: held). */
int hxp_lock(int fd, int op, int ms);
/* Whether the supervisor of `dir` still holds its `alive` lock. */
bool hxp_alive(const char *dir);

void hxp_out_raw(struct out *o, const char *s, size_t n);
void hxp_out_cstr(struct out *o, const char *s);
void hxp_out_fmt(struct out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The escaped size of byte c in a JSON string (bytes >= 0x80 as they are:
 * the session service repairs invalid UTF-8). */
size_t hxp_esc_len(unsigned char c);
/* s[0..n) as a JSON string (bytes >= 0x80 as they are). */
void hxp_out_str(struct out *o, const char *s, size_t n);
/* Prints the answer and a newline on stdout; 0 or HX_EXIT_ERR. */
int hxp_out_print(struct out *o);

/* `--process start ...` and `--process supervise ...`. */
int hxp_start(int argc, char **argv);
int hxp_supervise(int argc, char **argv);

#endif /* MSC_HELPER_PROCESS_H */
