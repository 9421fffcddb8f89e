/*
 * helper_file_tar.c - the computer's side of computer_upload and
 * computer_download (issue 29; helper_file.h): a tar stream (lib/msc_tar.h)
 * unpacked from stdin, or a path packed onto stdout, never through a shell.
 *
 *   untar DEST MAKE_DIRS      stdin: one batch of the upload, a tar stream
 *                             whose first entry "." is DEST itself (a file
 *                             or a folder); the others go below it
 *   tar SRC SKIP LEN          stdout: bytes [SKIP, SKIP+LEN) of SRC packed
 *                             (a file, or a folder and all below it, in
 *                             name order, so each call packs the same
 *                             stream and the edge reads it in parts)
 *
 * DEST and SRC resolve as the other file commands' paths (hxf_resolve:
 * /proc, /sys and the helper's own files refused, also behind a symlink);
 * below them nothing is followed: each name is opened from its top with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so a member can neither
 * leave DEST nor write through a symlink, and `tar` packs symlinks as
 * symlinks and leaves devices, fifos, sockets and the kernel's folders
 * out. Modes travel; a folder is made owner-writable until a later entry
 * (MSC.final) gives its own mode back. On the WASM backends DEST and SRC
 * resolve in the computer's root (hxf_root) and the bytes count against
 * the disk quota.
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

/* Opens `name` below top, nothing followed; -1 with errno set. */
static int
beneath(int top, const char *name, int flags, mode_t mode)
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

static int
write_all(int fd, const uint8_t *p, size_t n)
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

/* ---- untar -------------------------------------------------------------- */

struct untar {
	struct hxf_target t;    /* DEST: its folder and name */
	int top;                /* DEST as a folder, or -1 */
	int fd;                 /* the file being written, or -1 */
	const char *path;       /* DEST as given */
	const char *name;       /* the member being written */
	long long files, folders, symlinks, bytes, skipped;
	char err[600];
};

static int
fail(struct untar *u, const char *name, const char *what, int e)
{
	snprintf(u->err, sizeof(u->err), "%.200s: %.200s%s%s%s%s", u->path,
	    strcmp(name, ".") == 0 ? "" : name,
	    strcmp(name, ".") == 0 ? "" : ": ", what, e ? ": " : "",
	    e ? strerror(e) : "");
	return -EPERM;
}

/* Splits name into the folder below top that holds it and its last part;
 * the folder's descriptor (top itself for a top-level name), or -1. */
static int
parent_of(struct untar *u, const char *name, const char **base)
{
	const char *slash = strrchr(name, '/');
	char dir[MSC_TAR_NAME_MAX + 1];

	*base = slash != NULL ? slash + 1 : name;
	if (slash == NULL)
		return dup(u->top);
	memcpy(dir, name, (size_t)(slash - name));
	dir[slash - name] = '\0';
	return beneath(u->top, dir, O_RDONLY | O_DIRECTORY, 0);
}

static int
charge(struct untar *u, const char *name, uint64_t bytes)
{
	if (hxf_root.charge != NULL && hxf_root.charge(hxf_root.arg, bytes +
	    HXF_ENTRY_BYTES) != 0)
		return fail(u, name, "no space left on the computer's disk",
		    0);
	return 0;
}

static int
make_dir(struct untar *u, int pfd, const char *base, const char *name,
    const struct msc_tar_entry *e)
{
	mode_t mode = e->final ? e->mode : (e->mode | 0700);
	struct stat st;
	int fd;

	if (mkdirat(pfd, base, 0700) == 0) {
		if (charge(u, name, 0) != 0)
			return -EPERM;
		u->folders++;
	} else if (errno != EEXIST)
		return fail(u, name, "cannot make the folder", errno);
	fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return fail(u, name, errno == ENOTDIR || errno == ELOOP ?
		    "exists and is not a folder" : "cannot open the folder",
		    errno == ENOTDIR || errno == ELOOP ? 0 : errno);
	if (fstat(fd, &st) != 0 || hxf_forbidden(fd, &st) != NULL) {
		close(fd);
		return fail(u, name, "refused: a folder the file tools do "
		    "not write", 0);
	}
	if ((st.st_mode & 07777) != mode && fchmod(fd, mode) != 0) {
		close(fd);
		return fail(u, name, "cannot set the folder's mode", errno);
	}
	if (strcmp(name, ".") == 0 && u->top < 0)
		u->top = fd;
	else
		close(fd);
	return 0;
}

