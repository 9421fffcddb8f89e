/*
 * fly_driver.c - the msc.v1.Driver service for Fly Machines: the
 * dispatch table, the worker-pool jobs, and the per-computer lanes.
 */
#include "fly_driver_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"

#define FLY_MAX_QUEUED 4096

enum job_kind { JOB_CREATE, JOB_ATTACH, JOB_EXEC, JOB_STOP, JOB_DELETE,
	JOB_RESTART, JOB_RESET, JOB_LIST };

struct fly_job {
	struct fly_driver *d;
	struct msc_call *call;
	const ProtobufCMessage *req;   /* borrowed from the call */
	enum job_kind kind;
	char lane_id[64];              /* JOB_EXEC */
	struct fly_job *next;
};

static Msc__V1__Code
code_for(int rv)
{
	switch (rv) {
	case -ENOENT:
		return MSC__V1__CODE__NOT_FOUND;
	case -EEXIST:
		return MSC__V1__CODE__ALREADY_EXISTS;
	case -ECONNREFUSED:
	case -EAGAIN:
	case -EIO:
		return MSC__V1__CODE__UNAVAILABLE;
	case -ETIMEDOUT:
		return MSC__V1__CODE__DEADLINE_EXCEEDED;
	case -EINVAL:
		return MSC__V1__CODE__INVALID_ARGUMENT;
	case -EPERM:
	case -EACCES:
		return MSC__V1__CODE__FAILED_PRECONDITION;
	case -ECONNABORTED:
		return MSC__V1__CODE__ABORTED;
	default:
		return MSC__V1__CODE__INTERNAL;
	}
}

static void
reply_computer(struct msc_call *call, int rv, Msc__V1__Computer *c,
    const char *err)
{
	if (rv == 0)
		msc_call_reply(call, &c->base);
	else
		msc_call_fail(call, code_for(rv), "%s", err);
	fly_computer_fini(c);
}

static void lane_next(struct fly_driver *d, const char *id);

static void
run_exec(struct fly_job *j, char *err)
{
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;
	int rv;

	rv = fly_exec(j->d, (const Msc__V1__ExecRequest *)j->req, &res, err,
	    FLY_ERRLEN);
	if (rv == 0)
		msc_call_reply(j->call, &res.base);
	else
		msc_call_fail(j->call, code_for(rv), "%s", err);
	free(res.stdout.data);
	free(res.stderr.data);
}

static void
job_run(void *arg)
{
	struct fly_job *j = arg;
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	char err[FLY_ERRLEN] = "";
	int rv;

	switch (j->kind) {
	case JOB_CREATE: {
		const Msc__V1__CreateRequest *r = (const void *)j->req;

		rv = fly_create(j->d, r->computer_id, r->temporary, &c, err,
		    sizeof(err));
		reply_computer(j->call, rv, &c, err);
		break;
	}
	case JOB_ATTACH:
		rv = fly_attach(j->d,
		    ((const Msc__V1__ComputerRef *)j->req)->computer_id, &c, err,
		    sizeof(err));
		reply_computer(j->call, rv, &c, err);
		break;
	case JOB_RESTART:
		rv = fly_restart(j->d,
		    ((const Msc__V1__ComputerRef *)j->req)->computer_id, &c, err,
		    sizeof(err));
		reply_computer(j->call, rv, &c, err);
		break;
	case JOB_RESET:
		rv = fly_reset(j->d,
		    ((const Msc__V1__ComputerRef *)j->req)->computer_id, &c, err,
		    sizeof(err));
		reply_computer(j->call, rv, &c, err);
		break;
	case JOB_STOP:
	case JOB_DELETE: {
		Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

		rv = fly_stop(j->d,
		    ((const Msc__V1__ComputerRef *)j->req)->computer_id,
		    j->kind == JOB_DELETE, err, sizeof(err));
		if (rv == 0)
			msc_call_reply(j->call, &e.base);
		else
			msc_call_fail(j->call, code_for(rv), "%s", err);
		break;
	}
	case JOB_LIST: {
		Msc__V1__ComputerList l = MSC__V1__COMPUTER_LIST__INIT;

		rv = fly_list(j->d, &l, err, sizeof(err));
		if (rv == 0)
			msc_call_reply(j->call, &l.base);
		else
			msc_call_fail(j->call, code_for(rv), "%s", err);
		fly_list_fini(&l);
		break;
	}
	case JOB_EXEC:
		run_exec(j, err);
		break;
	}
	if (j->lane_id[0] != '\0')
		lane_next(j->d, j->lane_id);
	free(j);
}

