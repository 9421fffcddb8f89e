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
/* Writes dir/name whole (a temporary file renamed); 0 or -errno. */
int hxp_write_file(const char *dir, const char *name, const void *p,
    size_t len);
/* At most cap-1 bytes of dir/name, NUL-terminated; the length or -errno. */
ssize_t hxp_read_small(const char *dir, const char *name, char *buf,
    size_t cap);
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
