/*
 * xfer_local.c - computer_upload's and computer_download's local side;
 * see xfer.h.
 */
#include "xfer.h"

#include <dirent.h>
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

#include "msc_tar.h"

#define TRAILER (2 * MSC_TAR_BLOCK)

static int
openat2_(int dfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = resolve,
	};
	long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));

	return fd < 0 ? -1 : (int)fd;
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

/* A local path placed below one allowed folder. */
struct place {
	int rootfd;                     /* the folder (O_PATH) */
	char rel[PATH_MAX];             /* below it; "." the folder itself */
	char shown[PATH_MAX];           /* the whole path, normalized */
};

/*
 * Normalizes path (joined to the workspace when relative) and finds the
 * allowed folder it is below; 0, or -EACCES/-EINVAL with err set.
 */
static int
locate(const struct xfer_allow *a, const char *path, struct place *p,
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
		if ((p->rootfd = open(d, O_PATH | O_DIRECTORY |
		    O_CLOEXEC)) < 0)
			continue;
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

static const char *
kind(mode_t m)
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

static int
open_error(const char *shown, int e, char *err, size_t errlen)
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

/* ---- upload: the local tree as tar batches ------------------------------ */

struct level {
	DIR *d;
	char name[MSC_TAR_NAME_MAX + 1];        /* "." the top */
};

struct final {
	char *name;
	unsigned mode;
};

struct xfer_src {
	char shown[PATH_MAX];
	struct xfer_counts n;
	long entries;
	int topfd;                      /* the file or folder */
	bool top_dir, top_sent, finals_sent, done;
	/* A file in flight: its descriptor, header and what was sent. */
	int fd;
	struct msc_tar_entry cur;
	uint64_t total, off;
	struct level lv[XFER_DEPTH_MAX + 1];
	int depth;
	struct final *finals;
	size_t n_finals, cap_finals;
	size_t next_final;
};

int
xfer_src_open(const struct xfer_allow *a, const char *path,
    struct xfer_src **out, char *err, size_t errlen)
{
	struct place p;
	struct xfer_src *s;
	struct stat st;
	char proc[40];
	int pfd, fd, rv;

	*out = NULL;
	if ((rv = locate(a, path, &p, err, errlen)) != 0)
		return rv;
	pfd = openat2_(p.rootfd, p.rel, O_PATH, RESOLVE_BENEATH |
	    RESOLVE_NO_MAGICLINKS);
	close(p.rootfd);
	if (pfd < 0)
		return open_error(p.shown, errno, err, errlen);
	if (fstat(pfd, &st) != 0) {
		rv = open_error(p.shown, errno, err, errlen);
		close(pfd);
		return rv;
	}
	if (S_ISDIR(st.st_mode))
		fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else if (S_ISREG(st.st_mode)) {
		/* The same inode, opened for reading: no name looked up. */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	} else {
		close(pfd);
		snprintf(err, errlen, "local_path: %s: refused: it is %s",
		    p.shown, kind(st.st_mode));
		return -EINVAL;
	}
	close(pfd);
	if (fd < 0)
		return open_error(p.shown, errno, err, errlen);
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(s->shown, sizeof(s->shown), "%s", p.shown);
	s->topfd = fd;
	s->fd = -1;
	s->top_dir = S_ISDIR(st.st_mode);
	s->cur.mode = st.st_mode & 07777;
	s->cur.mtime = st.st_mtim.tv_sec;
	*out = s;
	return 0;
}

const struct xfer_counts *
xfer_src_counts(const struct xfer_src *s)
{
	return &s->n;
}

const char *
xfer_src_path(const struct xfer_src *s)
{
	return s->shown;
}

void
xfer_src_free(struct xfer_src *s)
{
	if (s == NULL)
		return;
	while (s->depth > 0)
		closedir(s->lv[--s->depth].d);
	if (s->fd >= 0 && s->fd != s->topfd)
		close(s->fd);
	if (s->topfd >= 0)
		close(s->topfd);
	for (size_t i = 0; i < s->n_finals; i++)
		free(s->finals[i].name);
	free(s->finals);
	free(s);
}

static int
add_final(struct xfer_src *s, const char *name, unsigned mode)
{
	if (s->n_finals == s->cap_finals) {
		size_t cap = s->cap_finals ? s->cap_finals * 2 : 16;
		struct final *f = realloc(s->finals, cap * sizeof(*f));

		if (f == NULL)
			return -ENOMEM;
		s->finals = f;
		s->cap_finals = cap;
	}
	if ((s->finals[s->n_finals].name = strdup(name)) == NULL)
		return -ENOMEM;
	s->finals[s->n_finals++].mode = mode;
	return 0;
}

/* The next piece of the file in flight into buf at *pos; false: no room. */
static int
put_piece(struct xfer_src *s, uint8_t *buf, size_t end, size_t *pos,
    char *err, size_t errlen)
{
	uint64_t left = s->total - s->off, piece = left;
	size_t room;
	struct msc_tar_entry e;

	if (*pos + MSC_TAR_HEADER_MAX + MSC_TAR_BLOCK > end)
		return 1;
	room = end - *pos - MSC_TAR_HEADER_MAX - MSC_TAR_BLOCK;
	if (piece > room)
		piece = room / MSC_TAR_BLOCK * MSC_TAR_BLOCK;
	if (piece == 0 && left > 0)
		return 1;
	e = s->cur;
	e.size = piece;
	e.offset = s->off;
	*pos += msc_tar_header(&e, buf + *pos);
	for (uint64_t got = 0; got < piece;) {
		ssize_t r = pread(s->fd, buf + *pos + got, (size_t)(piece - got),
		    (off_t)(s->off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "local_path: %s/%s: %s",
			    s->shown, s->cur.name, strerror(errno));
			return -errno;
		}
		if (r == 0) {   /* it shrank: zeros keep the sizes */
			memset(buf + *pos + got, 0, (size_t)(piece - got));
			break;
		}
		got += (uint64_t)r;
	}
	*pos += piece;
	memset(buf + *pos, 0, msc_tar_pad(piece));
	*pos += msc_tar_pad(piece);
	s->off += piece;
	s->n.bytes += (long long)piece;
	if (s->off == s->total) {
		if (s->fd != s->topfd)
			close(s->fd);
		s->fd = -1;
	}
	return 0;
}

/* The next name of the folder being read: its entry, or the file set in
 * flight. 0, 1 when that folder is done, or -errno. */
static int
next_name(struct xfer_src *s, uint8_t *buf, size_t *pos, char *err,
    size_t errlen)
{
	struct level *lv = &s->lv[s->depth - 1];
	struct msc_tar_entry e = { 0 };
	struct dirent *de;
	struct stat st;
	int dfd = dirfd(lv->d), fd;
	ssize_t n;

	errno = 0;
	if ((de = readdir(lv->d)) == NULL) {
		if (errno != 0) {
			snprintf(err, errlen, "local_path: %s: %s", s->shown,
			    strerror(errno));
			return -errno;
		}
		closedir(lv->d);
		s->depth--;
		return 1;
	}
	if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
		return 0;
	n = strcmp(lv->name, ".") == 0 ?
	    snprintf(e.name, sizeof(e.name), "%s", de->d_name) :
	    snprintf(e.name, sizeof(e.name), "%s/%s", lv->name, de->d_name);
	if (n < 0 || (size_t)n >= sizeof(e.name)) {
		snprintf(err, errlen, "local_path: %s: a name below it is "
		    "longer than %d bytes", s->shown, MSC_TAR_NAME_MAX);
		return -ENAMETOOLONG;
	}
	if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return 0;               /* gone meanwhile */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) &&
	    !S_ISLNK(st.st_mode)) {
		s->n.skipped++;         /* devices, fifos, sockets */
		return 0;
	}
	if (++s->entries > XFER_ENTRIES_MAX) {
		snprintf(err, errlen, "local_path: %s: more than %d files, "
		    "folders and symlinks: upload a smaller folder, or an "
		    "archive of it", s->shown, XFER_ENTRIES_MAX);
		return -E2BIG;
	}
	e.mode = st.st_mode & 07777;
	e.mtime = st.st_mtim.tv_sec;
	if (S_ISREG(st.st_mode)) {
		fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return 0;       /* gone, or unreadable: left out */
		e.type = MSC_TAR_FILE;
		s->cur = e;
		s->fd = fd;
		s->total = (uint64_t)st.st_size;
		s->off = 0;
		s->n.files++;
		if (s->n.bytes + (long long)s->total > XFER_BYTES_MAX) {
			snprintf(err, errlen, "local_path: %s: more than %lld "
			    "GiB of files", s->shown, XFER_BYTES_MAX >> 30);
			return -EFBIG;
		}
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		e.type = MSC_TAR_SYMLINK;
		if ((n = readlinkat(dfd, de->d_name, e.link,
		    sizeof(e.link) - 1)) < 0)
			return 0;
		e.link[n] = '\0';
		*pos += msc_tar_header(&e, buf + *pos);
		s->n.symlinks++;
		return 0;
	}
	if (s->depth > XFER_DEPTH_MAX) {
		snprintf(err, errlen, "local_path: %s: folders nested more "
		    "than %d deep", s->shown, XFER_DEPTH_MAX);
		return -ELOOP;
	}
	fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd < 0)
		return 0;
	e.type = MSC_TAR_DIR;
	*pos += msc_tar_header(&e, buf + *pos);
	s->n.folders++;
	if ((e.mode & 0700) != 0700 && add_final(s, e.name, e.mode) != 0) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((s->lv[s->depth].d = fdopendir(fd)) == NULL) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(s->lv[s->depth].name, sizeof(s->lv[0].name), "%s", e.name);
	s->depth++;
	return 0;
}

