/*
 * wasi_quota.c - the computer's disk quota (runner --disk-quota).
 *
 * What counts: every file, directory and symlink under the root, each as
 * its allocated bytes (st_blocks * 512) and at least QUOTA_ENTRY_BYTES,
 * so that a sparse file costs what it holds, not its length, and a
 * million empty files cost 4 GiB. A hard link counts as one entry more.
 *
 * The usage is read from the folder, not kept by a process: each command
 * is its own runner and several may run at once in one computer. A
 * runner scans the tree the first time its guest would grow it, then
 * adds what it measures itself: a write to a regular file is allowed up
 * to the room left (a shorter write, then ENOSPC) and charged by what
 * fstat says it allocated; a new file, directory, link or symlink costs
 * WASI_QUOTA_ENTRY_BYTES up front; fd_allocate asks for its length.
 * Freed space (unlink, rmdir, rename over a file, truncation) shows at
 * the next scan, which comes after every QUOTA_RESCAN_BYTES this runner
 * added and before a refusal (at once when this runner freed something,
 * else at most every QUOTA_RESCAN_MS), so runners at once in one
 * computer overshoot by QUOTA_RESCAN_BYTES each at most.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wasi_int.h"

#define QUOTA_RESCAN_BYTES (8u << 20)
#define QUOTA_RESCAN_MS 100
/* Guest paths are at most WASI_PATH_MAX bytes: "/a" per level. */
#define QUOTA_MAX_DEPTH (WASI_PATH_MAX / 2 + 1)

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t
entry_bytes(const struct stat *st)
{
	uint64_t b = (uint64_t)st->st_blocks * 512;

	return b > WASI_QUOTA_ENTRY_BYTES ? b : WASI_QUOTA_ENTRY_BYTES;
}

/* A subdirectory of dirfd, never through a symlink or out of it. */
static DIR *
open_sub(int dirfd, const char *name)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		    RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	DIR *d;

	if (fd < 0)
		return NULL;
	if ((d = fdopendir((int)fd)) == NULL)
		close((int)fd);
	return d;
}

/*
 * The bytes under the root, or -1 when the tree cannot be read whole (no
 * memory or descriptors): then nothing more may be written.
 */
static int64_t
scan(struct wasi_ctx *c)
{
	DIR **stack = calloc(QUOTA_MAX_DEPTH, sizeof(*stack));
	struct dirent *e;
	struct stat st;
	uint64_t total = 0;
	int depth = 0;
	bool failed = false;

	if (stack == NULL || (stack[0] = open_sub(c->root, ".")) == NULL) {
		free(stack);
		return -1;
	}
	if (fstat(dirfd(stack[0]), &st) == 0)
		total += entry_bytes(&st);
	while (depth >= 0) {
		errno = 0;
		if ((e = readdir(stack[depth])) == NULL) {
			failed |= errno != 0;
			closedir(stack[depth--]);
			continue;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(stack[depth]), e->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) != 0) {
			failed |= errno != ENOENT;      /* gone meanwhile */
			continue;
		}
		total += entry_bytes(&st);
		if (!S_ISDIR(st.st_mode))
			continue;
		if (depth + 1 >= QUOTA_MAX_DEPTH) {
			/* Uncounted would be unbounded: full, as a failure. */
			failed = true;
			continue;
		}
		if ((stack[depth + 1] = open_sub(dirfd(stack[depth]),
		    e->d_name)) == NULL) {
			failed |= errno != ENOENT;
			continue;
		}
		depth++;
	}
	free(stack);
	return failed ? -1 : (int64_t)total;
}

static void
rescan(struct wasi_ctx *c)
{
	int64_t n = scan(c);

	c->quota_scanned_ms = now_ms();
	c->quota_used = n < 0 ? c->quota : (uint64_t)n;
	c->quota_grown = 0;
	c->quota_freed = false;
}

void
wasi_quota_freed(struct wasi_ctx *c)
{
	c->quota_freed = c->quota > 0;
}

uint64_t
wasi_quota_room(struct wasi_ctx *c, uint64_t want)
{
	if (c->quota == 0)
		return want;
	if (c->quota_scanned_ms == 0 || c->quota_grown >= QUOTA_RESCAN_BYTES ||
	    (c->quota_used + want > c->quota && (c->quota_freed ||
	     now_ms() - c->quota_scanned_ms >= QUOTA_RESCAN_MS)))
		rescan(c);
	if (c->quota_used >= c->quota)
		return 0;
	return want < c->quota - c->quota_used ? want
					       : c->quota - c->quota_used;
}

void
wasi_quota_add(struct wasi_ctx *c, uint64_t bytes)
{
	if (c->quota == 0)
		return;
	c->quota_used += bytes;
	c->quota_grown += bytes;
}

int64_t
wasi_quota_allocated(struct wasi_ctx *c, int fd)
{
	struct stat st;

	/* 0-2 are the host's (pipes, or whatever the runner was given). */
	if (c->quota == 0 || fd <= 2 || fstat(fd, &st) != 0 ||
	    !S_ISREG(st.st_mode))
		return -1;
	return (int64_t)st.st_blocks * 512;
}

void
wasi_quota_grew(struct wasi_ctx *c, int fd, int64_t before)
{
	int64_t after;

	if (before < 0 || (after = wasi_quota_allocated(c, fd)) < 0)
		return;
	if (after > before) {
		wasi_quota_add(c, (uint64_t)(after - before));
	} else {
		/* Shrunk (truncated), or the file system turned a
		 * reservation into fewer blocks (ext4's delayed allocation
		 * does while it writes back): counted as it says. */
		uint64_t less = (uint64_t)(before - after);

		c->quota_used = c->quota_used > less ? c->quota_used - less : 0;
	}
}

uint32_t
wasi_quota_new_entry(struct wasi_ctx *c)
{
	if (wasi_quota_room(c, WASI_QUOTA_ENTRY_BYTES) <
	    WASI_QUOTA_ENTRY_BYTES)
		return WASI_ENOSPC;
	wasi_quota_add(c, WASI_QUOTA_ENTRY_BYTES);
	return 0;
}
