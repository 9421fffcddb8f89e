/*
 * xfer_dst.c - computer_download's local side: a tar stream written
 * into the local tree, nothing followed below its top (see xfer.h).
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

/* ---- download: a tar stream into the local tree ------------------------- */

/* The computer's mode for what is made here: its permission bits, never
 * setuid, setgid or sticky on the host. */
#define XFER_MODE(m) ((mode_t)(m) & 0777)

struct xfer_dst {
	char shown[PATH_MAX];
	struct xfer_counts n;
	long entries;
	int rootfd;                     /* the allowed folder (O_PATH) */
	int parentfd;                   /* where the top goes, or -1: it is
	                                 * the allowed folder itself */
	char base[NAME_MAX + 1];
	int topfd;                      /* the top folder, or -1 */
	int fd;                         /* the file being written, or -1 */
	bool top_seen;
	unsigned long long fed;         /* stream bytes fed */
	struct msc_tar_rd rd;
	struct final *finals;
	size_t n_finals, cap_finals;
	char *err;                      /* the caller's, during a feed */
	size_t errlen;
};

int
xfer_dst_open(const struct xfer_allow *a, const char *path,
    struct xfer_dst **out, char *err, size_t errlen)
{
	struct xfer_place p;
	struct xfer_dst *d;
	char dir[PATH_MAX], *slash;
	int rv;

