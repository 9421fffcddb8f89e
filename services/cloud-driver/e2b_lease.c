/*
 * e2b_lease.c - extending the timeouts of the temporary E2B sandboxes
 * this driver holds; see e2b_lease.h.
 */
#include "e2b_lease.h"

#include "e2b_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_log.h"
#include "msc_map.h"

#define LEASE_MAX_ROUND 4096

struct e2b_lease {
	pthread_t thread;
	bool running, stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct msc_map *held;   /* computer id -> malloc'd sandbox id */
	long lease_s;
	int period_ms;
};

struct pair {
	char id[64];
	char sbx[128];
};

struct snap {
	struct pair *ps;
	size_t n, cap;
};

static void
snap_one(void *arg, const char *key, void *value)
{
	struct snap *s = arg;

	if (s->n == s->cap)
		return;
	snprintf(s->ps[s->n].id, sizeof(s->ps[s->n].id), "%s", key);
	snprintf(s->ps[s->n].sbx, sizeof(s->ps[s->n].sbx), "%s",
	    (const char *)value);
	s->n++;
}

static void
renew_round(struct e2b_driver *d)
{
	struct e2b_lease *l = d->lease;
	struct snap s = { 0 };
	int t_ms = l->period_ms < 5000 ? l->period_ms : 5000;

	pthread_mutex_lock(&l->mu);
	s.cap = msc_map_len(l->held);
	if (s.cap > LEASE_MAX_ROUND)
		s.cap = LEASE_MAX_ROUND;
	if (s.cap > 0 && (s.ps = calloc(s.cap, sizeof(*s.ps))) != NULL)
		msc_map_each(l->held, snap_one, &s);
	pthread_mutex_unlock(&l->mu);
	for (size_t i = 0; i < s.n; i++) {
		char path[256], err[E2B_ERRLEN];
		json_t *body = json_pack("{s:I}", "timeout",
		    (json_int_t)l->lease_s);
		int rv;

		if (body == NULL)
			break;
		snprintf(path, sizeof(path), "/sandboxes/%s/timeout",
		    s.ps[i].sbx);
		rv = e2b_api(d, "POST", path, body, t_ms, false, NULL, NULL, 0,
		    err, sizeof(err));
		json_decref(body);
		if (rv == -ENOENT)
			e2b_lease_drop(d, s.ps[i].id);  /* gone: nothing to hold */
		else if (rv != 0)
			msc_log_debug("e2b: cannot extend the lease of %s: %s",
			    s.ps[i].id, err);
	}
	free(s.ps);
}

static void *
lease_main(void *arg)
{
	struct e2b_driver *d = arg;
	struct e2b_lease *l = d->lease;

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
e2b_lease_start(struct e2b_driver *d)
{
	struct e2b_lease *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	int rv;

	if (l == NULL)
		return -ENOMEM;
	if ((rv = msc_map_new(&l->held)) != 0) {
		free(l);
		return rv;
	}
	l->lease_s = d->cfg->lease_timeout;
	l->period_ms = (int)(l->lease_s * 1000 / 3);
	if (l->period_ms < 250)
		l->period_ms = 250;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	d->lease = l;
	if ((rv = pthread_create(&l->thread, NULL, lease_main, d)) != 0) {
		e2b_lease_stop(d);
		return -rv;
	}
	l->running = true;
	return 0;
}

static void
free_value(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	free(value);
}

void
e2b_lease_stop(struct e2b_driver *d)
{
	struct e2b_lease *l = d->lease;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (l->running)
		pthread_join(l->thread, NULL);
	msc_map_each(l->held, free_value, NULL);
	msc_map_free(l->held);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
	d->lease = NULL;
}

long
e2b_lease_ttl(const struct e2b_driver *d, bool temporary)
{
	return temporary ? d->cfg->lease_timeout : d->lifetime_s;
}

void
e2b_lease_hold(struct e2b_driver *d, const char *id, const char *sbx)
{
	struct e2b_lease *l = d->lease;
	char *v = strdup(sbx);

	if (l == NULL || v == NULL) {
		free(v);
		return;
	}
	pthread_mutex_lock(&l->mu);
	free(msc_map_del(l->held, id));
	if (msc_map_put(l->held, id, v) != 0) {
		free(v);
		msc_log_warn("e2b: cannot hold the lease of %s: out of memory",
		    id);
	}
	pthread_mutex_unlock(&l->mu);
}

void
e2b_lease_drop(struct e2b_driver *d, const char *id)
{
	struct e2b_lease *l = d->lease;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	free(msc_map_del(l->held, id));
	pthread_mutex_unlock(&l->mu);
}
