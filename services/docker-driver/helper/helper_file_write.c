/*
 * helper_file_write.c - the file tools' `write` and `edit` (helper_file.h).
 *
 * Both replace the file whole and atomically: the new content goes to a
 * temporary file in the same folder (".kiln-" and random hex), which is
 * given its mode (the old file's unless one is asked for; 0644 for a new
 * one) and owner, synced, and renamed over the name. A reader sees the old
 * file or the new one, never a part; on any failure (a full disk, a
 * read-only folder) the temporary file goes and the old file is as it was.
 *
 *   write PATH MODE MAKE_DIRS      MODE octal or "-"; the content on stdin
 *   edit PATH OLD_LEN ALL SHA256   stdin: old_string then new_string;
 *                                  SHA256 the expected one, or "-"
 */
#include "helper.h"
#include "helper_file.h"
#include "helper_sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HXF_NEW_MODE 0644

/* Why a write failed, in the agent's words. */
static const char *
write_error(int e)
{
	switch (e) {
	case ENOSPC:
	case EDQUOT:
		return "no space left on the computer's disk";
	case EROFS:
		return "the folder is on a read-only file system";
	case EACCES:
	case EPERM:
		return "permission denied";
	case EFBIG:
		return "the file is too large for its file system";
	default:
		return strerror(e);
	}
}

/* Reads all of stdin, at most HXF_STDIN_MAX bytes; NULL on failure. */
static uint8_t *
read_stdin(size_t *len)
{
	size_t cap = 65536;
	uint8_t *p = malloc(cap);

	*len = 0;
	while (p != NULL) {
		ssize_t r;

		if (*len == cap) {
			uint8_t *np = cap >= HXF_STDIN_MAX ? NULL :
			    realloc(p, cap * 2);

			if (np == NULL)
				break;
			p = np;
			cap *= 2;
		}
		r = read(0, p + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0)
			return p;
		*len += (size_t)r;
	}
	free(p);
	return NULL;
}

/* Asks a root's disk quota for bytes (hxf_root.charge); 0 or -ENOSPC. */
static int
charge(uint64_t bytes)
{
	if (hxf_root.charge == NULL)
		return 0;
	return hxf_root.charge(hxf_root.arg, bytes) != 0 ? -ENOSPC : 0;
}

/*
 * Replaces t's file with data[0..len), or with stdin when data is NULL;
 * mode < 0 keeps the old file's. Fills sha, *size and *mode_out.
 */
static int
replace(struct hxf_target *t, const char *path, const uint8_t *data,
    size_t len, long long mode, char sha[65], long long *size,
    mode_t *mode_out)
{
	struct hx_sha256 sh;
	char tmp[64], marker[33];
	mode_t m = t->exists ? t->st.st_mode & 07777 : HXF_NEW_MODE;
	int fd, rc = 0;

	if (mode >= 0)
		m = (mode_t)mode;
	if (hx_marker(marker) != 0)
		return hxp_fail("%s: no random name for the temporary file",
		    path);
	snprintf(tmp, sizeof(tmp), ".kiln-%.16s", marker);
	fd = openat(t->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		return hxp_fail("%s: cannot write in its folder: %s; nothing "
		    "was changed", path,
		    write_error(errno));
	hx_sha256_init(&sh);
	*size = 0;
	/* A root's disk quota (hxf_root): the new file, then its bytes. */
	rc = charge(HXF_ENTRY_BYTES + (data != NULL ? len : 0));
	if (rc != 0)
		;
	else if (data != NULL) {
		rc = hxf_write_all(fd, data, len);
		hx_sha256_add(&sh, data, len);
		*size = (long long)len;
	} else
		for (;;) {
			uint8_t chunk[65536];
			ssize_t r = read(0, chunk, sizeof(chunk));

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				rc = r < 0 ? -errno : 0;
				break;
			}
			if (*size + r > HXF_STDIN_MAX) {
				rc = -EFBIG;
				break;
			}
			if ((rc = charge((uint64_t)r)) != 0)
				break;
			if ((rc = hxf_write_all(fd, chunk, (size_t)r)) != 0)
				break;
			hx_sha256_add(&sh, chunk, (size_t)r);
			*size += r;
		}
	if (rc == 0 && fchmod(fd, m) != 0)
		rc = -errno;
	if (rc == 0 && t->exists && fchown(fd, t->st.st_uid, t->st.st_gid) !=
	    0 && errno != EPERM)
		rc = -errno;
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(t->dirfd, tmp, t->dirfd, t->base) != 0)
		rc = -errno;
	if (rc != 0) {
		(void)unlinkat(t->dirfd, tmp, 0);
		return hxp_fail("%s: %s; nothing was changed", path,
		    write_error(-rc));
	}
	hx_sha256_hex(&sh, sha);
	*mode_out = m;
	return 0;
}

