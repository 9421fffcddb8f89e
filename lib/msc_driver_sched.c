/*
 * msc_driver_sched.c - the order in which a driver's jobs run (see
 * msc_driver_int.h): a computer's lane runs its jobs one at a time, the
 * creation gate lets --driver-creations creations run at once, an owner's
 * share bounds its commands at once, and the principals take turns at the
 * workers left for commands; the rest wait in order, off the worker
 * threads.
 */
#include "msc_driver_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_hop.h"

/* Per computer: the queue that keeps its jobs serial. */
struct lane {
	bool busy;
	struct msc_queue waiting;       /* struct job */
};

static void lane_next(struct msc_driver *d, const char *id);
static void gate_leave(struct msc_driver *d);
static void owner_leave(struct msc_driver *d, const char *owner);
static void principal_enter(struct job *j);
static void principal_leave(struct msc_driver *d, const char *principal);

/* Whether j makes a computer, and so passes the creation gate. */
static bool
creates(const struct job *j)
{
	return j->kind == JOB_CREATE || j->kind == JOB_RESET ||
	    j->kind == JOB_RESTORE;
}

void
msc_job_free(struct job *j)
{
	msc_live_end(j->d->live, j->live);
	if (j->efd >= 0)
		close(j->efd);
	free(j);
}

void
msc_job_abort(struct job *j, Msc__V1__Code code, const char *fmt, ...)
{
	char msg[MSC_DRIVER_ERRLEN];
	msc_exec_defer_fn deferred = j->deferred;
	va_list ap;

	if (deferred != NULL) {
		/* A handed-off command's deferred end: ended without its
		 * turn (and without blocking); it frees j. */
		j->deferred = NULL;
		deferred((struct msc_exec *)j, j->deferred_arg, false);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	msc_call_fail_reason(j->call, code, msc_driver_reason(code), "%s", msg);
	if (j->lane_id[0] != '\0')
		lane_next(j->d, j->lane_id);
	msc_job_free(j);
}

/* A deferred end in its principal's turn: fn ends (and frees) j. */
static void
deferred_run(struct job *j)
{
	struct msc_driver *d = j->d;
	char principal[sizeof(j->principal)];
	msc_exec_defer_fn fn = j->deferred;

	memcpy(principal, j->principal, sizeof(principal));
	j->deferred = NULL;
	j->fair = false;
	fn((struct msc_exec *)j, j->deferred_arg, true);
	/* d outlives this worker: its stop joins the pool first. */
	principal_leave(d, principal);
}

static void
job_run(void *arg)
{
	struct job *j = arg;
	char err[MSC_DRIVER_ERRLEN] = "";

	MSC_HOP("driver_queue_to_worker");
	if (j->deferred != NULL) {
		deferred_run(j);
		return;
	}
	if (j->d->run(j, err))
		return;         /* handed off: it ends later, its turns left */
	if (creates(j))
		gate_leave(j->d);
	if (j->fair)
		principal_leave(j->d, j->principal);
	if (j->owner[0] != '\0')
		owner_leave(j->d, j->owner);
	if (j->lane_id[0] != '\0')
		lane_next(j->d, j->lane_id);
	msc_job_free(j);
}

/* Hands j to the pool (a creation has its gate slot already). */
static void
pool_submit(struct job *j)
{
	int rv = msc_pool_submit(j->d->pool, job_run, j);

	if (rv == 0)
		return;
	if (creates(j))
		gate_leave(j->d);
	if (j->fair)
		principal_leave(j->d, j->principal);
	if (j->owner[0] != '\0')
		owner_leave(j->d, j->owner);
	msc_job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED,
	    "%s is overloaded (%s); retry later", j->d->ops->name,
	    strerror(-rv));
}

/*
 * The creation gate: at most max_creating creations run at once (an
 * engine asked for many at once gets slow at all of them); the others
 * wait in order, not on a pool thread, so commands keep flowing. One
 * that can no longer start well before its deadline fails instead.
 */
