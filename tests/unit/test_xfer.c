/*
 * test_xfer.c - the copy tools' local side (edge/xfer_*.c) against a
 * hostile computer and hostile paths: a download stream that names ".."
 * or an absolute path, plants a symlink out and then writes through it,
 * or puts members below a file; local paths outside the allowed folder,
 * with "..", or through a symlink that leads out. Nothing outside the
 * allowed folder may change.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_tar.h"
#include "xfer.h"
#include "xfer_int.h"

static char base[128], allowed_dir[192], outside[192];
static const char *dirs[1];
static struct xfer_allow allow;

static int
setup(void **state)
{
	char tmpl[] = "/tmp/msc-test-xfer-XXXXXX", *real;
	FILE *f;

	(void)state;
	if (mkdtemp(tmpl) == NULL || (real = realpath(tmpl, NULL)) == NULL)
		return -1;
	snprintf(base, sizeof(base), "%.100s", real);
	free(real);
	snprintf(allowed_dir, sizeof(allowed_dir), "%s/allowed", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	if (mkdir(allowed_dir, 0700) != 0 || mkdir(outside, 0700) != 0)
		return -1;
	if ((f = fopen("/dev/null", "r")) != NULL)
		fclose(f);
	dirs[0] = allowed_dir;
	allow.dirs = dirs;
	allow.n = 1;
	allow.workspace = NULL;
	return 0;
}

static int
teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

/* Appends an entry (and its data) to buf at *n. */
static void
put(uint8_t *buf, size_t *n, char type, const char *name, const char *link,
    const char *data)
{
	struct msc_tar_entry e = { .type = type, .mode = 0644 };
	size_t len = data != NULL ? strlen(data) : 0;

	snprintf(e.name, sizeof(e.name), "%s", name);
	snprintf(e.link, sizeof(e.link), "%s", link != NULL ? link : "");
	if (type == MSC_TAR_DIR)
		e.mode = 0755;
	e.size = len;
	*n += msc_tar_header(&e, buf + *n);
	memcpy(buf + *n, data != NULL ? data : "", len);
	*n += len;
	memset(buf + *n, 0, msc_tar_pad(len));
	*n += msc_tar_pad(len);
}

static void
trailer(uint8_t *buf, size_t *n)
{
	memset(buf + *n, 0, 1024);
	*n += 1024;
}

/* Downloads buf into allowed/<name>: the feed's result (or finish's). */
static int
download(const char *name, const uint8_t *buf, size_t n, char *err,
    size_t errlen, struct xfer_counts *counts)
{
	struct xfer_dst *d;
	char path[PATH_MAX];
	int rv;

	if (strcmp(name, ".") == 0)
		snprintf(path, sizeof(path), "%s", allowed_dir);
	else
		snprintf(path, sizeof(path), "%s/%s", allowed_dir, name);
	if ((rv = xfer_dst_open(&allow, path, &d, err, errlen)) != 0)
		return rv;
	rv = xfer_dst_feed(d, buf, n, err, errlen);
	if (rv == 0)
		rv = xfer_dst_finish(d, err, errlen);
	if (counts != NULL)
		*counts = *xfer_dst_counts(d);
	xfer_dst_free(d);
	return rv;
}

