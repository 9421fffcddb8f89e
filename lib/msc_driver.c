#include "msc_driver.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_driver_live.h"
#include "msc_map.h"
#include "msc_pool.h"
#include "msc_queue.h"
#include "msc_share.h"
#include "msc_slug.h"

#define DRIVER_MAX_QUEUED 4096
/* A creation that cannot start this long before its deadline fails. */
#define DRIVER_CREATE_MIN_MS 1000

enum job_kind { JOB_CREATE, JOB_ATTACH, JOB_EXEC, JOB_STOP, JOB_DELETE,
	JOB_RESTART, JOB_RESET, JOB_LIST };

struct job {
	struct msc_driver *d;
	struct msc_call *call;
	const ProtobufCMessage *req;   /* borrowed from the call */
	enum job_kind kind;
	char lane_id[MSC_SLUG_MAX + 1]; /* "" when not on a lane */
	char owner[64];                /* holds a slot of this owner's share */
	struct msc_live *live;         /* Exec with a cancel_key, else NULL */
	struct msc_qnode qn;           /* on a lane's or the gate's queue */
};

#define JOB(n) msc_queue_item(n, struct job, qn)

/* Per computer: the queue that keeps its jobs serial. */
struct lane {
	bool busy;
	struct msc_queue waiting;       /* struct job */
};

struct msc_driver {
	const struct msc_driver_ops *ops;
	void *be;
	struct msc_pool *pool;
	struct msc_server *srv;
	pthread_mutex_t mu;             /* lanes, the gate, exec defaults */
	struct msc_map *lanes;          /* computer id -> struct lane */
	/* The creation gate: creates and resets at once, and those waiting. */
	int max_creating;               /* 0: no bound but the pool's */
	int creating;
	struct msc_queue gate;          /* struct job, waiting their turn */
	size_t gate_queued;
	struct msc_share *owners;       /* Exec: workers per owner */
	uint32_t exec_timeout_s;        /* for an Exec without its own */
	uint64_t exec_output_limit;
	struct msc_live_table *live;    /* keyed commands: Cancel, Progress */
	bool stopping;                  /* the gates take no more */
};

/* The computer named by a ComputerRef request. */
#define REF(req) (((const Msc__V1__ComputerRef *)(req))->computer_id)

static void
fail(struct job *j, int rv, const char *err)
{
	Msc__V1__Code code = j->d->ops->code(rv);

	msc_call_fail_reason(j->call, code, msc_driver_backend_reason(code),
	    "%s", err);
}

typedef int (*computer_op)(void *be, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);

static void
run_computer_op(struct job *j, computer_op op, const char *id, char *err)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	int rv = op(j->d->be, id, &c, err, MSC_DRIVER_ERRLEN);

	if (rv == 0)
		msc_call_reply(j->call, &c.base);
	else
		fail(j, rv, err);
	msc_computer_fini(&c);
}

static void
run_job(struct job *j, char *err)
{
	const struct msc_driver_ops *ops = j->d->ops;
	int rv;

	switch (j->kind) {
	case JOB_CREATE: {
		const Msc__V1__CreateRequest *r = (const void *)j->req;
		Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;

		rv = 0;
		if (r->network != NULL && ops->set_network == NULL) {
			snprintf(err, MSC_DRIVER_ERRLEN, "%s has no network "
			    "policies: create the computer without one",
			    ops->name);
			rv = -EINVAL;
		} else if (r->network != NULL)
			rv = ops->set_network(j->d->be, r->computer_id,
			    r->network, err, MSC_DRIVER_ERRLEN);
		if (rv == 0)
			rv = ops->create(j->d->be, r->computer_id, r->temporary,
			    &c, err, MSC_DRIVER_ERRLEN);
		if (rv == 0)
			msc_call_reply(j->call, &c.base);
		else
			fail(j, rv, err);
		msc_computer_fini(&c);
		break;
	}
	case JOB_ATTACH:
		run_computer_op(j, ops->attach, REF(j->req), err);
		break;
	case JOB_RESTART:
		run_computer_op(j, ops->restart, REF(j->req), err);
		break;
	case JOB_RESET:
		run_computer_op(j, ops->reset, REF(j->req), err);
		break;
	case JOB_STOP:
	case JOB_DELETE: {
		Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

		rv = ops->stop(j->d->be, REF(j->req), j->kind == JOB_DELETE, err,
		    MSC_DRIVER_ERRLEN);
		if (rv == 0)
			msc_call_reply(j->call, &e.base);
		else
			fail(j, rv, err);
		break;
	}
	case JOB_LIST: {
		Msc__V1__ComputerList l = MSC__V1__COMPUTER_LIST__INIT;

		rv = ops->list(j->d->be, &l, err, MSC_DRIVER_ERRLEN);
		if (rv == 0)
			msc_call_reply(j->call, &l.base);
		else
			fail(j, rv, err);
		msc_computer_list_fini(&l);
		break;
	}
	case JOB_EXEC: {
		Msc__V1__ExecRequest q = *(const Msc__V1__ExecRequest *)j->req;
		Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;

		/* A shallow copy: the strings and bytes stay the call's. */
		pthread_mutex_lock(&j->d->mu);
		if (q.timeout_s == 0)
			q.timeout_s = j->d->exec_timeout_s;
		if (q.output_limit == 0)
			q.output_limit = j->d->exec_output_limit;
		pthread_mutex_unlock(&j->d->mu);
		rv = msc_live_run(j->live, ops->exec, j->d->be, &q, &res, err,
		    MSC_DRIVER_ERRLEN);
		if (rv == 0)
			msc_call_reply(j->call, &res.base);
		else
			fail(j, rv, err);
		free(res.stdout.data);
		free(res.stderr.data);
		break;
	}
	}
}

