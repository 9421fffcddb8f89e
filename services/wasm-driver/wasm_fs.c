/*
 * wasm_fs.c - folder helpers for computer folders. A guest can leave
 * symlinks to anywhere in its folder, so removal works on directory file
 * descriptors and never follows a link.
 */
#include "wasm_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "msc_slug.h"

#define RMTREE_MAX_DEPTH 4096

static int
rmtree_depth(int dirfd, const char *name, int depth)
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
		if ((r = rmtree_depth(fd, e->d_name, depth + 1)) != 0 &&
		    rv == 0)
			rv = r;
	}
	closedir(dir);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT &&
	    rv == 0)
		rv = -errno;
	return rv;
}

/* Removes name under dirfd and everything in it, following no link. */
int
wasm_rmtree_at(int dirfd, const char *name)
{
	return rmtree_depth(dirfd, name, 0);
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