static int
entries_in(const char *dir)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	if ((p = popen(cmd, "r")) != NULL) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void
test_hostile_stream(void **state)
{
	uint8_t *buf = calloc(1, 65536);
	struct xfer_counts c;
	char err[1024], p[PATH_MAX];
	struct stat st;
	size_t n = 0;

	(void)state;
	/* symlinks out are left out; one inside is made, and nothing is
	 * written through it */
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "abs", outside, NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "up", "../../outside", NULL);
	put(buf, &n, MSC_TAR_DIR, "sub", NULL, NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "in", "sub", NULL);
	put(buf, &n, MSC_TAR_FILE, "sub/f", NULL, "inside");
	trailer(buf, &n);
	assert_int_equal(download("t1", buf, n, err, sizeof(err), &c), 0);
	assert_int_equal(c.skipped, 2);
	assert_int_equal(c.symlinks, 1);
	snprintf(p, sizeof(p), "%s/t1/abs", allowed_dir);
	assert_int_not_equal(lstat(p, &st), 0);
	/* writing through the symlink made above: refused */
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "out", "sub", NULL);
	trailer(buf, &n);
	assert_int_equal(download("t2", buf, n, err, sizeof(err), NULL), 0);
	snprintf(p, sizeof(p), "%s/t2/sub", allowed_dir);
	assert_int_equal(symlink(outside, p), 0);      /* planted meanwhile */
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	put(buf, &n, MSC_TAR_FILE, "out/evil", NULL, "x");
	trailer(buf, &n);
	assert_int_not_equal(download("t2", buf, n, err, sizeof(err), NULL), 0);
	assert_non_null(strstr(err, "symlink"));
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	put(buf, &n, MSC_TAR_FILE, "sub", NULL, "x");  /* over the link */
	trailer(buf, &n);
	assert_int_not_equal(download("t2", buf, n, err, sizeof(err), NULL), 0);
	/* "..", absolute names, two tops, members below a file */
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	put(buf, &n, MSC_TAR_FILE, "../escape", NULL, "x");
	trailer(buf, &n);
	assert_int_not_equal(download("t3", buf, n, err, sizeof(err), NULL), 0);
	assert_non_null(strstr(err, "\"..\""));
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	put(buf, &n, MSC_TAR_FILE, outside, NULL, "x");
	trailer(buf, &n);
	assert_int_not_equal(download("t4", buf, n, err, sizeof(err), NULL), 0);
	n = 0;
	put(buf, &n, MSC_TAR_FILE, ".", NULL, "top");
	put(buf, &n, MSC_TAR_FILE, "below", NULL, "x");
	trailer(buf, &n);
	assert_int_not_equal(download("t5", buf, n, err, sizeof(err), NULL), 0);
	/* a file over the size bound: refused by its header, nothing
	 * written */
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	{
		struct msc_tar_entry e = { .type = MSC_TAR_FILE, .mode = 0644,
			.size = 9ULL << 30 };

		strcpy(e.name, "huge");
		n += msc_tar_header(&e, buf + n);
	}
	assert_int_not_equal(download("t7", buf, n, err, sizeof(err), NULL), 0);
	assert_non_null(strstr(err, "8 GiB"));
	snprintf(p, sizeof(p), "%s/t7/huge", allowed_dir);
	assert_int_not_equal(lstat(p, &st), 0);
	/* a stream cut short */
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	assert_int_not_equal(download("t6", buf, n, err, sizeof(err), NULL), 0);
	assert_non_null(strstr(err, "ended early"));
	/* nothing changed outside */
	assert_int_equal(entries_in(outside), 0);
	free(buf);
}

/*
 * The attack: symlinks that each stay inside when checked alone but
 * lead out together: a/b/s -> "../.." (the top), then t -> "a/b/s/../.."
 * (the top's parent's parent: the base of the allowed folder, and
 * through it "outside"). Only targets whose ".." all come first, and no
 * more of them than the link's depth, are made.
 */
