/*
 * wasm_fs.c - folder helpers for computer folders. A guest can leave
 * symlinks to anywhere in its folder, so removal, measuring and copying
 * work on directory file descriptors and never follow a link (a copy
 * keeps a symlink as a symlink).
 */
#include "wasm_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_random.h"
#include "msc_slug.h"
#include "msc_time.h"

#define RMTREE_MAX_DEPTH 4096

/* deadline_ms (msc_now_ms): 0, none; passed, -ETIMEDOUT, the rest left. */
static int
rmtree_depth(int dirfd, const char *name, int depth, uint64_t deadline_ms)
{
	struct dirent *e;
	DIR *dir;
	int fd, rv = 0;

	if (unlinkat(dirfd, name, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth > RMTREE_MAX_DEPTH)
		return -ELOOP;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((dir = fdopendir(fd)) == NULL) {
		rv = -errno;
		close(fd);
		return rv;
	}
	while ((e = readdir(dir)) != NULL) {
		int r;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (deadline_ms > 0 && msc_now_ms() >= deadline_ms) {
			rv = -ETIMEDOUT;
			break;
		}
		if ((r = rmtree_depth(fd, e->d_name, depth + 1,
		    deadline_ms)) != 0 && rv == 0)
			rv = r;
		if (r == -ETIMEDOUT)
			break;
	}
	closedir(dir);
	if (rv == -ETIMEDOUT)
		return rv;
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT &&
	    rv == 0)
		rv = -errno;
	return rv;
}

