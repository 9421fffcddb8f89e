/* test_lib.c - unit tests of lib/: UTF-8 repair, slugs, the map. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_driver_known.h"
#include "msc_fair.h"
#include "msc_map.h"
#include "msc_principal.h"
#include "msc_queue.h"
#include "msc_random.h"
#include "msc_share.h"
#include "msc_slug.h"
#include "msc_time.h"
#include "msc_utf8.h"

static void
utf8_repair_cases(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
	} cases[] = {
		{ "hello", 5, "hello" },
		{ "\xff", 1, "\xEF\xBF\xBD" },
		{ "a\xc3", 2, "a\xEF\xBF\xBD" },             /* truncated */
		{ "\xc3\xa9", 2, "\xc3\xa9" },               /* é */
		{ "\xe2\x82", 2, "\xEF\xBF\xBD" },           /* one maximal part */
		{ "\xed\xa0\x80", 3,                          /* surrogate */
		    "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },
		{ "\xc0\xaf", 2, "\xEF\xBF\xBD\xEF\xBF\xBD" }, /* overlong */
		{ "\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80" },
		{ "\xf4\x90\x80\x80", 4,                      /* > U+10FFFF */
		    "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		size_t n;
		char *out = msc_utf8_repair(cases[i].in, cases[i].len, &n);

		assert_non_null(out);
		assert_int_equal(n, strlen(cases[i].out));
		assert_memory_equal(out, cases[i].out, n);
		assert_true(msc_utf8_valid(out, n));
		free(out);
	}
	assert_false(msc_utf8_valid("\xff", 1));
}

static void
utf8_keeps_nul(void **state)
{
	size_t n;
	char *out = msc_utf8_repair("a\0b", 3, &n);

	(void)state;
	assert_int_equal(n, 3);
	assert_memory_equal(out, "a\0b", 3);
	free(out);
}

