/*
 * msc_driver_exec.c - a driver's Exec jobs (msc_driver_int.h): run on a
 * worker with the backend's exec, or, when the backend has exec_start,
 * handed off: the worker sends the command and is free at once, the
 * backend watches it without a thread of its own per command and ends it
 * with msc_exec_done. A handed-off command keeps its computer's lane
 * until it ends and holds one slot of d->waiting (a bound per principal
 * and over all, msc_exec_waiting_new), not a worker and not its owner's
 * or principal's turn at the workers.
 */
#include "msc_driver_int.h"
#include "msc_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* How long a stop waits for the killed commands to be answered. */
#define EXEC_STOP_WAIT_MS 10000

#define JOB_OF(x) ((struct job *)(void *)(x))

/* Descriptors kept for everything but waiting commands (engine, NNG). */
#define EXEC_FD_RESERVE 512

/*
 * How many commands may wait with the descriptors this process may open:
 * each holds two (its helper connection, its cancel eventfd). Raises the
 * soft limit to the hard one first (a split driver started with 1024).
 */
static int
waiting_fd_room(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur < rl.rlim_max) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 65536 : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			rl.rlim_cur = was;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1 << 20)
		return 1 << 19;
	return rl.rlim_cur > EXEC_FD_RESERVE ?
	    (int)((rl.rlim_cur - EXEC_FD_RESERVE) / 2) : 0;
}

int
msc_exec_waiting_new(int workers, struct msc_fair **fp)
{
	int slots = (workers > 0 ? workers : 1) * MSC_DRIVER_WAITING_PER_WORKER;
	int room = waiting_fd_room();

	if (slots > room) {
		msc_log_warn("driver: %d commands may wait at once, not %d: "
		    "the descriptor limit leaves room for no more", room,
		    slots);
		slots = room > 0 ? room : 1;
	}

	/* Nothing queues: past its slots a command runs on its worker. */
	return msc_fair_new(slots, slots - slots / 4, 0, 0, fp);
}

/*
 * Takes a slot of d->waiting for j and puts it on d->started, with a
 * cancel eventfd: false when there is none (the driver stops, the
 * principal or the driver has its waiting commands, no eventfd).
 */
