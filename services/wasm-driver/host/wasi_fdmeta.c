/*
 * wasi_fdmeta.c - metadata of guest fds, directory listing and the
 * preopened root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wasi_int.h"

#define DENTS_BUF 32768

uint32_t
WASI_FN(fd_fdstat_get)(struct wasi_ctx *c, uint32_t fd, uint32_t statp)
{
	uint8_t b[WASI_FDSTAT_SIZE] = { 0 };
	int host = wasi_host_fd(c, fd), fl;
	uint64_t rights = WASI_RIGHTS_ALL & ~(WASI_RIGHTS_READ |
	    WASI_RIGHTS_WRITE);
	uint16_t flags = 0;
	struct stat st;

	if (host < 0)
		return WASI_EBADF;
	if (wasi_mem(c, statp, sizeof(b)) == NULL)
		return WASI_EFAULT;
	if (fstat(host, &st) != 0 || (fl = fcntl(host, F_GETFL)) < 0)
		return wasi_errno(errno);
	if (S_ISDIR(st.st_mode))
		rights = WASI_RIGHTS_ALL;
	/* No seek or tell on ttys and pipes: wasi-libc's isatty() looks. */
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		rights &= ~(WASI_RIGHT_FD_SEEK | WASI_RIGHT_FD_TELL);
	if ((fl & O_ACCMODE) != O_WRONLY)
		rights |= WASI_RIGHTS_READ;
	if ((fl & O_ACCMODE) != O_RDONLY)
		rights |= WASI_RIGHTS_WRITE;
	if (fl & O_APPEND)
		flags |= WASI_FDFLAG_APPEND;
	if (fl & O_NONBLOCK)
		flags |= WASI_FDFLAG_NONBLOCK;
	if ((fl & O_SYNC) == O_SYNC)
		flags |= WASI_FDFLAG_SYNC;
	else if (fl & O_DSYNC)
		flags |= WASI_FDFLAG_DSYNC;
	b[0] = wasi_filetype(st.st_mode);
	memcpy(b + 2, &flags, 2);
	memcpy(b + 8, &rights, 8);
	rights = WASI_RIGHTS_ALL;
	memcpy(b + 16, &rights, 8);
	wasi_put(c, statp, b, sizeof(b));
	return 0;
}

uint32_t
WASI_FN(fd_fdstat_set_flags)(struct wasi_ctx *c, uint32_t fd, uint32_t flags)
{
	int host = wasi_host_fd(c, fd), fl;

	if (host < 0)
		return WASI_EBADF;
	if (flags & ~(WASI_FDFLAG_APPEND | WASI_FDFLAG_NONBLOCK))
		return WASI_ENOTSUP;    /* the sync flags only at open */
	if ((fl = fcntl(host, F_GETFL)) < 0)
		return wasi_errno(errno);
	fl &= ~(O_APPEND | O_NONBLOCK);
	if (flags & WASI_FDFLAG_APPEND)
		fl |= O_APPEND;
	if (flags & WASI_FDFLAG_NONBLOCK)
		fl |= O_NONBLOCK;
	return fcntl(host, F_SETFL, fl) == 0 ? 0 : wasi_errno(errno);
}

uint32_t
WASI_FN(fd_fdstat_set_rights)(struct wasi_ctx *c, uint32_t fd, uint64_t base,
    uint64_t inheriting)
{
	(void)base;
	(void)inheriting;
	/* Rights are not enforced beyond the host's access mode. */
	return wasi_host_fd(c, fd) < 0 ? WASI_EBADF : WASI_ENOTSUP;
}

uint32_t
WASI_FN(fd_filestat_get)(struct wasi_ctx *c, uint32_t fd, uint32_t statp)
{
	int host = wasi_host_fd(c, fd);

	if (host < 0)
		return WASI_EBADF;
	return wasi_put_filestat(c, statp, host);
}

uint32_t
WASI_FN(fd_filestat_set_size)(struct wasi_ctx *c, uint32_t fd, uint64_t size)
{
	int host = wasi_host_fd(c, fd);
	int64_t before;
	int r;

	if (host < 0)
		return WASI_EBADF;
	if (size > INT64_MAX)
		return WASI_EINVAL;
	/* Growing leaves a hole (nothing allocated), but measure anyway. */
	before = wasi_quota_allocated(c, host);
	wasi_quota_freed(c);
	r = ftruncate(host, (off_t)size) == 0 ? 0 : errno;
	wasi_quota_grew(c, host, before);
	return r == 0 ? 0 : wasi_errno(r);
}