static void
slug_rules(void **state)
{
	static const char *const bad[] = { "", "UPPER", "with space", "-leading",
		"trailing-", "under_score",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	char out[MSC_SLUG_MAX + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_false(msc_slug_valid(bad[i]));
		assert_int_equal(msc_slug_normalize(bad[i], out), -22);
	}
	assert_true(msc_slug_valid("a"));
	assert_true(msc_slug_valid("dev-box-2"));
	assert_int_equal(msc_slug_normalize("  dev-box \n", out), 0);
	assert_string_equal(out, "dev-box");
}

static void
slug_random_unique(void **state)
{
	struct msc_map *seen;
	char ids[100][MSC_SLUG_MAX + 1];

	(void)state;
	assert_int_equal(msc_map_new(&seen), 0);
	for (int i = 0; i < 100; i++) {
		msc_slug_random(ids[i]);
		assert_true(msc_slug_valid(ids[i]));
		/* adjective-noun-4hex */
		const char *last = strrchr(ids[i], '-');
		assert_int_equal(strlen(last + 1), 4);
		assert_null(msc_map_get(seen, ids[i]));
		assert_int_equal(msc_map_put(seen, ids[i], ids[i]), 0);
	}
	assert_int_equal(msc_map_len(seen), 100);
	msc_map_free(seen);
}

static void
count_cb(void *arg, const char *key, void *value)
{
	(void)key;
	(void)value;
	(*(int *)arg)++;
}

static void
map_grows_and_deletes(void **state)
{
	struct msc_map *m;
	char key[32];
	int n = 0;

	(void)state;
	assert_int_equal(msc_map_new(&m), 0);
	for (intptr_t i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%ld", (long)i);
		assert_int_equal(msc_map_put(m, key, (void *)(i + 1)), 0);
	}
	assert_int_equal(msc_map_len(m), 5000);
	assert_ptr_equal(msc_map_get(m, "k4999"), (void *)5000);
	assert_ptr_equal(msc_map_del(m, "k10"), (void *)11);
	assert_null(msc_map_get(m, "k10"));
	assert_null(msc_map_del(m, "k10"));
	msc_map_each(m, count_cb, &n);
	assert_int_equal(n, 4999);
	msc_map_free(m);
}

static int drained;

static void
count_drained(void *item)
{
	(void)item;
	drained++;
}

/* Two slots per key: the third item of a key waits (in order) and takes
 * the first slot given back; other keys are not held up; the waiting
 * room is bounded; a drain hands back whatever waits. */
static void
share_slots_per_key(void **state)
{
	struct msc_share *sh;
	int items[6];

	(void)state;
	assert_int_equal(msc_share_new(2, 2, &sh), 0);
	assert_int_equal(msc_share_enter(sh, "a", &items[0]), 1);
	assert_int_equal(msc_share_enter(sh, "a", &items[1]), 1);
	assert_int_equal(msc_share_enter(sh, "a", &items[2]), 0);
	assert_int_equal(msc_share_enter(sh, "a", &items[3]), 0);
	assert_int_equal(msc_share_enter(sh, "a", &items[4]), -EAGAIN);
	assert_int_equal(msc_share_enter(sh, "b", &items[5]), 1);
	assert_ptr_equal(msc_share_leave(sh, "a"), &items[2]);
	assert_ptr_equal(msc_share_leave(sh, "a"), &items[3]);
	assert_null(msc_share_leave(sh, "a"));
	assert_null(msc_share_leave(sh, "a"));   /* "a" holds nothing now */
	assert_int_equal(msc_share_enter(sh, "a", &items[0]), 1);
	msc_share_set(sh, 1);
	assert_int_equal(msc_share_enter(sh, "a", &items[1]), 0);
	assert_int_equal(msc_share_enter(sh, "b", &items[2]), 0);
	drained = 0;
	msc_share_drain(sh, count_drained);
	assert_int_equal(drained, 2);
	assert_null(msc_share_leave(sh, "a"));
	assert_null(msc_share_leave(sh, "b"));
	msc_share_free(sh);
}

/*
 * Four slots, a named key's cap three and queue two: "a" floods, and "b"
 * still gets the slot "a" may not take, then the next freed slot before
 * "a"'s older items (it runs fewer); past its cap and queue "a" is told
 * at once (-EBUSY) while "b" may still queue; the empty key (the one
 * principal of a server without principals) may take every slot.
 */
static void
fair_round_robin(void **state)
{
	struct msc_fair *f;
	int items[16], running;
	size_t queued;

	(void)state;
	assert_int_equal(msc_fair_new(4, 3, 2, 8, &f), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(msc_fair_enter(f, "a", &items[i]), 1);
	assert_int_equal(msc_fair_enter(f, "a", &items[3]), 0);
	assert_int_equal(msc_fair_enter(f, "a", &items[4]), 0);
	assert_int_equal(msc_fair_enter(f, "a", &items[5]), -EBUSY);
	msc_fair_count(f, "a", &running, &queued);
	assert_int_equal(running, 3);
	assert_int_equal(queued, 2);
	assert_int_equal(msc_fair_enter(f, "b", &items[6]), 1);   /* room */
	assert_int_equal(msc_fair_enter(f, "b", &items[7]), 0);   /* full */
	assert_int_equal(msc_fair_enter(f, "c", &items[8]), 0);
	/* a gives back: c runs none, a two: c goes first. */
	assert_ptr_equal(msc_fair_leave(f, "a"), &items[8]);
	/* a and b run one each: a, waiting longest, goes first... */
	assert_ptr_equal(msc_fair_leave(f, "a"), &items[3]);
	/* ...and b runs fewer than a now. */
	assert_ptr_equal(msc_fair_leave(f, "b"), &items[7]);
	assert_ptr_equal(msc_fair_leave(f, "c"), &items[4]);
	assert_null(msc_fair_leave(f, "c"));      /* nothing waits */
	for (int i = 0; i < 3; i++)
		assert_null(msc_fair_leave(f, "a"));
	assert_null(msc_fair_leave(f, "b"));
	msc_fair_count(f, "a", &running, &queued);
	assert_int_equal(running, 0);
	/* The empty key alone takes every slot and waits up to the bound. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(msc_fair_enter(f, "", &items[i]), 1);
	for (int i = 4; i < 12; i++)
		assert_int_equal(msc_fair_enter(f, "", &items[i]), 0);
	assert_int_equal(msc_fair_enter(f, "", &items[12]), -EAGAIN);
	assert_ptr_equal(msc_fair_leave(f, ""), &items[4]);
	drained = 0;
	msc_fair_drain(f, count_drained);
	assert_int_equal(drained, 7);
	for (int i = 0; i < 4; i++)
		assert_null(msc_fair_leave(f, ""));
	msc_fair_free(f);
}

/* A principal's tag: 32 hex digits, one per name; none for the one
 * principal; a computer that records none is anyone's. */
static void
principal_tags(void **state)
{
	char a[MSC_PRINCIPAL_TAG_LEN + 1], b[MSC_PRINCIPAL_TAG_LEN + 1];

	(void)state;
	msc_principal_tag("alice", a);
	msc_principal_tag("bob", b);
	assert_int_equal(strlen(a), MSC_PRINCIPAL_TAG_LEN);
	assert_true(strcmp(a, b) != 0);
	assert_null(strstr(a, "alice"));
	msc_principal_tag("alice", b);
	assert_string_equal(a, b);
	msc_principal_tag("", b);
	assert_string_equal(b, "");
	assert_true(msc_principal_may("", a));
	assert_true(msc_principal_may(a, a));
	msc_principal_tag("bob", b);
	assert_false(msc_principal_may(a, b));
	assert_true(msc_principal_may(a, ""));    /* the operator's server */
}

/* The monotonic clock moves forward; the wall clock is after 2020. */
static void
time_clocks(void **state)
{
	uint64_t a, b;

	(void)state;
	a = msc_now_ms();
	b = msc_now_ms();
	assert_true(b >= a);
	assert_true(msc_wall_ms() > UINT64_C(1577836800000));
}

static bool
is_lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool digit = s[i] >= '0' && s[i] <= '9';

		if (!digit && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	}
	return s[n] == '\0';
}

/* Hex of n bytes is 2n lowercase digits and a NUL, also past 64 bytes. */
static void
random_hex_lengths(void **state)
{
	char a[33], b[33], big[2 * 100 + 2];

	(void)state;
	memset(big, 'x', sizeof(big));
	msc_random_hex(a, 16);
	msc_random_hex(b, 16);
	assert_true(is_lower_hex(a, 32));
	assert_string_not_equal(a, b);
	msc_random_hex(big, 100);
	assert_true(is_lower_hex(big, 200));
	assert_int_equal(big[201], 'x');
	msc_random_hex(a, 0);
	assert_string_equal(a, "");
}

/* Uniform numbers stay below the bound and reach every value. */
static void
random_uniform_range(void **state)
{
	int seen[7] = { 0 };

	(void)state;
	assert_int_equal(msc_random_uniform(0), 0);
	assert_int_equal(msc_random_uniform(1), 0);
	for (int i = 0; i < 2000; i++) {
		uint32_t r = msc_random_uniform(7);

		assert_true(r < 7);
		seen[r]++;
	}
	for (int i = 0; i < 7; i++)
		assert_true(seen[i] > 0);
	assert_true(msc_random_uniform(UINT32_MAX) < UINT32_MAX);
}

struct rec {
	char name[16];
	int n;
};

static void
bump(void *rec, void *arg)
{
	struct rec *r = rec;

	r->n += *(int *)arg;
}

/* Records go in and out as copies; update edits in place; forget. */
static void
known_cache(void **state)
{
	struct msc_known *k;
	struct rec a = { "alpha", 1 }, out = { "", -1 };
	int two = 2;

	(void)state;
	assert_int_equal(msc_known_new(sizeof(struct rec), &k), 0);
	assert_false(msc_known_get(k, "c1", &out));
	assert_int_equal(out.n, -1);
	assert_int_equal(msc_known_put(k, "c1", &a), 0);
	a.n = 99;               /* the cache holds its own copy */
	assert_true(msc_known_get(k, "c1", &out));
	assert_string_equal(out.name, "alpha");
	assert_int_equal(out.n, 1);
	assert_int_equal(msc_known_update(k, "c1", false, bump, &two), 0);
	assert_true(msc_known_get(k, "c1", &out));
	assert_int_equal(out.n, 3);
	assert_int_equal(msc_known_update(k, "c2", false, bump, &two),
	    -ENOENT);
	assert_false(msc_known_get(k, "c2", &out));
	assert_int_equal(msc_known_update(k, "c2", true, bump, &two), 0);
	assert_true(msc_known_get(k, "c2", &out));
	assert_string_equal(out.name, "");
	assert_int_equal(out.n, 2);
	msc_known_forget(k, "c1");
	msc_known_forget(k, "nothing");
	assert_false(msc_known_get(k, "c1", &out));
	assert_true(msc_known_get(k, "c2", &out));
	msc_known_free(k);
	msc_known_free(NULL);
}

struct qitem {
	int v;
	struct msc_qnode qn;
};

/* First in, first out; take_all appends in order and empties. */
static void
queue_fifo(void **state)
{
	struct msc_queue a = MSC_QUEUE_INIT, b;
	struct qitem it[5];
	struct msc_qnode *n;

	(void)state;
	msc_queue_init(&b);
	assert_true(msc_queue_empty(&a));
	assert_null(msc_queue_pop(&a));
	for (int i = 0; i < 5; i++) {
		it[i].v = i;
		msc_queue_push(i < 3 ? &a : &b, &it[i].qn);
	}
	n = msc_queue_pop(&a);
	assert_int_equal(msc_queue_item(n, struct qitem, qn)->v, 0);
	msc_queue_take_all(&a, &b);
	assert_true(msc_queue_empty(&b));
	for (int want = 1; want < 5; want++) {
		n = msc_queue_pop(&a);
		assert_non_null(n);
		assert_int_equal(msc_queue_item(n, struct qitem, qn)->v, want);
	}
	assert_true(msc_queue_empty(&a));
	msc_queue_take_all(&a, &b);     /* empty into empty */
	assert_true(msc_queue_empty(&a));
	msc_queue_push(&a, &it[0].qn);  /* reusable after emptying */
	assert_ptr_equal(msc_queue_pop(&a), &it[0].qn);
	assert_null(msc_queue_pop(&a));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_repair_cases),
		cmocka_unit_test(time_clocks),
		cmocka_unit_test(known_cache),
		cmocka_unit_test(queue_fifo),
		cmocka_unit_test(random_hex_lengths),
		cmocka_unit_test(random_uniform_range),
		cmocka_unit_test(utf8_keeps_nul),
		cmocka_unit_test(slug_rules),
		cmocka_unit_test(slug_random_unique),
		cmocka_unit_test(map_grows_and_deletes),
		cmocka_unit_test(share_slots_per_key),
		cmocka_unit_test(fair_round_robin),
		cmocka_unit_test(principal_tags),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
