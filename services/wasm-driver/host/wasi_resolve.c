/*
 * wasi_resolve.c - guest paths to host files, never outside the root.
 *
 * A guest path is joined to the guest path of its directory fd and the
 * result is resolved from the root fd by openat2() with RESOLVE_IN_ROOT:
 * the kernel treats the root as "/" for "..", absolute paths and every
 * symlink met on the way, and RESOLVE_NO_MAGICLINKS refuses /proc-style
 * links. The join is only a string; safety comes from the resolution.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wasi_int.h"

/*
 * The current guest path of directory fd f: its host path under the
 * root (so renames since it was opened are followed), or the path it was
 * opened with when /proc is missing.
 */
static const char *
dir_now(struct wasi_ctx *c, const struct wasi_fd *f, char buf[WASI_PATH_MAX])
{
	wasi_dir_path(c, f->host, f->dir, buf);
	return buf;
}

void
wasi_dir_path(struct wasi_ctx *c, int fd, const char *joined,
    char out[WASI_PATH_MAX])
{
	char proc[32], host[WASI_PATH_MAX];
	ssize_t n;
	size_t rl;

	if (strcmp(joined, "/") == 0 || c->root_path == NULL)
		goto fallback;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if ((n = readlink(proc, host, sizeof(host) - 1)) <= 0)
		goto fallback;
	host[n] = '\0';
	rl = strlen(c->root_path);
	if (rl == 1) {                  /* the root is the host's "/" */
		memcpy(out, host, (size_t)n + 1);
		return;
	}
	if (strncmp(host, c->root_path, rl) == 0 && host[rl] == '/') {
		memcpy(out, host + rl, (size_t)n - rl + 1);
		return;
	}
	if (strcmp(host, c->root_path) == 0) {
		memcpy(out, "/", 2);
		return;
	}
fallback:
	snprintf(out, WASI_PATH_MAX, "%s", joined);
}

uint32_t
wasi_path_join(struct wasi_ctx *c, uint32_t dirfd, uint32_t ptr,
    uint32_t len, char out[WASI_PATH_MAX])
{
	char buf[WASI_PATH_MAX];
	const struct wasi_fd *f;
	const uint8_t *p;
	const char *dir;
	size_t dl;

	if (dirfd >= WASI_MAX_FDS || c->fds[dirfd].host < 0)
		return WASI_EBADF;
	f = &c->fds[dirfd];
	if (f->dir == NULL)
		return WASI_ENOTDIR;
	if ((p = wasi_mem(c, ptr, len)) == NULL)
		return WASI_EFAULT;
	if (len == 0)
		return WASI_ENOENT;
	if (memchr(p, '\0', len) != NULL)
		return WASI_EINVAL;
	dir = dir_now(c, f, buf);
	dl = strlen(dir);
	if (dl + 1 + (size_t)len >= WASI_PATH_MAX)
		return WASI_ENAMETOOLONG;
	memcpy(out, dir, dl);
	if (dl == 0 || out[dl - 1] != '/')
		out[dl++] = '/';
	memcpy(out + dl, p, len);
	out[dl + len] = '\0';
	return 0;
}

int
wasi_open_in_root(struct wasi_ctx *c, const char *path, int flags,
    unsigned mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	for (int tries = 0;; tries++) {
		long fd = syscall(SYS_openat2, c->root, path, &how,
		    sizeof(how));

		if (fd >= 0)
			return (int)fd;
		/* EAGAIN: a rename raced the lookup; the kernel asks to retry */
		if (errno == EINTR || (errno == EAGAIN && tries < 16))
			continue;
		return -errno;
	}
}

bool
wasi_name_special(const char *name)
{
	return name[0] == '\0' || strcmp(name, ".") == 0 ||
	    strcmp(name, "..") == 0;
}

int
wasi_open_parent(struct wasi_ctx *c, const char *path,
    char name[WASI_PATH_MAX], bool *slash)
{
	char parent[WASI_PATH_MAX];
	size_t n = strlen(path), i;

	*slash = false;
	if (n >= WASI_PATH_MAX)
		return -ENAMETOOLONG;
	while (n > 1 && path[n - 1] == '/') {
		n--;
		*slash = true;
	}
	for (i = n; i > 0 && path[i - 1] != '/'; i--)
		;
	memcpy(name, path + i, n - i);
	name[n - i] = '\0';
	if (i == 0) {
		memcpy(parent, "/", 2);
	} else {
		memcpy(parent, path, i);
		parent[i] = '\0';
	}
	return wasi_open_in_root(c, parent, O_PATH | O_DIRECTORY, 0);
}

static uint64_t
ns(const struct timespec *ts)
{
	if (ts->tv_sec < 0)
		return 0;
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

uint32_t
wasi_put_filestat(struct wasi_ctx *c, uint32_t off, int fd)
{
	uint8_t b[WASI_FILESTAT_SIZE] = { 0 };
	struct stat st;
	uint64_t v;

	if (wasi_mem(c, off, sizeof(b)) == NULL)
		return WASI_EFAULT;
	if (fstat(fd, &st) != 0)
		return wasi_errno(errno);
	v = st.st_dev;
	memcpy(b + 0, &v, 8);
	v = st.st_ino;
	memcpy(b + 8, &v, 8);
	b[16] = wasi_filetype(st.st_mode);
	v = st.st_nlink;
	memcpy(b + 24, &v, 8);
	v = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
	memcpy(b + 32, &v, 8);
	v = ns(&st.st_atim);
	memcpy(b + 40, &v, 8);
	v = ns(&st.st_mtim);
	memcpy(b + 48, &v, 8);
	v = ns(&st.st_ctim);
	memcpy(b + 56, &v, 8);
	wasi_put(c, off, b, sizeof(b));
	return 0;
}

static struct timespec
one_time(uint64_t t, bool set, bool now)
{
	if (now)
		return (struct timespec){ 0, UTIME_NOW };
	if (set)
		return (struct timespec){ (time_t)(t / 1000000000u),
			(long)(t % 1000000000u) };
	return (struct timespec){ 0, UTIME_OMIT };
}

uint32_t
wasi_timespecs(uint64_t atim, uint64_t mtim, uint32_t flags,
    struct timespec ts[2])
{
	if ((flags & ~0xfu) != 0 ||
	    ((flags & WASI_FST_ATIM) && (flags & WASI_FST_ATIM_NOW)) ||
	    ((flags & WASI_FST_MTIM) && (flags & WASI_FST_MTIM_NOW)))
		return WASI_EINVAL;
	ts[0] = one_time(atim, flags & WASI_FST_ATIM, flags & WASI_FST_ATIM_NOW);
	ts[1] = one_time(mtim, flags & WASI_FST_MTIM, flags & WASI_FST_MTIM_NOW);
	return 0;
}
