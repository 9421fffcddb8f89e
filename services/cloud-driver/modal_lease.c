/*
 * modal_lease.c - keeping the temporary Modal sandboxes this driver holds
 * busy enough not to be ended as idle; see modal_lease.h.
 */
#include "modal_lease.h"

#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_log.h"
#include "msc_map.h"

#define LEASE_MAX_ROUND 4096

struct modal_lease {
	pthread_t thread;
	bool running, stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct msc_map *held;   /* computer id -> (unused) */
	int period_ms;
};

struct snap {
	char (*ids)[64];
	size_t n, cap;
};

static void
snap_one(void *arg, const char *key, void *value)
{
	struct snap *s = arg;

	(void)value;
	if (s->n < s->cap)
		snprintf(s->ids[s->n++], sizeof(s->ids[0]), "%s", key);
}

static void
renew_round(struct modal_driver *d)
{
	struct modal_lease *l = d->lease;
	static const char *const argv[] = { "true", NULL };
	struct snap s = { 0 };

	pthread_mutex_lock(&l->mu);
	s.cap = msc_map_len(l->held);
	if (s.cap > LEASE_MAX_ROUND)
		s.cap = LEASE_MAX_ROUND;
	if (s.cap > 0 && (s.ids = calloc(s.cap, sizeof(*s.ids))) != NULL)
		msc_map_each(l->held, snap_one, &s);
	pthread_mutex_unlock(&l->mu);
	for (size_t i = 0; i < s.n; i++) {
		char err[MODAL_ERRLEN];
		struct modal_known k;
		struct modal_run r = { 0 };
		int rv = modal_lookup(d, s.ids[i], &k, err, sizeof(err));

		if (rv == 0)
			rv = modal_exec_argv(d, &k, argv, 1, 5, &r, err,
			    sizeof(err));
		modal_run_fini(&r);
		if (rv == -ENOENT)
			modal_lease_drop(d, s.ids[i]);  /* gone */
		else if (rv != 0)
			msc_log_debug("modal: cannot renew the lease of %s: %s",
			    s.ids[i], err);
	}
	free(s.ids);
}

static void *
lease_main(void *arg)
{
	struct modal_driver *d = arg;
	struct modal_lease *l = d->lease;

	pthread_mutex_lock(&l->mu);
	while (!l->stopping) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += l->period_ms / 1000;
		ts.tv_nsec += (long)(l->period_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!l->stopping &&
		    pthread_cond_timedwait(&l->cv, &l->mu, &ts) != ETIMEDOUT)
			;
		if (l->stopping)
			break;
		pthread_mutex_unlock(&l->mu);
		renew_round(d);
		pthread_mutex_lock(&l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int
modal_lease_start(struct modal_driver *d)
{
	struct modal_lease *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	int rv;

	if (l == NULL)
		return -ENOMEM;
	if ((rv = msc_map_new(&l->held)) != 0) {
		free(l);
		return rv;
	}
	l->period_ms = (int)(d->cfg->lease_timeout * 1000 / 3);
	if (l->period_ms < 250)
		l->period_ms = 250;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	d->lease = l;
	if ((rv = pthread_create(&l->thread, NULL, lease_main, d)) != 0) {
		modal_lease_stop(d);
		return -rv;
	}
	l->running = true;
	return 0;
}

void
modal_lease_stop(struct modal_driver *d)
{
	struct modal_lease *l = d->lease;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (l->running)
		pthread_join(l->thread, NULL);
	msc_map_free(l->held);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
	d->lease = NULL;
}

uint32_t
modal_lease_idle_s(const struct modal_driver *d, bool temporary)
{
	return temporary ? (uint32_t)d->cfg->lease_timeout : 0;
}

void
modal_lease_hold(struct modal_driver *d, const char *id)
{
	struct modal_lease *l = d->lease;
	static int present;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	if (msc_map_put(l->held, id, &present) != 0)
		msc_log_warn("modal: cannot hold the lease of %s: out of "
		    "memory", id);
	pthread_mutex_unlock(&l->mu);
}

void
modal_lease_drop(struct modal_driver *d, const char *id)
{
	struct modal_lease *l = d->lease;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	(void)msc_map_del(l->held, id);
	pthread_mutex_unlock(&l->mu);
}
