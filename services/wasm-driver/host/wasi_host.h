/*
 * wasi_host.h - a WASI preview1 host in C for modules compiled by wasm2c.
 *
 * The host functions have the names and C signatures wasm2c 1.0.32 gives
 * the imports of module "wasi_snapshot_preview1" (WASI_FN(fd_write) is
 * Z_wasi_snapshot_preview1Z_fd_write), so generated code calls them
 * directly with the host state, struct wasi_ctx, as the import instance.
 * Each returns a WASI errno and checks every guest pointer and length
 * against the current size of the guest memory.
 *
 * The file system: guest fd 3 is the preopened directory "/", the root,
 * a host directory. Every path is resolved with openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS) from the root, so "..", absolute paths and
 * symlinks (the guest's or the host's) never leave it; an operation on a
 * last component (mkdir, unlink, rename, link, symlink, readlink) opens
 * the parent that way as O_PATH and acts on a single name that is never
 * "." or "..". There is no network: sock_* fail with ENOTSUP.
 *
 * Single-threaded: one guest per process.
 */
#ifndef WASI_HOST_H
#define WASI_HOST_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "wasm-rt.h"

/* wasm2c's names for the import module's instance and functions. */
#define wasi_ctx Z_wasi_snapshot_preview1_instance_t
#define WASI_FN(name) Z_wasi_snapshot_preview1Z_##name

#define WASI_MAX_FDS 1024
#define WASI_ROOT_FD 3

struct wasi_fd {
	int host;               /* owned host fd; -1: the slot is free */
	uint8_t type;           /* WASI filetype when opened */
	bool preopen;           /* the root as preopened (fd_prestat_*) */
	char *dir;              /* directories: guest path (owned), else NULL */
};

struct wasi_ctx {
	wasm_rt_memory_t *mem;  /* the guest memory (borrowed) */
	int root;               /* the root directory (owned) */
	char *root_path;        /* its real host path (owned), or NULL */
	struct wasi_fd fds[WASI_MAX_FDS];
	char *const *argv;      /* borrowed, NULL-terminated */
	char *const *envp;      /* borrowed, NULL-terminated */
	/* proc_exit: stores the code and calls on_exit, which must not return */
	void (*on_exit)(struct wasi_ctx *c);
	uint32_t exit_code;
	/* the disk quota (wasi_quota.c): bytes under the root; 0: none */
	uint64_t quota;
	uint64_t quota_used;    /* the last scan plus what was added since */
	uint64_t quota_grown;   /* added since the last scan */
	int64_t quota_scanned_ms; /* when (monotonic); 0: not yet */
	bool quota_freed;       /* the guest freed space since the scan */
};

/*
 * Sets c up: fds 0-2 are the host's 0-2 (borrowed, never closed by
 * wasi_ctx_fini), fd 3 the root at host directory root_dir. argv and envp
 * are borrowed. Returns 0 or a negative errno (-ENOSYS: no openat2).
 */
int wasi_ctx_init(struct wasi_ctx *c, const char *root_dir,
    char *const *argv, char *const *envp, void (*on_exit)(struct wasi_ctx *));

/*
 * What one file, directory or symlink costs at least against the quota
 * (see wasi_quota.c for what is counted).
 */
#define WASI_QUOTA_ENTRY_BYTES 4096

/* Closes what c owns. */
void wasi_ctx_fini(struct wasi_ctx *c);

/*
 * Makes the guest directory path (lexically normalised: ".." stops at
 * "/") and its missing parents inside the root, like mkdir -p, and
 * writes the normalised guest path to out. Returns 0, -ENOTDIR when it
 * exists but is not a directory (also through a symlink), -ENAMETOOLONG,
 * or another negative errno.
 */
int wasi_make_cwd(struct wasi_ctx *c, const char *path, char *out,
    size_t outlen);

/* The host errno e as a WASI errno (wasi_conv.c). */
uint32_t wasi_errno(int e);

/* args, environ, clocks, random, scheduling, exit, sockets (wasi_misc.c) */
uint32_t WASI_FN(args_get)(struct wasi_ctx *c, uint32_t argv, uint32_t buf);
uint32_t WASI_FN(args_sizes_get)(struct wasi_ctx *c, uint32_t argcp,
    uint32_t sizep);
uint32_t WASI_FN(environ_get)(struct wasi_ctx *c, uint32_t envp,
    uint32_t buf);
uint32_t WASI_FN(environ_sizes_get)(struct wasi_ctx *c, uint32_t countp,
    uint32_t sizep);
uint32_t WASI_FN(clock_res_get)(struct wasi_ctx *c, uint32_t id,
    uint32_t resp);
uint32_t WASI_FN(clock_time_get)(struct wasi_ctx *c, uint32_t id,
    uint64_t precision, uint32_t timep);
uint32_t WASI_FN(random_get)(struct wasi_ctx *c, uint32_t buf,
    uint32_t len);
uint32_t WASI_FN(sched_yield)(struct wasi_ctx *c);
void WASI_FN(proc_exit)(struct wasi_ctx *c, uint32_t code);
uint32_t WASI_FN(proc_raise)(struct wasi_ctx *c, uint32_t sig);
uint32_t WASI_FN(sock_accept)(struct wasi_ctx *c, uint32_t fd,
    uint32_t flags, uint32_t fdp);
