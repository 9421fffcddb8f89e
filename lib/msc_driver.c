/*
 * msc_driver.c - the driver skeleton (msc_driver.h): the Driver service's
 * dispatch table, each call made a job (msc_driver_int.h), scheduled by
 * msc_driver_sched.c and run on a worker against the backend's ops
 * (run_call, which the scheduling calls through d->run; the Exec and
 * snapshot jobs are msc_driver_exec.c's and msc_driver_snap.c's).
 */
#include "msc_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"

/* The computer named by a ComputerRef request. */
#define REF(req) (((const Msc__V1__ComputerRef *)(req))->computer_id)

typedef int (*computer_op)(void *be, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);

/* The background processes a Restart, Reset or Delete ends: 0 unless
 * asked for and known. */
static uint32_t
processes_before(struct job *j)
{
	const Msc__V1__ComputerRef *ref = (const void *)j->req;
	int n;

	if ((j->kind != JOB_RESTART && j->kind != JOB_RESET &&
	    j->kind != JOB_DELETE) || !ref->count_processes ||
	    j->d->ops->processes == NULL ||
	    (j->kind == JOB_RESTART && j->d->ops->restart_keeps_processes))
		return 0;
	n = j->d->ops->processes(j->d->be, ref->computer_id);
	return n > 0 ? (uint32_t)n : 0;
}

static void
run_computer_op(struct job *j, computer_op op, const char *id, char *err)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	uint32_t ended = processes_before(j);
	int rv = op(j->d->be, id, &c, err, MSC_DRIVER_ERRLEN);

	c.processes_ended = ended;
	if (rv == 0)
		msc_call_reply(j->call, &c.base);
	else
		msc_job_fail(j, rv, err);
	msc_computer_fini(&c);
}

/* msc_job_principal_may for the ComputerRef of j. */
static bool
ref_allowed(struct job *j, char *err)
{
	const Msc__V1__ComputerRef *ref = (const void *)j->req;

	return msc_job_principal_may(j, ref->computer_id, ref->principal,
	    err);
}
/*
 * A temporary computer made after its caller gave up (the caller's
 * deadline passed while the engine worked): nobody will hold or release
 * it, so it goes now. Returns -ETIMEDOUT with the reason in err.
 */
static int
remove_late(struct job *j, const char *id, char *err)
{
	char e2[MSC_DRIVER_ERRLEN];

	if (j->d->ops->stop(j->d->be, id, true, e2, sizeof(e2)) != 0)
		msc_log_warn("%s: removing computer %s, made after its "
			     "caller's deadline, failed: %s", j->d->ops->name, id,
		    e2);
	else
		msc_log_info("%s: removed computer %s, made after its "
			     "caller's deadline", j->d->ops->name, id);
	snprintf(err, MSC_DRIVER_ERRLEN, "Computer '%s' was made after its "
	    "caller's deadline and removed; retry", id);
	return -ETIMEDOUT;
}

