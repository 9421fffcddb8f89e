/*
 * docker_fxroot.c - the host side of the fast exec path: the private
 * folder that holds the exec helper (every container's PID 1), and the
 * removal of the per-computer folders that earlier builds bind-mounted at
 * /.msc.
 *
 * The root folder must be ours alone: a helper planted there by another
 * local user would run as PID 1 of every computer. It is created 0700 if
 * missing; an existing one is accepted only if it is a real directory
 * (not a symlink), owned by our uid and writable by nobody else (other
 * permission bits are then cleared). Anything else is refused and the
 * fast path stays off.
 */
#include "docker_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_file.h"

#define FX_HELPER_NAME	"msc-exec-helper"
#define FX_COPY_MAX	(16 << 20)
#define FX_RM_STEPS	(1 << 22)   /* bounds a tree that keeps changing */

int
dock_fx_root_open(const char *root, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdir(root, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", root,
		    strerror(errno));
		return -errno;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s is not a directory we can open "
		    "without following a link: %s", root, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s is owned by uid %u with mode %03o: "
		    "it must be ours (uid %u) and writable by nobody else",
		    root, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
		    (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
		int e = errno;

		snprintf(err, errlen, "chmod 0700 %s: %s", root, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/* Reads a whole regular file (bounded) at dfd/path without links. */
static int
slurp(int dfd, const char *path, char **bufp, size_t *lenp)
{
	int fd = openat(dfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int rv;

	if (fd < 0)
		return -errno;
	rv = msc_file_read_whole(fd, FX_COPY_MAX, bufp, lenp);
	close(fd);
	return rv == 0 ? 0 : -EIO;
}

/* Copies the helper into the root (fd rfd) unless it is already there. */
static int
install_helper(int rfd, const char *src_path, char *err, size_t errlen)
{
	char tmp[64], *src = NULL, *old = NULL;
	size_t slen, olen;
	int fd, rc;

	if ((rc = slurp(AT_FDCWD, src_path, &src, &slen)) != 0) {
		snprintf(err, errlen, "cannot read %s", src_path);
		return rc;
	}
	if (slurp(rfd, FX_HELPER_NAME, &old, &olen) == 0 && olen == slen &&
	    memcmp(old, src, slen) == 0) {
		rc = 0;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), FX_HELPER_NAME ".%ld.tmp", (long)getpid());
	fd = openat(rfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0755);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot write the exec helper: %s",
		    strerror(errno));
		goto out;
	}
	rc = write(fd, src, slen) == (ssize_t)slen ? 0 : -EIO;
	if (fchmod(fd, 0755) != 0)
		rc = -EIO;
	if (close(fd) != 0 || rc != 0 ||
	    renameat(rfd, tmp, rfd, FX_HELPER_NAME) != 0) {
		rc = -EIO;
		snprintf(err, errlen, "cannot install the exec helper");
		(void)unlinkat(rfd, tmp, 0);
	}
out:
	free(src);
	free(old);
	return rc;
}

int
dock_fx_root_install(const char *root, const char *src, char *why,
    size_t len)
{
	int rfd, rc;

	if (src == NULL) {
		snprintf(why, len, "no %s binary found", FX_HELPER_NAME);
		return -ENOENT;
	}
	if ((rfd = dock_fx_root_open(root, why, len)) < 0)
		return rfd;
	rc = install_helper(rfd, src, why, len);
	close(rfd);
	return rc;
}

void
dock_fx_helper_path(struct dock_driver *d, char *out, size_t len)
{
	snprintf(out, len, "%s/" FX_HELPER_NAME, d->fx_root);
}

/* One level of the walk in rm_tree: a directory and how it was entered. */
struct rm_level {
	dev_t dev;
	ino_t ino;
};

/*
 * Empties the directory open at fd: removes what can be unlinked, and
 * returns 1 with *subp open on the first non-empty subdirectory (on the
 * same filesystem) to descend into, 0 when fd is empty, or -errno.
 */
static int
rm_level(int fd, dev_t dev, int *subp)
{
	struct dirent *de;
	DIR *dir;
	int dfd, rc = 0;

	if ((dfd = dup(fd)) < 0)
		return -errno;
	if ((dir = fdopendir(dfd)) == NULL) {
		close(dfd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(dir)) != NULL) {
		struct stat st;
		int sub;

		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (unlinkat(fd, de->d_name, AT_REMOVEDIR) == 0 ||
		    errno == ENOENT)
			continue;
		if (errno != ENOTEMPTY && errno != EEXIST) {
			rc = -errno;
			break;
		}
		sub = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || fstat(sub, &st) != 0 || st.st_dev != dev) {
			rc = sub < 0 ? -errno : -EXDEV;
			if (sub >= 0)
				close(sub);
			break;
		}
		*subp = sub;
		rc = 1;
	}
	closedir(dir);
	return rc;
}

/*
 * Removes everything under the directory open at top, however deep,
 * without following links or crossing into another filesystem, and with
 * no recursion: it walks down to a non-empty subdirectory and back up
 * through "..", checking on the way up that each parent is the one it
 * came from (a directory moved meanwhile stops the removal). Takes fd.
 */
static int
rm_tree(int top)
{
	struct rm_level *path = NULL;
	size_t depth = 0, cap = 0;
	struct stat st;
	int fd = top, rc = 0;

	if (fstat(fd, &st) != 0) {
		close(fd);
		return -errno;
	}
	for (long steps = 0; steps < FX_RM_STEPS; steps++) {
		int sub = -1, up;

		if ((rc = rm_level(fd, st.st_dev, &sub)) < 0)
			break;
		if (rc == 1) {
			struct stat cur;

			if (depth == cap) {
				struct rm_level *np;

				cap = cap ? cap * 2 : 64;
				if ((np = realloc(path, cap * sizeof(*np))) ==
				    NULL) {
					close(sub);
					rc = -ENOMEM;
					break;
				}
				path = np;
			}
			if (fstat(fd, &cur) != 0) {
				close(sub);
				rc = -errno;
				break;
			}
			path[depth].dev = cur.st_dev;
			path[depth++].ino = cur.st_ino;
			close(fd);
			fd = sub;
			continue;
		}
		if (depth == 0)
			break;          /* the top is empty */
		up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = up;
		depth--;
		if (fd < 0 || fstat(fd, &st) != 0 ||
		    st.st_ino != path[depth].ino ||
		    st.st_dev != path[depth].dev) {
			rc = -ESTALE;
			break;
		}
	}
	if (rc > 0)
		rc = -ELOOP;    /* out of steps */
	if (fd >= 0)
		close(fd);
	free(path);
	return rc;
}

int
dock_fx_remove_legacy(struct dock_driver *d, const char *name)
{
	char why[DOCK_ERRLEN];
	int rfd, fd, rc;

	struct stat st;

	if (d->fx_root[0] == '\0' || strchr(name, '/') != NULL ||
	    name[0] == '.' || name[0] == '\0')
		return -EINVAL;
	if (lstat(d->fx_root, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if ((rfd = dock_fx_root_open(d->fx_root, why, sizeof(why))) < 0)
		return rfd;
	fd = openat(rfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0) {
		rc = errno == ENOENT ? 0 : -errno;
		close(rfd);
		return rc;
	}
	if ((rc = rm_tree(fd)) == 0 && unlinkat(rfd, name, AT_REMOVEDIR) != 0)
		rc = -errno;
	close(rfd);
	return rc;
}
