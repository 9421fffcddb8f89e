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