static void
gate_enter(struct job *j)
{
	struct msc_driver *d = j->d;

	pthread_mutex_lock(&d->mu);
	if (d->max_creating == 0 || d->creating < d->max_creating) {
		d->creating++;
		pthread_mutex_unlock(&d->mu);
		pool_submit(j);
		return;
	}
	if (d->stopping) {
		pthread_mutex_unlock(&d->mu);
		msc_job_abort(j, MSC__V1__CODE__UNAVAILABLE, "%s is stopping",
		    d->ops->name);
		return;
	}
	if (d->gate_queued >= DRIVER_MAX_QUEUED) {
		pthread_mutex_unlock(&d->mu);
		msc_job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "%s is overloaded (%zu creations wait); retry later",
		    d->ops->name, (size_t)DRIVER_MAX_QUEUED);
		return;
	}
	msc_queue_push(&d->gate, &j->qn);
	d->gate_queued++;
	pthread_mutex_unlock(&d->mu);
}

/* A creation ended: the next one that still has time takes its slot. */
static void
gate_leave(struct msc_driver *d)
{
	struct msc_queue late = MSC_QUEUE_INIT;
	struct msc_qnode *n;
	struct job *next = NULL, *j;

	pthread_mutex_lock(&d->mu);
	d->creating--;
	while (next == NULL && (n = msc_queue_pop(&d->gate)) != NULL) {
		j = JOB(n);
		d->gate_queued--;
		if (msc_call_remaining_ms(j->call) < DRIVER_CREATE_MIN_MS)
			msc_queue_push(&late, &j->qn);
		else {
			d->creating++;
			next = j;
		}
	}
	pthread_mutex_unlock(&d->mu);
	while ((n = msc_queue_pop(&late)) != NULL) {
		j = JOB(n);
		msc_job_abort(j, MSC__V1__CODE__DEADLINE_EXCEEDED,
		    "Computer '%s' could not be created: it waited for one of "
		    "the %d creations at once of %s until its deadline; retry "
		    "later", j->lane_id, d->max_creating, d->ops->name);
	}
	if (next != NULL)
		pool_submit(next);
}

/*
 * The owners' shares: one owner (a session) runs at most its share of
 * the workers at once, so that its long commands cannot take them all
 * from the others; its further commands wait in order, not on a worker.
 */
static void
owner_enter(struct job *j)
{
	struct msc_driver *d = j->d;
	int rv;

	snprintf(j->owner, sizeof(j->owner), "%s",
	    ((const Msc__V1__ExecRequest *)j->req)->owner);
	/* Under d->mu, so that a stop drains whatever entered before. */
	pthread_mutex_lock(&d->mu);
	rv = d->stopping ? -ESHUTDOWN : msc_share_enter(d->owners, j->owner, j);
	pthread_mutex_unlock(&d->mu);
	if (rv == 1) {
		principal_enter(j);
		return;
	}
	if (rv == 0)
		return;         /* owner_leave starts it */
	j->owner[0] = '\0';    /* holds no slot */
	msc_job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED, "%s is overloaded "
	    "(%s); retry later", d->ops->name, rv == -EAGAIN
		? "too many commands wait" : strerror(-rv));
}

/* A job of `owner` ended: the owner's next one takes its worker. */
static void
owner_leave(struct msc_driver *d, const char *owner)
{
	struct job *next = msc_share_leave(d->owners, owner);

	if (next != NULL)
		principal_enter(next);
}

/*
 * The principals' turns: commands of every owner of one principal share
 * that principal's slots of the command workers (msc_fair.h), so that one
 * principal's many handles cannot take every worker, and a freed worker
 * goes to the waiting principal that runs the fewest. Past its share and
 * its queue a principal is told at once that the driver is busy for it.
 */
