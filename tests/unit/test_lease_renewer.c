/*
 * test_lease_renewer.c - the lease renewer every driver uses
 * (msc_lease_renewer.h) against a fake backend: rounds every third of
 * the lease on a fixed cadence, a gone computer dropped, and the races of
 * a renewal with a release: a computer released during a round stays
 * released, one released and held again during a round that finds its
 * old self gone stays held (under its new name).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "msc_lease_renewer.h"
#include "msc_time.h"

/* The fake backend: counts renewals, answers as told, can hold a round. */
struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int rounds;
	int renewed[4];                 /* per computer "c0".."c3" */
	char last_ref[4][128];
	enum msc_lease_outcome answer[4];
	int slow_ms;                    /* each round takes this long */
	bool hold_round;                /* the next round waits for release */
	bool in_round, release_round;
};

static int
slot(const char *id)
{
	return id[0] == 'c' && id[1] >= '0' && id[1] <= '3' ? id[1] - '0' : -1;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
fake_renew(void *arg, struct msc_lease_item *items, size_t n)
{
	struct fake *f = arg;

	pthread_mutex_lock(&f->mu);
	f->rounds++;
	if (f->hold_round) {
		f->hold_round = false;
		f->in_round = true;
		pthread_cond_broadcast(&f->cv);
		while (!f->release_round)
			pthread_cond_wait(&f->cv, &f->mu);
		f->release_round = false;
		f->in_round = false;
	}
	for (size_t i = 0; i < n; i++) {
		int k = slot(items[i].id);

		if (k < 0)
			continue;
		f->renewed[k]++;
		snprintf(f->last_ref[k], sizeof(f->last_ref[k]), "%s",
		    items[i].ref);
		items[i].outcome = f->answer[k];
		if (f->answer[k] == MSC_LEASE_FAILED)
			snprintf(items[i].err, sizeof(items[i].err), "refused");
	}
	pthread_mutex_unlock(&f->mu);
	if (f->slow_ms > 0)
		sleep_ms(f->slow_ms);
}

static struct fake *
fake_new(void)
{
	static struct fake f;

	memset(&f, 0, sizeof(f));
	pthread_mutex_init(&f.mu, NULL);
	pthread_cond_init(&f.cv, NULL);
	return &f;
}

static int
renewed(struct fake *f, int k)
{
	int n;

	pthread_mutex_lock(&f->mu);
	n = f->renewed[k];
	pthread_mutex_unlock(&f->mu);
	return n;
}

/* Waits (bounded) until the renewer's thread sits in a held round. */
static void
wait_in_round(struct fake *f)
{
	uint64_t until = msc_now_ms() + 5000;

	pthread_mutex_lock(&f->mu);
	while (!f->in_round && msc_now_ms() < until) {
		pthread_mutex_unlock(&f->mu);
		sleep_ms(10);
		pthread_mutex_lock(&f->mu);
	}
	assert_true(f->in_round);
	pthread_mutex_unlock(&f->mu);
}

static void
release_round(struct fake *f)
{
	pthread_mutex_lock(&f->mu);
	f->release_round = true;
	pthread_cond_broadcast(&f->cv);
	while (f->in_round) {
		pthread_mutex_unlock(&f->mu);
		sleep_ms(5);
		pthread_mutex_lock(&f->mu);
	}
	pthread_mutex_unlock(&f->mu);
}

/* Waits until `more` rounds after the current one have ended (rounds with
 * something held: an empty one does not reach the backend). */
static void
wait_rounds(struct fake *f, int more)
{
	uint64_t until = msc_now_ms() + 5000;
	int start, now;

	pthread_mutex_lock(&f->mu);
	start = f->rounds;
	pthread_mutex_unlock(&f->mu);
	do {
		sleep_ms(20);
		pthread_mutex_lock(&f->mu);
		now = f->rounds;
		pthread_mutex_unlock(&f->mu);
	} while (now < start + more + 1 && msc_now_ms() < until);
	assert_true(now >= start + more + 1);
}

/* Every third of the lease, each held computer once, with its ref. */
static void
renews_every_third(void **state)
{
	struct fake *f = fake_new();
	struct msc_lease_renewer *r;
	int n;

	(void)state;
	assert_int_equal(msc_lease_renewer_start(&r, "test", 900, fake_renew,
	    f), 0);
	assert_int_equal(msc_lease_renewer_period_ms(r), 300);
	assert_int_equal(msc_lease_renewer_hold(r, "c0", "ref-0"), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c0", "ref-0"), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c3", NULL), 0); /* rounds */
	assert_true(msc_lease_renewer_holds(r, "c0"));
	assert_false(msc_lease_renewer_holds(r, "c1"));
	sleep_ms(1050);
	n = renewed(f, 0);
	assert_in_range(n, 2, 4);       /* ~3, once per round, not twice */
	assert_string_equal(f->last_ref[0], "ref-0");
	msc_lease_renewer_drop(r, "c0");
	assert_false(msc_lease_renewer_holds(r, "c0"));
	wait_rounds(f, 1);
	n = renewed(f, 0);
	sleep_ms(700);
	assert_int_equal(renewed(f, 0), n);     /* dropped: not renewed */
	msc_lease_renewer_stop(r);
	msc_lease_renewer_stop(NULL);
	assert_int_equal(msc_lease_renewer_hold(NULL, "x", NULL), 0);
	msc_lease_renewer_drop(NULL, "x");
	assert_false(msc_lease_renewer_holds(NULL, "x"));
}

