/*
 * helper_file_tar.c - computer_download's side in the computer (issue 29;
 * helper_file.h): SRC packed onto stdout as a tar stream (lib/msc_tar.h),
 * never through a shell; and what helper_file_untar.c shares.
 *
 *   tar SRC SKIP LEN          stdout: bytes [SKIP, SKIP+LEN) of SRC packed
 *                             (a file, or a folder and all below it, in
 *                             name order, so each call packs the same
 *                             stream and the edge reads it in parts)
 *
 * SRC resolves as the other file commands' paths (hxf_resolve: /proc,
 * /sys and the helper's own files refused, also behind a symlink); below
 * it nothing is followed: symlinks are packed as symlinks, and devices,
 * fifos, sockets and the kernel's folders are left out. Only what the
 * window holds is read. On the WASM backends SRC resolves in the
 * computer's root (hxf_root).
 */
#include "helper.h"
#include "helper_file.h"
#include "msc_tar.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The most files, folders and symlinks one `tar` packs. */
#define HXT_ENTRIES_MAX 200000
#define HXT_BUF 65536

int
hxf_beneath(int top, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		    RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, top, name, &how, sizeof(how));

	return fd < 0 ? -1 : (int)fd;
}

int
hxf_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- tar ---------------------------------------------------------------- */

struct pack {
	unsigned long long pos, skip, end;      /* the stream's window */
	uint8_t *buf;
	size_t len;
	long entries;
	const char *path;
	int rv;                                 /* 0, or HX_EXIT_ERR */
};

static bool
full(const struct pack *k)
{
	return k->pos >= k->end || k->rv != 0;
}

static void
flush(struct pack *k)
{
	if (k->len > 0 && hxf_write_all(1, k->buf, k->len) != 0 && k->rv == 0)
		k->rv = hxp_fail("%s: cannot write the stream", k->path);
	k->len = 0;
}

/* The part of n stream bytes (from p, or zeros) inside the window. */
static void
emit(struct pack *k, const uint8_t *p, size_t n)
{
	unsigned long long a = k->pos, b = k->pos + n;

	k->pos = b;
	if (b <= k->skip || a >= k->end)
		return;
	if (a < k->skip) {
		if (p != NULL)
			p += k->skip - a;
		a = k->skip;
	}
	if (b > k->end)
		b = k->end;
	while (a < b) {
		size_t m = (size_t)(b - a);

		if (m > HXT_BUF - k->len)
			m = HXT_BUF - k->len;
		if (p != NULL) {
			memcpy(k->buf + k->len, p, m);
			p += m;
		} else
			memset(k->buf + k->len, 0, m);
		k->len += m;
		a += m;
		if (k->len == HXT_BUF)
			flush(k);
	}
}

static void
emit_header(struct pack *k, const struct msc_tar_entry *e)
{
	uint8_t h[MSC_TAR_HEADER_MAX];

	emit(k, h, msc_tar_header(e, h));
}

/* A regular file's bytes: read only what the window holds. */
static void
emit_file(struct pack *k, int dfd, const char *base, const struct stat *st,
    const char *name)
{
	unsigned long long size = (unsigned long long)st->st_size;
	uint8_t chunk[HXT_BUF];
	struct stat now;
	unsigned long long at = 0;
	int fd;

	if (k->pos + size <= k->skip || k->pos >= k->end) {
		k->pos += size;
		emit(k, NULL, msc_tar_pad(size));
		return;
	}
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &now) != 0 || now.st_ino != st->st_ino ||
	    !S_ISREG(now.st_mode)) {
		k->rv = hxp_fail("%s: %s: %s", k->path, name, fd < 0 ?
		    strerror(errno) : "it changed while it was packed");
		if (fd >= 0)
			close(fd);
		return;
	}
	if (k->pos < k->skip) {
		at = k->skip - k->pos;
		k->pos = k->skip;
	}
	while (at < size && !full(k)) {
		size_t want = size - at < sizeof(chunk) ? (size_t)(size - at) :
		    sizeof(chunk);
		ssize_t r = pread(fd, chunk, want, (off_t)at);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			k->rv = hxp_fail("%s: %s: %s", k->path, name,
			    strerror(errno));
			break;
		}
		if (r == 0) {           /* it shrank: zeros keep the sizes */
			emit(k, NULL, (size_t)(size - at));
			at = size;
			break;
		}
		emit(k, chunk, (size_t)r);
		at += (unsigned long long)r;
	}
	close(fd);
	if (at < size)
		k->pos += size - at;    /* past the window: not read */
	emit(k, NULL, msc_tar_pad(size));
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names in folder fd (taken: closed); NULL with rv set. */
static char **
names_of(struct pack *k, int fd, size_t *n, const char *name)
{
	DIR *d = fdopendir(fd);
	char **v = NULL, **nv;
	size_t cap = 0;
	struct dirent *de;

	*n = 0;
	if (d == NULL) {
		close(fd);
		k->rv = hxp_fail("%s: %s: %s", k->path, name, strerror(errno));
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") ==
		    0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL)
				break;
			v = nv;
		}
		if ((v[*n] = strdup(de->d_name)) == NULL)
			break;
		(*n)++;
	}
	if (de != NULL) {
		k->rv = hxp_fail("out of memory");
		while (*n > 0)
			free(v[--*n]);
		free(v);
		closedir(d);
		return NULL;
	}
	closedir(d);
	if (*n > 0)
		qsort(v, *n, sizeof(*v), by_name);
	return v;
}

static void pack_dir(struct pack *k, int fd, const char *prefix, int depth);

