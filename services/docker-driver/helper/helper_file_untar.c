/*
 * helper_file_untar.c - computer_upload's side in the computer (issue 29;
 * helper_file.h): one batch of the upload, a tar stream (lib/msc_tar.h)
 * on stdin, unpacked at DEST, never through a shell.
 *
 *   untar DEST MAKE_DIRS      the stream's first entry "." is DEST itself
 *                             (a file or a folder), the others go below it
 *
 * DEST resolves as the other file commands' paths (hxf_resolve: /proc,
 * /sys and the helper's own files refused, also behind a symlink); below
 * it nothing is followed: each member's folder is opened from DEST with
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so a member can neither
 * leave DEST nor write through a symlink. Modes travel; a folder is made
 * owner-writable until a later entry (MSC.final) gives its own mode back.
 * On the WASM backends DEST resolves in the computer's root (hxf_root)
 * and the bytes count against the disk quota.
 */
#include "helper.h"
#include "helper_file.h"
#include "msc_tar.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HXT_BUF 65536

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
	return hxf_beneath(u->top, dir, O_RDONLY | O_DIRECTORY, 0);
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
	if ((rv = hxf_write_all(u->fd, p, n)) != 0) {
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

