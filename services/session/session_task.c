/*
 * session_task.c - MCP tasks (io.modelcontextprotocol/tasks): a
 * terminal_execute still running after TerminalExecRequest.task_after_ms
 * answers with a task, and its result is kept here, in the session
 * service, so any edge answers Session/GetTask, and after an edge restart
 * too.
 *
 * A task record is made when such a call starts (so the quota is checked
 * before anything runs, and a task is readable the moment its id is
 * sent); it stays hidden until the call is promoted (session_pending.c) and
 * is dropped at once when the call ends before that. A finished task is
 * kept until created_at + ttl_ms (the command's timeout plus
 * --task-ttl), never while its command runs, whatever happens to its
 * session meanwhile. Everything here is under s->mu unless said.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"
#include "msc_log.h"
#include "msc_random.h"

/* Tasks the whole service holds at once, over every session. */
#define TASK_MAX_ALL 4096
/* How long the driver has to confirm a task's kill. */
#define TASK_KILL_MS 5000

struct sess_task {
	char id[SESS_TASK_ID_LEN + 1];  /* a bearer credential: never logged */
	char owner[SESS_ID_LEN + 1];    /* who may read and cancel it */
	char handle[SESS_ID_LEN + 1];   /* the session its command runs in */
	bool minted;                    /* that handle was made for the call */
	struct sess_principal *pr;      /* whose it is */
	bool visible;                   /* promoted: its id was sent */
	bool running;                   /* its command has not ended */
	Msc__V1__TaskStatus status;
	uint64_t created_wall_ms, updated_wall_ms, ttl_ms;
	uint64_t expires_ms;            /* msc_now_ms clock */
	struct sess_live *live;         /* while running; for CancelTask */
	uint8_t *result;                /* packed TerminalExecReply */
	size_t result_len;
	Msc__V1__Code err_code;         /* OK: result is set */
	Msc__V1__Reason err_reason;
	char *err_message;
};

static int
task_count_locked(struct sess_service *s, const char *handle, int delta)
{
	struct sess *ss = msc_map_get(s->sessions, handle);

	if (ss == NULL)
		return 0;
	ss->tasks += delta;
	return ss->tasks;
}

int
sess_task_new_locked(struct sess_service *s, struct sess *ss,
    const char *owner, bool minted, long timeout_s, struct sess_live *live,
    struct sess_task **tp)
{
	long share = sess_share(ss->pr, s->cfg->max_principal_tasks);
	struct sess_task *t;

	if (ss->tasks >= s->cfg->max_session_tasks ||
	    (share >= 0 && ss->pr->tasks >= share) ||
	    msc_map_len(s->tasks) >= TASK_MAX_ALL)
		return -ENOSPC;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -ENOMEM;
	msc_random_hex(t->id, SESS_TASK_ID_LEN / 2);
	snprintf(t->owner, sizeof(t->owner), "%s",
	    owner != NULL && owner[0] != '\0' ? owner : ss->id);
	snprintf(t->handle, sizeof(t->handle), "%s", ss->id);
	t->minted = minted;
	t->pr = ss->pr;
	t->running = true;
	t->live = live;
	t->status = MSC__V1__TASK_STATUS__TASK_WORKING;
	t->created_wall_ms = t->updated_wall_ms = msc_wall_ms();
	t->ttl_ms = (uint64_t)(timeout_s + s->cfg->task_ttl) * 1000;
	t->expires_ms = msc_now_ms() + t->ttl_ms;
	if (msc_map_put(s->tasks, t->id, t) != 0) {
		free(t);
		return -ENOMEM;
	}
	ss->tasks++;
	ss->pr->tasks++;
	*tp = t;
	return 0;
}

static void
task_free(struct sess_task *t)
{
	free(t->result);
	free(t->err_message);
	free(t);
}

static void
task_drop_locked(struct sess_service *s, struct sess_task *t)
{
	(void)msc_map_del(s->tasks, t->id);
	(void)task_count_locked(s, t->handle, -1);
	t->pr->tasks--;
	sess_principal_release_locked(s, t->pr);
	task_free(t);
}

/* t's base fields into `out`, borrowing t's strings (lock held). */
static void
task_fill(const struct sess_task *t, Msc__V1__Task *out)
{
	out->task_id = (char *)t->id;
	out->status = t->status;
	out->created_at_ms = t->created_wall_ms;
	out->updated_at_ms = t->updated_wall_ms;
	out->ttl_ms = t->ttl_ms;
	out->sandbox_handle = (char *)t->handle;
}