static void
out_written(struct out *o, const struct hxf_target *t, long long size,
    const char *sha, mode_t mode)
{
	hxp_out_cstr(o, "{\"path\": ");
	hxp_out_str(o, t->shown, strlen(t->shown));
	hxp_out_fmt(o, ", \"size\": %lld, \"sha256\": \"%s\", \"mode\": "
	    "\"%04o\"", size, sha, (unsigned)mode);
}

/* The checks both make of an existing target. */
static int
check_existing(struct hxf_target *t, const char *path)
{
	const char *why;
	struct stat st;

	if (!t->exists)
		return 0;
	if (!S_ISREG(t->st.st_mode))
		return hxp_fail("%s: refused: it is %s", path,
		    hxf_kind(t->st.st_mode));
	st = t->st;
	if ((why = hxf_forbidden(t->dirfd, &st)) != NULL)
		return hxp_fail("%s: refused: the path is %s", path, why);
	return 0;
}

/* write PATH MODE MAKE_DIRS */
int
hxf_write(int argc, char **argv)
{
	long long mode = -1, make_dirs, size;
	struct hxf_target t;
	struct out o = { 0 };
	char sha[65];
	mode_t m;
	bool created;
	int rc;

	if (argc != 3 || (strcmp(argv[1], "-") != 0 &&
	    (strspn(argv[1], "01234567") != strlen(argv[1]) ||
		strlen(argv[1]) > 5 || (mode = strtoll(argv[1], NULL, 8)) >
		07777)) || !hxp_parse_num(argv[2], 0, 1, &make_dirs))
		return hxp_fail("usage: --file write PATH MODE MAKE_DIRS");
	if (hxf_resolve(argv[0], make_dirs != 0, &t) != 0)
		return HX_EXIT_ERR;
	created = !t.exists;
	if ((rc = check_existing(&t, argv[0])) == 0)
		rc = replace(&t, argv[0], NULL, 0, mode, sha, &size, &m);
	close(t.dirfd);
	if (rc != 0)
		return rc;
	out_written(&o, &t, size, sha, m);
	hxp_out_fmt(&o, ", \"created\": %s}", created ? "true" : "false");
	return hxp_out_print(&o);
}