static void
test_chained_symlinks(void **state)
{
	uint8_t *buf = calloc(1, 65536);
	struct xfer_counts c;
	char err[1024], p[PATH_MAX];
	struct stat st;
	size_t n = 0;

	(void)state;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	put(buf, &n, MSC_TAR_DIR, "a", NULL, NULL);
	put(buf, &n, MSC_TAR_DIR, "a/b", NULL, NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "a/b/s", "../..", NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "t", "a/b/s/../..", NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "u", "a/./b/s/../../..", NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "a/v", "b/s/..", NULL);
	/* these stay inside and are made */
	put(buf, &n, MSC_TAR_SYMLINK, "a/b/w", "../../a/./b", NULL);
	put(buf, &n, MSC_TAR_SYMLINK, "x", "./a/b/s/a", NULL);
	trailer(buf, &n);
	assert_int_equal(download("t8", buf, n, err, sizeof(err), &c), 0);
	snprintf(p, sizeof(p), "%s/t8/t/outside", allowed_dir);
	assert_int_not_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/t8/u/outside", allowed_dir);
	assert_int_not_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/t8/a/v/t8", allowed_dir);
	assert_int_not_equal(stat(p, &st), 0);
	assert_int_equal(c.skipped, 3);
	assert_int_equal(c.symlinks, 3);
	snprintf(p, sizeof(p), "%s/t8/a/b/w/s/a/b", allowed_dir);
	assert_int_equal(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/t8/x/b", allowed_dir);
	assert_int_equal(stat(p, &st), 0);
	free(buf);
}

/* Appends an entry with a mode of the computer's choosing. */
static void
put_mode(uint8_t *buf, size_t *n, char type, const char *name,
    unsigned mode, const char *data)
{
	size_t at = *n;

	put(buf, n, type, name, NULL, data);
	{
		struct msc_tar_entry e = { .type = type, .mode = mode,
			.size = data != NULL ? strlen(data) : 0 };

		snprintf(e.name, sizeof(e.name), "%s", name);
		(void)msc_tar_header(&e, buf + at);
	}
}

static unsigned
mode_of(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", allowed_dir, rel);
	if (stat(p, &st) != 0)
		return 0xffffffffu;
	return (unsigned)(st.st_mode & 07777);
}

/*
 * The attack: the computer sends setuid/setgid/sticky modes, and
 * world-writable modes for folders that were already on the host (the
 * allowed folder itself among them). Made files and folders take only
 * the permission bits; folders that were there keep their mode.
 */
static void
test_modes(void **state)
{
	uint8_t *buf = calloc(1, 65536);
	char err[1024], p[PATH_MAX];
	unsigned root_mode;
	size_t n = 0;

	(void)state;
	snprintf(p, sizeof(p), "%s/pre", allowed_dir);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, 0700), 0);
	root_mode = mode_of(".");
	/* into the allowed folder itself */
	put_mode(buf, &n, MSC_TAR_DIR, ".", 01777, NULL);
	put_mode(buf, &n, MSC_TAR_DIR, "pre", 0777, NULL);
	put_mode(buf, &n, MSC_TAR_DIR, "newdir", 02777, NULL);
	put_mode(buf, &n, MSC_TAR_FILE, "suid", 04755, "#!/bin/sh\n");
	put_mode(buf, &n, MSC_TAR_FILE, "sgid", 02755, "x");
	trailer(buf, &n);
	assert_int_equal(download(".", buf, n, err, sizeof(err), NULL), 0);
	assert_int_equal(mode_of("."), root_mode);
	assert_int_equal(mode_of("pre"), 0700);
	assert_int_equal(mode_of("newdir"), 0777);
	assert_int_equal(mode_of("suid"), 0755);
	assert_int_equal(mode_of("sgid"), 0755);
	/* a top folder that was there */
	n = 0;
	put_mode(buf, &n, MSC_TAR_DIR, ".", 0777, NULL);
	trailer(buf, &n);
	assert_int_equal(download("pre", buf, n, err, sizeof(err), NULL), 0);
	assert_int_equal(mode_of("pre"), 0700);
	/* one made here takes the bits */
	n = 0;
	put_mode(buf, &n, MSC_TAR_DIR, ".", 03555, NULL);
	trailer(buf, &n);
	assert_int_equal(download("made", buf, n, err, sizeof(err), NULL), 0);
	assert_int_equal(mode_of("made"), 0555);
	snprintf(p, sizeof(p), "%s/made", allowed_dir);
	(void)chmod(p, 0700);
	snprintf(p, sizeof(p), "%s/newdir", allowed_dir);
	(void)chmod(p, 0700);
	free(buf);
}

/*
 * The attack: a computer whose stream never stops: one entry of a type
 * left out (its bytes written nowhere), bigger than any transfer. The
 * stream is refused once past 8 GiB and the headers; and a stream's end
 * is seen, so the caller asks for no more after it.
 */