void
wasm_gone_name(const char *id, char *name, size_t len)
{
	unsigned char rnd[6];

	msc_random_bytes(rnd, sizeof(rnd));
	snprintf(name, len, ".gone-%s-%02x%02x%02x%02x%02x%02x", id, rnd[0],
	    rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
}

int
wasm_hide(int dirfd, const char *id, char *gone, size_t len)
{
	wasm_gone_name(id, gone, len);
	return renameat(dirfd, id, dirfd, gone) == 0 ? 0 : -errno;
}

/* Removes name under dirfd and everything in it, following no link. */
int
wasm_rmtree_at(int dirfd, const char *name)
{
	return rmtree_depth(dirfd, name, 0, 0);
}

int
wasm_rmtree_until(int dirfd, const char *name, uint64_t deadline_ms)
{
	return rmtree_depth(dirfd, name, 0, deadline_ms);
}

/* The host path of computer id's root folder (which may not exist). */
int
wasm_computer_root(struct wasm_driver *d, const char *id, char *buf,
    size_t len)
{
	int n;

	if (!msc_slug_valid(id))
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s/root", d->dir, id);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- copies of a computer's tree (snapshots, wasm_snapshot.c) ----------- */

/* What one entry costs at least, as the disk quota counts it. */
#define TREE_ENTRY_BYTES 4096

static uint64_t
entry_cost(const struct stat *st)
{
	uint64_t b = (uint64_t)st->st_blocks * 512;

	return b > TREE_ENTRY_BYTES ? b : TREE_ENTRY_BYTES;
}

/* A subfolder of dirfd, never through a symlink; -1 with errno. */
static int
sub_dir(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
}

static int
tree_size_depth(int dirfd, int depth, uint64_t *bytes)
{
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int rv = 0;

	if (depth >= WASM_TREE_MAX_DEPTH)
		return -ELOOP;
	if ((dir = fdopendir(dirfd)) == NULL) {
		rv = -errno;
		close(dirfd);
		return rv;
	}
	while (rv == 0 && (errno = 0, e = readdir(dir)) != NULL) {
		int fd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				rv = -errno;
			continue;
		}
		*bytes += entry_cost(&st);
		if (!S_ISDIR(st.st_mode))
			continue;
		if ((fd = sub_dir(dirfd, e->d_name)) < 0) {
			if (errno != ENOENT)
				rv = -errno;
			continue;
		}
		rv = tree_size_depth(fd, depth + 1, bytes);
	}
	if (rv == 0 && errno != 0 && e == NULL)
		rv = -errno;
	closedir(dir);
	return rv;
}

/* A new description of folder dirfd (a dup would share its offset). */
static int
reopen_dir(int dirfd)
{
	return openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int
wasm_tree_size(int dirfd, uint64_t *bytes)
{
	int fd = reopen_dir(dirfd);

	*bytes = TREE_ENTRY_BYTES;
	if (fd < 0)
		return -errno;
	return tree_size_depth(fd, 0, bytes);
}

/* Copies regular file name of sdir into ddir: a reflink where the file
 * system has one, else copy_file_range, else read and write. */
static int
copy_file(int sdir, int ddir, const char *name, const struct stat *st)
{
	int in, out, rv = 0;

	in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_NOCTTY | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 0 : -errno;    /* gone meanwhile */
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (out < 0) {
		rv = -errno;
		close(in);
		return rv;
	}
	if (ioctl(out, FICLONE, in) != 0) {
		bool plain = false;

		for (;;) {
			ssize_t n;

			if (!plain) {
				n = copy_file_range(in, NULL, out, NULL,
				    1 << 30, 0);
				if (n < 0 && (errno == EXDEV || errno ==
				    EINVAL || errno == ENOSYS || errno ==
				    EOPNOTSUPP)) {
					plain = true;
					continue;
				}
			} else {
				char buf[65536];

				n = read(in, buf, sizeof(buf));
				for (ssize_t off = 0; n > 0 && off < n;) {
					ssize_t w = write(out, buf + off,
					    (size_t)(n - off));

					if (w < 0) {
						n = -1;
						break;
					}
					off += w;
				}
			}
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				rv = -errno;
			if (n <= 0)
				break;
		}
	}
	if (rv == 0 && fchmod(out, st->st_mode & 07777) != 0)
		rv = -errno;
	if (rv == 0) {
		struct timespec t[2] = { st->st_atim, st->st_mtim };

		(void)futimens(out, t);
	}
	if (close(out) != 0 && rv == 0)
		rv = -errno;
	close(in);
	return rv;
}

static int
copy_depth(int sdir, int ddir, int depth, uint64_t *bytes, uint64_t limit)
{
	struct dirent *e;
	struct stat st;
	DIR *dir;
	int sfd = reopen_dir(sdir), rv = 0;

	if (depth >= WASM_TREE_MAX_DEPTH) {
		if (sfd >= 0)
			close(sfd);
		return -ELOOP;
	}
	if (sfd < 0 || (dir = fdopendir(sfd)) == NULL) {
		rv = -errno;
		if (sfd >= 0)
			close(sfd);
		return rv;
	}
	while (rv == 0 && (errno = 0, e = readdir(dir)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(sdir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				rv = -errno;
			continue;
		}
		*bytes += entry_cost(&st);
		if (limit > 0 && *bytes > limit) {
			rv = -ENOSPC;
			break;
		}
		if (S_ISREG(st.st_mode))
			rv = copy_file(sdir, ddir, e->d_name, &st);
		else if (S_ISLNK(st.st_mode)) {
			char target[4097];
			ssize_t n = readlinkat(sdir, e->d_name, target,
			    sizeof(target) - 1);

			if (n >= 0) {
				target[n] = '\0';
				if (symlinkat(target, ddir, e->d_name) != 0)
					rv = -errno;
			} else if (errno != ENOENT)
				rv = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			int s2, d2;

			if (mkdirat(ddir, e->d_name, 0700) != 0) {
				rv = -errno;
				break;
			}
			if ((s2 = sub_dir(sdir, e->d_name)) < 0) {
				if (errno != ENOENT)
					rv = -errno;
				continue;
			}
			if ((d2 = sub_dir(ddir, e->d_name)) < 0) {
				rv = -errno;
				close(s2);
				break;
			}
			rv = copy_depth(s2, d2, depth + 1, bytes, limit);
			if (rv == 0 && fchmod(d2, st.st_mode & 07777) != 0)
				rv = -errno;
			close(s2);
			close(d2);
		}
		/* Fifos, sockets, devices: no guest makes them; not kept. */
	}
	if (rv == 0 && errno != 0 && e == NULL)
		rv = -errno;
	closedir(dir);
	return rv;
}

int
wasm_copy_tree(int sdir, int ddir, uint64_t limit, uint64_t *bytes)
{
	struct stat st;
	int rv;

	*bytes = TREE_ENTRY_BYTES;
	if ((rv = copy_depth(sdir, ddir, 0, bytes, limit)) != 0)
		return rv;
	if (fstat(sdir, &st) == 0 && fchmod(ddir, st.st_mode & 07777) != 0)
		return -errno;
	return 0;
}