int
xfer_src_next(struct xfer_src *s, uint8_t *buf, size_t cap, size_t *n,
    bool *last, char *err, size_t errlen)
{
	size_t pos = 0, end = cap - TRAILER;
	int rv = 0;

	*n = 0;
	*last = false;
	while (rv == 0) {
		if (s->fd >= 0) {
			rv = put_piece(s, buf, end, &pos, err, errlen);
			continue;
		}
		if (pos + MSC_TAR_HEADER_MAX + MSC_TAR_BLOCK > end)
			break;
		if (!s->top_sent) {
			s->top_sent = true;
			strcpy(s->cur.name, ".");
			if (!s->top_dir) {
				struct stat st;

				if (fstat(s->topfd, &st) != 0)
					st.st_size = 0;
				s->cur.type = MSC_TAR_FILE;
				s->fd = s->topfd;
				s->total = (uint64_t)st.st_size;
				s->off = 0;
				s->n.files++;
				if (s->total > (uint64_t)XFER_BYTES_MAX) {
					snprintf(err, errlen, "local_path: %s: "
					    "more than %lld GiB", s->shown,
					    XFER_BYTES_MAX >> 30);
					return -EFBIG;
				}
				continue;
			}
			s->cur.type = MSC_TAR_DIR;
			pos += msc_tar_header(&s->cur, buf + pos);
			s->n.folders++;
			if ((s->cur.mode & 0700) != 0700 &&
			    add_final(s, ".", s->cur.mode) != 0) {
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			if ((s->lv[0].d = fdopendir(s->topfd)) == NULL) {
				snprintf(err, errlen, "out of memory");
				return -ENOMEM;
			}
			s->topfd = -1;  /* the DIR owns it */
			strcpy(s->lv[0].name, ".");
			s->depth = 1;
			continue;
		}
		if (s->depth > 0) {
			rv = next_name(s, buf, &pos, err, errlen);
			if (rv == 1)
				rv = 0;
			continue;
		}
		if (s->next_final < s->n_finals) {
			/* Last of all, the deepest first: their own modes. */
			struct final *f = &s->finals[s->n_finals - 1 -
			    s->next_final++];
			struct msc_tar_entry e = { .type = MSC_TAR_DIR,
				.mode = f->mode, .final = true };

			snprintf(e.name, sizeof(e.name), "%s", f->name);
			pos += msc_tar_header(&e, buf + pos);
			continue;
		}
		s->done = true;
		break;
	}
	if (rv < 0)
		return rv;
	memset(buf + pos, 0, TRAILER);
	*n = pos + TRAILER;
	*last = s->done;
	return 0;
}

/* ---- download: a tar stream into the local tree ------------------------- */

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
	struct place p;
	struct xfer_dst *d;
	char dir[PATH_MAX], *slash;
	int rv;

	*out = NULL;
	if ((rv = locate(a, path, &p, err, errlen)) != 0)
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
	d->parentfd = openat2_(p.rootfd, dir, O_PATH | O_DIRECTORY,
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
		return open_error(p.shown, rv, err, errlen);
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

/* Whether a symlink at `name` with target `link` stays inside the top. */
static bool
link_inside(const char *name, const char *link)
{
	long depth = 0;
	const char *p;

	if (link[0] == '/' || link[0] == '\0')
		return false;
	for (p = name; *p != '\0'; p++)
		depth += *p == '/';     /* the folders the link is in */
	for (p = link; *p != '\0';) {
		const char *slash = strchr(p, '/');
		size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (len > 0 && !(len == 1 && p[0] == '.'))
			depth++;
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
	int fd;

	d->top_seen = true;
	if (e->type == MSC_TAR_DIR) {
		if (d->parentfd < 0)
			fd = openat(d->rootfd, ".", O_RDONLY | O_DIRECTORY |
			    O_CLOEXEC);
		else {
			if (mkdirat(d->parentfd, d->base, 0700) != 0 &&
			    errno != EEXIST)
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
		if (fchmod(fd, e->mode | 0700) != 0 ||
		    d_final(d, ".", e->mode) != 0) {
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
	fd = openat(d->parentfd, d->base, O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0)
		return d_fail(d, ".", "cannot write the file", errno);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return d_fail(d, ".", "refused: it is not a regular file", 0);
	}
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
	int pfd, rv = 0, fd;

	if (++d->entries > XFER_ENTRIES_MAX)
		return d_fail(d, ".", "more than 200000 files, folders and "
		    "symlinks: download a smaller folder", 0);
	if (!msc_tar_name_ok(e->name))
		return d_fail(d, ".", "refused: a member name with \"..\", an "
		    "empty part or an absolute path", 0);
	if (e->offset > 0)
		return d_fail(d, e->name, "refused: a piece of a file", 0);
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
		pfd = openat2_(d->topfd, dir, O_PATH | O_DIRECTORY,
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
		if (mkdirat(pfd, base, 0700) == 0)
			d->n.folders++;
		else if (errno != EEXIST)
			rv = d_fail(d, e->name, "cannot make the folder",
			    errno);
		if (rv == 0 && (fd = openat(pfd, base, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			rv = d_fail(d, e->name, "exists and is not a folder",
			    0);
		else if (rv == 0) {
			if (fchmod(fd, e->mode | 0700) != 0 ||
			    d_final(d, e->name, e->mode) != 0)
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
		else if ((fd = openat(pfd, base, O_WRONLY | O_CREAT | O_TRUNC |
		    O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600)) < 0)
			rv = d_fail(d, e->name, "cannot write the file",
			    errno);
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
	if (fchmod(d->fd, e->mode) != 0)
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
	rv = msc_tar_feed(&d->rd, p, n, &cb, d);
	if (rv != 0 && err[0] == '\0')
		snprintf(err, errlen, "the computer's answer is not a tar "
		    "stream%s", rv == -EBADMSG ? " (the path may have changed "
		    "during the download: try again)" : "");
	return rv;
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
		    openat2_(d->topfd, name, O_RDONLY | O_DIRECTORY,
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
