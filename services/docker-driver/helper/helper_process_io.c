/*
 * helper_process_io.c - what the background-process commands of the
 * helper (helper_process.c, helper_process_start.c) share: their failure
 * line, numbers and ids checked, a process folder's small files, and the
 * one JSON object each prints on stdout (helper_process.h).
 */
#include "helper.h"
#include "helper_process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

/* ---- small pieces ------------------------------------------------------ */

int
hxp_fail(const char *fmt, ...)
{
	char line[600];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(2, line, (size_t)n);
	return HX_EXIT_ERR;
}

bool
hxp_parse_num(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* A process id as `start` makes them: "p" and a decimal number. */
bool
hxp_valid_id(const char *id)
{
	size_t n = strlen(id);

	if (n < 2 || n > 12 || id[0] != 'p' || id[1] == '0')
		return false;   /* p1, p2, ...: one spelling per process */
	for (size_t i = 1; i < n; i++)
		if (id[i] < '0' || id[i] > '9')
			return false;
	return true;
}

bool
hxp_private_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

int
hxp_root_refused(void)
{
	struct stat st;

	if (lstat(HX_PROC_ROOT, &st) != 0 && errno == ENOENT)
		return 0;
	if (hxp_private_dir(HX_PROC_ROOT))
		return 0;
	return hxp_fail("%s is not a private folder of this user (it is a "
	    "link, another user's, or writable by others): background "
	    "processes do not use it. Remove it to start them again.",
	    HX_PROC_ROOT);
}

int
hxp_open_file(const char *dir, const char *name, int flags)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* O_NONBLOCK: a fifo's open does not wait for a writer. */
	if ((fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int
hxp_write_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	/* A new file: whatever was left or put at tmp is not written. */
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0)
		return -errno;
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		p = (const char *)p + w;
		len -= (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0)
		return -errno;
	return 0;
}

ssize_t
hxp_read_small(const char *dir, const char *name, char *buf, size_t cap)
{
	ssize_t n;
	int fd;

	if ((fd = hxp_open_file(dir, name, O_RDONLY)) < 0)
		return fd;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

bool
hxp_read_num(const char *dir, const char *name, long long lo, long long hi,
    long long *out)
{
	char buf[64];

	if (hxp_read_small(dir, name, buf, sizeof(buf)) <= 0)
		return false;
	buf[strcspn(buf, " \n")] = '\0';
	return hxp_parse_num(buf, lo, hi, out);
}

static void
on_alarm(int sig)
{
	(void)sig;              /* only to interrupt flock */
}

int
hxp_lock(int fd, int op, int ms)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	/* Again every 50 ms: one that fires before flock sleeps is not lost. */
	struct itimerval tick = { { 0, 50000 }, { 0, 50000 } }, off = { 0 };
	int64_t deadline = hx_now_ms() + ms;
	int rv = 0;

	if (flock(fd, op | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK)
		return -errno;
	sigemptyset(&sa.sa_mask);       /* no SA_RESTART: flock returns */
	if (sigaction(SIGALRM, &sa, &old) != 0)
		return -errno;
	(void)setitimer(ITIMER_REAL, &tick, NULL);
	while (flock(fd, op) != 0) {
		if (errno != EINTR) {
			rv = -errno;
			break;
		}
		if (hx_now_ms() >= deadline) {
			rv = -EWOULDBLOCK;
			break;
		}
	}
	(void)setitimer(ITIMER_REAL, &off, NULL);
	(void)sigaction(SIGALRM, &old, NULL);
	return rv;
}

bool
hxp_alive(const char *dir)
{
	bool held;
	int fd;

	if ((fd = hxp_open_file(dir, "alive", O_RDONLY)) < 0)
		return false;
	held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

/* ---- JSON output ------------------------------------------------------- */


void
hxp_out_raw(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *p = realloc(o->p, cap);

		if (p == NULL) {
			(void)hxp_fail("out of memory");
			_exit(HX_EXIT_ERR);
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

void
hxp_out_cstr(struct out *o, const char *s)
{
	hxp_out_raw(o, s, strlen(s));
}

void
hxp_out_fmt(struct out *o, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		hxp_out_raw(o, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf) - 1);
}

size_t
hxp_esc_len(unsigned char c)
{
	if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r')
		return 2;
	return c < 0x20 ? 6 : 1;
}

static void
out_esc_byte(struct out *o, unsigned char c)
{
	char b[8];

	switch (c) {
	case '"': hxp_out_cstr(o, "\\\""); return;
	case '\\': hxp_out_cstr(o, "\\\\"); return;
	case '\n': hxp_out_cstr(o, "\\n"); return;
	case '\t': hxp_out_cstr(o, "\\t"); return;
	case '\r': hxp_out_cstr(o, "\\r"); return;
	}
	if (c < 0x20) {
		snprintf(b, sizeof(b), "\\u%04x", c);
		hxp_out_raw(o, b, 6);
	} else
		hxp_out_raw(o, (const char *)&c, 1);
}

void
hxp_out_str(struct out *o, const char *s, size_t n)
{
	hxp_out_cstr(o, "\"");
	for (size_t i = 0; i < n; i++)
		out_esc_byte(o, (unsigned char)s[i]);
	hxp_out_cstr(o, "\"");
}

int
hxp_out_print(struct out *o)
{
	size_t off = 0;

	hxp_out_cstr(o, "\n");
	while (off < o->len) {
		ssize_t w = write(1, o->p + off, o->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return HX_EXIT_ERR;
		off += (size_t)w;
	}
	free(o->p);
	return 0;
}