static void
test_endless_stream(void **state)
{
	size_t chunk = 1 << 20, n = 0;
	uint8_t *buf = calloc(1, chunk);
	struct xfer_dst *d;
	char err[1024], p[PATH_MAX];
	unsigned long long fed = 0;
	int rv = 0;

	(void)state;
	snprintf(p, sizeof(p), "%s/t9", allowed_dir);
	assert_int_equal(xfer_dst_open(&allow, p, &d, err, sizeof(err)), 0);
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	{
		struct msc_tar_entry e = { .type = 'g', .mode = 0644 };

		e.size = 077777777776ULL;      /* ustar's most: 8 GiB */
		strcpy(e.name, "skipped");
		n += msc_tar_header(&e, buf + n);
	}
	rv = xfer_dst_feed(d, buf, n, err, sizeof(err));
	assert_int_equal(rv, 0);
	memset(buf, 0, chunk);
	/* 12 GiB at most: the second skipped entry's header never comes */
	while (rv == 0 && fed < (12ULL << 30)) {
		rv = xfer_dst_feed(d, buf, chunk, err, sizeof(err));
		fed += chunk;
	}
	assert_int_equal(rv, -EFBIG);
	assert_true(fed < (9ULL << 30));
	assert_non_null(strstr(err, "8 GiB"));
	xfer_dst_free(d);
	/* the end-of-archive is seen */
	snprintf(p, sizeof(p), "%s/t10", allowed_dir);
	assert_int_equal(xfer_dst_open(&allow, p, &d, err, sizeof(err)), 0);
	n = 0;
	put(buf, &n, MSC_TAR_DIR, ".", NULL, NULL);
	assert_int_equal(xfer_dst_feed(d, buf, n, err, sizeof(err)), 0);
	assert_false(xfer_dst_ended(d));
	memset(buf, 0, 1024);
	assert_int_equal(xfer_dst_feed(d, buf, 1024, err, sizeof(err)), 0);
	assert_true(xfer_dst_ended(d));
	assert_int_equal(xfer_dst_finish(d, err, sizeof(err)), 0);
	xfer_dst_free(d);
	free(buf);
}

static void
test_local_paths(void **state)
{
	struct xfer_src *s;
	struct xfer_dst *d;
	char err[1024], p[PATH_MAX];
	FILE *f;

	(void)state;
	snprintf(p, sizeof(p), "%s/secret", outside);
	assert_non_null(f = fopen(p, "w"));
	fputs("secret", f);
	fclose(f);
	assert_int_equal(xfer_src_open(&allow, p, &s, err, sizeof(err)),
	    -EACCES);
	assert_non_null(strstr(err, "outside the folders"));
	snprintf(p, sizeof(p), "%s/../outside/secret", allowed_dir);
	assert_int_equal(xfer_src_open(&allow, p, &s, err, sizeof(err)),
	    -EACCES);
	assert_non_null(strstr(err, "\"..\""));
	assert_int_equal(xfer_src_open(&allow, "relative", &s, err,
	    sizeof(err)), -EINVAL);
	/* a prefix of the allowed folder's name is not inside it */
	snprintf(p, sizeof(p), "%s2/x", allowed_dir);
	assert_int_equal(xfer_src_open(&allow, p, &s, err, sizeof(err)),
	    -EACCES);
	/* a symlink inside that leads out: refused by the kernel, both ways */
	snprintf(p, sizeof(p), "%s/esc", allowed_dir);
	assert_int_equal(symlink(outside, p), 0);
	snprintf(p, sizeof(p), "%s/esc/secret", allowed_dir);
	assert_int_not_equal(xfer_src_open(&allow, p, &s, err, sizeof(err)),
	    0);
	assert_non_null(strstr(err, "leads outside"));
	snprintf(p, sizeof(p), "%s/esc/planted", allowed_dir);
	assert_int_not_equal(xfer_dst_open(&allow, p, &d, err, sizeof(err)),
	    0);
	assert_int_equal(entries_in(outside), 1);
	/* with no allowed folder at all */
	allow.n = 0;
	snprintf(p, sizeof(p), "%s/x", allowed_dir);
	assert_int_equal(xfer_src_open(&allow, p, &s, err, sizeof(err)),
	    -EACCES);
	assert_non_null(strstr(err, "no local folder"));
	allow.n = 1;
}

