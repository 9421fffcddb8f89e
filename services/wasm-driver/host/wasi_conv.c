/*
 * wasi_conv.c - host values in WASI's terms: errno values, file types,
 * a filestat in guest memory, and WASI times for utimensat(). The lowest
 * of the host's files: it calls none of them.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "wasi_int.h"

uint8_t
wasi_filetype(unsigned mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return WASI_FILETYPE_REGULAR_FILE;
	case S_IFDIR:
		return WASI_FILETYPE_DIRECTORY;
	case S_IFLNK:
		return WASI_FILETYPE_SYMBOLIC_LINK;
	case S_IFCHR:
		return WASI_FILETYPE_CHARACTER_DEVICE;
	case S_IFBLK:
		return WASI_FILETYPE_BLOCK_DEVICE;
	case S_IFSOCK:
		return WASI_FILETYPE_SOCKET_STREAM;
	default:
		return WASI_FILETYPE_UNKNOWN;   /* pipes too */
	}
}

uint32_t
wasi_errno(int e)
{
	static const struct {
		int host;
		uint16_t wasi;
	} map[] = {
		{ E2BIG, WASI_E2BIG }, { EACCES, WASI_EACCES },
		{ EAGAIN, WASI_EAGAIN }, { EBADF, WASI_EBADF },
		{ EBUSY, WASI_EBUSY }, { EDQUOT, WASI_EDQUOT },
		{ EEXIST, WASI_EEXIST }, { EFAULT, WASI_EFAULT },
		{ EFBIG, WASI_EFBIG }, { EILSEQ, WASI_EILSEQ },
		{ EINTR, WASI_EINTR }, { EINVAL, WASI_EINVAL },
		{ EIO, WASI_EIO }, { EISDIR, WASI_EISDIR },
		{ ELOOP, WASI_ELOOP }, { EMFILE, WASI_EMFILE },
		{ EMLINK, WASI_EMLINK }, { ENAMETOOLONG, WASI_ENAMETOOLONG },
		{ ENFILE, WASI_ENFILE }, { ENODEV, WASI_ENODEV },
		{ ENOENT, WASI_ENOENT }, { ENOMEM, WASI_ENOMEM },
		{ ENOSPC, WASI_ENOSPC }, { ENOSYS, WASI_ENOSYS },
		{ ENOTDIR, WASI_ENOTDIR }, { ENOTEMPTY, WASI_ENOTEMPTY },
		{ ENOTSOCK, WASI_ENOTSOCK }, { EOPNOTSUPP, WASI_ENOTSUP },
		{ ENOTTY, WASI_ENOTTY }, { ENXIO, WASI_ENXIO },
		{ EOVERFLOW, WASI_EOVERFLOW }, { EPERM, WASI_EPERM },
		{ EPIPE, WASI_EPIPE }, { ERANGE, WASI_ERANGE },
		{ EROFS, WASI_EROFS }, { ESPIPE, WASI_ESPIPE },
		{ ETIMEDOUT, WASI_ETIMEDOUT }, { ETXTBSY, WASI_ETXTBSY },
		{ EXDEV, WASI_EXDEV },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].host == e)
			return map[i].wasi;
	return WASI_EIO;
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