	*out = NULL;
	if ((rv = xfer_locate(a, path, &p, err, errlen)) != 0)
		return rv;
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		close(p.rootfd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(d->shown, sizeof(d->shown), "%s", p.shown);
	d->rootfd = p.rootfd;
	d->parentfd = d->topfd = d->fd = -1;
	msc_tar_rd_init(&d->rd);
	*out = d;
	if (strcmp(p.rel, ".") == 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", p.rel);
	slash = strrchr(dir, '/');
	if (strlen(slash != NULL ? slash + 1 : dir) > NAME_MAX) {
		xfer_dst_free(d);
		*out = NULL;
		snprintf(err, errlen, "local_path: %.300s: a name longer than "
		    "%d bytes", p.shown, NAME_MAX);
		return -ENAMETOOLONG;
	}
	if (slash != NULL) {
		*slash = '\0';
		memcpy(d->base, slash + 1, strlen(slash + 1) + 1);
	} else {
		memcpy(d->base, dir, strlen(dir) + 1);
		strcpy(dir, ".");
	}
	d->parentfd = xfer_openat2(p.rootfd, dir, O_PATH | O_DIRECTORY,
	    RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	if (d->parentfd < 0) {
		rv = errno;
		snprintf(dir, sizeof(dir), "%s", p.shown);
		if ((slash = strrchr(dir, '/')) != NULL && slash != dir)
			*slash = '\0';
		xfer_dst_free(d);
		*out = NULL;
		if (rv == ENOENT) {
			snprintf(err, errlen, "local_path: %s: the folder %s "
			    "does not exist", p.shown, dir);
			return -ENOENT;
		}
		return xfer_open_error(p.shown, rv, err, errlen);
	}
	return 0;
}

const struct xfer_counts *
xfer_dst_counts(const struct xfer_dst *d)
{
	return &d->n;
}

const char *
xfer_dst_path(const struct xfer_dst *d)
{
	return d->shown;
}

void
xfer_dst_free(struct xfer_dst *d)
{
	if (d == NULL)
		return;
	if (d->fd >= 0)
		close(d->fd);
	if (d->topfd >= 0)
		close(d->topfd);
	if (d->parentfd >= 0)
		close(d->parentfd);
	if (d->rootfd >= 0)
		close(d->rootfd);
	msc_tar_rd_fini(&d->rd);
	for (size_t i = 0; i < d->n_finals; i++)
		free(d->finals[i].name);
	free(d->finals);
	free(d);
}

static int
d_fail(struct xfer_dst *d, const char *name, const char *what, int e)
{
	bool top = strcmp(name, ".") == 0;

	snprintf(d->err, d->errlen, "local_path: %s%s%s: %s%s%s", d->shown,
	    top ? "" : "/", top ? "" : name, what, e ? ": " : "",
	    e ? strerror(e) : "");
	return -EPERM;
}

static int
d_final(struct xfer_dst *d, const char *name, unsigned mode)
{
	if ((mode & 0700) == 0700)
		return 0;
	if (d->n_finals == d->cap_finals) {
		size_t cap = d->cap_finals ? d->cap_finals * 2 : 16;
		struct final *f = realloc(d->finals, cap * sizeof(*f));

		if (f == NULL)
			return -ENOMEM;
		d->finals = f;
		d->cap_finals = cap;
	}
	if ((d->finals[d->n_finals].name = strdup(name)) == NULL)
		return -ENOMEM;
	d->finals[d->n_finals++].mode = mode;
	return 0;
}

/*
 * Whether a symlink at `name` with target `link` stays inside the top.
 * Its ".." must all come first, and be no more than the folders the link
 * is in: a ".." after a name could climb out of where that name (itself
 * a symlink made here) leads, so symlinks checked one by one would lead
 * out together (a/b/s -> "../..", then t -> "a/b/s/../.."). With this
 * rule each link resolves from its own folder to an ancestor inside the
 * top, then only goes down: through folders, or links that do the same.
 */
static bool
link_inside(const char *name, const char *link)
{
	long depth = 0;
	bool named = false;
	const char *p;

	if (link[0] == '/' || link[0] == '\0')
		return false;
	for (p = name; *p != '\0'; p++)
		depth += *p == '/';     /* the folders the link is in */
	for (p = link; *p != '\0';) {
		const char *slash = strchr(p, '/');
		size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (named || --depth < 0)
				return false;
		} else if (len > 0 && !(len == 1 && p[0] == '.'))
			named = true;
		if (slash == NULL)
			break;
		p = slash + 1;
	}
	return true;
}

/* The top: the folder or file local_path names. */
static int
d_top(struct xfer_dst *d, const struct msc_tar_entry *e)
{
	struct stat st;
	bool made = false;
	mode_t found;
	int fd;

	d->top_seen = true;
	if (e->type == MSC_TAR_DIR) {
		if (d->parentfd < 0)
			fd = openat(d->rootfd, ".", O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC);
		else {
			if (mkdirat(d->parentfd, d->base, 0700) == 0)
				made = true;
			else if (errno != EEXIST)
				return d_fail(d, ".", "cannot make the folder",
				    errno);
			fd = openat(d->parentfd, d->base, O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (fd < 0)
			return d_fail(d, ".", errno == ELOOP ? "refused: it "
			    "is a symlink" : errno == ENOTDIR ? "exists and "
			    "is not a folder" : "cannot open the folder",
			    errno == ELOOP || errno == ENOTDIR ? 0 : errno);
		/* Only a folder made here takes the computer's mode: never
		 * the allowed folder, nor one that was there. */
		if (made && (fchmod(fd, XFER_MODE(e->mode) | 0700) != 0 ||
		    d_final(d, ".", XFER_MODE(e->mode)) != 0)) {
			close(fd);
			return d_fail(d, ".", "cannot set the folder's mode",
			    errno);
		}
		d->topfd = fd;
		d->n.folders++;
		return 0;
	}
	if (e->type != MSC_TAR_FILE)
		return d_fail(d, ".", "refused: the computer's path is not a "
		    "file or a folder", 0);
	if (d->parentfd < 0)
		return d_fail(d, ".", "is a folder: name the file's path", 0);
	if (fstatat(d->parentfd, d->base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode))
		return d_fail(d, ".", S_ISDIR(st.st_mode) ? "is a folder: "
		    "name the file's path" : S_ISLNK(st.st_mode) ? "refused: "
		    "it is a symlink" : "refused: it is not a regular file", 0);
	fd = xfer_open_reg(d->parentfd, d->base, O_WRONLY | O_CREAT |
	    O_TRUNC | O_NONBLOCK, 0600, &found);
	if (fd < 0 && found != 0)
		return d_fail(d, ".", "refused: it is not a regular file", 0);
	if (fd < 0)
		return d_fail(d, ".", "cannot write the file", errno);
	d->fd = fd;
	d->n.files++;
	return 0;
}

static int
d_entry(void *arg, const struct msc_tar_entry *e)
{
	struct xfer_dst *d = arg;
	char dir[MSC_TAR_NAME_MAX + 1];
	const char *base, *slash;
	struct stat st;
	bool made = false;
	mode_t found;
	int pfd, rv = 0, fd;

	if (++d->entries > XFER_ENTRIES_MAX)
		return d_fail(d, ".", "more than 200000 files, folders and "
		    "symlinks: download a smaller folder", 0);
	if (!msc_tar_name_ok(e->name))
		return d_fail(d, ".", "refused: a member name with \"..\", an "
		    "empty part or an absolute path", 0);
	if (e->offset > 0)
		return d_fail(d, e->name, "refused: a piece of a file", 0);
	/* Refused by its header, before any of its bytes is written. */
	if (e->type == MSC_TAR_FILE && e->size > (uint64_t)(XFER_BYTES_MAX -
	    d->n.bytes))
		return d_fail(d, ".", "more than 8 GiB of files: download "
		    "a part of it, or an archive made smaller", 0);
	if (strcmp(e->name, ".") == 0) {
		if (d->top_seen)
			return d_fail(d, ".", "the stream has two tops", 0);
		return d_top(d, e);
	}
	if (d->topfd < 0)
		return d_fail(d, e->name, "a member below a top that is not "
		    "a folder", 0);
	if (e->type != MSC_TAR_FILE && e->type != MSC_TAR_DIR &&
	    e->type != MSC_TAR_SYMLINK) {
		d->n.skipped++;
		return 0;
	}
	if ((slash = strrchr(e->name, '/')) != NULL) {
		memcpy(dir, e->name, (size_t)(slash - e->name));
		dir[slash - e->name] = '\0';
		base = slash + 1;
		pfd = xfer_openat2(d->topfd, dir, O_PATH | O_DIRECTORY,
		    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
		    RESOLVE_NO_MAGICLINKS);
	} else {
		base = e->name;
		pfd = dup(d->topfd);
	}
	if (pfd < 0)
		return d_fail(d, e->name, errno == ELOOP || errno == EXDEV ?
		    "refused: its folder is a symlink" : "cannot open its "
		    "folder", errno == ELOOP || errno == EXDEV ? 0 : errno);
	if (e->type == MSC_TAR_DIR) {
		if (mkdirat(pfd, base, 0700) == 0) {
			made = true;
			d->n.folders++;
		} else if (errno != EEXIST)
			rv = d_fail(d, e->name, "cannot make the folder",
			    errno);
		if (rv == 0 && (fd = openat(pfd, base, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			rv = d_fail(d, e->name, "exists and is not a folder",
			    0);
		else if (rv == 0) {
			if (made && (fchmod(fd, XFER_MODE(e->mode) | 0700) !=
			    0 || d_final(d, e->name, XFER_MODE(e->mode)) != 0))
				rv = d_fail(d, e->name, "cannot set the "
				    "folder's mode", errno);
			close(fd);
		}
	} else if (e->type == MSC_TAR_SYMLINK) {
		if (!link_inside(e->name, e->link))
			d->n.skipped++; /* it would lead out of local_path */
		else if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
			rv = d_fail(d, e->name, "exists: a symlink is not "
			    "made over it", 0);
		else if (symlinkat(e->link, pfd, base) != 0)
			rv = d_fail(d, e->name, "cannot make the symlink",
			    errno);
		else
			d->n.symlinks++;
	} else {
		if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISREG(st.st_mode))
			rv = d_fail(d, e->name, S_ISDIR(st.st_mode) ?
			    "exists and is a folder" : "refused: it exists "
			    "and is not a regular file", 0);
		/* Opened as a regular file only: not a fifo or a device
		 * put there after the check above. */
		else if ((fd = xfer_open_reg(pfd, base, O_WRONLY | O_CREAT |
		    O_TRUNC | O_NONBLOCK, 0600, &found)) < 0)
			rv = d_fail(d, e->name, found != 0 ? "refused: it "
			    "exists and is not a regular file" : "cannot write "
			    "the file", found != 0 ? 0 : errno);
		else {
			d->fd = fd;
			d->n.files++;
		}
	}
	close(pfd);
	return rv;
}

static int
d_data(void *arg, const uint8_t *p, size_t n)
{
	struct xfer_dst *d = arg;

	if (d->fd < 0)
		return 0;
	d->n.bytes += (long long)n;
	if (d->n.bytes > XFER_BYTES_MAX)
		return d_fail(d, ".", "more than 8 GiB of files", 0);
	while (n > 0) {
		ssize_t w = write(d->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return d_fail(d, d->rd.e.name, "cannot write the file",
			    errno);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int
d_done(void *arg, const struct msc_tar_entry *e)
{
	struct xfer_dst *d = arg;
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { e->mtime, 0 } };
	int rv = 0;

	if (d->fd < 0)
		return 0;
	if (fchmod(d->fd, XFER_MODE(e->mode)) != 0)
		rv = d_fail(d, e->name, "cannot set the file's mode", errno);
	if (e->mtime > 0)
		(void)futimens(d->fd, ts);
	if (close(d->fd) != 0 && rv == 0)
		rv = d_fail(d, e->name, "cannot write the file", errno);
	d->fd = -1;
	return rv;
}

int
xfer_dst_feed(struct xfer_dst *d, const uint8_t *p, size_t n, char *err,
    size_t errlen)
{
	static const struct msc_tar_cb cb = { d_entry, d_data, d_done };
	int rv;

	d->err = err;
	d->errlen = errlen;
	err[0] = '\0';
	/* Beyond the files' bytes, a stream holds only each entry's header
	 * and padding and the trailer: more is a computer that does not
	 * stop (skipped entries' bytes, padding, bytes after the end). */
	if (d->fed > (unsigned long long)XFER_BYTES_MAX +
	    (unsigned long long)(d->entries + 1) * (MSC_TAR_HEADER_MAX +
	    MSC_TAR_BLOCK) + 2 * MSC_TAR_BLOCK) {
		snprintf(err, errlen, "the computer's answer is longer than "
		    "8 GiB of files and their headers: download a part of "
		    "it");
		return -EFBIG;
	}
	d->fed += n;
	rv = msc_tar_feed(&d->rd, p, n, &cb, d);
	if (rv != 0 && err[0] == '\0')
		snprintf(err, errlen, "the computer's answer is not a tar "
		    "stream%s", rv == -EBADMSG ? " (the path may have changed "
		    "during the download: try again)" : "");
	return rv;
}

bool
xfer_dst_ended(const struct xfer_dst *d)
{
	return d->rd.end;
}

int
xfer_dst_finish(struct xfer_dst *d, char *err, size_t errlen)
{
	if (!msc_tar_rd_complete(&d->rd, false) || !d->top_seen) {
		snprintf(err, errlen, "the computer's answer ended early");
		return -EBADMSG;
	}
	/* The deepest first: a folder's own mode once all below is made. */
	for (size_t i = d->n_finals; i-- > 0;) {
		const char *name = d->finals[i].name;
		int fd = strcmp(name, ".") == 0 ? dup(d->topfd) :
		    xfer_openat2(d->topfd, name, O_RDONLY | O_DIRECTORY,
			RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			RESOLVE_NO_MAGICLINKS);

		if (fd < 0 || fchmod(fd, d->finals[i].mode) != 0) {
			snprintf(err, errlen, "local_path: %s/%s: cannot set "
			    "the folder's mode: %s", d->shown, name,
			    strerror(errno));
			if (fd >= 0)
				close(fd);
			return -EPERM;
		}
		close(fd);
	}
	return 0;
}