/* d->run (msc_driver_int.h): j's call on the backend, on a worker. */
static bool
run_call(struct job *j, char *err)
{
	const struct msc_driver_ops *ops = j->d->ops;
	int rv;

	switch (j->kind) {
	case JOB_CREATE: {
		const Msc__V1__CreateRequest *r = (const void *)j->req;
		Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;

		rv = 0;
		if (r->from_snapshot[0] != '\0' && ops->create_from == NULL) {
			snprintf(err, MSC_DRIVER_ERRLEN, "%s keeps no snapshots: "
			    "create the computer without from_snapshot",
			    ops->name);
			rv = -EINVAL;
		} else if (r->network != NULL && ops->set_network == NULL) {
			snprintf(err, MSC_DRIVER_ERRLEN, "%s has no network "
			    "policies: create the computer without one",
			    ops->name);
			rv = -EINVAL;
		} else if (r->network != NULL)
			rv = ops->set_network(j->d->be, r->computer_id,
			    r->network, err, MSC_DRIVER_ERRLEN);
		if (rv == 0 && r->from_snapshot[0] != '\0')
			rv = ops->create_from(j->d->be, r, &c, err,
			    MSC_DRIVER_ERRLEN);
		else if (rv == 0 && r->principal[0] != '\0' &&
		    ops->create_owned != NULL)
			rv = ops->create_owned(j->d->be, r->computer_id,
			    r->temporary, r->principal, &c, err,
			    MSC_DRIVER_ERRLEN);
		else if (rv == 0)
			rv = ops->create(j->d->be, r->computer_id, r->temporary,
			    &c, err, MSC_DRIVER_ERRLEN);
		if (rv == 0 && r->temporary &&
		    msc_call_remaining_ms(j->call) < DRIVER_CREATE_LATE_MS) {
			rv = remove_late(j, r->computer_id, err);
			msc_computer_fini(&c);
			c = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
		}
		if (rv == 0)
			msc_call_reply(j->call, &c.base);
		else
			msc_job_fail(j, rv, err);
		msc_computer_fini(&c);
		break;
	}
	case JOB_ATTACH:
		if (!ref_allowed(j, err))
			break;
		run_computer_op(j, ops->attach, REF(j->req), err);
		break;
	case JOB_RESTART:
		if (!ref_allowed(j, err))
			break;
		run_computer_op(j, ops->restart, REF(j->req), err);
		break;
	case JOB_RESET:
		if (!ref_allowed(j, err))
			break;
		run_computer_op(j, ops->reset, REF(j->req), err);
		break;
	case JOB_STOP:
	case JOB_DELETE: {
		Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
		Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;

		if (j->kind == JOB_DELETE && !ref_allowed(j, err))
			break;
		if (j->kind == JOB_DELETE) {
			c.processes_ended = processes_before(j);
			c.computer_id = (char *)REF(j->req);
		}
		rv = ops->stop(j->d->be, REF(j->req), j->kind == JOB_DELETE, err,
		    MSC_DRIVER_ERRLEN);
		if (rv == 0)
			msc_call_reply(j->call, j->kind == JOB_DELETE ? &c.base :
			    &e.base);
		else
			msc_job_fail(j, rv, err);
		break;
	}
	case JOB_LIST: {
		Msc__V1__ComputerList l = MSC__V1__COMPUTER_LIST__INIT;

		rv = ops->list(j->d->be, &l, err, MSC_DRIVER_ERRLEN);
		if (rv == 0)
			msc_call_reply(j->call, &l.base);
		else
			msc_job_fail(j, rv, err);
		msc_computer_list_fini(&l);
		break;
	}
	case JOB_EXEC:
		return msc_job_run_exec(j, err);
	default:
		(void)msc_job_run_snapshot(j, err);
		break;
	}
	return false;
}

static const char *const kind_names[] = { "Create", "Attach", "Exec", "Stop",
	"Delete", "Restart", "Reset", "List", "Snapshot", "Restore",
	"ListSnapshots", "DeleteSnapshot", "ExposePort" };

/*
 * Starts a job for computer `id` (NULL: names none), on its lane when
 * `lane`. Backends build names and host paths from the id, so one that is
 * not a slug never reaches them, whoever calls.
 */
static void
handle(void *state, struct msc_call *call, const ProtobufCMessage *req,
    enum job_kind kind, const char *id, bool lane)
{
	struct job *j;

	if (id != NULL && !msc_slug_valid(id)) {
		msc_call_fail(call, MSC__V1__CODE__INVALID_ARGUMENT,
		    "Driver/%s refused: %s", kind_names[kind], MSC_SLUG_ERROR);
		return;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "out of memory");
		return;
	}
	j->d = state;
	j->call = call;
	j->req = req;
	j->kind = kind;
	j->efd = -1;
	if (kind == JOB_EXEC && !msc_live_add_call(j->d->live, call,
	    (const Msc__V1__ExecRequest *)req, &j->live)) {
		free(j);
		return;
	}
	if (lane)
		msc_job_submit_on_lane(j, id);
	else
		msc_job_submit(j);
}

