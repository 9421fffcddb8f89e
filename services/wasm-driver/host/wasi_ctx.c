/*
 * wasi_ctx.c - the WASI host's state: set-up, the fd table and the
 * working directory, above the path resolution (wasi_resolve.c).
 */
#include "wasi_host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi_int.h"

int
wasi_fd_add(struct wasi_ctx *c, int host, uint8_t type, char *dir)
{
	for (int i = 0; i < WASI_MAX_FDS; i++) {
		if (c->fds[i].host >= 0)
			continue;
		c->fds[i] = (struct wasi_fd){ host, type, false, dir };
		return i;
	}
	close(host);
	free(dir);
	return -EMFILE;
}

int
wasi_ctx_init(struct wasi_ctx *c, const char *root_dir, char *const *argv,
    char *const *envp, void (*on_exit)(struct wasi_ctx *))
{
	struct stat st;
	int fd, rv;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < WASI_MAX_FDS; i++)
		c->fds[i].host = -1;
	c->argv = argv;
	c->envp = envp;
	c->on_exit = on_exit;
	if ((c->root = open(root_dir, O_RDONLY | O_DIRECTORY |
		 O_CLOEXEC)) < 0)
		return -errno;
	/* Refuse to run at all on a kernel without openat2 (before 5.6). */
	if ((fd = wasi_open_in_root(c, "/", O_PATH | O_DIRECTORY, 0)) < 0) {
		rv = fd;
		goto fail;
	}
	close(fd);
	c->root_path = realpath(root_dir, NULL);
	for (int i = 0; i < 3; i++)
		if (fstat(i, &st) == 0)
			c->fds[i] = (struct wasi_fd){ i,
				wasi_filetype(st.st_mode), false, NULL };
	if ((fd = openat(c->root, ".", O_RDONLY | O_DIRECTORY |
		 O_CLOEXEC)) < 0) {
		rv = -errno;
		goto fail;
	}
	c->fds[WASI_ROOT_FD] = (struct wasi_fd){ fd,
		WASI_FILETYPE_DIRECTORY, true, strdup("/") };
	if (c->fds[WASI_ROOT_FD].dir == NULL) {
		rv = -ENOMEM;
		goto fail;
	}
	return 0;
fail:
	wasi_ctx_fini(c);
	return rv;
}

void
wasi_ctx_fini(struct wasi_ctx *c)
{
	for (int i = 0; i < WASI_MAX_FDS; i++) {
		if (c->fds[i].host > 2)
			close(c->fds[i].host);
		free(c->fds[i].dir);
		c->fds[i].host = -1;
		c->fds[i].dir = NULL;
	}
	if (c->root >= 0)
		close(c->root);
	c->root = -1;
	free(c->root_path);
	c->root_path = NULL;
}

/* Lexically normalises path into out: "/a/b", ".." stopping at "/". */
static int
normalise(const char *path, char *out, size_t outlen)
{
	size_t n = 0;

	while (*path != '\0') {
		const char *end = strchrnul(path, '/');
		size_t len = (size_t)(end - path);

		if (len == 2 && path[0] == '.' && path[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else if (len > 0 && !(len == 1 && path[0] == '.')) {
			if (n + 1 + len + 1 > outlen)
				return -ENAMETOOLONG;
			out[n++] = '/';
			memcpy(out + n, path, len);
			n += len;
		}
		path = *end == '/' ? end + 1 : end;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return 0;
}

int
wasi_make_cwd(struct wasi_ctx *c, const char *path, char *out, size_t outlen)
{
	char norm[WASI_PATH_MAX], name[WASI_PATH_MAX];
	int rv, fd;
	bool slash;

	if ((rv = normalise(path, norm, sizeof(norm))) != 0)
		return rv;
	if (strlen(norm) >= outlen)
		return -ENAMETOOLONG;
	/* Each prefix "/a", "/a/b", ... then the whole path. */
	for (size_t i = 1; norm[i - 1] != '\0'; i++) {
		char saved = norm[i];

		if (saved != '/' && saved != '\0')
			continue;
		norm[i] = '\0';
		fd = wasi_open_in_root(c, norm, O_PATH | O_DIRECTORY, 0);
		if (fd == -ENOENT) {
			int pfd = wasi_open_parent(c, norm, name, &slash);

			if (pfd < 0) {
				norm[i] = saved;
				return pfd;
			}
			rv = wasi_name_special(name) ||
			    mkdirat(pfd, name, 0777) == 0 ? 0 : -errno;
			close(pfd);
			fd = rv == 0 || rv == -EEXIST ? wasi_open_in_root(c,
			    norm, O_PATH | O_DIRECTORY, 0) : rv;
			if (fd == -ENOENT)
				fd = -ENOTDIR;  /* a dangling symlink */
		}
		norm[i] = saved;
		if (fd < 0)
			return fd;
		close(fd);
	}
	memcpy(out, norm, strlen(norm) + 1);
	return 0;
}
