/*
 * fly_lease.c - the watch loop of temporary Fly Machines and the thread
 * that keeps their leases; see fly_lease.h.
 */
#include "fly_lease.h"

#include "fly_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_log.h"
#include "msc_map.h"

#define LEASE_FILE "/run/msc-lease"
#define LEASE_MAX_ROUND 4096

/* $1: the lease in seconds. */
static const char watch_sh[] =
    "f=" LEASE_FILE "; t=$1\n"
    "command -v date >/dev/null && command -v stat >/dev/null &&"
    " touch \"$f\" 2>/dev/null || exec sleep inf\n"
    "while sleep 1; do\n"
    "  m=$(stat -c %Y \"$f\" 2>/dev/null) || exit 0\n"
    "  [ $(( $(date +%s) - m )) -le \"$t\" ] || exit 0\n"
    "done\n";

struct fly_lease {
	pthread_t thread;
	bool running, stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct msc_map *held;   /* computer id -> malloc'd Machine id */
	long lease_s;
	int period_ms;
};

struct pair {
	char id[64];
	char mid[64];
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
	snprintf(s->ps[s->n].mid, sizeof(s->ps[s->n].mid), "%s",
	    (const char *)value);
	s->n++;
}

static void
renew_round(struct fly_driver *d)
{
	struct fly_lease *l = d->lease;
	struct snap s = { 0 };
	json_t *argv = json_pack("[ss]", "touch", LEASE_FILE);

	pthread_mutex_lock(&l->mu);
	s.cap = msc_map_len(l->held);
	if (s.cap > LEASE_MAX_ROUND)
		s.cap = LEASE_MAX_ROUND;
	if (s.cap > 0 && (s.ps = calloc(s.cap, sizeof(*s.ps))) != NULL)
		msc_map_each(l->held, snap_one, &s);
	pthread_mutex_unlock(&l->mu);
	for (size_t i = 0; argv != NULL && i < s.n; i++) {
		char err[FLY_ERRLEN];
		json_t *reply = NULL;
		int rv = fly_exec_once(d, s.ps[i].mid, argv, NULL, 0, 5, &reply,
		    err, sizeof(err));

		json_decref(reply);
		if (rv == -ENOENT)
			fly_lease_drop(d, s.ps[i].id);  /* gone */
		else if (rv != 0)
			msc_log_debug("fly: cannot renew the lease of %s: %s",
			    s.ps[i].id, err);
	}
	json_decref(argv);
	free(s.ps);
}

static void *
lease_main(void *arg)
{
	struct fly_driver *d = arg;
	struct fly_lease *l = d->lease;

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
fly_lease_start(struct fly_driver *d)
{
	struct fly_lease *l = calloc(1, sizeof(*l));
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
		fly_lease_stop(d);
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
fly_lease_stop(struct fly_driver *d)
{
	struct fly_lease *l = d->lease;

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

int
fly_lease_body(struct fly_driver *d, json_t *body, bool temporary)
{
	json_t *config = json_object_get(body, "config"), *exec;
	char secs[24];

	if (!temporary)
		return 0;
	snprintf(secs, sizeof(secs), "%ld", d->cfg->lease_timeout);
	exec = json_pack("[ssss]", "/bin/sh", "-c", watch_sh, "msc-lease");
	if (exec == NULL || json_array_append_new(exec, json_string(secs)) ||
	    json_object_set_new(config, "init", json_pack("{s:o}", "exec",
		exec)) != 0)
		return -ENOMEM;
	return 0;
}

void
fly_lease_hold(struct fly_driver *d, const char *id, const char *mid)
{
	struct fly_lease *l = d->lease;
	char *v = strdup(mid);

	if (l == NULL || v == NULL) {
		free(v);
		return;
	}
	pthread_mutex_lock(&l->mu);
	free(msc_map_del(l->held, id));
	if (msc_map_put(l->held, id, v) != 0) {
		free(v);
		msc_log_warn("fly: cannot hold the lease of %s: out of memory",
		    id);
	}
	pthread_mutex_unlock(&l->mu);
}

void
fly_lease_drop(struct fly_driver *d, const char *id)
{
	struct fly_lease *l = d->lease;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	free(msc_map_del(l->held, id));
	pthread_mutex_unlock(&l->mu);
}