/*
 * The attack: the allowed folder (a real path when it was named) is
 * swapped for a symlink to elsewhere; a transfer must not follow it.
 */
static void
test_swapped_root(void **state)
{
	struct xfer_src *s;
	struct xfer_dst *d;
	char err[1024], p[PATH_MAX], moved[PATH_MAX];
	struct stat st;
	FILE *f;

	(void)state;
	snprintf(p, sizeof(p), "%s/lure", outside);
	assert_non_null(f = fopen(p, "w"));
	fclose(f);
	snprintf(moved, sizeof(moved), "%s.real", allowed_dir);
	assert_int_equal(rename(allowed_dir, moved), 0);
	assert_int_equal(symlink(outside, allowed_dir), 0);
	snprintf(p, sizeof(p), "%s/planted", allowed_dir);
	assert_int_equal(xfer_dst_open(&allow, p, &d, err, sizeof(err)),
	    -EACCES);
	assert_non_null(strstr(err, "symlink"));
	snprintf(p, sizeof(p), "%s/lure", allowed_dir);
	assert_int_equal(xfer_src_open(&allow, p, &s, err, sizeof(err)),
	    -EACCES);
	assert_int_equal(unlink(allowed_dir), 0);
	assert_int_equal(rename(moved, allowed_dir), 0);
	snprintf(p, sizeof(p), "%s/planted", outside);
	assert_int_not_equal(lstat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/lure", outside);
	assert_int_equal(unlink(p), 0);
}

/*
 * What a local file is opened as: only a regular file, never a fifo, a
 * device or a symlink found where one was (a swap after a check); one
 * not there is made.
 */
static void
test_open_regular(void **state)
{
	char p[PATH_MAX];
	mode_t found;
	int dfd, fd;

	(void)state;
	assert_true((dfd = open(allowed_dir, O_RDONLY | O_DIRECTORY)) >= 0);
	snprintf(p, sizeof(p), "%s/fifo", allowed_dir);
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(xfer_open_reg(dfd, "fifo", O_WRONLY | O_CREAT |
	    O_TRUNC | O_NONBLOCK, 0600, &found), -1);
	assert_true(S_ISFIFO(found));
	assert_int_equal(xfer_open_reg(dfd, "fifo", O_RDONLY | O_NONBLOCK, 0,
	    &found), -1);
	snprintf(p, sizeof(p), "%s/dev", allowed_dir);
	if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) {
		assert_int_equal(xfer_open_reg(dfd, "dev", O_RDONLY |
		    O_NONBLOCK, 0, &found), -1);
		assert_true(S_ISCHR(found));
	}
	assert_int_equal(symlinkat("fifo", dfd, "lnk"), 0);
	assert_int_equal(xfer_open_reg(dfd, "lnk", O_WRONLY | O_CREAT |
	    O_TRUNC, 0600, &found), -1);
	assert_true(S_ISLNK(found));
	/* a new one is made, an old one truncated */
	assert_true((fd = xfer_open_reg(dfd, "reg", O_WRONLY | O_CREAT |
	    O_TRUNC, 0600, &found)) >= 0);
	assert_int_equal(write(fd, "abc", 3), 3);
	close(fd);
	assert_true((fd = xfer_open_reg(dfd, "reg", O_WRONLY | O_CREAT |
	    O_TRUNC, 0600, &found)) >= 0);
	{
		struct stat st;

		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal(st.st_size, 0);
	}
	close(fd);
	close(dfd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_stream),
		cmocka_unit_test(test_chained_symlinks),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_endless_stream),
		cmocka_unit_test(test_local_paths),
		cmocka_unit_test(test_swapped_root),
		cmocka_unit_test(test_open_regular),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