static void
submit(struct fly_job *j)
{
	int rv = msc_pool_submit(j->d->pool, job_run, j);

	if (rv == 0)
		return;
	msc_call_fail(j->call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
	    "fly-driver is overloaded (%s); retry later", strerror(-rv));
	if (j->lane_id[0] != '\0')
		lane_next(j->d, j->lane_id);
	free(j);
}

/* Called when an exec of lane `id` ends: starts the next one, if any. */
static void
lane_next(struct fly_driver *d, const char *id)
{
	struct fly_lane *lane;
	struct fly_job *next = NULL;

	pthread_mutex_lock(&d->mu);
	lane = msc_map_get(d->lanes, id);
	if (lane != NULL && lane->head != NULL) {
		next = lane->head;
		lane->head = next->next;
		if (lane->head == NULL)
			lane->tail = NULL;
	} else if (lane != NULL) {
		msc_map_del(d->lanes, id);
		free(lane);
	}
	pthread_mutex_unlock(&d->mu);
	if (next != NULL)
		submit(next);
}

static struct fly_job *
job_new(void *state, struct msc_call *call, const ProtobufCMessage *req,
    enum job_kind kind)
{
	struct fly_job *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "out of memory");
		return NULL;
	}
	j->d = state;
	j->call = call;
	j->req = req;
	j->kind = kind;
	return j;
}

/*
 * Queues j on the lane of computer `id`: one job at a time per computer
 * (commands, create, attach, restart, reset), any number of computers at
 * once.
 */
static void
lane_submit(struct fly_job *j, const char *id)
{
	struct fly_driver *d = j->d;
	struct fly_lane *lane;
	bool run_now = false;

	if (strlen(id) >= sizeof(j->lane_id)) {
		msc_call_fail(j->call, MSC__V1__CODE__INVALID_ARGUMENT,
		    "computer_id too long");
		free(j);
		return;
	}
	strcpy(j->lane_id, id);
	pthread_mutex_lock(&d->mu);
	lane = msc_map_get(d->lanes, id);
	if (lane == NULL) {
		lane = calloc(1, sizeof(*lane));
		if (lane == NULL || msc_map_put(d->lanes, id, lane) != 0) {
			pthread_mutex_unlock(&d->mu);
			free(lane);
			msc_call_fail(j->call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    "out of memory");
			free(j);
			return;
		}
	}
	if (!lane->busy) {
		lane->busy = true;
		run_now = true;
	} else if (lane->tail != NULL) {
		lane->tail->next = j;
		lane->tail = j;
	} else
		lane->head = lane->tail = j;
	pthread_mutex_unlock(&d->mu);
	if (run_now)
		submit(j);
}

static void
h_exec(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct fly_job *j = job_new(state, call, req, JOB_EXEC);

	if (j != NULL)
		lane_submit(j, ((const Msc__V1__ExecRequest *)req)->computer_id);
}

static void
h_create(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct fly_job *j = job_new(state, call, req, JOB_CREATE);

	if (j != NULL)
		lane_submit(j,
		    ((const Msc__V1__CreateRequest *)req)->computer_id);
}

