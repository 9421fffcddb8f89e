/*
 * inventory_counts.c - how many computers each driver has, kept here so
 * that placing a new computer costs the same with 1 or 10,000 of them:
 * every create and removal this inventory makes moves its driver's count,
 * and a List of every driver refreshes the counts now and then (the first
 * placement, then at most once per refresh period, in the background) to
 * take in what others made or removed. A driver whose List or Create could
 * not reach it gets no new computer until a refresh reaches it again.
 */
#include "inventory_int.h"

#include <errno.h>
#include <stdlib.h>

#include "msc_log.h"
#include "msc_time.h"

#define INV_COUNT_REFRESH_MS 60000
#define INV_COUNT_LIST_MS 10000

struct inv_pick_wait {
	inv_pick_fn fn;
	void *arg;
	SLIST_ENTRY(inv_pick_wait) link;        /* in pick_waits */
};

void
inv_counts_init(struct inv_service *s)
{
	pthread_cond_init(&s->counts_cv, NULL);
	SLIST_INIT(&s->pick_waits);
	s->count_refresh_ms = INV_COUNT_REFRESH_MS;
}

/* The reachable driver with the fewest computers, or -1. Lock held. */
static int
least_loaded(const struct inv_service *s)
{
	long best_n = 0;
	int best = -1;

	for (size_t i = 0; i < msc_fleet_size(s->fleet); i++) {
		long n = s->count[i] + s->creating[i];

		if (!s->count_known[i])
			continue;
		if (best < 0 || n < best_n) {
			best_n = n;
			best = (int)i;
		}
	}
	return best;
}

static bool
any_known(const struct inv_service *s)
{
	for (size_t i = 0; i < msc_fleet_size(s->fleet); i++)
		if (s->count_known[i])
			return true;
	return false;
}

static void
counted(void *arg, struct inv_fan *f)
{
	struct inv_service *s = arg;
	struct inv_pick_waits waits;
	struct inv_pick_wait *w;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < f->n; i++) {
		const Msc__V1__ComputerList *l = (const void *)f->r[i].resp;

		s->count_known[i] = l != NULL;
		if (l != NULL)
			s->count[i] = (long)l->n_computers;
	}
	s->counted_at_ms = msc_now_ms();
	s->count_lists++;
	waits = s->pick_waits;          /* taken whole */
	SLIST_INIT(&s->pick_waits);
	s->counting = false;    /* a pick from now on starts its own List */
	s->count_callbacks++;
	pthread_mutex_unlock(&s->mu);
	inv_fan_free(f);
	/* Who waited for the counts is placed now (before others start). */
	while ((w = SLIST_FIRST(&waits)) != NULL) {
		int i;

		SLIST_REMOVE_HEAD(&waits, link);
		pthread_mutex_lock(&s->mu);
		i = least_loaded(s);
		pthread_mutex_unlock(&s->mu);
		w->fn(w->arg, i);
		free(w);
	}
	pthread_mutex_lock(&s->mu);
	s->count_callbacks--;
	pthread_cond_broadcast(&s->counts_cv);
	pthread_mutex_unlock(&s->mu);
}

/* Answers every pick waiting for the counts with "none". Lock held. */
static void
fail_waits_locked(struct inv_service *s)
{
	struct inv_pick_waits waits = s->pick_waits;
	struct inv_pick_wait *w;

	SLIST_INIT(&s->pick_waits);
	pthread_mutex_unlock(&s->mu);
	while ((w = SLIST_FIRST(&waits)) != NULL) {
		SLIST_REMOVE_HEAD(&waits, link);
		w->fn(w->arg, -1);
		free(w);
	}
	pthread_mutex_lock(&s->mu);
}

/* Starts a List of every driver unless one is under way. Lock held. */
static int
refresh_locked(struct inv_service *s)
{
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	int rv;

	if (s->counting || s->stopping)
		return s->stopping ? -ECANCELED : 0;
	s->counting = true;
	/* The fan may answer at once, on this thread: unlocked. */
	pthread_mutex_unlock(&s->mu);
	rv = inv_fan_out(s, "List", &e.base, INV_COUNT_LIST_MS, counted, s);
	pthread_mutex_lock(&s->mu);
	if (rv != 0) {
		s->counting = false;
		pthread_cond_broadcast(&s->counts_cv);
	}
	return rv;
}

void
inv_counts_pick(struct inv_service *s, inv_pick_fn fn, void *arg)
{
	struct inv_pick_wait *w;
	uint64_t now = msc_now_ms();
	int i;

	pthread_mutex_lock(&s->mu);
	if (any_known(s)) {
		i = least_loaded(s);
		if (now - s->counted_at_ms >= (uint64_t)s->count_refresh_ms &&
		    refresh_locked(s) != 0)
			msc_log_warn("inventory: cannot refresh the drivers' "
				     "counts");
		pthread_mutex_unlock(&s->mu);
		fn(arg, i);
		return;
	}
	/* Nothing counted yet (or nothing reachable): wait for a List. */
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		pthread_mutex_unlock(&s->mu);
		fn(arg, -1);
		return;
	}
	w->fn = fn;
	w->arg = arg;
	SLIST_INSERT_HEAD(&s->pick_waits, w, link);
	if (refresh_locked(s) != 0)
		fail_waits_locked(s);
	pthread_mutex_unlock(&s->mu);
}

void
inv_counts_created(struct inv_service *s, int i, Msc__V1__Code code)
{
	pthread_mutex_lock(&s->mu);
	if (code == MSC__V1__CODE__OK)
		s->count[i]++;
	else if (code == MSC__V1__CODE__UNAVAILABLE ||
	    code == MSC__V1__CODE__DEADLINE_EXCEEDED)
		s->count_known[i] = false;      /* until a List reaches it */
	pthread_mutex_unlock(&s->mu);
}

void
inv_counts_removed_locked(struct inv_service *s, int i)
{
	if (i >= 0 && s->count[i] > 0)
		s->count[i]--;
}

void
inv_counts_stop(struct inv_service *s)
{
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	while (s->counting || s->count_callbacks > 0)
		pthread_cond_wait(&s->counts_cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	pthread_cond_destroy(&s->counts_cv);
}

void
inv_set_count_refresh_ms(struct inv_service *s, int ms)
{
	pthread_mutex_lock(&s->mu);
	s->count_refresh_ms = ms;
	pthread_mutex_unlock(&s->mu);
}

uint64_t
inv_count_lists(struct inv_service *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->mu);
	n = s->count_lists;
	pthread_mutex_unlock(&s->mu);
	return n;
}
