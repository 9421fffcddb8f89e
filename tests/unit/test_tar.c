/*
 * test_tar.c - lib/msc_tar.c: headers written and read back (short and
 * long names and links, the private MSC.offset and MSC.final keywords),
 * a stream fed in any pieces, member names refused, a broken header.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_tar.h"

struct seen {
	struct msc_tar_entry e[4];
	int n, done;
	uint8_t data[4096];
	size_t len;
};

static int
on_entry(void *arg, const struct msc_tar_entry *e)
{
	struct seen *s = arg;

	if (s->n < 4)
		s->e[s->n] = *e;
	s->n++;
	return 0;
}

static int
on_data(void *arg, const uint8_t *p, size_t n)
{
	struct seen *s = arg;

	memcpy(s->data + s->len, p, n);
	s->len += n;
	return 0;
}

static int
on_done(void *arg, const struct msc_tar_entry *e)
{
	(void)e;
	((struct seen *)arg)->done++;
	return 0;
}

static const struct msc_tar_cb cb = { on_entry, on_data, on_done };

/* A stream: a folder, a file with 700 bytes (a long name, a piece at
 * offset 4096), a symlink with a long target, a final folder; trailer. */
static size_t
stream(uint8_t *buf)
{
	struct msc_tar_entry e = { .type = MSC_TAR_DIR, .mode = 0555,
		.mtime = 1700000000 };
	size_t n = 0;

	strcpy(e.name, ".");
	n += msc_tar_header(&e, buf + n);
	memset(&e, 0, sizeof(e));
	e.type = MSC_TAR_FILE;
	e.mode = 0755;
	e.size = 700;
	e.offset = 4096;
	memset(e.name, 'n', 150);
	n += msc_tar_header(&e, buf + n);
	for (int i = 0; i < 700; i++)
		buf[n + (size_t)i] = (uint8_t)i;
	n += 700;
	memset(buf + n, 0, msc_tar_pad(700));
	n += msc_tar_pad(700);
	memset(&e, 0, sizeof(e));
	e.type = MSC_TAR_SYMLINK;
	e.mode = 0777;
	strcpy(e.name, "sub/link");
	memset(e.link, 'l', 120);
	n += msc_tar_header(&e, buf + n);
	memset(&e, 0, sizeof(e));
	e.type = MSC_TAR_DIR;
	e.mode = 0500;
	e.final = true;
	strcpy(e.name, "sub");
	n += msc_tar_header(&e, buf + n);
	memset(buf + n, 0, 1024);
	return n + 1024;
}

static void
check(const struct seen *s)
{
	assert_int_equal(s->n, 4);
	assert_int_equal(s->done, 4);
	assert_string_equal(s->e[0].name, ".");
	assert_int_equal(s->e[0].type, MSC_TAR_DIR);
	assert_int_equal(s->e[0].mode, 0555);
	assert_int_equal(s->e[0].mtime, 1700000000);
	assert_int_equal(strlen(s->e[1].name), 150);
	assert_int_equal(s->e[1].size, 700);
	assert_int_equal(s->e[1].offset, 4096);
	assert_int_equal(s->e[1].mode, 0755);
	assert_int_equal(s->len, 700);
	for (int i = 0; i < 700; i++)
		assert_int_equal(s->data[i], (uint8_t)i);
	assert_int_equal(s->e[2].type, MSC_TAR_SYMLINK);
	assert_int_equal(strlen(s->e[2].link), 120);
	assert_false(s->e[2].final);
	assert_true(s->e[3].final);
	assert_int_equal(s->e[3].mode, 0500);
}

static void
test_round_trip(void **state)
{
	uint8_t *buf = calloc(1, 65536);
	size_t n = stream(buf);
	struct msc_tar_rd rd;
	struct seen s = { 0 };

	(void)state;
	msc_tar_rd_init(&rd);
	assert_int_equal(msc_tar_feed(&rd, buf, n, &cb, &s), 0);
	assert_true(msc_tar_rd_complete(&rd, false));
	msc_tar_rd_fini(&rd);
	check(&s);
	/* the same, a byte at a time, and in pieces of 511 */
	for (size_t piece = 1; piece <= 511; piece += 510) {
		memset(&s, 0, sizeof(s));
		msc_tar_rd_init(&rd);
		for (size_t i = 0; i < n; i += piece)
			assert_int_equal(msc_tar_feed(&rd, buf + i, n - i <
			    piece ? n - i : piece, &cb, &s), 0);
		assert_true(msc_tar_rd_complete(&rd, false));
		msc_tar_rd_fini(&rd);
		check(&s);
	}
	/* cut short: not complete */
	memset(&s, 0, sizeof(s));
	msc_tar_rd_init(&rd);
	assert_int_equal(msc_tar_feed(&rd, buf, 600, &cb, &s), 0);
	assert_false(msc_tar_rd_complete(&rd, false));
	msc_tar_rd_fini(&rd);
	free(buf);
}

static void
test_bad_header(void **state)
{
	uint8_t *buf = calloc(1, 65536);
	size_t n = stream(buf);
	struct msc_tar_rd rd;
	struct seen s = { 0 };

	(void)state;
	buf[10] ^= 1;           /* the first header's checksum fails */
	msc_tar_rd_init(&rd);
	assert_int_equal(msc_tar_feed(&rd, buf, n, &cb, &s), -EBADMSG);
	msc_tar_rd_fini(&rd);
	assert_int_equal(s.n, 0);
	memset(buf, 'x', 512);  /* not tar at all */
	msc_tar_rd_init(&rd);
	assert_int_equal(msc_tar_feed(&rd, buf, 512, &cb, &s), -EBADMSG);
	msc_tar_rd_fini(&rd);
	free(buf);
}