uint32_t WASI_FN(sock_recv)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t flags, uint32_t lenp, uint32_t oflagsp);
uint32_t WASI_FN(sock_send)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t flags, uint32_t lenp);
uint32_t WASI_FN(sock_shutdown)(struct wasi_ctx *c, uint32_t fd,
    uint32_t how);

/* poll_oneoff (wasi_poll.c) */
uint32_t WASI_FN(poll_oneoff)(struct wasi_ctx *c, uint32_t in, uint32_t out,
    uint32_t nsubs, uint32_t neventsp);

/* fd_* on open files (wasi_fd.c) */
uint32_t WASI_FN(fd_read)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t nreadp);
uint32_t WASI_FN(fd_write)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t nwrittenp);
uint32_t WASI_FN(fd_pread)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint64_t offset, uint32_t nreadp);
uint32_t WASI_FN(fd_pwrite)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint64_t offset, uint32_t nwrittenp);
uint32_t WASI_FN(fd_seek)(struct wasi_ctx *c, uint32_t fd, uint64_t offset,
    uint32_t whence, uint32_t newoffp);
uint32_t WASI_FN(fd_tell)(struct wasi_ctx *c, uint32_t fd, uint32_t offp);
uint32_t WASI_FN(fd_close)(struct wasi_ctx *c, uint32_t fd);
uint32_t WASI_FN(fd_renumber)(struct wasi_ctx *c, uint32_t fd, uint32_t to);
uint32_t WASI_FN(fd_sync)(struct wasi_ctx *c, uint32_t fd);
uint32_t WASI_FN(fd_datasync)(struct wasi_ctx *c, uint32_t fd);
uint32_t WASI_FN(fd_advise)(struct wasi_ctx *c, uint32_t fd, uint64_t offset,
    uint64_t len, uint32_t advice);
uint32_t WASI_FN(fd_allocate)(struct wasi_ctx *c, uint32_t fd,
    uint64_t offset, uint64_t len);

/* fd_* metadata, directories and preopens (wasi_fdmeta.c) */
uint32_t WASI_FN(fd_fdstat_get)(struct wasi_ctx *c, uint32_t fd,
    uint32_t statp);
uint32_t WASI_FN(fd_fdstat_set_flags)(struct wasi_ctx *c, uint32_t fd,
    uint32_t flags);
uint32_t WASI_FN(fd_fdstat_set_rights)(struct wasi_ctx *c, uint32_t fd,
    uint64_t base, uint64_t inheriting);
uint32_t WASI_FN(fd_filestat_get)(struct wasi_ctx *c, uint32_t fd,
    uint32_t statp);
uint32_t WASI_FN(fd_filestat_set_size)(struct wasi_ctx *c, uint32_t fd,
    uint64_t size);
uint32_t WASI_FN(fd_filestat_set_times)(struct wasi_ctx *c, uint32_t fd,
    uint64_t atim, uint64_t mtim, uint32_t flags);
uint32_t WASI_FN(fd_prestat_get)(struct wasi_ctx *c, uint32_t fd,
    uint32_t prestatp);
uint32_t WASI_FN(fd_prestat_dir_name)(struct wasi_ctx *c, uint32_t fd,
    uint32_t path, uint32_t len);
uint32_t WASI_FN(fd_readdir)(struct wasi_ctx *c, uint32_t fd, uint32_t buf,
    uint32_t len, uint64_t cookie, uint32_t usedp);

/* path_* (wasi_path.c: open and stat; wasi_path_ops.c: the rest) */
uint32_t WASI_FN(path_open)(struct wasi_ctx *c, uint32_t fd,
    uint32_t dirflags, uint32_t path, uint32_t pathlen, uint32_t oflags,
    uint64_t rights, uint64_t inheriting, uint32_t fdflags, uint32_t fdp);
uint32_t WASI_FN(path_filestat_get)(struct wasi_ctx *c, uint32_t fd,
    uint32_t flags, uint32_t path, uint32_t pathlen, uint32_t statp);
uint32_t WASI_FN(path_filestat_set_times)(struct wasi_ctx *c, uint32_t fd,
    uint32_t flags, uint32_t path, uint32_t pathlen, uint64_t atim,
    uint64_t mtim, uint32_t fstflags);
uint32_t WASI_FN(path_create_directory)(struct wasi_ctx *c, uint32_t fd,
    uint32_t path, uint32_t pathlen);
uint32_t WASI_FN(path_remove_directory)(struct wasi_ctx *c, uint32_t fd,
    uint32_t path, uint32_t pathlen);
uint32_t WASI_FN(path_unlink_file)(struct wasi_ctx *c, uint32_t fd,
    uint32_t path, uint32_t pathlen);
uint32_t WASI_FN(path_rename)(struct wasi_ctx *c, uint32_t fd,
    uint32_t oldp, uint32_t oldlen, uint32_t newfd, uint32_t newp,
    uint32_t newlen);
uint32_t WASI_FN(path_link)(struct wasi_ctx *c, uint32_t oldfd,
    uint32_t oldflags, uint32_t oldp, uint32_t oldlen, uint32_t newfd,
    uint32_t newp, uint32_t newlen);
uint32_t WASI_FN(path_symlink)(struct wasi_ctx *c, uint32_t target,
    uint32_t targetlen, uint32_t fd, uint32_t path, uint32_t pathlen);
uint32_t WASI_FN(path_readlink)(struct wasi_ctx *c, uint32_t fd,
    uint32_t path, uint32_t pathlen, uint32_t buf, uint32_t buflen,
    uint32_t usedp);

#endif /* WASI_HOST_H */
