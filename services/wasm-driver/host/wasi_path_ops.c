/*
 * wasi_path_ops.c - path calls that act on a last component: the parent
 * is opened as O_PATH in the root, then mkdirat, unlinkat, renameat,
 * linkat, symlinkat or readlinkat work on one name that is never "",
 * "." or ".." and that none of them follows if it is a symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi_int.h"

/* A parent directory fd and the name in it that a call acts on. */
struct at {
	int fd;
	bool slash;                     /* the guest path ended in '/' */
	char name[WASI_PATH_MAX];
};

/*
 * Resolves guest (fd, path) to a parent and a name. special is the errno
 * for a name of "", "." or "..". Returns 0 or a WASI errno; on success
 * the caller closes a->fd.
 */
static uint32_t
at_open(struct wasi_ctx *c, uint32_t fd, uint32_t path, uint32_t pathlen,
    uint32_t special, struct at *a)
{
	char p[WASI_PATH_MAX];
	uint32_t rv;

	if ((rv = wasi_path_join(c, fd, path, pathlen, p)) != 0)
		return rv;
	if ((a->fd = wasi_open_parent(c, p, a->name, &a->slash)) < 0)
		return wasi_errno(-a->fd);
	if (wasi_name_special(a->name)) {
		close(a->fd);
		return special;
	}
	return 0;
}

static uint32_t
done(struct at *a, int r)
{
	uint32_t rv = r == 0 ? 0 : wasi_errno(errno);

	close(a->fd);
	return rv;
}

/* True when name in a is a directory (not following a symlink). */
static bool
is_dir(const struct at *a)
{
	struct stat st;

	return fstatat(a->fd, a->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st.st_mode);
}

uint32_t
WASI_FN(path_create_directory)(struct wasi_ctx *c, uint32_t fd, uint32_t path,
    uint32_t pathlen)
{
	struct at a;
	uint32_t rv;

	if ((rv = at_open(c, fd, path, pathlen, WASI_EEXIST, &a)) != 0)
		return rv;
	if ((rv = wasi_quota_new_entry(c)) != 0) {
		close(a.fd);
		return rv;
	}
	return done(&a, mkdirat(a.fd, a.name, 0777));
}

uint32_t
WASI_FN(path_remove_directory)(struct wasi_ctx *c, uint32_t fd, uint32_t path,
    uint32_t pathlen)
{
	struct at a;
	uint32_t rv;

	if ((rv = at_open(c, fd, path, pathlen, WASI_EBUSY, &a)) != 0)
		return rv;
	wasi_quota_freed(c);
	return done(&a, unlinkat(a.fd, a.name, AT_REMOVEDIR));
}

uint32_t
WASI_FN(path_unlink_file)(struct wasi_ctx *c, uint32_t fd, uint32_t path,
    uint32_t pathlen)
{
	struct at a;
	uint32_t rv;

	if ((rv = at_open(c, fd, path, pathlen, WASI_EISDIR, &a)) != 0)
		return rv;
	if (a.slash) {                  /* "file/": never a plain unlink */
		errno = is_dir(&a) ? EISDIR : ENOTDIR;
		return done(&a, -1);
	}
	wasi_quota_freed(c);
	return done(&a, unlinkat(a.fd, a.name, 0));
}

uint32_t
WASI_FN(path_rename)(struct wasi_ctx *c, uint32_t fd, uint32_t oldp,
    uint32_t oldlen, uint32_t newfd, uint32_t newp, uint32_t newlen)
{
	struct at from, to;
	uint32_t rv;
	int r;

	if ((rv = at_open(c, fd, oldp, oldlen, WASI_EBUSY, &from)) != 0)
		return rv;
	if ((rv = at_open(c, newfd, newp, newlen, WASI_EBUSY, &to)) != 0) {
		close(from.fd);
		return rv;
	}
	if ((from.slash || to.slash) && !is_dir(&from)) {
		errno = ENOTDIR;
		r = -1;
	} else {
		wasi_quota_freed(c);    /* a file it replaces */
		r = renameat(from.fd, from.name, to.fd, to.name);
	}
	close(from.fd);
	return done(&to, r);
}

