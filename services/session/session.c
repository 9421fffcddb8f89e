/*
 * session.c - the session service: its dispatch table, Open, Close,
 * Touch, idle expiry, start and stop. The records they act on are
 * session_records.c's; TerminalExec lives in session_exec.c.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/supplemental/util/platform.h>

#include "inventory.pb-c.h"
#include "msc_log.h"

#define SWEEP_MS 1000
/* At stop: how long the commands' kills and the releases may take, then
 * how long the callbacks of the calls cut short may take. */
#define STOP_WAIT_MS 2000
#define STOP_CUT_MS 1000

static void
h_open(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__OpenRequest *o = (const void *)req;
	struct sess_service *s = state;
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	struct sess *ss;
	char id[SESS_ID_LEN + 1], msg[256];
	int rv;

	pthread_mutex_lock(&s->mu);
	rv = sess_open_locked(s, o->principal, o->idle_timeout_s, o->sandbox,
	    &ss, msg, sizeof(msg));
	if (rv != 0) {
		pthread_mutex_unlock(&s->mu);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "%s",
		    rv == -ENOMEM ? "out of memory" : msg);
		return;
	}
	/* Once unlocked the session may end (a stop sweeps them all). */
	memcpy(id, ss->id, sizeof(id));
	pthread_mutex_unlock(&s->mu);
	ref.session_id = id;
	msc_call_reply(call, &ref.base);
}

static void
h_close(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__SessionRef *ref = (const void *)req;
	struct sess_service *s = state;
	struct sess *ss;

	pthread_mutex_lock(&s->mu);
	ss = sess_find_locked(s, ref->session_id, ref->principal);
	if (ss == NULL) {
		pthread_mutex_unlock(&s->mu);
		msc_call_fail_as(call, MSC__V1__CODE__NOT_FOUND,
		    MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
		return;
	}
	if (sess_end_locked(s, ss, call) != 0) {
		pthread_mutex_unlock(&s->mu);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	pthread_mutex_unlock(&s->mu);
}

static void
h_touch(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__SessionRef *ref = (const void *)req;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	struct sess_service *s = state;
	struct sess *ss;

	pthread_mutex_lock(&s->mu);
	ss = sess_find_locked(s, ref->session_id, ref->principal);
	if (ss != NULL)
		sess_touch_locked(s, ss);
	pthread_mutex_unlock(&s->mu);
	if (ss == NULL)
		msc_call_fail_as(call, MSC__V1__CODE__NOT_FOUND,
		    MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
	else
		msc_call_reply(call, &e.base);
}

static void
h_exec(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	sess_exec_start(state, call, (const Msc__V1__TerminalExecRequest *)req);
}

static const struct msc_method session_methods[] = {
	{ "Open", h_open },
	{ "Close", h_close },
	{ "Touch", h_touch },
	{ "TerminalExec", h_exec },
	{ "CreateComputer", sess_h_create },
	{ "ListComputers", sess_h_list },
	{ "RestartComputer", sess_h_restart },
	{ "ResetComputer", sess_h_reset },
	{ "DeleteComputer", sess_h_delete },
	{ "SnapshotComputer", sess_h_snapshot },
	{ "RestoreComputer", sess_h_restore },
	{ "ListSnapshots", sess_h_snapshots },
	{ "DeleteSnapshot", sess_h_snapshot_delete },
	{ "ForkComputers", sess_h_fork },
	{ "ExposePort", sess_h_expose },
	{ "Describe", sess_h_describe },
	{ "CancelExec", sess_h_cancel_exec },
	{ "PeekExec", sess_h_peek_exec },
	{ "GetTask", sess_h_get_task },
	{ "CancelTask", sess_h_cancel_task },
	{ NULL, NULL },
};

struct sweep_args {
	uint64_t now;
	struct sess **expired;
	size_t n, cap;
	bool all;
};

static void
find_expired(void *arg, const char *key, void *value)
{
	struct sweep_args *sa = arg;
	struct sess *ss = value;

	(void)key;
	if (!sa->all && (ss->idle_timeout_s == 0 || ss->running > 0 ||
			    sa->now - ss->last_active_ms <
				(uint64_t)ss->idle_timeout_s * 1000))
		return;
	if (sa->n == sa->cap)
		return;         /* the rest wait for the next sweep */
	sa->expired[sa->n++] = ss;
}

/* Ends idle sessions (or all of them); lock held. */
static void
sweep_locked(struct sess_service *s, bool all)
{
	struct sess *batch[256];
	struct sweep_args sa = { msc_now_ms(), batch, 0, 256, all };

	do {
		sa.n = 0;
		msc_map_each(s->sessions, find_expired, &sa);
		for (size_t i = 0; i < sa.n; i++) {
			if (!all)
				msc_log_info("session %s expired after %us idle",
				    batch[i]->tag, batch[i]->idle_timeout_s);
			(void)sess_end_locked(s, batch[i], NULL);
		}
	} while (sa.n == sa.cap);
}

static void
forgot(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct sess_service *s = arg;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&s->mu);
	s->forgetting = false;
	s->forgot = st->code == MSC__V1__CODE__OK;
	pthread_mutex_unlock(&s->mu);
}

/*
 * Once after start: the inventory drops the owners of an earlier run of
 * this service (killed, say), so their temporary computers are stopped.
 */
static void
forget_earlier_owners(struct sess_service *s)
{
	Msc__V1__ForgetOwnersRequest req = MSC__V1__FORGET_OWNERS_REQUEST__INIT;

	if (s->forgot || s->forgetting)
		return;
	s->forgetting = true;
	req.keep_prefix = s->epoch;
	if (msc_client_call(s->inventory, &msc__v1__inventory__descriptor,
		"ForgetOwners", &req.base, 10000, forgot, s) != 0)
		s->forgetting = false;  /* unreachable: next sweep */
}

static void
sweep_cb(void *arg)
{
	struct sess_service *s = arg;

	if (nng_aio_result(s->sweep) != 0)
		return;         /* stopped */
	pthread_mutex_lock(&s->mu);
	forget_earlier_owners(s);
	sweep_locked(s, false);
	sess_task_sweep_locked(s, false);
	sess_owners_sweep(s);
	pthread_mutex_unlock(&s->mu);
	nng_sleep_aio(SWEEP_MS, s->sweep);
}

int
sess_start(const struct msc_cfg *cfg, const char *url,
    const char *inventory_url, struct msc_fleet *fleet,
    struct sess_service **sp)
{
	struct sess_service *s = calloc(1, sizeof(*s));
	int rv;

	if (s == NULL)
		return -ENOMEM;
	s->cfg = cfg;
	{
		unsigned char e[SESS_EPOCH_LEN / 2];

		msc_random_bytes(e, sizeof(e));
		for (size_t i = 0; i < sizeof(e); i++)
			snprintf(s->epoch + 2 * i, 3, "%02x", e[i]);
	}
	TAILQ_INIT(&s->lru);
	LIST_INIT(&s->closings);
	LIST_INIT(&s->owed);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if ((rv = msc_map_new(&s->sessions)) != 0 ||
	    (rv = msc_map_new(&s->tasks)) != 0 ||
	    (rv = msc_map_new(&s->principals)) != 0 ||
	    (rv = msc_fleet_reopen(fleet, &s->fleet)) != 0 ||
	    (rv = msc_client_open(inventory_url, "inventory", &s->inventory)) != 0 ||
	    (rv = nng_aio_alloc(&s->sweep, sweep_cb, s) != 0 ? -ENOMEM : 0) ||
	    (rv = msc_server_start(url, &msc__v1__session__descriptor,
		 session_methods, s, 8192, &s->srv)) != 0) {
		sess_stop(s);
		return rv;
	}
	pthread_mutex_lock(&s->mu);
	forget_earlier_owners(s);
	pthread_mutex_unlock(&s->mu);
	nng_sleep_aio(SWEEP_MS, s->sweep);
	*sp = s;
	return 0;
}

static void
free_principal(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	free(value);
}

/* Waits (lock held) until no call, release or task runs, or `ms` pass. */
static void
wait_quiet_locked(struct sess_service *s, int ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (s->calls > 0 || s->releasing > 0 || s->detached > 0)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &until) != 0)
			break;
}

