/*
 * msc_lease_renewer.c - renewing the leases of held temporary computers on
 * a thread of their own; see msc_lease_renewer.h.
 */
#include "msc_lease_renewer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_log.h"
#include "msc_map.h"
#include "msc_time.h"

/* $1: the lease in seconds. */
const char msc_lease_watch_sh[] =
    "f=" MSC_LEASE_FILE "; t=$1; last=; n=0\n"
    "command -v stat >/dev/null && touch \"$f\" 2>/dev/null || exec sleep inf\n"
    "while sleep 1; do\n"
    "  m=$(stat -c %y \"$f\" 2>/dev/null) || exit 0\n"
    "  if [ \"$m\" = \"$last\" ]; then n=$((n + 1)); else last=$m; n=0; fi\n"
    "  [ \"$n\" -lt \"$t\" ] || exit 0\n"
    "done\n";

struct held {
	char ref[128];
	uint64_t gen;           /* which hold: a round's GONE drops only its own */
	uint64_t ok_ms;         /* monotonic time of the last renewal (or hold) */
	bool warned;            /* said that renewals fail */
};

struct msc_lease_renewer {
	const char *who;
	msc_lease_renew_fn renew;
	void *arg;
	uint32_t lease_ms, period_ms;
	pthread_t thread;
	bool running, stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct msc_map *held;   /* id -> struct held */
	uint64_t next_gen;
	size_t cursor;          /* where the next round starts, in map order */
};

/* A round's copy: cap items from the cursor on, wrapping around. */
struct snap {
	struct msc_lease_item *items;
	size_t n, cap;
	size_t at, from;        /* the entry being visited; the cursor */
	bool wrapped;           /* the second pass: the entries before it */
};

static void
snap_one(void *arg, const char *key, void *value)
{
	struct snap *s = arg;
	const struct held *h = value;
	struct msc_lease_item *it;
	size_t at = s->at++;

	if (s->n == s->cap || (!s->wrapped && at < s->from) ||
	    (s->wrapped && at >= s->from))
		return;
	it = &s->items[s->n++];
	snprintf(it->id, sizeof(it->id), "%s", key);
	snprintf(it->ref, sizeof(it->ref), "%s", h->ref);
	it->gen = h->gen;
	it->outcome = MSC_LEASE_FAILED;
	it->err[0] = '\0';
}

/* Notes one item's outcome, if `id` is still held by the same hold. */
static void
record(struct msc_lease_renewer *r, const struct msc_lease_item *it,
    uint64_t now)
{
	struct held *h = msc_map_get(r->held, it->id);

	if (h == NULL || h->gen != it->gen)
		return;         /* released (and maybe held again) meanwhile */
	switch (it->outcome) {
	case MSC_LEASE_RENEWED:
		h->ok_ms = now;
		h->warned = false;
		break;
	case MSC_LEASE_GONE:
		free(msc_map_del(r->held, it->id));
		break;
	case MSC_LEASE_FAILED:
	default:
		if (!h->warned && now - h->ok_ms > r->lease_ms / 2) {
			h->warned = true;
			msc_log_warn("%s: cannot renew the lease of %s: %s",
			    r->who, it->id, it->err[0] != '\0' ? it->err :
			    "no answer");
		}
		break;
	}
}

static void
renew_round(struct msc_lease_renewer *r)
{
	struct snap s = { 0 };
	uint64_t now;

	pthread_mutex_lock(&r->mu);
	s.cap = msc_map_len(r->held);
	/* More than a round holds: each round goes on where the last ended,
	 * so every held computer is renewed in turn. */
	s.from = s.cap > 0 ? r->cursor % s.cap : 0;
	if (s.cap > MSC_LEASE_MAX_ROUND)
		s.cap = MSC_LEASE_MAX_ROUND;
	if (s.cap > 0 && (s.items = calloc(s.cap, sizeof(*s.items))) != NULL) {
		msc_map_each(r->held, snap_one, &s);
		s.wrapped = true;
		s.at = 0;
		msc_map_each(r->held, snap_one, &s);
		r->cursor = s.from + s.n;
	}
	pthread_mutex_unlock(&r->mu);
	if (s.items == NULL)
		return;
	r->renew(r->arg, s.items, s.n);
	now = msc_now_ms();
	pthread_mutex_lock(&r->mu);
	for (size_t i = 0; i < s.n; i++)
		record(r, &s.items[i], now);
	pthread_mutex_unlock(&r->mu);
	free(s.items);
}