static void lane_next(struct msc_driver *d, const char *id);
static void gate_leave(struct msc_driver *d);
static void owner_leave(struct msc_driver *d, const char *owner);

/* Whether j makes a computer, and so passes the creation gate. */
static bool
creates(const struct job *j)
{
	return j->kind == JOB_CREATE || j->kind == JOB_RESET;
}

/* Frees j and forgets its command. */
static void
job_free(struct job *j)
{
	msc_live_end(j->d->live, j->live);
	free(j);
}

/* Ends j without running it: fails its call, frees its lane's turn. */
static void __attribute__((format(printf, 3, 4)))
job_abort(struct job *j, Msc__V1__Code code, const char *fmt, ...)
{
	char msg[MSC_DRIVER_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	msc_call_fail_reason(j->call, code, msc_driver_reason(code), "%s", msg);
	if (j->lane_id[0] != '\0')
		lane_next(j->d, j->lane_id);
	job_free(j);
}

static void
job_run(void *arg)
{
	struct job *j = arg;
	char err[MSC_DRIVER_ERRLEN] = "";

	run_job(j, err);
	if (creates(j))
		gate_leave(j->d);
	if (j->owner[0] != '\0')
		owner_leave(j->d, j->owner);
	if (j->lane_id[0] != '\0')
		lane_next(j->d, j->lane_id);
	job_free(j);
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
	if (j->owner[0] != '\0')
		owner_leave(j->d, j->owner);
	job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED,
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
		job_abort(j, MSC__V1__CODE__UNAVAILABLE, "%s is stopping",
		    d->ops->name);
		return;
	}
	if (d->gate_queued >= DRIVER_MAX_QUEUED) {
		pthread_mutex_unlock(&d->mu);
		job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED,
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
		job_abort(j, MSC__V1__CODE__DEADLINE_EXCEEDED,
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
		pool_submit(j);
		return;
	}
	if (rv == 0)
		return;         /* owner_leave starts it */
	j->owner[0] = '\0';    /* holds no slot */
	job_abort(j, MSC__V1__CODE__RESOURCE_EXHAUSTED, "%s is overloaded "
	    "(%s); retry later", d->ops->name, rv == -EAGAIN
		? "too many commands wait" : strerror(-rv));
}

/* A job of `owner` ended: the owner's next one takes its worker. */
static void
owner_leave(struct msc_driver *d, const char *owner)
{
	struct job *next = msc_share_leave(d->owners, owner);

	if (next != NULL)
		pool_submit(next);
}

static void
submit(struct job *j)
{
	if (creates(j))
		gate_enter(j);
	else if (j->kind == JOB_EXEC &&
	    ((const Msc__V1__ExecRequest *)j->req)->owner[0] != '\0')
		owner_enter(j);
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
		submit(JOB(n));
}

/* Queues j on the lane of computer `id`. */
static void
lane_submit(struct job *j, const char *id)
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
			job_free(j);
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
		submit(j);
}

static const char *const kind_names[] = { "Create", "Attach", "Exec", "Stop",
	"Delete", "Restart", "Reset", "List" };

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
	if (kind == JOB_EXEC && !msc_live_add_call(j->d->live, call,
	    (const Msc__V1__ExecRequest *)req, &j->live)) {
		free(j);
		return;
	}
	if (lane)
		lane_submit(j, id);
	else
		submit(j);
}

static void
h_create(void *s, struct msc_call *call, const ProtobufCMessage *req)
{
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
	{ NULL, NULL },
};

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
	d->exec_timeout_s = MSC_DRIVER_EXEC_TIMEOUT_S;
	d->exec_output_limit = MSC_DRIVER_EXEC_OUTPUT_LIMIT;
	pthread_mutex_init(&d->mu, NULL);
	if ((rv = msc_map_new(&d->lanes)) != 0 ||
	    (rv = msc_live_table_new(&d->live)) != 0 ||
	    (rv = msc_share_new(workers / 4, DRIVER_MAX_QUEUED,
		 &d->owners)) != 0 ||
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

/* A command that waited for its owner's share will not start. */
static void
abort_waiting(void *item)
{
	struct job *j = item;

	job_abort(j, MSC__V1__CODE__UNAVAILABLE, "%s is stopping",
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
	if (d->owners != NULL)
		msc_share_drain(d->owners, abort_waiting);
	while ((n = msc_queue_pop(&waiting)) != NULL)
		job_abort(JOB(n), MSC__V1__CODE__UNAVAILABLE, "%s is stopping",
		    d->ops->name);
	msc_server_stop(d->srv);
	if (!msc_pool_free(d->pool))
		return false;   /* a job still runs and uses d */
	msc_map_free(d->lanes);
	msc_live_table_free(d->live);
	msc_share_free(d->owners);
	pthread_mutex_destroy(&d->mu);
	free(d);
	return true;
}