void
sess_task_promote_locked(struct sess_task *t, Msc__V1__Task *out)
{
	t->visible = true;
	task_fill(t, out);
}

void
sess_task_end_locked(struct sess_service *s, struct sess_task *t,
    const Msc__V1__TerminalExecReply *rep, const struct msc_status *st)
{
	uint64_t kept_until = msc_now_ms() + (uint64_t)s->cfg->task_ttl * 1000;

	t->running = false;
	t->live = NULL;
	/* A command that waited its turn may end past its ttlMs: its result
	 * is still kept --task-ttl from its end, never dropped on first read. */
	if (t->expires_ms < kept_until)
		t->expires_ms = kept_until;
	if (!t->visible) {
		task_drop_locked(s, t);     /* answered as a plain call */
		return;
	}
	t->updated_wall_ms = msc_wall_ms();
	t->status = MSC__V1__TASK_STATUS__TASK_COMPLETED;
	if (rep != NULL) {
		t->result_len = protobuf_c_message_get_packed_size(&rep->base);
		if ((t->result = malloc(t->result_len + 1)) != NULL) {
			protobuf_c_message_pack(&rep->base, t->result);
			return;
		}
		t->err_code = MSC__V1__CODE__RESOURCE_EXHAUSTED;
		t->err_message = strdup("out of memory keeping the result");
		return;
	}
	if (st->code == MSC__V1__CODE__CANCELLED)
		t->status = MSC__V1__TASK_STATUS__TASK_CANCELLED;
	t->err_code = st->code != MSC__V1__CODE__OK ? st->code
						    : MSC__V1__CODE__INTERNAL;
	t->err_reason = st->reason;
	t->err_message = strdup(st->message != NULL ? st->message : "");
}

struct task_sweep {
	struct sess_task *batch[256];
	size_t n;
	uint64_t now;
	bool all;
};

static void
find_expired(void *arg, const char *key, void *value)
{
	struct task_sweep *w = arg;
	struct sess_task *t = value;

	(void)key;
	if (w->n < 256 && !t->running && (w->all || w->now >= t->expires_ms))
		w->batch[w->n++] = t;
}

void
sess_task_sweep_locked(struct sess_service *s, bool all)
{
	struct task_sweep w = { .now = msc_now_ms(), .all = all };

	do {
		w.n = 0;
		msc_map_each(s->tasks, find_expired, &w);
		for (size_t i = 0; i < w.n; i++)
			task_drop_locked(s, w.batch[i]);
	} while (w.n == 256);
}

/* The task `r` names if its caller may see it (lock held); or NULL. */
static struct sess_task *
find_locked(struct sess_service *s, const Msc__V1__TaskRef *r)
{
	struct sess_task *t = msc_map_get(s->tasks, r->task_id);

	if (t == NULL || !t->visible)
		return NULL;
	if (!sess_principal_is(t->pr, r->principal))
		return NULL;            /* another principal's: as unknown */
	if (r->session_id[0] != '\0' && strcmp(r->session_id, t->owner) != 0)
		return NULL;            /* another session's: as unknown */
	if (!t->running && msc_now_ms() >= t->expires_ms) {
		task_drop_locked(s, t);
		return NULL;
	}
	return t;
}

/*
 * Answers `call` with t's state (lock held; the reply is packed before
 * this returns). Its sandbox_handle only to a caller that holds it
 * (`caller`, the TaskRef's session) or for whom the call made it: a task
 * id alone reveals no handle.
 */
static void
reply_task_locked(struct msc_call *call, const struct sess_task *t,
    const char *caller)
{
	bool show = t->minted || strcmp(caller, t->handle) == 0;
	Msc__V1__Task out = MSC__V1__TASK__INIT;
	Msc__V1__Status err = MSC__V1__STATUS__INIT;
	Msc__V1__TerminalExecReply *rep = NULL;

	task_fill(t, &out);
	if (!show)
		out.sandbox_handle = "";
	if (t->result != NULL) {
		rep = msc__v1__terminal_exec_reply__unpack(NULL, t->result_len,
		    t->result);
		if (rep == NULL) {
			msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    "out of memory");
			return;
		}
		if (!show && rep->sandbox_handle[0] != '\0') {
			free(rep->sandbox_handle);
			rep->sandbox_handle = strdup("");
			if (rep->sandbox_handle == NULL) {
				msc__v1__terminal_exec_reply__free_unpacked(
				    rep, NULL);
				msc_call_fail(call,
				    MSC__V1__CODE__RESOURCE_EXHAUSTED,
				    "out of memory");
				return;
			}
		}
		out.result = rep;
	} else if (t->status != MSC__V1__TASK_STATUS__TASK_WORKING) {
		err.code = t->err_code;
		err.reason = t->err_reason;
		err.message = t->err_message != NULL ? t->err_message : "";
		out.error = &err;
	}
	msc_call_reply(call, &out.base);
	if (rep != NULL)
		msc__v1__terminal_exec_reply__free_unpacked(rep, NULL);
}