static void
add_ms(struct timespec *ts, uint32_t ms)
{
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *
renewer_main(void *arg)
{
	struct msc_lease_renewer *r = arg;
	struct timespec next;

	/* Rounds on a fixed cadence: a slow round does not push the next. */
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&r->mu);
	while (!r->stopping) {
		struct timespec now;

		add_ms(&next, r->period_ms);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (next.tv_sec < now.tv_sec - 1)
			next = now;     /* fell far behind (a stop): start over */
		while (!r->stopping &&
		    pthread_cond_timedwait(&r->cv, &r->mu, &next) != ETIMEDOUT)
			;
		if (r->stopping)
			break;
		pthread_mutex_unlock(&r->mu);
		renew_round(r);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static void
free_held(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	free(value);
}

static void
renewer_free(struct msc_lease_renewer *r)
{
	msc_map_each(r->held, free_held, NULL);
	msc_map_free(r->held);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

int
msc_lease_renewer_start(struct msc_lease_renewer **rp, const char *who,
    uint32_t lease_ms, msc_lease_renew_fn renew, void *arg)
{
	struct msc_lease_renewer *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	int rv;

	*rp = NULL;
	if (r == NULL)
		return -ENOMEM;
	if ((rv = msc_map_new(&r->held)) != 0) {
		free(r);
		return rv;
	}
	r->who = who;
	r->renew = renew;
	r->arg = arg;
	r->lease_ms = lease_ms;
	r->period_ms = lease_ms / 3;
	if (r->period_ms < MSC_LEASE_MIN_PERIOD_MS)
		r->period_ms = MSC_LEASE_MIN_PERIOD_MS;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	if ((rv = pthread_create(&r->thread, NULL, renewer_main, r)) != 0) {
		renewer_free(r);
		return -rv;
	}
	r->running = true;
	*rp = r;
	return 0;
}

void
msc_lease_renewer_stop(struct msc_lease_renewer *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	if (r->running)
		pthread_join(r->thread, NULL);
	renewer_free(r);
}

uint32_t
msc_lease_renewer_period_ms(const struct msc_lease_renewer *r)
{
	return r->period_ms;
}

int
msc_lease_renewer_hold(struct msc_lease_renewer *r, const char *id,
    const char *ref)
{
	struct held *h, *old;
	int rv = 0;

	if (r == NULL)
		return 0;
	if (ref == NULL)
		ref = "";
	pthread_mutex_lock(&r->mu);
	old = msc_map_get(r->held, id);
	if (old != NULL && strcmp(old->ref, ref) == 0)
		goto out;       /* held already */
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		rv = -ENOMEM;
		goto out;
	}
	snprintf(h->ref, sizeof(h->ref), "%s", ref);
	h->gen = ++r->next_gen;
	h->ok_ms = msc_now_ms();
	if ((rv = msc_map_put(r->held, id, h)) != 0)
		free(h);
	else
		free(old);      /* replaced: a new backend name */
out:
	pthread_mutex_unlock(&r->mu);
	if (rv != 0)
		msc_log_warn("%s: cannot hold the lease of %s: out of memory",
		    r->who, id);
	return rv;
}

void
msc_lease_renewer_drop(struct msc_lease_renewer *r, const char *id)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	free(msc_map_del(r->held, id));
	pthread_mutex_unlock(&r->mu);
}

bool
msc_lease_renewer_holds(struct msc_lease_renewer *r, const char *id)
{
	bool held;

	if (r == NULL)
		return false;
	pthread_mutex_lock(&r->mu);
	held = msc_map_get(r->held, id) != NULL;
	pthread_mutex_unlock(&r->mu);
	return held;
}