static void
principal_enter(struct job *j)
{
	struct msc_driver *d = j->d;
	int running, rv;
	size_t queued;

	snprintf(j->principal, sizeof(j->principal), "%s",
	    ((const Msc__V1__ExecRequest *)j->req)->principal);
	/*
	 * Marked before it is queued: once msc_fair_enter queues it, a
	 * worker ending another command may start (and end, and free) it
	 * before this thread runs on.
	 */
	j->fair = true;
	pthread_mutex_lock(&d->mu);
	rv = d->stopping ? -ESHUTDOWN
			 : msc_fair_enter(d->principals, j->principal, j);
	pthread_mutex_unlock(&d->mu);
	if (rv < 0)
		j->fair = false;
	if (rv >= 0) {
		if (rv == 1)
			pool_submit(j);
		return;         /* else principal_leave starts it */
	}
	if (j->owner[0] != '\0') {
		owner_leave(d, j->owner);
		j->owner[0] = '\0';
	}
	if (rv == -EBUSY) {
		msc_fair_count(d->principals, j->principal, &running, &queued);
		msc_job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED, "%s is busy "
		    "for you: %d of your commands run at once (your share of "
		    "its --driver-workers) and %zu more wait; retry when some "
		    "end", d->ops->name, running, queued);
	} else
		msc_job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED, "%s is "
		    "overloaded (%s); retry later", d->ops->name, rv == -EAGAIN
			? "too many commands wait" : strerror(-rv));
}

int
msc_job_submit_deferred(struct job *j)
{
	struct msc_driver *d = j->d;
	int rv;

	j->fair = true;
	pthread_mutex_lock(&d->mu);
	rv = d->stopping ? -ESHUTDOWN
			 : msc_fair_enter(d->principals, j->principal, j);
	pthread_mutex_unlock(&d->mu);
	if (rv < 0) {
		j->fair = false;
		return -EAGAIN;
	}
	if (rv == 1 && msc_pool_submit(d->pool, job_run, j) != 0) {
		j->fair = false;
		principal_leave(d, j->principal);
		return -EAGAIN;
	}
	return 0;       /* running, or principal_leave starts it */
}

/* A command of `principal` ended: the next principal's turn. */
static void
principal_leave(struct msc_driver *d, const char *principal)
{
	struct job *next = msc_fair_leave(d->principals, principal);

	if (next != NULL)
		pool_submit(next);
}

void
msc_job_leave_turns(struct msc_driver *d, bool fair, const char *principal,
    const char *owner)
{
	if (fair)
		principal_leave(d, principal);
	if (owner[0] != '\0')
		owner_leave(d, owner);
}

void
msc_job_lane_next(struct job *j)
{
	if (j->lane_id[0] != '\0')
		lane_next(j->d, j->lane_id);
}

void
msc_job_submit(struct job *j)
{
	if (creates(j))
		gate_enter(j);
	else if (j->kind == JOB_EXEC &&
	    ((const Msc__V1__ExecRequest *)j->req)->owner[0] != '\0')
		owner_enter(j);
	else if (j->kind == JOB_EXEC)
		principal_enter(j);
	else
		pool_submit(j);
}

/* A job of lane `id` ended: start the next one, or drop the lane. */
static void
lane_next(struct msc_driver *d, const char *id)
{
	struct lane *lane;
	struct msc_qnode *n = NULL;

	pthread_mutex_lock(&d->mu);
	lane = msc_map_get(d->lanes, id);
	/* The next job keeps the lane busy; without one the lane goes. */
	if (lane != NULL && (n = msc_queue_pop(&lane->waiting)) == NULL) {
		msc_map_del(d->lanes, id);
		free(lane);
	}
	pthread_mutex_unlock(&d->mu);
	if (n != NULL)
		msc_job_submit(JOB(n));
}

void
msc_job_submit_on_lane(struct job *j, const char *id)
{
	struct msc_driver *d = j->d;
	struct lane *lane;
	bool run_now = false;

	strcpy(j->lane_id, id);         /* a slug: it fits */
	pthread_mutex_lock(&d->mu);
	lane = msc_map_get(d->lanes, id);
	if (lane == NULL) {
		lane = calloc(1, sizeof(*lane));
		if (lane == NULL || msc_map_put(d->lanes, id, lane) != 0) {
			pthread_mutex_unlock(&d->mu);
			free(lane);
			msc_call_fail(j->call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    "out of memory");
			msc_job_free(j);
			return;
		}
	}
	if (!lane->busy) {
		lane->busy = true;
		run_now = true;
	} else
		msc_queue_push(&lane->waiting, &j->qn);
	pthread_mutex_unlock(&d->mu);
	if (run_now)
		msc_job_submit(j);
}