/* Jobs on a computer's lane, named by a ComputerRef. */
#define LANE_HANDLER(name, kind)                                              \
	static void name(void *state, struct msc_call *call,                 \
	    const ProtobufCMessage *req)                                      \
	{                                                                     \
		struct fly_job *j = job_new(state, call, req, kind);         \
		if (j != NULL)                                                \
			lane_submit(j, ((const Msc__V1__ComputerRef *)req)    \
					   ->computer_id);                    \
	}
LANE_HANDLER(h_attach, JOB_ATTACH)
LANE_HANDLER(h_restart, JOB_RESTART)
LANE_HANDLER(h_reset, JOB_RESET)

/*
 * Jobs off the lanes: listing, and stop and delete, which end whatever
 * runs on the computer rather than wait for it.
 */
#define SIMPLE_HANDLER(name, kind)                                            \
	static void name(void *state, struct msc_call *call,                 \
	    const ProtobufCMessage *req)                                      \
	{                                                                     \
		struct fly_job *j = job_new(state, call, req, kind);         \
		if (j != NULL)                                                \
			submit(j);                                            \
	}
SIMPLE_HANDLER(h_stop, JOB_STOP)
SIMPLE_HANDLER(h_delete, JOB_DELETE)
SIMPLE_HANDLER(h_list, JOB_LIST)

static const struct msc_method driver_methods[] = {
	{ "Create", h_create },
	{ "Attach", h_attach },
	{ "Exec", h_exec },
	{ "Stop", h_stop },
	{ "Delete", h_delete },
	{ "Restart", h_restart },
	{ "Reset", h_reset },
	{ "List", h_list },
	{ NULL, NULL },
};

static void
free_known(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	free(value);
}

int
fly_driver_start(const struct msc_cfg *cfg, const char *url,
    struct fly_driver **dp)
{
	struct fly_driver *d;
	char err[FLY_ERRLEN];
	int rv;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->setup_mu, NULL);
	if ((rv = fly_conv_guest(cfg->fly_image, cfg->fly_region,
		 cfg->fly_cpu_kind, cfg->fly_cpus, cfg->fly_memory,
		 cfg->fly_rootfs_size, &d->guest, err, sizeof(err))) != 0) {
		msc_cfg_error("%s", err);
		goto fail;
	}
	d->base_url = cfg->fly_api_url != NULL && *cfg->fly_api_url != '\0'
	    ? cfg->fly_api_url : FLY_API_DEFAULT_URL;
	if (strncmp(d->base_url, "http://", 7) != 0 &&
	    strncmp(d->base_url, "https://", 8) != 0) {
		msc_cfg_error("--fly-api-url must start with http:// or "
			      "https://, got: %s", d->base_url);
		rv = -EINVAL;
		goto fail;
	}
	if (!cfg->network)
		msc_log_warn("fly: Machines always have outbound network; "
			     "--no-network is not enforced on this backend");
	if ((rv = msc_map_new(&d->lanes)) != 0 ||
	    (rv = msc_map_new(&d->known)) != 0)
		goto fail;
	if ((rv = msc_pool_new((int)cfg->driver_workers, FLY_MAX_QUEUED,
		 &d->pool)) != 0)
		goto fail;
	if ((rv = msc_server_start(url, &msc__v1__driver__descriptor,
		 driver_methods, d, FLY_MAX_QUEUED, &d->srv)) != 0)
		goto fail;
	*dp = d;
	return 0;
fail:
	fly_driver_stop(d);
	return rv;
}

void
fly_driver_stop(struct fly_driver *d)
{
	if (d == NULL)
		return;
	msc_server_stop(d->srv);
	if (!msc_pool_free(d->pool))
		return;         /* a job still runs and uses d: the process ends */
	msc_map_free(d->lanes);
	if (d->known != NULL)
		msc_map_each(d->known, free_known, NULL);
	msc_map_free(d->known);
	fly_api_free(d->api);
	pthread_mutex_destroy(&d->setup_mu);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