/* One name in folder dfd: its entry, and what is below a folder. */
static void
pack_one(struct pack *k, int dfd, const char *base, const char *prefix,
    int depth)
{
	struct msc_tar_entry e = { 0 };
	struct stat st;
	ssize_t n;
	int fd;

	if (strcmp(prefix, ".") == 0)
		n = snprintf(e.name, sizeof(e.name), "%s", base);
	else
		n = snprintf(e.name, sizeof(e.name), "%s/%s", prefix, base);
	if (n < 0 || (size_t)n >= sizeof(e.name)) {
		k->rv = hxp_fail("%s: %s/%s: a name longer than %d bytes",
		    k->path, prefix, base, MSC_TAR_NAME_MAX);
		return;
	}
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;                 /* gone meanwhile */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
	    !S_ISLNK(st.st_mode))
		return;                 /* devices, fifos, sockets: left out */
	if (++k->entries > HXT_ENTRIES_MAX) {
		k->rv = hxp_fail("%s: more than %d files, folders and "
		    "symlinks: download a smaller folder, or pack it with "
		    "terminal_execute first", k->path, HXT_ENTRIES_MAX);
		return;
	}
	e.mode = st.st_mode & 07777;
	e.mtime = st.st_mtim.tv_sec;
	if (S_ISLNK(st.st_mode)) {
		e.type = MSC_TAR_SYMLINK;
		n = readlinkat(dfd, base, e.link, sizeof(e.link) - 1);
		if (n < 0)
			return;
		e.link[n] = '\0';
		emit_header(k, &e);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		e.type = MSC_TAR_FILE;
		e.size = (uint64_t)st.st_size;
		emit_header(k, &e);
		emit_file(k, dfd, base, &st, e.name);
		return;
	}
	fd = openat(dfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || hxf_forbidden(fd, &st) != NULL) {
		close(fd);              /* /proc, /sys mounted below */
		return;
	}
	e.type = MSC_TAR_DIR;
	emit_header(k, &e);
	pack_dir(k, fd, e.name, depth + 1);
}

static void
pack_dir(struct pack *k, int fd, const char *prefix, int depth)
{
	size_t n, i;
	char **v;

	if (depth > 256) {
		close(fd);
		k->rv = hxp_fail("%s: %s: folders nested more than 256 deep",
		    k->path, prefix);
		return;
	}
	if ((v = names_of(k, dup(fd), &n, prefix)) == NULL && k->rv != 0) {
		close(fd);
		return;
	}
	for (i = 0; i < n && !full(k); i++)
		pack_one(k, fd, v[i], prefix, depth);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	close(fd);
}

/* tar SRC SKIP LEN */
int
hxf_tar(int argc, char **argv)
{
	static const uint8_t trailer[2 * MSC_TAR_BLOCK];
	struct pack k = { 0 };
	struct msc_tar_entry e = { 0 };
	struct hxf_target t;
	long long skip, len;
	int fd;

	if (argc != 3 || !hxp_parse_num(argv[1], 0, 1LL << 60, &skip) ||
	    !hxp_parse_num(argv[2], 1, 1LL << 30, &len))
		return hxp_fail("usage: --file tar SRC SKIP LEN");
	if (hxf_resolve(argv[0], false, &t) != 0)
		return HX_EXIT_ERR;
	k.path = argv[0];
	k.skip = (unsigned long long)skip;
	k.end = k.skip + (unsigned long long)len;
	if (!t.exists) {
		close(t.dirfd);
		return hxp_fail("%s: no such file or folder", argv[0]);
	}
	if (!S_ISREG(t.st.st_mode) && !S_ISDIR(t.st.st_mode)) {
		close(t.dirfd);
		return hxp_fail("%s: refused: it is %s", argv[0],
		    hxf_kind(t.st.st_mode));
	}
	if ((k.buf = malloc(HXT_BUF)) == NULL) {
		close(t.dirfd);
		return hxp_fail("out of memory");
	}
	strcpy(e.name, ".");
	e.mode = t.st.st_mode & 07777;
	e.mtime = t.st.st_mtim.tv_sec;
	if (S_ISREG(t.st.st_mode)) {
		fd = openat(t.dirfd, t.base, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 && hxf_forbidden(fd, &t.st) != NULL) {
			close(fd);
			fd = -1;
			errno = EPERM;
		}
		if (fd < 0)
			k.rv = hxp_fail("%s: %s", argv[0], strerror(errno));
		else
			close(fd);
		e.type = MSC_TAR_FILE;
		e.size = (uint64_t)t.st.st_size;
		if (k.rv == 0) {
			emit_header(&k, &e);
			emit_file(&k, t.dirfd, t.base, &t.st, ".");
		}
	} else {
		fd = openat(t.dirfd, t.base, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &t.st) != 0 ||
		    hxf_forbidden(fd, &t.st) != NULL) {
			k.rv = hxp_fail("%s: refused: %s", argv[0], fd < 0 ?
			    strerror(errno) : hxf_forbidden(fd, &t.st) ?
			    hxf_forbidden(fd, &t.st) : strerror(errno));
			if (fd >= 0)
				close(fd);
		} else {
			e.type = MSC_TAR_DIR;
			emit_header(&k, &e);
			pack_dir(&k, fd, ".", 0);
		}
	}
	if (k.rv == 0)
		emit(&k, trailer, sizeof(trailer));
	if (k.rv == 0)
		flush(&k);
	free(k.buf);
	close(t.dirfd);
	return k.rv;
}