/* A short lease still gets 250 ms between rounds; a slow round (200 ms of
 * 250) does not push the next one back. */
static void
fixed_cadence(void **state)
{
	struct fake *f = fake_new();
	struct msc_lease_renewer *r;
	uint64_t t0;
	int n;

	(void)state;
	f->slow_ms = 200;
	assert_int_equal(msc_lease_renewer_start(&r, "test", 300, fake_renew,
	    f), 0);
	assert_int_equal(msc_lease_renewer_period_ms(r), 250);
	assert_int_equal(msc_lease_renewer_hold(r, "c1", NULL), 0);
	t0 = msc_now_ms();
	sleep_ms(2050);
	n = renewed(f, 1);
	/* 8 on the cadence; 4-5 if each round pushed the next by 200 ms. */
	assert_in_range(n, 7, 9);
	msc_lease_renewer_stop(r);
	/* Stopped at once, not a period later (the round in flight ends). */
	assert_true(msc_now_ms() - t0 < 2050 + 400);
	assert_string_equal(f->last_ref[1], "");
}

/* A computer the backend finds gone is dropped; the others are not. */
static void
gone_is_dropped(void **state)
{
	struct fake *f = fake_new();
	struct msc_lease_renewer *r;

	(void)state;
	f->answer[2] = MSC_LEASE_GONE;
	f->answer[3] = MSC_LEASE_FAILED;
	assert_int_equal(msc_lease_renewer_start(&r, "test", 750, fake_renew,
	    f), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c0", "a"), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c2", "b"), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c3", "c"), 0);
	wait_rounds(f, 1);
	assert_true(msc_lease_renewer_holds(r, "c0"));
	assert_false(msc_lease_renewer_holds(r, "c2"));
	assert_true(msc_lease_renewer_holds(r, "c3"));  /* failing: kept */
	assert_int_equal(renewed(f, 2), 1);
	msc_lease_renewer_stop(r);
}

/* Released while its renewal is in flight: the renewal does not bring it
 * back (a renewal racing a release). */
static void
release_during_round(void **state)
{
	struct fake *f = fake_new();
	struct msc_lease_renewer *r;

	(void)state;
	assert_int_equal(msc_lease_renewer_start(&r, "test", 750, fake_renew,
	    f), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c0", "a"), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c3", NULL), 0); /* rounds */
	f->hold_round = true;
	wait_in_round(f);
	msc_lease_renewer_drop(r, "c0");
	release_round(f);
	wait_rounds(f, 1);
	assert_false(msc_lease_renewer_holds(r, "c0"));
	msc_lease_renewer_stop(r);
}

/* Released and held again (a reset: a new sandbox) while the round finds
 * the old sandbox gone: the new hold stays, and is renewed by its name. */
static void
gone_old_hold_keeps_new(void **state)
{
	struct fake *f = fake_new();
	struct msc_lease_renewer *r;

	(void)state;
	f->answer[1] = MSC_LEASE_GONE;
	assert_int_equal(msc_lease_renewer_start(&r, "test", 750, fake_renew,
	    f), 0);
	assert_int_equal(msc_lease_renewer_hold(r, "c1", "old"), 0);
	f->hold_round = true;
	wait_in_round(f);
	msc_lease_renewer_drop(r, "c1");
	assert_int_equal(msc_lease_renewer_hold(r, "c1", "new"), 0);
	release_round(f);       /* it answers GONE for "old" */
	pthread_mutex_lock(&f->mu);
	assert_string_equal(f->last_ref[1], "old");
	f->answer[1] = MSC_LEASE_RENEWED;       /* for the rounds after */
	pthread_mutex_unlock(&f->mu);
	assert_true(msc_lease_renewer_holds(r, "c1"));
	wait_rounds(f, 1);
	assert_true(msc_lease_renewer_holds(r, "c1"));
	assert_string_equal(f->last_ref[1], "new");
	/* Held again under another name without a drop: the same. */
	assert_int_equal(msc_lease_renewer_hold(r, "c1", "newer"), 0);
	wait_rounds(f, 1);
	assert_string_equal(f->last_ref[1], "newer");
	msc_lease_renewer_stop(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(renews_every_third),
		cmocka_unit_test(fixed_cadence),
		cmocka_unit_test(gone_is_dropped),
		cmocka_unit_test(release_during_round),
		cmocka_unit_test(gone_old_hold_keeps_new),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