static void
h_create(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	(void)msc_call_bound_ms(call, DRIVER_CREATE_BOUND_MS);
	handle(s, call, req, JOB_CREATE,
	    ((const Msc__V1__CreateRequest *)req)->computer_id, true);
}

static void
h_exec(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_EXEC,
	    ((const Msc__V1__ExecRequest *)req)->computer_id, true);
}

static void
h_attach(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_ATTACH, REF(req), true);
}

static void
h_restart(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_RESTART, REF(req), true);
}

static void
h_reset(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_RESET, REF(req), true);
}

static void
h_stop(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_STOP, REF(req), false);
}

static void
h_delete(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_DELETE, REF(req), false);
}

static void
h_list(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_LIST, NULL, false);
}

/* Snapshot is off the lane: a command running in the computer goes on
 * (the backend's snapshot does not stop it); Restore is a creation on
 * the lane, as Reset. */
static void
h_snapshot(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_SNAPSHOT,
	    ((const Msc__V1__SnapshotRequest *)req)->computer_id, false);
}

static void
h_restore(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_RESTORE,
	    ((const Msc__V1__SnapshotRequest *)req)->computer_id, true);
}

static void
h_snapshots(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_SNAPSHOTS, NULL, false);
}

static void
h_snapshot_delete(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_SNAPSHOT_DELETE, NULL, false);
}

/* Preview URLs (issue 30): off the lane, as a snapshot. */
static void
h_expose(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	handle(s, call, req, JOB_EXPOSE,
	    ((const Msc__V1__SnapshotRequest *)req)->computer_id, false);
}

/* Answered at once: a description is built from the configuration. */
static void
h_describe(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	const struct msc_driver *d = s;
	Msc__V1__ToolDescription td = MSC__V1__TOOL_DESCRIPTION__INIT;
	char *text = d->ops->describe != NULL ? d->ops->describe(d->be) : NULL;

	(void)req;
	if (text == NULL) {
		msc_call_fail(call, MSC__V1__CODE__FAILED_PRECONDITION,
		    "%s has no tool description for this configuration",
		    d->ops->name);
		return;
	}
	td.text = text;
	msc_call_reply(call, &td.base);
	free(text);
}

static void
h_cancel(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	msc_live_h_cancel(((struct msc_driver *)s)->live, call, req);
}

static void
h_progress(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
	msc_live_h_progress(((struct msc_driver *)s)->live, call, req);
}

static const struct msc_method driver_methods[] = {
	{ "Create", h_create },
	{ "Attach", h_attach },
	{ "Exec", h_exec },
	{ "Stop", h_stop },
	{ "Delete", h_delete },
	{ "Restart", h_restart },
	{ "Reset", h_reset },
	{ "List", h_list },
	{ "Describe", h_describe },
	{ "Cancel", h_cancel },
	{ "Progress", h_progress },
	{ "Snapshot", h_snapshot },
	{ "Restore", h_restore },
	{ "ListSnapshots", h_snapshots },
	{ "DeleteSnapshot", h_snapshot_delete },
	{ "ExposePort", h_expose },
	{ NULL, NULL },
};

/* n less a fraction of it, but at least one less (n > 1). */
static int
less_part(int n, int part)
{
	if (n <= 1)
		return 1;
	return n - (n / part > 0 ? n / part : 1);
}

/*
 * The principals' turns at the workers: commands run on all but an
 * eighth of them (creations, lists and stops keep that much, whatever
 * the commands do); a named principal runs at most three quarters of
 * those and queues at most twice as many, so another principal finds a
 * worker at once, and one past that is told the driver is busy for it.
 */
static int
principals_new(int workers, struct msc_fair **fp)
{
	int slots = less_part(workers, 8);
	size_t queue = (size_t)slots * 2 > 8 ? (size_t)slots * 2 : 8;

	return msc_fair_new(slots, less_part(slots, 4), queue,
	    DRIVER_MAX_QUEUED, fp);
}