static void
fail_unknown(struct msc_call *call)
{
	msc_call_fail(call, MSC__V1__CODE__NOT_FOUND, "Failed to retrieve "
	    "task: Task not found (unknown, expired, or not this session's)");
}

void
sess_h_get_task(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	const Msc__V1__TaskRef *r = (const Msc__V1__TaskRef *)req;
	struct sess_task *t;

	pthread_mutex_lock(&s->mu);
	if ((t = find_locked(s, r)) != NULL)
		reply_task_locked(call, t, r->session_id);
	pthread_mutex_unlock(&s->mu);
	if (t == NULL)
		fail_unknown(call);
}

/* A CancelTask waiting for its Driver/Cancel. */
struct task_kill {
	struct sess_service *s;
	struct msc_call *call;
	char task_id[SESS_TASK_ID_LEN + 1];
	char session_id[SESS_ID_LEN + 1];
	char principal[SESS_PRINCIPAL_MAX + 1];
};

static void
answer_cancel(struct task_kill *k)
{
	Msc__V1__TaskRef r = MSC__V1__TASK_REF__INIT;
	struct sess_task *t;

	r.task_id = k->task_id;
	r.session_id = k->session_id;
	r.principal = k->principal;
	pthread_mutex_lock(&k->s->mu);
	if ((t = find_locked(k->s, &r)) != NULL)
		reply_task_locked(k->call, t, r.session_id);
	pthread_mutex_unlock(&k->s->mu);
	if (t == NULL)
		fail_unknown(k->call);
	free(k);
}

static void
killed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct task_kill *k = arg;

	/* NOT_FOUND: it ended on its own meanwhile. */
	if (resp == NULL && st->code != MSC__V1__CODE__NOT_FOUND)
		msc_log_warn("cancelling a task's command failed: %s",
		    st->message);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	answer_cancel(k);
}

void
sess_h_cancel_task(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	const Msc__V1__TaskRef *r = (const Msc__V1__TaskRef *)req;
	Msc__V1__ExecRef dr = MSC__V1__EXEC_REF__INIT;
	char key[sizeof(((struct sess_live *)0)->driver_key)];
	char computer_id[MSC_SLUG_MAX + 1];
	struct task_kill *k = calloc(1, sizeof(*k));
	struct sess_task *t;
	size_t driver = 0;
	bool send = false;

	if (k == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	k->s = s;
	k->call = call;
	snprintf(k->task_id, sizeof(k->task_id), "%s", r->task_id);
	snprintf(k->session_id, sizeof(k->session_id), "%s", r->session_id);
	snprintf(k->principal, sizeof(k->principal), "%s", r->principal);
	pthread_mutex_lock(&s->mu);
	t = find_locked(s, r);
	if (t != NULL && t->live != NULL && !t->live->cancelled) {
		/* Not yet on a driver: it will never be sent. */
		t->live->cancelled = true;
		if ((send = t->live->on_driver)) {
			memcpy(key, t->live->driver_key, sizeof(key));
			memcpy(computer_id, t->live->computer_id,
			    sizeof(computer_id));
			driver = t->live->driver;
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (!send) {
		answer_cancel(k);       /* unknown, finished, or not sent */
		return;
	}
	dr.computer_id = computer_id;
	dr.cancel_key = key;
	if (msc_client_call(msc_fleet_client(s->fleet, driver),
		&msc__v1__driver__descriptor, "Cancel", &dr.base,
		sess_hop_ms(msc_call_remaining_ms(call), TASK_KILL_MS), killed,
		k) != 0) {
		struct msc_status st = { MSC__V1__CODE__UNAVAILABLE,
			"its driver cannot be reached",
			MSC__V1__REASON__REASON_NOT_SENT };

		killed(k, &st, NULL);
	}
}
