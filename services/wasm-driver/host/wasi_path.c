/*
 * wasi_path.c - path_open and the path_filestat_* calls: whole paths
 * resolved in the root (wasi_resolve.c), following the last symlink only
 * when the guest asks for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi_int.h"

/* The open(2) flags for a WASI path_open. */
static int
open_flags(uint32_t dirflags, uint32_t oflags, uint64_t rights,
    uint32_t fdflags)
{
	/* Only fd_write means writing: toolchains ask for datasync or
	 * set_size rights on files they only read. */
	bool rd = rights & WASI_RIGHTS_READ, wr = rights & WASI_RIGHT_FD_WRITE;
	int fl = O_NOCTTY;

	if (oflags & WASI_O_DIRECTORY)
		wr = false;
	fl |= wr ? (rd ? O_RDWR : O_WRONLY) : O_RDONLY;
	if (oflags & WASI_O_CREAT)
		fl |= O_CREAT;
	if (oflags & WASI_O_DIRECTORY)
		fl |= O_DIRECTORY;
	if (oflags & WASI_O_EXCL)
		fl |= O_EXCL;
	if (oflags & WASI_O_TRUNC)
		fl |= O_TRUNC;
	if (!(dirflags & WASI_LOOKUP_SYMLINK_FOLLOW))
		fl |= O_NOFOLLOW;
	if (fdflags & WASI_FDFLAG_APPEND)
		fl |= O_APPEND;
	if (fdflags & WASI_FDFLAG_NONBLOCK)
		fl |= O_NONBLOCK;
	if (fdflags & (WASI_FDFLAG_SYNC | WASI_FDFLAG_RSYNC))
		fl |= O_SYNC;
	else if (fdflags & WASI_FDFLAG_DSYNC)
		fl |= O_DSYNC;
	return fl;
}

uint32_t
WASI_FN(path_open)(struct wasi_ctx *c, uint32_t fd, uint32_t dirflags,
    uint32_t path, uint32_t pathlen, uint32_t oflags, uint64_t rights,
    uint64_t inheriting, uint32_t fdflags, uint32_t fdp)
{
	char p[WASI_PATH_MAX], canon[WASI_PATH_MAX], *dir = NULL;
	struct stat st;
	uint32_t rv;
	int host, gfd, flags;
	bool full = false;

	(void)inheriting;
	if ((rv = wasi_path_join(c, fd, path, pathlen, p)) != 0)
		return rv;
	if (wasi_mem(c, fdp, 4) == NULL)
		return WASI_EFAULT;
	if (oflags & ~0xfu)
		return WASI_EINVAL;
	flags = open_flags(dirflags, oflags, rights, fdflags);
	/* A file it may create costs an entry; when the disk is full, only
	 * one that exists opens. */
	if ((flags & O_CREAT) && (full = wasi_quota_new_entry(c) != 0)) {
		if (flags & O_EXCL)
			return WASI_ENOSPC;
		flags &= ~O_CREAT;
	}
	if (flags & O_TRUNC)
		wasi_quota_freed(c);
	host = wasi_open_in_root(c, p, flags, 0666);
	if (host == -ENOENT && full)
		return WASI_ENOSPC;
	if (host < 0)
		return wasi_errno(-host);
	if (fstat(host, &st) != 0) {
		rv = wasi_errno(errno);
		close(host);
		return rv;
	}
	if (S_ISDIR(st.st_mode)) {
		wasi_dir_path(c, host, p, canon);
		if ((dir = strdup(canon)) == NULL) {
			close(host);
			return WASI_ENOMEM;
		}
	}
	if ((gfd = wasi_fd_add(c, host, wasi_filetype(st.st_mode), dir)) < 0)
		return wasi_errno(-gfd);
	wasi_put_u32(c, fdp, (uint32_t)gfd);
	return 0;
}

/* Opens guest path (fd, path) as O_PATH in the root; -errno on failure. */
static int
open_path(struct wasi_ctx *c, uint32_t fd, uint32_t flags, uint32_t path,
    uint32_t pathlen, uint32_t *rvp)
{
	char p[WASI_PATH_MAX];
	int host;

	if ((*rvp = wasi_path_join(c, fd, path, pathlen, p)) != 0)
		return -1;
	host = wasi_open_in_root(c, p, O_PATH |
	    ((flags & WASI_LOOKUP_SYMLINK_FOLLOW) ? 0 : O_NOFOLLOW), 0);
	if (host < 0)
		*rvp = wasi_errno(-host);
	return host;
}

uint32_t
WASI_FN(path_filestat_get)(struct wasi_ctx *c, uint32_t fd, uint32_t flags,
    uint32_t path, uint32_t pathlen, uint32_t statp)
{
	uint32_t rv;
	int host;

	if (wasi_mem(c, statp, WASI_FILESTAT_SIZE) == NULL)
		return WASI_EFAULT;
	if ((host = open_path(c, fd, flags, path, pathlen, &rv)) < 0)
		return rv;
	rv = wasi_put_filestat(c, statp, host);
	close(host);
	return rv;
}

uint32_t
WASI_FN(path_filestat_set_times)(struct wasi_ctx *c, uint32_t fd,
    uint32_t flags, uint32_t path, uint32_t pathlen, uint64_t atim,
    uint64_t mtim, uint32_t fstflags)
{
	struct timespec ts[2];
	uint32_t rv;
	int host;

	if ((rv = wasi_timespecs(atim, mtim, fstflags, ts)) != 0)
		return rv;
	if ((host = open_path(c, fd, flags, path, pathlen, &rv)) < 0)
		return rv;
	/* On the O_PATH fd itself: the file, or the symlink when not
	 * following. */
	rv = utimensat(host, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0 ?
	    0 : wasi_errno(errno);
	close(host);
	return rv;
}