static int
open_file(struct untar *u, int pfd, const char *base, const char *name,
    const struct msc_tar_entry *e)
{
	struct stat st;
	int fd;

	if (e->offset == 0) {
		if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISREG(st.st_mode)) {
			if (S_ISDIR(st.st_mode))
				return fail(u, name, "exists and is a folder",
				    0);
			if (unlinkat(pfd, base, 0) != 0)
				return fail(u, name, "cannot replace it",
				    errno);
		}
		if (charge(u, name, e->size) != 0)
			return -EPERM;
		fd = openat(pfd, base, O_WRONLY | O_CREAT | O_TRUNC |
		    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	} else {
		if (charge(u, name, e->size) != 0)
			return -EPERM;
		fd = openat(pfd, base, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	}
	if (fd < 0)
		return fail(u, name, "cannot write the file", errno);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    hxf_forbidden(fd, &st) != NULL) {
		close(fd);
		return fail(u, name, "refused: not a regular file it may "
		    "write", 0);
	}
	if (e->offset > 0 && lseek(fd, (off_t)e->offset, SEEK_SET) < 0) {
		close(fd);
		return fail(u, name, "cannot seek", errno);
	}
	u->fd = fd;
	if (e->offset == 0)
		u->files++;
	return 0;
}

static int
make_link(struct untar *u, int pfd, const char *base, const char *name,
    const struct msc_tar_entry *e)
{
	struct stat st;

	if (charge(u, name, 0) != 0)
		return -EPERM;
	if (symlinkat(e->link, pfd, base) != 0) {
		if (errno != EEXIST)
			return fail(u, name, "cannot make the symlink", errno);
		if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode))
			return fail(u, name, "exists and is a folder", 0);
		if (unlinkat(pfd, base, 0) != 0 ||
		    symlinkat(e->link, pfd, base) != 0)
			return fail(u, name, "cannot replace it by the "
			    "symlink", errno);
	}
	u->symlinks++;
	return 0;
}