uint32_t
WASI_FN(fd_filestat_set_times)(struct wasi_ctx *c, uint32_t fd, uint64_t atim,
    uint64_t mtim, uint32_t flags)
{
	int host = wasi_host_fd(c, fd);
	struct timespec ts[2];
	uint32_t rv;

	if (host < 0)
		return WASI_EBADF;
	if ((rv = wasi_timespecs(atim, mtim, flags, ts)) != 0)
		return rv;
	return futimens(host, ts) == 0 ? 0 : wasi_errno(errno);
}

uint32_t
WASI_FN(fd_prestat_get)(struct wasi_ctx *c, uint32_t fd, uint32_t prestatp)
{
	uint8_t b[WASI_PRESTAT_SIZE] = { 0 };
	uint32_t len = 1;               /* "/" */

	if (wasi_host_fd(c, fd) < 0 || !c->fds[fd].preopen)
		return WASI_EBADF;
	memcpy(b + 4, &len, 4);         /* tag 0: a directory */
	return wasi_put(c, prestatp, b, sizeof(b)) ? 0 : WASI_EFAULT;
}

uint32_t
WASI_FN(fd_prestat_dir_name)(struct wasi_ctx *c, uint32_t fd, uint32_t path,
    uint32_t len)
{
	if (wasi_host_fd(c, fd) < 0 || !c->fds[fd].preopen)
		return WASI_EBADF;
	if (len < 1)
		return WASI_ENAMETOOLONG;
	return wasi_put(c, path, "/", 1) ? 0 : WASI_EFAULT;
}

static uint8_t
dent_type(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return WASI_FILETYPE_REGULAR_FILE;
	case DT_DIR:
		return WASI_FILETYPE_DIRECTORY;
	case DT_LNK:
		return WASI_FILETYPE_SYMBOLIC_LINK;
	case DT_CHR:
		return WASI_FILETYPE_CHARACTER_DEVICE;
	case DT_BLK:
		return WASI_FILETYPE_BLOCK_DEVICE;
	case DT_SOCK:
		return WASI_FILETYPE_SOCKET_STREAM;
	default:
		return WASI_FILETYPE_UNKNOWN;
	}
}

/* Copies what fits of src into guest [*at, end); false once full. */
static bool
emit(struct wasi_ctx *c, uint32_t *at, uint32_t end, const void *src,
    size_t len)
{
	size_t room = end - *at, n = len < room ? len : room;

	wasi_put(c, *at, src, n);
	*at += (uint32_t)n;
	return n == len && *at < end;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * Fills the guest buffer with entries from cookie on (the kernel's d_off
 * of the previous entry, 0 at the start); the last one may be cut short,
 * and a full buffer tells the guest to ask again from its last cookie.
 */
uint32_t
WASI_FN(fd_readdir)(struct wasi_ctx *c, uint32_t fd, uint32_t buf,
    uint32_t len, uint64_t cookie, uint32_t usedp)
{
	static _Alignas(8) char k[DENTS_BUF];
	int host = wasi_host_fd(c, fd);
	uint32_t at = buf, end;
	bool room = len > 0;

	if (host < 0)
		return WASI_EBADF;
	if (c->fds[fd].dir == NULL)
		return WASI_ENOTDIR;
	if (wasi_mem(c, buf, len) == NULL || wasi_mem(c, usedp, 4) == NULL)
		return WASI_EFAULT;
	if (cookie > INT64_MAX)
		return WASI_EINVAL;
	end = buf + len;
	if (lseek(host, (off_t)cookie, SEEK_SET) < 0)
		return wasi_errno(errno);
	while (room) {
		long n = syscall(SYS_getdents64, host, k, sizeof(k));

		if (n < 0)
			return wasi_errno(errno);
		if (n == 0)
			break;
		for (long off = 0; off < n && room;) {
			struct linux_dirent64 *d = (void *)(k + off);
			uint8_t h[WASI_DIRENT_SIZE] = { 0 };
			uint32_t namlen = (uint32_t)strlen(d->d_name);
			uint64_t next = (uint64_t)d->d_off;

			memcpy(h, &next, 8);
			memcpy(h + 8, &d->d_ino, 8);
			memcpy(h + 16, &namlen, 4);
			h[20] = dent_type(d->d_type);
			room = emit(c, &at, end, h, sizeof(h)) &&
			    emit(c, &at, end, d->d_name, namlen);
			off += d->d_reclen;
		}
	}
	wasi_put_u32(c, usedp, at - buf);
	return 0;
}
