/*
 * wasi_int.h - helpers shared by the WASI host's files: checked access to
 * guest memory, the fd table, and in-root path resolution.
 */
#ifndef WASI_INT_H
#define WASI_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "wasi_abi.h"
#include "wasi_host.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the WASI host assumes a little-endian host, as wasm is"
#endif

#define WASI_PATH_MAX 4096

/* The guest bytes [off, off+len), or NULL when not all inside memory. */
static inline uint8_t *
wasi_mem(struct wasi_ctx *c, uint32_t off, uint64_t len)
{
	if ((uint64_t)off + len > c->mem->size)
		return NULL;
	return c->mem->data + off;
}

/* Stores v at guest offset off; false when out of bounds. */
static inline bool
wasi_put(struct wasi_ctx *c, uint32_t off, const void *v, size_t len)
{
	uint8_t *p = wasi_mem(c, off, len);

	if (p == NULL)
		return false;
	memcpy(p, v, len);
	return true;
}

static inline bool
wasi_put_u32(struct wasi_ctx *c, uint32_t off, uint32_t v)
{
	return wasi_put(c, off, &v, sizeof(v));
}

static inline bool
wasi_put_u64(struct wasi_ctx *c, uint32_t off, uint64_t v)
{
	return wasi_put(c, off, &v, sizeof(v));
}

static inline uint32_t
wasi_get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t
wasi_get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The host fd of an open guest fd, or -1. */
static inline int
wasi_host_fd(struct wasi_ctx *c, uint32_t fd)
{
	return fd < WASI_MAX_FDS ? c->fds[fd].host : -1;
}

/* wasi_ctx.c */

/* Puts host fd (taken) in the lowest free slot; returns it, or -EMFILE. */
int wasi_fd_add(struct wasi_ctx *c, int host, uint8_t type, char *dir);

/* wasi_conv.c (and wasi_errno, wasi_host.h) */

/* The WASI filetype of a st_mode. */
uint8_t wasi_filetype(unsigned mode);

/* Fills a WASI filestat (64 bytes) at guest offset off from host fd. */
uint32_t wasi_put_filestat(struct wasi_ctx *c, uint32_t off, int fd);

/* Converts WASI times and fstflags to a utimensat() pair. */
uint32_t wasi_timespecs(uint64_t atim, uint64_t mtim, uint32_t flags,
    struct timespec ts[2]);

/* wasi_resolve.c */

/*
 * Copies the guest path [ptr, ptr+len) and joins it to the directory of
 * guest fd dirfd: out is the guest absolute path to resolve in the root.
 * Returns 0 or a WASI errno (BADF, NOTDIR, FAULT, NAMETOOLONG, ILSEQ for
 * a NUL byte, NOENT for an empty path).
 */
uint32_t wasi_path_join(struct wasi_ctx *c, uint32_t dirfd, uint32_t ptr,
    uint32_t len, char out[WASI_PATH_MAX]);

/*
 * openat2(root, path, flags, mode, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS):
 * returns the fd or a negative errno.
 */
int wasi_open_in_root(struct wasi_ctx *c, const char *path, int flags,
    unsigned mode);

/*
 * Opens the parent of guest path as O_PATH in the root and copies the
 * last component (no slashes) to name. *slash tells whether path ended
 * in '/'. Returns the fd or a negative errno. name may be "", "." or
 * "..": callers decide, as every caller acting on name must refuse them.
 */
int wasi_open_parent(struct wasi_ctx *c, const char *path,
    char name[WASI_PATH_MAX], bool *slash);

/* True for "", "." and "..": a last component no operation may act on. */
bool wasi_name_special(const char *name);

/* The guest path of the directory open as host fd, into out. */
void wasi_dir_path(struct wasi_ctx *c, int fd, const char *joined,
    char out[WASI_PATH_MAX]);

/* wasi_quota.c: the disk quota (c->quota; 0: none, and these do nothing) */

/*
 * How many of `want` bytes the tree may still grow by: `want` without a
 * quota, 0 when it is full. Scans the root first when it is due.
 */
uint64_t wasi_quota_room(struct wasi_ctx *c, uint64_t want);
/* Counts bytes the guest added. */
void wasi_quota_add(struct wasi_ctx *c, uint64_t bytes);
/*
 * The bytes allocated to regular file fd (a host fd the guest opened),
 * or -1: no quota, not a regular file, or one of the host's 0-2.
 */
int64_t wasi_quota_allocated(struct wasi_ctx *c, int fd);
/* Counts what fd's file grew by since wasi_quota_allocated() = before. */
void wasi_quota_grew(struct wasi_ctx *c, int fd, int64_t before);
/* The guest may have freed space: the next refusal scans first. */
void wasi_quota_freed(struct wasi_ctx *c);
/* A new name in the tree: 0 and counted, or WASI_ENOSPC. */
uint32_t wasi_quota_new_entry(struct wasi_ctx *c);

#endif /* WASI_INT_H */
