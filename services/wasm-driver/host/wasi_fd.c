/*
 * wasi_fd.c - reading, writing, seeking and closing guest fds. Reads and
 * writes go straight between the host fd and guest memory (readv/writev
 * on checked iovecs); a partial transfer is reported as such.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wasi_int.h"

#define WASI_IOV_MAX 1024

/* Checks the guest iovecs at iovs and points out[] at guest memory. */
static uint32_t
make_iovs(struct wasi_ctx *c, uint32_t iovs, uint32_t niovs,
    struct iovec out[WASI_IOV_MAX], int *np)
{
	const uint8_t *p;

	if (niovs > WASI_IOV_MAX)
		niovs = WASI_IOV_MAX;   /* a shorter transfer is allowed */
	if ((p = wasi_mem(c, iovs, (uint64_t)niovs * WASI_IOVEC_SIZE)) == NULL)
		return WASI_EFAULT;
	for (uint32_t i = 0; i < niovs; i++) {
		uint32_t buf = wasi_get_u32(p + i * WASI_IOVEC_SIZE);
		uint32_t len = wasi_get_u32(p + i * WASI_IOVEC_SIZE + 4);
		uint8_t *q = wasi_mem(c, buf, len);

		if (q == NULL)
			return WASI_EFAULT;
		out[i] = (struct iovec){ q, len };
	}
	*np = (int)niovs;
	return 0;
}

enum io_kind { IO_READ, IO_WRITE, IO_PREAD, IO_PWRITE };

/*
 * Cuts v[0..*np) to the room the disk quota leaves for a write to a
 * regular file; returns what the file had allocated before (-1: not
 * counted), or -2 when there is no room at all.
 */
static int64_t
quota_cut(struct wasi_ctx *c, int host, struct iovec *v, int *np)
{
	int64_t before = wasi_quota_allocated(c, host);
	uint64_t want = 0, room;

	if (before < 0)
		return -1;
	for (int i = 0; i < *np; i++)
		want += v[i].iov_len;
	if (want == 0)
		return before;
	if ((room = wasi_quota_room(c, want)) == 0)
		return -2;
	for (int i = 0; i < *np; i++) {
		if (v[i].iov_len >= room) {
			v[i].iov_len = room;
			*np = i + 1;
			break;
		}
		room -= v[i].iov_len;
	}
	return before;
}

static uint32_t
transfer(struct wasi_ctx *c, enum io_kind kind, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint64_t offset, uint32_t resultp)
{
	struct iovec v[WASI_IOV_MAX];
	int host = wasi_host_fd(c, fd), n = 0;
	int64_t before = -1;
	uint32_t rv;
	ssize_t got;

	if (host < 0)
		return WASI_EBADF;
	if (wasi_mem(c, resultp, 4) == NULL)
		return WASI_EFAULT;
	if (offset > INT64_MAX)
		return WASI_EINVAL;
	if ((rv = make_iovs(c, iovs, niovs, v, &n)) != 0)
		return rv;
	if ((kind == IO_WRITE || kind == IO_PWRITE) &&
	    (before = quota_cut(c, host, v, &n)) == -2)
		return WASI_ENOSPC;
	do {
		switch (kind) {
		case IO_READ:
			got = readv(host, v, n);
			break;
		case IO_WRITE:
			got = writev(host, v, n);
			break;
		case IO_PREAD:
			got = preadv(host, v, n, (off_t)offset);
			break;
		default:
			got = pwritev(host, v, n, (off_t)offset);
			break;
		}
	} while (got < 0 && errno == EINTR);
	if (got < 0)
		return wasi_errno(errno);
	wasi_quota_grew(c, host, before);
	wasi_put_u32(c, resultp, (uint32_t)got);
	return 0;
}

uint32_t
WASI_FN(fd_read)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t nreadp)
{
	return transfer(c, IO_READ, fd, iovs, niovs, 0, nreadp);
}

uint32_t
WASI_FN(fd_write)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t nwrittenp)
{
	return transfer(c, IO_WRITE, fd, iovs, niovs, 0, nwrittenp);
}

uint32_t
WASI_FN(fd_pread)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint64_t offset, uint32_t nreadp)
{
	return transfer(c, IO_PREAD, fd, iovs, niovs, offset, nreadp);
}