uint32_t
WASI_FN(path_link)(struct wasi_ctx *c, uint32_t oldfd, uint32_t oldflags,
    uint32_t oldp, uint32_t oldlen, uint32_t newfd, uint32_t newp,
    uint32_t newlen)
{
	char p[WASI_PATH_MAX], proc[32];
	struct at from, to;
	uint32_t rv;
	int r, src;

	if ((rv = at_open(c, newfd, newp, newlen, WASI_EEXIST, &to)) != 0)
		return rv;
	if ((rv = wasi_quota_new_entry(c)) != 0) {
		close(to.fd);
		return rv;
	}
	if (oldflags & WASI_LOOKUP_SYMLINK_FOLLOW) {
		/* Link what the old path leads to, resolved in the root. */
		if ((rv = wasi_path_join(c, oldfd, oldp, oldlen, p)) != 0) {
			close(to.fd);
			return rv;
		}
		if ((src = wasi_open_in_root(c, p, O_PATH, 0)) < 0) {
			errno = -src;
			return done(&to, -1);
		}
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", src);
		r = linkat(AT_FDCWD, proc, to.fd, to.name, AT_SYMLINK_FOLLOW);
		rv = r == 0 ? 0 : wasi_errno(errno);
		close(src);
		close(to.fd);
		return rv;
	}
	if ((rv = at_open(c, oldfd, oldp, oldlen, WASI_EPERM, &from)) != 0) {
		close(to.fd);
		return rv;
	}
	r = linkat(from.fd, from.name, to.fd, to.name, 0);
	close(from.fd);
	return done(&to, r);
}

/*
 * The target is stored as the guest wrote it: an absolute or "../.."
 * target is harmless, as every lookup through it stays in the root.
 */
uint32_t
WASI_FN(path_symlink)(struct wasi_ctx *c, uint32_t target, uint32_t targetlen,
    uint32_t fd, uint32_t path, uint32_t pathlen)
{
	char t[WASI_PATH_MAX];
	const uint8_t *src = wasi_mem(c, target, targetlen);
	struct at a;
	uint32_t rv;

	if (src == NULL)
		return WASI_EFAULT;
	if (targetlen == 0)
		return WASI_ENOENT;
	if (targetlen >= sizeof(t))
		return WASI_ENAMETOOLONG;
	if (memchr(src, '\0', targetlen) != NULL)
		return WASI_EINVAL;
	memcpy(t, src, targetlen);
	t[targetlen] = '\0';
	if ((rv = at_open(c, fd, path, pathlen, WASI_EEXIST, &a)) != 0)
		return rv;
	if ((rv = wasi_quota_new_entry(c)) != 0) {
		close(a.fd);
		return rv;
	}
	return done(&a, symlinkat(t, a.fd, a.name));
}

uint32_t
WASI_FN(path_readlink)(struct wasi_ctx *c, uint32_t fd, uint32_t path,
    uint32_t pathlen, uint32_t buf, uint32_t buflen, uint32_t usedp)
{
	char t[WASI_PATH_MAX];
	struct at a;
	uint32_t rv;
	ssize_t n;

	if (wasi_mem(c, buf, buflen) == NULL || wasi_mem(c, usedp, 4) == NULL)
		return WASI_EFAULT;
	if ((rv = at_open(c, fd, path, pathlen, WASI_EINVAL, &a)) != 0)
		return rv;
	n = readlinkat(a.fd, a.name, t, sizeof(t));
	if (n < 0)
		return done(&a, -1);
	close(a.fd);
	if ((size_t)n > buflen)
		n = buflen;
	wasi_put(c, buf, t, (size_t)n);
	wasi_put_u32(c, usedp, (uint32_t)n);
	return 0;
}
