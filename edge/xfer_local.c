/*
 * xfer_local.c - computer_upload's and computer_download's local paths:
 * where they may be, and how they are opened (see xfer.h).
 */
#include "xfer_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int
xfer_openat2(int dfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = resolve,
	};
	long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));

	return fd < 0 ? -1 : (int)fd;
}

int
xfer_open_reg(int dfd, const char *name, int flags, mode_t mode,
    mode_t *found)
{
	char proc[40];
	struct stat st;
	int pfd, fd;

	*found = 0;
	pfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 && errno == ENOENT && (flags & O_CREAT)) {
		/* Not there: made here, so a regular file. */
		return openat(dfd, name, (flags & ~O_TRUNC) | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, mode);
	}
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) != 0) {
		close(pfd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		*found = st.st_mode;
		errno = EINVAL;
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) |
	    O_CLOEXEC);
	close(pfd);
	return fd;
}

char *
xfer_allow_dir(const char *path)
{
	char *real = realpath(path, NULL);
	struct stat st;

	if (real == NULL)
		return NULL;
	if (stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(real);
		errno = ENOTDIR;
		return NULL;
	}
	return real;
}



bool
xfer_below(const char *dir, const char *path)
{
	size_t dl = strlen(dir);

	return strcmp(dir, "/") == 0 || strcmp(path, dir) == 0 ||
	    (strncmp(path, dir, dl) == 0 && path[dl] == '/');
}

/*
 * Normalizes path (joined to the workspace when relative) and finds the
 * allowed folder it is below; 0, or -EACCES/-EINVAL with err set.
 */
int
xfer_locate(const struct xfer_allow *a, const char *path, struct xfer_place *p,
    char *err, size_t errlen)
{
	char joined[PATH_MAX], *s, *save = NULL;
	size_t n = 0;

	p->rootfd = -1;
	if (path[0] == '\0') {
		snprintf(err, errlen, "local_path: must not be empty");
		return -EINVAL;
	}
	if (path[0] != '/' && a->workspace == NULL) {
		snprintf(err, errlen, "local_path: %s: must be absolute (the "
		    "server has no --workspace for relative paths)", path);
		return -EINVAL;
	}
	if (snprintf(joined, sizeof(joined), "%s%s%s", path[0] == '/' ? "" :
	    a->workspace, path[0] == '/' ? "" : "/", path) >=
	    (int)sizeof(joined)) {
		snprintf(err, errlen, "local_path: longer than %d bytes",
		    PATH_MAX - 1);
		return -EINVAL;
	}
	p->shown[0] = '\0';
	for (s = strtok_r(joined, "/", &save); s != NULL;
	    s = strtok_r(NULL, "/", &save)) {
		if (strcmp(s, ".") == 0)
			continue;
		if (strcmp(s, "..") == 0) {
			snprintf(err, errlen, "local_path: %s: refused: \"..\" "
			    "is not allowed in a local path", path);
			return -EACCES;
		}
		n += (size_t)snprintf(p->shown + n, sizeof(p->shown) - n,
		    "/%s", s);
	}
	if (n == 0)
		strcpy(p->shown, "/");
	for (size_t i = 0; i < a->n; i++) {
		const char *d = a->dirs[i];
		size_t dl = strlen(d);
		const char *rel = NULL;

		if (strcmp(d, "/") == 0)
			rel = p->shown[1] ? p->shown + 1 : ".";
		else if (strcmp(p->shown, d) == 0)
			rel = ".";
		else if (strncmp(p->shown, d, dl) == 0 && p->shown[dl] == '/')
			rel = p->shown + dl + 1;
		if (rel == NULL)
			continue;
		/* Its real path was taken when it was named: a symlink on
		 * the way now is one put there since, not followed. */
		if ((p->rootfd = xfer_openat2(AT_FDCWD, d, O_PATH |
		    O_DIRECTORY, RESOLVE_NO_SYMLINKS |
		    RESOLVE_NO_MAGICLINKS)) < 0) {
			if (errno != ELOOP)
				continue;
			snprintf(err, errlen, "local_path: %s: refused: the "
			    "folder %s this server may use is now reached "
			    "through a symlink", p->shown, d);
			return -EACCES;
		}
		snprintf(p->rel, sizeof(p->rel), "%s", rel);
		return 0;
	}
	if (a->n == 0)
		snprintf(err, errlen, "local_path: %s: refused: this server "
		    "may use no local folder (the client declared no MCP "
		    "roots and the server has no --workspace)", p->shown);
	else {
		size_t k = (size_t)snprintf(err, errlen, "local_path: %s: "
		    "refused: it is outside the folders this server may use "
		    "(", p->shown);

		for (size_t i = 0; i < a->n && k < errlen; i++)
			k += (size_t)snprintf(err + k, errlen - k, "%s%s",
			    i ? ", " : "", a->dirs[i]);
		if (k < errlen)
			snprintf(err + k, errlen - k, ")");
	}
	return -EACCES;
}

const char *
xfer_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a folder";
	if (S_ISFIFO(m))
		return "a fifo";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISLNK(m))
		return "a symlink";
	return "not a regular file";
}

int
xfer_open_error(const char *shown, int e, char *err, size_t errlen)
{
	if (e == EXDEV || e == ELOOP)
		snprintf(err, errlen, "local_path: %s: refused: a symlink on "
		    "the way leads outside the folders this server may use",
		    shown);
	else if (e == ENOENT)
		snprintf(err, errlen, "local_path: %s: no such file or folder",
		    shown);
	else
		snprintf(err, errlen, "local_path: %s: %s", shown,
		    strerror(e));
	return -e;
}