static bool
started_enter(struct job *j)
{
	struct msc_driver *d = j->d;
	int rv;

	if (j->live == NULL &&
	    (j->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return false;
	pthread_mutex_lock(&d->mu);
	rv = d->stopping ? -ESHUTDOWN : msc_fair_enter(d->waiting, j->principal,
	    j);
	if (rv == 1) {
		j->waiting = true;
		TAILQ_INSERT_TAIL(&d->started, j, started);
		d->n_started++;
	}
	pthread_mutex_unlock(&d->mu);
	return rv == 1;
}

/* Undoes started_enter (the command was not handed off). */
static void
started_leave(struct job *j, bool done)
{
	struct msc_driver *d = j->d;

	(void)msc_fair_leave(d->waiting, j->principal);   /* none queue */
	pthread_mutex_lock(&d->mu);
	j->waiting = false;
	TAILQ_REMOVE(&d->started, j, started);
	if (!done) {
		d->n_started--;
		pthread_cond_broadcast(&d->started_cv);
	}
	pthread_mutex_unlock(&d->mu);
}

/* Runs j's command on this worker with the backend's exec. */
static void
run_sync(struct job *j, char *err)
{
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;
	int rv = j->d->ops->exec(j->d->be, &j->q, &res, err,
	    MSC_DRIVER_ERRLEN);

	msc_live_finish(j->live);
	if (rv == 0)
		msc_call_reply(j->call, &res.base);
	else
		msc_job_fail(j, rv, err);
	free(res.stdout.data);
	free(res.stderr.data);
}

bool
msc_job_run_exec(struct job *j, char *err)
{
	struct msc_driver *d = j->d;
	char principal[sizeof(j->principal)], owner[sizeof(j->owner)];
	bool fair = j->fair;
	int rv;

	/* A shallow copy: the strings and bytes stay the call's. */
	j->q = *(const Msc__V1__ExecRequest *)j->req;
	pthread_mutex_lock(&d->mu);
	if (j->q.timeout_s == 0)
		j->q.timeout_s = d->exec_timeout_s;
	if (j->q.output_limit == 0)
		j->q.output_limit = d->exec_output_limit;
	pthread_mutex_unlock(&d->mu);
	if (!msc_live_begin(j->live)) {
		msc_job_fail(j, -ECANCELED, "cancelled before it started");
		return false;
	}
	if (d->ops->exec_start == NULL || !started_enter(j)) {
		run_sync(j, err);
		return false;
	}
	/*
	 * Once handed off, j may end (and be freed) on another thread
	 * before exec_start returns: what this worker gives back afterwards
	 * is copied first, and j no longer holds it.
	 */
	memcpy(principal, j->principal, sizeof(principal));
	memcpy(owner, j->owner, sizeof(owner));
	j->fair = false;
	j->owner[0] = '\0';
	rv = d->ops->exec_start(d->be, &j->q, (struct msc_exec *)j, err,
	    MSC_DRIVER_ERRLEN);
	if (rv == 0) {
		msc_live_detach();      /* j's, on whichever thread it ends */
		msc_job_leave_turns(d, fair, principal, owner);
		return true;
	}
	j->fair = fair;
	memcpy(j->owner, owner, sizeof(owner));
	started_leave(j, false);
	if (rv == MSC_EXEC_SYNC)
		run_sync(j, err);       /* still current on this thread */
	else {
		msc_live_finish(j->live);
		msc_job_fail(j, rv, err);
	}
	return false;
}

int
msc_exec_cancel_fd(const struct msc_exec *x)
{
	const struct job *j = (const struct job *)(const void *)x;

	return j->live != NULL ? msc_live_fd(j->live) : j->efd;
}

void
msc_exec_output(struct msc_exec *x, const void *p, size_t n)
{
	msc_live_output(JOB_OF(x)->live, p, n);
}

void
msc_exec_done(struct msc_exec *x, int rv, Msc__V1__ExecResult *res,
    const char *err)
{
	struct job *j = JOB_OF(x);
	struct msc_driver *d = j->d;
	Msc__V1__ExecResult none = MSC__V1__EXEC_RESULT__INIT;

	msc_live_finish(j->live);
	if (rv == 0)
		msc_call_reply(j->call, res != NULL ? &res->base : &none.base);
	else
		msc_job_fail(j, rv, err != NULL ? err : "the command failed");
	if (res != NULL) {
		free(res->stdout.data);
		free(res->stderr.data);
		res->stdout.data = res->stderr.data = NULL;
	}
	started_leave(j, true);
	msc_job_lane_next(j);
	msc_job_free(j);
	/* The last use of d: a stop waiting for this one may free it. */
	pthread_mutex_lock(&d->mu);
	d->n_started--;
	pthread_cond_broadcast(&d->started_cv);
	pthread_mutex_unlock(&d->mu);
}

int
msc_exec_defer(struct msc_exec *x, msc_exec_defer_fn fn, void *arg)
{
	struct job *j = JOB_OF(x);

	j->deferred = fn;
	j->deferred_arg = arg;
	if (msc_job_submit_deferred(j) == 0)
		return 0;
	j->deferred = NULL;
	j->deferred_arg = NULL;
	return -EAGAIN;
}

bool
msc_exec_stop_all(struct msc_driver *d)
{
	struct timespec until;
	struct job *j;
	uint64_t one = 1;
	int rv = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += EXEC_STOP_WAIT_MS / 1000;
	pthread_mutex_lock(&d->mu);
	/* Those with a live were cancelled with the live table. */
	TAILQ_FOREACH(j, &d->started, started)
		if (j->efd >= 0)
			(void)!write(j->efd, &one, sizeof(one));
	while (d->n_started > 0 && rv != ETIMEDOUT)
		rv = pthread_cond_timedwait(&d->started_cv, &d->mu, &until);
	rv = d->n_started == 0;
	pthread_mutex_unlock(&d->mu);
	return rv;
}