/* Reads the whole file t names (bounded); NULL with the line written. */
static uint8_t *
read_whole(struct hxf_target *t, const char *path, size_t *len, char sha[65])
{
	struct hx_sha256 sh;
	uint8_t *p;
	struct stat st;
	int fd;

	fd = openat(t->dirfd, t->base, O_RDONLY | O_NONBLOCK | O_NOFOLLOW |
	    O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return hxp_fail("%s: %s", path, strerror(errno)), NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_ino != t->st.st_ino || st.st_dev != t->st.st_dev) {
		close(fd);
		return hxp_fail("%s: refused: it changed while it was opened",
		    path), NULL;
	}
	if (st.st_size > HXF_EDIT_MAX) {
		close(fd);
		return hxp_fail("%s: the file is %lld bytes: file_edit edits "
		    "files up to %lld MiB (file_write replaces a file whole)",
		    path, (long long)st.st_size, HXF_EDIT_MAX >> 20), NULL;
	}
	if ((p = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return hxp_fail("out of memory"), NULL;
	}
	*len = 0;
	for (;;) {
		ssize_t r = read(fd, p + *len, (size_t)st.st_size + 1 - *len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || *len + (size_t)(r > 0 ? r : 0) >
		    (size_t)st.st_size) {
			int e = r < 0 ? errno : EAGAIN;

			free(p);
			close(fd);
			return hxp_fail("%s: %s", path, e == EAGAIN ? "it grew "
			    "while it was read" : strerror(e)), NULL;
		}
		if (r == 0)
			break;
		*len += (size_t)r;
	}
	close(fd);
	hx_sha256_init(&sh);
	hx_sha256_add(&sh, p, *len);
	hx_sha256_hex(&sh, sha);
	return p;
}

static size_t
count(const uint8_t *p, size_t n, const uint8_t *s, size_t sn)
{
	size_t k = 0;
	const uint8_t *q = p, *end = p + n;

	while ((size_t)(end - q) >= sn && (q = memmem(q, (size_t)(end - q), s,
	    sn)) != NULL) {
		k++;
		q += sn;
	}
	return k;
}

/* edit PATH OLD_LEN ALL SHA256 */
int
hxf_edit(int argc, char **argv)
{
	long long old_len, all, size;
	struct hxf_target t;
	struct out o = { 0 };
	uint8_t *in = NULL, *file = NULL, *neu = NULL;
	size_t in_len, file_len, n, new_len, at = 0;
	char before[65], sha[65];
	const uint8_t *old, *rep, *q;
	mode_t m;
	int rc = HX_EXIT_ERR;

	if (argc != 4 || !hxp_parse_num(argv[1], 1, HXF_STDIN_MAX, &old_len) ||
	    !hxp_parse_num(argv[2], 0, 1, &all) || (strcmp(argv[3], "-") != 0 &&
		(strlen(argv[3]) != 64 || strspn(argv[3],
		"0123456789abcdef") != 64)))
		return hxp_fail("usage: --file edit PATH OLD_LEN ALL SHA256");
	if ((in = read_stdin(&in_len)) == NULL || in_len < (size_t)old_len) {
		free(in);
		return hxp_fail("file_edit: old_string and new_string did not "
		    "arrive whole");
	}
	old = in;
	rep = in + old_len;
	if (hxf_resolve(argv[0], false, &t) != 0) {
		free(in);
		return HX_EXIT_ERR;
	}
	if (!t.exists) {
		(void)hxp_fail("%s: no such file", argv[0]);
		goto out;
	}
	if (check_existing(&t, argv[0]) != 0 ||
	    (file = read_whole(&t, argv[0], &file_len, before)) == NULL)
		goto out;
	if (strcmp(argv[3], "-") != 0 && strcmp(argv[3], before) != 0) {
		(void)hxp_fail("%s: the file changed since it was read: its "
		    "sha256 is %s, not the expected %s; nothing was changed "
		    "(read it again)", t.shown, before, argv[3]);
		goto out;
	}
	n = count(file, file_len, old, (size_t)old_len);
	if (n == 0) {
		(void)hxp_fail("%s: old_string was not found in the file; "
		    "nothing was changed", t.shown);
		goto out;
	}
	if (n > 1 && !all) {
		(void)hxp_fail("%s: old_string occurs %zu times in the file; "
		    "nothing was changed: include more of the surrounding "
		    "text to make it unique, or pass replace_all: true",
		    t.shown, n);
		goto out;
	}
	new_len = file_len - n * (size_t)old_len + n * (in_len -
	    (size_t)old_len);
	if (new_len > (size_t)HXF_EDIT_MAX + HXF_STDIN_MAX ||
	    (neu = malloc(new_len + 1)) == NULL) {
		(void)hxp_fail("%s: the edited file would be too large",
		    t.shown);
		goto out;
	}
	for (const uint8_t *p = file, *end = file + file_len; p < end;) {
		size_t left = (size_t)(end - p);

		q = left >= (size_t)old_len ? memmem(p, left, old,
		    (size_t)old_len) : NULL;
		if (q == NULL) {
			memcpy(neu + at, p, left);
			at += left;
			break;
		}
		memcpy(neu + at, p, (size_t)(q - p));
		at += (size_t)(q - p);
		memcpy(neu + at, rep, in_len - (size_t)old_len);
		at += in_len - (size_t)old_len;
		p = q + old_len;
	}
	if (replace(&t, argv[0], neu, at, -1, sha, &size, &m) != 0)
		goto out;
	out_written(&o, &t, size, sha, m);
	hxp_out_fmt(&o, ", \"replacements\": %zu, \"sha256_before\": \"%s\"}",
	    n, before);
	rc = hxp_out_print(&o);
out:
	if (t.dirfd >= 0)
		close(t.dirfd);
	free(in);
	free(file);
	free(neu);
	return rc;
}