/*
 * The service's calls (to the drivers and the inventory, through clients
 * it owns) all end before its state goes: their callbacks use it. So:
 * every command is killed on its driver and every session ends (its
 * temporary computers must not outlive us); what has not ended after
 * STOP_WAIT_MS is cut short on our side, no new call starts, and the
 * clients close only once no handler can run.
 */
void
sess_stop(struct sess_service *s)
{
	if (s == NULL)
		return;
	if (s->sweep != NULL)
		nng_aio_stop(s->sweep);
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	pthread_mutex_unlock(&s->mu);
	if (s->sessions != NULL && s->fleet != NULL && s->inventory != NULL) {
		sess_live_cancel_all(s);
		pthread_mutex_lock(&s->mu);
		sweep_locked(s, true);
		wait_quiet_locked(s, STOP_WAIT_MS);
		pthread_mutex_unlock(&s->mu);
		msc_fleet_shutdown(s->fleet);
		msc_client_shutdown(s->inventory);
		pthread_mutex_lock(&s->mu);
		wait_quiet_locked(s, STOP_CUT_MS);
		if (s->calls > 0 || s->detached > 0)
			msc_log_warn("session: stopped with %ld call(s) still "
			    "open", s->calls);
		pthread_mutex_unlock(&s->mu);
	}
	msc_server_stop(s->srv);
	msc_fleet_close(s->fleet);
	msc_client_close(s->inventory);
	pthread_mutex_lock(&s->mu);
	if (s->tasks != NULL)
		sess_task_sweep_locked(s, true);
	sess_owners_stop(s);
	pthread_mutex_unlock(&s->mu);
	if (s->sweep != NULL)
		nng_aio_free(s->sweep);
	msc_map_free(s->sessions);
	msc_map_free(s->tasks);
	if (s->principals != NULL)
		msc_map_each(s->principals, free_principal, NULL);
	msc_map_free(s->principals);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}