static int
u_entry(void *arg, const struct msc_tar_entry *e)
{
	struct untar *u = arg;
	const char *base;
	int pfd, rv;
	bool top = strcmp(e->name, ".") == 0;

	u->name = e->name;
	if (!msc_tar_name_ok(e->name))
		return fail(u, e->name, "refused: a member name with \"..\", "
		    "an empty part or an absolute path", 0);
	if (e->type != MSC_TAR_FILE && e->type != MSC_TAR_DIR &&
	    e->type != MSC_TAR_SYMLINK) {
		u->skipped++;
		return 0;
	}
	if (top) {
		pfd = dup(u->t.dirfd);
		base = u->t.base;
		if (e->type == MSC_TAR_SYMLINK)
			return fail(u, ".", "refused: the top is a symlink", 0);
	} else {
		if (u->top < 0)         /* a later batch: DEST is made */
			u->top = openat(u->t.dirfd, u->t.base, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (u->top < 0)
			return fail(u, e->name, "a member below a top that "
			    "is not a folder", 0);
		pfd = parent_of(u, e->name, &base);
	}
	if (pfd < 0)
		return fail(u, e->name, errno == ELOOP || errno == EXDEV ?
		    "refused: its folder is a symlink" :
		    "cannot open its folder", errno == ELOOP ||
		    errno == EXDEV ? 0 : errno);
	if (e->type == MSC_TAR_DIR)
		rv = make_dir(u, pfd, base, e->name, e);
	else if (e->type == MSC_TAR_FILE)
		rv = open_file(u, pfd, base, e->name, e);
	else
		rv = make_link(u, pfd, base, e->name, e);
	close(pfd);
	return rv;
}

static int
u_data(void *arg, const uint8_t *p, size_t n)
{
	struct untar *u = arg;
	int rv;

	if (u->fd < 0)
		return 0;
	if ((rv = write_all(u->fd, p, n)) != 0) {
		close(u->fd);
		u->fd = -1;
		return fail(u, u->name, rv == -ENOSPC || rv == -EDQUOT ?
		    "no space left on the computer's disk" :
		    "cannot write the file", rv == -ENOSPC ||
		    rv == -EDQUOT ? 0 : -rv);
	}
	u->bytes += (long long)n;
	return 0;
}

static int
u_done(void *arg, const struct msc_tar_entry *e)
{
	struct untar *u = arg;
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { e->mtime, 0 } };
	int rv = 0;

	if (u->fd < 0)
		return 0;
	if (fchmod(u->fd, e->mode) != 0)
		rv = fail(u, e->name, "cannot set the file's mode", errno);
	if (e->mtime > 0)
		(void)futimens(u->fd, ts);
	if (close(u->fd) != 0 && rv == 0)
		rv = fail(u, e->name, "cannot write the file", errno);
	u->fd = -1;
	if (rv == 0 && strcmp(e->name, ".") == 0)
		u->t.exists = true;
	return rv;
}

/* untar DEST MAKE_DIRS */
int
hxf_untar(int argc, char **argv)
{
	static const struct msc_tar_cb cb = { u_entry, u_data, u_done };
	struct untar u = { .top = -1, .fd = -1 };
	struct msc_tar_rd rd;
	struct out o = { 0 };
	long long make_dirs;
	uint8_t *buf;
	int rv = 0;

	if (argc != 2 || !hxp_parse_num(argv[1], 0, 1, &make_dirs))
		return hxp_fail("usage: --file untar DEST MAKE_DIRS");
	u.path = argv[0];
	if (hxf_resolve(argv[0], make_dirs != 0, &u.t) != 0)
		return HX_EXIT_ERR;
	if ((buf = malloc(HXT_BUF)) == NULL) {
		close(u.t.dirfd);
		return hxp_fail("out of memory");
	}
	msc_tar_rd_init(&rd);
	for (;;) {
		ssize_t n = read(0, buf, HXT_BUF);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rv = fail(&u, ".", "reading the stream", errno);
			break;
		}
		if (n == 0)
			break;
		if ((rv = msc_tar_feed(&rd, buf, (size_t)n, &cb, &u)) != 0)
			break;
	}
	if (rv == 0 && !msc_tar_rd_complete(&rd, false))
		rv = fail(&u, ".", "the stream ended early", 0);
	if (rv != 0 && u.err[0] == '\0')
		fail(&u, ".", rv == -EBADMSG ? "not a tar stream" :
		    "reading the stream", rv == -EBADMSG ? 0 : -rv);
	msc_tar_rd_fini(&rd);
	free(buf);
	if (u.fd >= 0)
		close(u.fd);
	if (u.top >= 0)
		close(u.top);
	close(u.t.dirfd);
	if (rv != 0)
		return hxp_fail("%s", u.err);
	hxp_out_cstr(&o, "{\"path\": ");
	hxp_out_str(&o, u.t.shown, strlen(u.t.shown));
	hxp_out_fmt(&o, ", \"files\": %lld, \"folders\": %lld, \"symlinks\": "
	    "%lld, \"bytes\": %lld, \"skipped\": %lld}", u.files, u.folders,
	    u.symlinks, u.bytes, u.skipped);
	return hxp_out_print(&o);
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
	if (k->len > 0 && write_all(1, k->buf, k->len) != 0 && k->rv == 0)
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
