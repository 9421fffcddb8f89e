/*
 * wasi_abi.h - the wasi_snapshot_preview1 ABI as the guest sees it:
 * errno values, flags and the byte layout of the structures the host
 * reads from or writes to guest memory (wasm32, little endian).
 */
#ifndef WASI_ABI_H
#define WASI_ABI_H

#include <stdint.h>

/* errno (u16): the values the host returns. */
enum {
	WASI_ESUCCESS = 0,
	WASI_E2BIG = 1,
	WASI_EACCES = 2,
	WASI_EAGAIN = 6,
	WASI_EBADF = 8,
	WASI_EBUSY = 10,
	WASI_EEXIST = 20,
	WASI_EFAULT = 21,
	WASI_EFBIG = 22,
	WASI_EILSEQ = 25,
	WASI_EINTR = 27,
	WASI_EINVAL = 28,
	WASI_EIO = 29,
	WASI_EISDIR = 31,
	WASI_ELOOP = 32,
	WASI_EMFILE = 33,
	WASI_EMLINK = 34,
	WASI_ENAMETOOLONG = 37,
	WASI_ENFILE = 41,
	WASI_ENODEV = 43,
	WASI_ENOENT = 44,
	WASI_ENOMEM = 48,
	WASI_ENOSPC = 51,
	WASI_ENOSYS = 52,
	WASI_ENOTDIR = 54,
	WASI_ENOTEMPTY = 55,
	WASI_ENOTSOCK = 57,
	WASI_ENOTSUP = 58,
	WASI_ENOTTY = 59,
	WASI_ENXIO = 60,
	WASI_EOVERFLOW = 61,
	WASI_EPERM = 63,
	WASI_EPIPE = 64,
	WASI_ERANGE = 68,
	WASI_EROFS = 69,
	WASI_ESPIPE = 70,
	WASI_ETIMEDOUT = 73,
	WASI_ETXTBSY = 74,
	WASI_EXDEV = 75,
	WASI_ENOTCAPABLE = 76,
	WASI_EDQUOT = 19,
};

/* filetype (u8) */
enum {
	WASI_FILETYPE_UNKNOWN = 0,
	WASI_FILETYPE_BLOCK_DEVICE = 1,
	WASI_FILETYPE_CHARACTER_DEVICE = 2,
	WASI_FILETYPE_DIRECTORY = 3,
	WASI_FILETYPE_REGULAR_FILE = 4,
	WASI_FILETYPE_SOCKET_DGRAM = 5,
	WASI_FILETYPE_SOCKET_STREAM = 6,
	WASI_FILETYPE_SYMBOLIC_LINK = 7,
};

/* fdflags (u16) */
#define WASI_FDFLAG_APPEND 0x1u
#define WASI_FDFLAG_DSYNC 0x2u
#define WASI_FDFLAG_NONBLOCK 0x4u
#define WASI_FDFLAG_RSYNC 0x8u
#define WASI_FDFLAG_SYNC 0x10u

/* oflags (u16) */
#define WASI_O_CREAT 0x1u
#define WASI_O_DIRECTORY 0x2u
#define WASI_O_EXCL 0x4u
#define WASI_O_TRUNC 0x8u

/* lookupflags (u32) */
#define WASI_LOOKUP_SYMLINK_FOLLOW 0x1u

/* fstflags (u16) */
#define WASI_FST_ATIM 0x1u
#define WASI_FST_ATIM_NOW 0x2u
#define WASI_FST_MTIM 0x4u
#define WASI_FST_MTIM_NOW 0x8u

/* rights (u64): the bits the host looks at; it reports all others set. */
#define WASI_RIGHT_FD_DATASYNC (1ull << 0)
#define WASI_RIGHT_FD_READ (1ull << 1)
#define WASI_RIGHT_FD_SEEK (1ull << 2)
#define WASI_RIGHT_FD_SYNC (1ull << 4)
#define WASI_RIGHT_FD_TELL (1ull << 5)
#define WASI_RIGHT_FD_WRITE (1ull << 6)
#define WASI_RIGHT_FD_ALLOCATE (1ull << 8)
#define WASI_RIGHT_FD_READDIR (1ull << 14)
#define WASI_RIGHT_FD_FILESTAT_SET_SIZE (1ull << 22)
#define WASI_RIGHTS_ALL ((1ull << 30) - 1)
#define WASI_RIGHTS_READ (WASI_RIGHT_FD_READ | WASI_RIGHT_FD_READDIR)
#define WASI_RIGHTS_WRITE (WASI_RIGHT_FD_DATASYNC | WASI_RIGHT_FD_WRITE | \
	WASI_RIGHT_FD_ALLOCATE | WASI_RIGHT_FD_FILESTAT_SET_SIZE)

/* whence (u8) */
enum { WASI_WHENCE_SET = 0, WASI_WHENCE_CUR = 1, WASI_WHENCE_END = 2 };

/* clockid (u32) */
enum {
	WASI_CLOCK_REALTIME = 0,
	WASI_CLOCK_MONOTONIC = 1,
	WASI_CLOCK_PROCESS_CPUTIME = 2,
	WASI_CLOCK_THREAD_CPUTIME = 3,
};

/* eventtype (u8), eventrwflags (u16), subclockflags (u16) */
enum {
	WASI_EVENT_CLOCK = 0,
	WASI_EVENT_FD_READ = 1,
	WASI_EVENT_FD_WRITE = 2,
};
#define WASI_EVENT_HANGUP 0x1u
#define WASI_SUBCLOCK_ABSTIME 0x1u

/* Structure sizes and field offsets. */
#define WASI_IOVEC_SIZE 8               /* buf u32 @0, buf_len u32 @4 */
#define WASI_FDSTAT_SIZE 24             /* type u8 @0, flags u16 @2, */
                                        /* rights u64 @8, inherit u64 @16 */
#define WASI_FILESTAT_SIZE 64           /* dev @0 ino @8 type u8 @16 */
                                        /* nlink @24 size @32 atim @40 */
                                        /* mtim @48 ctim @56 (u64) */
#define WASI_DIRENT_SIZE 24             /* next u64 @0 ino u64 @8 */
                                        /* namlen u32 @16 type u8 @20 */
#define WASI_PRESTAT_SIZE 8             /* tag u8 @0, name_len u32 @4 */
#define WASI_SUBSCRIPTION_SIZE 48       /* userdata u64 @0, tag u8 @8, */
                                        /* clock: id u32 @16 timeout u64 */
                                        /* @24 precision u64 @32 flags */
                                        /* u16 @40; fd: fd u32 @16 */
#define WASI_EVENT_SIZE 32              /* userdata u64 @0 error u16 @8 */
                                        /* type u8 @10 nbytes u64 @16 */
                                        /* flags u16 @24 */

#endif /* WASI_ABI_H */
