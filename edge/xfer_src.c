/*
 * xfer_src.c - computer_upload's local side: the local tree read into
 * tar batches (see xfer.h).
 */
#include "xfer_int.h"

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

/* ---- upload: the local tree as tar batches ------------------------------ */

struct level {
	DIR *d;
	char name[MSC_TAR_NAME_MAX + 1];        /* "." the top */
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
	struct xfer_place p;
	struct xfer_src *s;
	struct stat st;
	char proc[40];
	int pfd, fd, rv;

	*out = NULL;
	if ((rv = xfer_locate(a, path, &p, err, errlen)) != 0)
		return rv;
	pfd = xfer_openat2(p.rootfd, p.rel, O_PATH, RESOLVE_BENEATH |
	    RESOLVE_NO_MAGICLINKS);
	close(p.rootfd);
	if (pfd < 0)
		return xfer_open_error(p.shown, errno, err, errlen);
	if (fstat(pfd, &st) != 0) {
		rv = xfer_open_error(p.shown, errno, err, errlen);
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
		    p.shown, xfer_kind(st.st_mode));
		return -EINVAL;
	}
	close(pfd);
	if (fd < 0)
		return xfer_open_error(p.shown, errno, err, errlen);
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
		mode_t found;

		fd = xfer_open_reg(dfd, de->d_name, O_RDONLY | O_NONBLOCK,
		    0, &found);
		if (fd < 0 && found != 0) {
			s->n.skipped++; /* swapped for a fifo, a device */
			return 0;
		}
		if (fd < 0)
			return 0;       /* gone, or unreadable: left out */
		if (fstat(fd, &st) != 0) {
			close(fd);
			return 0;
		}
		e.mode = st.st_mode & 07777;
		e.mtime = st.st_mtim.tv_sec;
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
	size_t pos = 0, end = cap - XFER_TRAILER;
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
	memset(buf + pos, 0, XFER_TRAILER);
	*n = pos + XFER_TRAILER;
	*last = s->done;
	return 0;
}