uint32_t
WASI_FN(fd_pwrite)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint64_t offset, uint32_t nwrittenp)
{
	return transfer(c, IO_PWRITE, fd, iovs, niovs, offset, nwrittenp);
}

uint32_t
WASI_FN(fd_seek)(struct wasi_ctx *c, uint32_t fd, uint64_t offset,
    uint32_t whence, uint32_t newoffp)
{
	static const int how[] = { SEEK_SET, SEEK_CUR, SEEK_END };
	int host = wasi_host_fd(c, fd);
	off_t r;

	if (host < 0)
		return WASI_EBADF;
	if (whence > WASI_WHENCE_END)
		return WASI_EINVAL;
	if (wasi_mem(c, newoffp, 8) == NULL)
		return WASI_EFAULT;
	if ((r = lseek(host, (off_t)(int64_t)offset, how[whence])) < 0)
		return wasi_errno(errno);
	wasi_put_u64(c, newoffp, (uint64_t)r);
	return 0;
}

uint32_t
WASI_FN(fd_tell)(struct wasi_ctx *c, uint32_t fd, uint32_t offp)
{
	return WASI_FN(fd_seek)(c, fd, 0, WASI_WHENCE_CUR, offp);
}

/* Empties slot fd, closing its host fd. */
static void
drop(struct wasi_ctx *c, uint32_t fd)
{
	close(c->fds[fd].host);
	free(c->fds[fd].dir);
	c->fds[fd] = (struct wasi_fd){ -1, 0, false, NULL };
}

uint32_t
WASI_FN(fd_close)(struct wasi_ctx *c, uint32_t fd)
{
	if (wasi_host_fd(c, fd) < 0)
		return WASI_EBADF;
	drop(c, fd);
	return 0;
}

uint32_t
WASI_FN(fd_renumber)(struct wasi_ctx *c, uint32_t fd, uint32_t to)
{
	if (wasi_host_fd(c, fd) < 0 || wasi_host_fd(c, to) < 0)
		return WASI_EBADF;
	if (fd == to)
		return 0;
	drop(c, to);
	c->fds[to] = c->fds[fd];
	c->fds[fd] = (struct wasi_fd){ -1, 0, false, NULL };
	return 0;
}

uint32_t
WASI_FN(fd_sync)(struct wasi_ctx *c, uint32_t fd)
{
	int host = wasi_host_fd(c, fd);

	if (host < 0)
		return WASI_EBADF;
	return fsync(host) == 0 ? 0 : wasi_errno(errno);
}

uint32_t
WASI_FN(fd_datasync)(struct wasi_ctx *c, uint32_t fd)
{
	int host = wasi_host_fd(c, fd);

	if (host < 0)
		return WASI_EBADF;
	return fdatasync(host) == 0 ? 0 : wasi_errno(errno);
}

uint32_t
WASI_FN(fd_advise)(struct wasi_ctx *c, uint32_t fd, uint64_t offset,
    uint64_t len, uint32_t advice)
{
	static const int how[] = { POSIX_FADV_NORMAL, POSIX_FADV_SEQUENTIAL,
		POSIX_FADV_RANDOM, POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED,
		POSIX_FADV_NOREUSE };
	int host = wasi_host_fd(c, fd), r;

	if (host < 0)
		return WASI_EBADF;
	if (advice >= sizeof(how) / sizeof(how[0]) || offset > INT64_MAX ||
	    len > INT64_MAX)
		return WASI_EINVAL;
	r = posix_fadvise(host, (off_t)offset, (off_t)len, how[advice]);
	return r == 0 ? 0 : wasi_errno(r);
}

uint32_t
WASI_FN(fd_allocate)(struct wasi_ctx *c, uint32_t fd, uint64_t offset,
    uint64_t len)
{
	int host = wasi_host_fd(c, fd), r;
	int64_t before;

	if (host < 0)
		return WASI_EBADF;
	if (offset > INT64_MAX || len > INT64_MAX - offset)
		return WASI_EINVAL;
	/* The whole length must fit: what is already there is not known. */
	before = wasi_quota_allocated(c, host);
	if (before >= 0 && wasi_quota_room(c, len) < len)
		return WASI_ENOSPC;
	r = posix_fallocate(host, (off_t)offset, (off_t)len);
	wasi_quota_grew(c, host, before);
	return r == 0 ? 0 : wasi_errno(r);
}