static void
test_names(void **state)
{
	char longname[MSC_TAR_NAME_MAX + 2];

	(void)state;
	assert_true(msc_tar_name_ok("."));
	assert_true(msc_tar_name_ok("a"));
	assert_true(msc_tar_name_ok("a/b c/..d/d..\n"));
	assert_false(msc_tar_name_ok(""));
	assert_false(msc_tar_name_ok("/etc/passwd"));
	assert_false(msc_tar_name_ok(".."));
	assert_false(msc_tar_name_ok("a/../../b"));
	assert_false(msc_tar_name_ok("a/.."));
	assert_false(msc_tar_name_ok("./a"));
	assert_false(msc_tar_name_ok("a//b"));
	assert_false(msc_tar_name_ok("a/"));
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_false(msc_tar_name_ok(longname));
}

/* A raw ustar header block, checksummed: what a hostile writer sends. */
static void
raw_header(uint8_t *h, const char *name, char type, uint64_t size)
{
	unsigned sum = 0;

	memset(h, 0, 512);
	memcpy(h, name, strlen(name));
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 108, "0000000", 7);
	memcpy(h + 116, "0000000", 7);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	memcpy(h + 136, "00000000000", 11);
	h[156] = (uint8_t)type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
}

struct count {
	int entries, done;
	uint64_t bytes;
	char name[64];
};

static int
count_entry(void *arg, const struct msc_tar_entry *e)
{
	struct count *c = arg;

	c->entries++;
	memset(c->name, 0, sizeof(c->name));
	memcpy(c->name, e->name, strnlen(e->name, sizeof(c->name) - 1));
	return 0;
}

static int
count_data(void *arg, const uint8_t *p, size_t n)
{
	(void)p;
	((struct count *)arg)->bytes += n;
	return 0;
}

static int
count_done(void *arg, const struct msc_tar_entry *e)
{
	(void)e;
	((struct count *)arg)->done++;
	return 0;
}

static const struct msc_tar_cb count_cb = { count_entry, count_data,
	count_done };

/*
 * The attack: a pax header of size 0, then a file of 200 KiB. The file's
 * bytes are the file's (they once went into the 64 KiB pax buffer: a heap
 * overflow in the edge and in the computer's untar).
 */
static void
test_empty_pax(void **state)
{
	size_t fsize = 200 * 1024, n = 0;
	uint8_t *buf = calloc(1, 4 * 512 + fsize);
	struct msc_tar_rd rd;
	struct count c = { 0 };

	(void)state;
	raw_header(buf + n, "PaxHeader", 'x', 0);
	n += 512;
	raw_header(buf + n, "f", '0', fsize);
	n += 512;
	memset(buf + n, 'A', fsize);
	n += fsize + 1024;
	msc_tar_rd_init(&rd);
	assert_int_equal(msc_tar_feed(&rd, buf, n, &count_cb, &c), 0);
	assert_true(msc_tar_rd_complete(&rd, false));
	msc_tar_rd_fini(&rd);
	assert_int_equal(c.entries, 1);
	assert_int_equal(c.done, 1);
	assert_int_equal(c.bytes, fsize);
	assert_string_equal(c.name, "f");
	free(buf);
}

/* A stream with one pax block of `recs` (size `len`), then a file "f". */
static int
feed_pax(const char *recs, size_t len, struct count *c)
{
	size_t n = 0, sz = 512 + len + 512 + 512 + 1024;
	uint8_t *buf = calloc(1, sz);
	struct msc_tar_rd rd;
	int rv;

	raw_header(buf, "PaxHeader", 'x', len);
	n += 512;
	memcpy(buf + n, recs, len);
	n += len + msc_tar_pad(len);
	raw_header(buf + n, "f", '0', 0);
	n += 512 + 1024;
	msc_tar_rd_init(&rd);
	rv = msc_tar_feed(&rd, buf, n, &count_cb, c);
	msc_tar_rd_fini(&rd);
	free(buf);
	return rv;
}

/*
 * The attack: pax records whose length strtoull reads after whitespace
 * ("\n1 ...": a negative length given memchr, a write past the buffer),
 * or a record of digits filling the whole 64 KiB block (strtoull read
 * past its end). Each is refused, nothing read or written outside.
 */
static void
test_hostile_pax(void **state)
{
	size_t big = 64 * 1024;
	char *recs = malloc(big);
	struct count c = { 0 };

	(void)state;
	/* "\n1 " then no '=' up to the block's end */
	memset(recs, 'a', big);
	memcpy(recs, "\n1 ", 3);
	assert_int_equal(feed_pax(recs, big, &c), -EBADMSG);
	/* the same with the '=' just after */
	memcpy(recs, "\n1 path=zz\n", 11);
	assert_int_equal(feed_pax(recs, 11, &c), -EBADMSG);
	/* only digits */
	memset(recs, '1', big);
	assert_int_equal(feed_pax(recs, big, &c), -EBADMSG);
	/* a leading blank, then a record that would fit */
	assert_int_equal(feed_pax(" 12 path=ab\n", 12, &c), -EBADMSG);
	/* records with no key, or too short to hold one */
	assert_int_equal(feed_pax("4 =\n", 4, &c), -EBADMSG);
	assert_int_equal(feed_pax("2\n", 2, &c), -EBADMSG);
	assert_int_equal(feed_pax("3 \n", 3, &c), -EBADMSG);
	/* a well-formed one still works */
	memset(&c, 0, sizeof(c));
	assert_int_equal(feed_pax("12 path=ab\n", 11, &c), -EBADMSG);
	assert_int_equal(feed_pax("11 path=ab\n", 11, &c), 0);
	assert_string_equal(c.name, "ab");
	free(recs);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_empty_pax),
		cmocka_unit_test(test_hostile_pax),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