int
msc_driver_start(const char *url, const struct msc_driver_ops *ops,
    void *backend, int workers, struct msc_driver **dp)
{
	struct msc_driver *d = calloc(1, sizeof(*d));
	int rv;

	if (d == NULL)
		return -ENOMEM;
	d->ops = ops;
	d->be = backend;
	d->run = run_call;
	d->exec_timeout_s = MSC_DRIVER_EXEC_TIMEOUT_S;
	d->exec_output_limit = MSC_DRIVER_EXEC_OUTPUT_LIMIT;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->started_cv, NULL);
	TAILQ_INIT(&d->started);
	if ((rv = msc_map_new(&d->lanes)) != 0 ||
	    (rv = msc_exec_waiting_new(workers, &d->waiting)) != 0 ||
	    (rv = msc_live_table_new(&d->live)) != 0 ||
	    (rv = msc_share_new(workers / 4, DRIVER_MAX_QUEUED,
		 &d->owners)) != 0 ||
	    (rv = principals_new(workers, &d->principals)) != 0 ||
	    (rv = msc_pool_new(workers, DRIVER_MAX_QUEUED, &d->pool)) != 0 ||
	    (rv = msc_server_start(url, &msc__v1__driver__descriptor,
		 driver_methods, d, DRIVER_MAX_QUEUED, &d->srv)) != 0) {
		(void)msc_driver_stop(d);
		return rv;
	}
	*dp = d;
	return 0;
}

void
msc_driver_limit_creations(struct msc_driver *d, int n)
{
	pthread_mutex_lock(&d->mu);
	d->max_creating = n > 0 ? n : 0;
	pthread_mutex_unlock(&d->mu);
}

void
msc_driver_exec_defaults(struct msc_driver *d, uint32_t timeout_s,
    uint64_t output_limit)
{
	pthread_mutex_lock(&d->mu);
	d->exec_timeout_s = timeout_s;
	d->exec_output_limit = output_limit;
	pthread_mutex_unlock(&d->mu);
}

void
msc_driver_limit_owners(struct msc_driver *d, int n)
{
	if (n > 0)
		msc_share_set(d->owners, n);
}

/* A command that waited for its owner's share or its principal's turn
 * will not start. */
static void
abort_waiting(void *item)
{
	struct job *j = item;

	msc_job_abort(j, MSC__V1__CODE__UNAVAILABLE, "%s is stopping",
	    j->d->ops->name);
}

bool
msc_driver_stop(struct msc_driver *d)
{
	struct msc_queue waiting = MSC_QUEUE_INIT;
	struct msc_qnode *n;

	if (d == NULL)
		return true;
	/* Creations waiting for the gate, and commands waiting for their
	 * owner's share, will not start. */
	pthread_mutex_lock(&d->mu);
	d->stopping = true;
	msc_queue_take_all(&waiting, &d->gate);
	d->gate_queued = 0;
	pthread_mutex_unlock(&d->mu);
	/* Running commands are killed, and queued ones will not start: the
	 * pool ends with what it holds, not after their full runs. */
	if (d->live != NULL)
		msc_live_cancel_all(d->live);
	if (d->owners != NULL)
		msc_share_drain(d->owners, abort_waiting);
	if (d->principals != NULL)
		msc_fair_drain(d->principals, abort_waiting);
	while ((n = msc_queue_pop(&waiting)) != NULL)
		msc_job_abort(JOB(n), MSC__V1__CODE__UNAVAILABLE, "%s is stopping",
		    d->ops->name);
	/* Commands handed off to the backend are killed; their ends use d. */
	if (!msc_exec_stop_all(d))
		return false;
	msc_server_stop(d->srv);
	if (!msc_pool_free(d->pool))
		return false;   /* a job still runs and uses d */
	msc_map_free(d->lanes);
	msc_fair_free(d->waiting);
	pthread_cond_destroy(&d->started_cv);
	msc_live_table_free(d->live);
	msc_share_free(d->owners);
	msc_fair_free(d->principals);
	pthread_mutex_destroy(&d->mu);
	free(d);
	return true;
}
