/*
 * session_exec.c - terminal_execute: resolve the computer
 * (one Acquire at a time per session, so concurrent first calls share
 * one default computer), run it on the driver, shape the result. Its
 * arguments are checked in session_validate.c.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"
#include "inventory.pb-c.h"
#include "msc_log.h"
#include "session_output.h"

struct pending {
	struct sess_service *s;
	struct sess *ss;
	struct msc_call *call;       /* NULL once promoted to a task */
	const Msc__V1__TerminalExecRequest *req;   /* call's, or own_req */
	uint64_t deadline_ms;        /* the call's (msc_now_ms clock) */
	/* MCP tasks: a call that may become one (session_task.c). */
	Msc__V1__TerminalExecRequest *own_req;  /* outlives the call */
	struct sess_task *task;      /* its hidden task; NULL: never */
	nng_aio *promote;            /* fires at req->task_after_ms */
	bool promoted;               /* answered with the task */
	bool ended;                  /* its result came */
	char id[MSC_SLUG_MAX + 1];   /* explicit id, then the resolved one */
	bool explicit_id;
	bool fresh;                  /* its sandbox handle was minted for it */
	bool temporary;              /* requested, then resolved */
	size_t driver;               /* fleet index of the computer's driver */
	STAILQ_ENTRY(pending) link;  /* in its session's queue */
	struct sess_live live;       /* for CancelExec and PeekExec */
	Msc__V1__TerminalExecReply rep;   /* being shaped (session_output.c) */
};

static void pending_end(struct pending *p);
static void resolve(struct pending *p);

/*
 * p's result came (`rep`, or NULL and `st`): true when the caller
 * answers p->call with it; false when p was promoted and its task keeps
 * it. No promotion can follow.
 */
static bool
take_call(struct pending *p, const Msc__V1__TerminalExecReply *rep,
    const struct msc_status *st)
{
	bool promoted;

	pthread_mutex_lock(&p->s->mu);
	p->ended = true;
	/* The key is the request's, which the reply frees: no CancelExec or
	 * PeekExec may read it from now on. */
	p->live.call_key = "";
	promoted = p->promoted;
	if (p->task != NULL)
		sess_task_end_locked(p->s, p->task, rep, st);
	p->task = NULL;
	pthread_mutex_unlock(&p->s->mu);
	return !promoted;
}

/* The command still runs at task_after_ms: the call gets its task. */
static void
promote(void *arg)
{
	struct pending *p = arg;
	Msc__V1__TerminalExecReply rep = MSC__V1__TERMINAL_EXEC_REPLY__INIT;
	Msc__V1__Task task = MSC__V1__TASK__INIT;

	if (nng_aio_result(p->promote) != 0)
		return;         /* stopped: the call ended first */
	pthread_mutex_lock(&p->s->mu);
	if (!p->ended && p->task != NULL) {
		p->promoted = true;
		p->s->detached++;
		p->live.call_key = "";  /* CancelExec no longer names it */
		sess_task_promote_locked(p->task, &task);
		rep.task = &task;
		rep.sandbox_handle = p->ss->id;
		msc_call_reply(p->call, &rep.base);
		p->call = NULL;
	}
	pthread_mutex_unlock(&p->s->mu);
}

static void
pending_free(struct pending *p)
{
	if (p->promote != NULL)
		nng_aio_free(p->promote);       /* waits for promote() */
	if (p->own_req != NULL)
		protobuf_c_message_free_unpacked(&p->own_req->base, NULL);
	free(p);
}

/* Fails the call and ends p (lock not held). */
static void
pending_fail(struct pending *p, Msc__V1__Code code, Msc__V1__Reason reason,
    const char *msg)
{
	struct msc_status st = { code, msg, reason };

	if (take_call(p, NULL, &st))
		msc_call_fail_reason(p->call, code, reason, "%s", msg);
	if (p->fresh && !p->promoted) {
		/* Nobody learnt the handle: it goes with what it holds. */
		pthread_mutex_lock(&p->s->mu);
		if (!p->ss->closed)
			(void)sess_end_locked(p->s, p->ss, NULL);
		pthread_mutex_unlock(&p->s->mu);
	}
	pending_end(p);
}

static void
pending_end(struct pending *p)
{
	struct sess_service *s = p->s;

	if (p->promote != NULL)
		nng_aio_stop(p->promote);
	pthread_mutex_lock(&s->mu);
	sess_live_remove_locked(p->ss, &p->live);
	p->ss->running--;
	p->s->calls--;
	p->ss->pr->calls--;
	sess_touch_locked(s, p->ss);
	sess_principal_release_locked(s, p->ss->pr);
	sess_unref(p->ss);
	if (p->promoted && --s->detached == 0)
		pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pending_free(p);
}

static void
set_text(ProtobufCBinaryData *out, const char *text)
{
	out->data = (uint8_t *)strdup(text);
	out->len = out->data != NULL ? strlen(text) : 0;
}

/* Tells the inventory this session no longer holds p->id. */
static void
release(struct pending *p, bool dead)
{
	pthread_mutex_lock(&p->s->mu);
	sess_release_locked(p->s, p->id, p->ss->id, p->temporary, p->driver,
	    dead, NULL);
	pthread_mutex_unlock(&p->s->mu);
}

/* The reply is shaped: send it and end p. */
static void
replied(void *arg, Msc__V1__TerminalExecReply *rep)
{
	struct pending *p = arg;
	struct msc_status oom = { MSC__V1__CODE__RESOURCE_EXHAUSTED,
		"out of memory", MSC__V1__REASON__REASON_UNSPECIFIED };

	if (rep->stdout.data == NULL || rep->stderr.data == NULL) {
		if (take_call(p, NULL, &oom))
			msc_call_fail(p->call, oom.code, "%s", oom.message);
	} else if (take_call(p, rep, NULL))
		msc_call_reply(p->call, &rep->base);
	free(rep->stdout.data);
	free(rep->stderr.data);
	pending_end(p);
}

static void
executed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct pending *p = arg;
	const struct msc_cfg *cfg = p->s->cfg;
	Msc__V1__TerminalExecReply rep = MSC__V1__TERMINAL_EXEC_REPLY__INIT;
	Msc__V1__ExecResult *res = (Msc__V1__ExecResult *)resp;
	struct sess_output_to to;
	char marker[256];

	if (sess_live_cancelled(p->s, &p->live)) {
		/* The client gets no reply: whatever came, it is a cancel. */
		if (resp != NULL)
			protobuf_c_message_free_unpacked(resp, NULL);
		pending_fail(p, MSC__V1__CODE__CANCELLED,
		    MSC__V1__REASON__REASON_CANCELLED, "cancelled");
		return;
	}
	if (res == NULL) {
		if (st->code == MSC__V1__CODE__ABORTED) {
			pthread_mutex_lock(&p->s->mu);
			msc_map_del(p->ss->owned, p->id);
			pthread_mutex_unlock(&p->s->mu);
			release(p, true);
		}
		if (st->code == MSC__V1__CODE__UNAVAILABLE &&
		    msc_reason_call_failed(st->reason)) {
			char msg[1024];

			/* The link to the driver broke during the call. */
			pending_fail(p, st->code,
			    MSC__V1__REASON__REASON_COMPUTER_UNAVAILABLE,
			    msc_reason_computer_unavailable(p->id,
				msc_fleet_id(p->s->fleet, p->driver),
				st->message, msg, sizeof(msg)));
			return;
		}
		pending_fail(p, st->code, st->reason, sess_agent_text(st,
		    MSC_REASON_STEP_EXEC, p->ss->tag));
		return;
	}
	rep.computer_id = p->id;
	rep.temporary = p->temporary;
	rep.sandbox_handle = p->ss->id;
	rep.exec_duration_ms = res->duration_ms;
	rep.exit_code = res->exit_code;
	if (res->outcome == MSC__V1__EXEC_OUTCOME__TIMED_OUT) {
		long t = p->req->has_timeout ? (long)p->req->timeout : cfg->timeout;

		snprintf(marker, sizeof(marker),
		    "[kilntainers: command timed out after %lds]", t);
		set_text(&rep.stdout, "");
		set_text(&rep.stderr, marker);
		rep.exit_code = 124;
	} else if (res->outcome == MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT) {
		snprintf(marker, sizeof(marker),
		    "[kilntainers: output limit exceeded (%ld bytes). Command "
		    "terminated. No output returned. Re-run with head, tail, or "
		    "grep to manage output size.]", cfg->output_limit);
		set_text(&rep.stdout, "");
		set_text(&rep.stderr, marker);
		rep.exit_code = 1;
	} else if (p->req->raw_output && res->stderr.len == 0) {
		/* The helper's bytes, bounded by --output-limit alone. */
		rep.stdout.data = malloc(res->stdout.len + 1);
		rep.stdout.len = rep.stdout.data != NULL ? res->stdout.len : 0;
		if (rep.stdout.data != NULL && res->stdout.len > 0)
			memcpy(rep.stdout.data, res->stdout.data,
			    res->stdout.len);
		set_text(&rep.stderr, "");
	} else {
		/* Bounded to --reply-output-limit; may save it first. */
		p->rep = rep;
		to.driver = msc_fleet_client(p->s->fleet, p->driver);
		to.computer_id = p->id;
		to.owner = p->ss->tag;
		to.deadline_ms = p->deadline_ms;
		sess_output_reply(p->s, &to, res, &p->rep, replied, p);
		return;
	}
	protobuf_c_message_free_unpacked(resp, NULL);
	p->rep = rep;
	replied(p, &p->rep);
}

static void
run(struct pending *p)
{
	const Msc__V1__TerminalExecRequest *r = p->req;
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;
	long timeout = r->has_timeout ? (long)r->timeout : p->s->cfg->timeout;
	char msg[256];

	er.computer_id = p->id;
	er.command = r->command;
	er.n_args = r->n_args;
	er.args = r->args;
	er.has_stdin = r->has_stdin && r->stdin.len > 0;
	er.stdin = r->stdin;
	er.working_directory = r->working_directory;
	er.timeout_s = (uint32_t)(timeout > 604800 ? 604800 : timeout);
	er.output_limit = (uint64_t)p->s->cfg->output_limit;
	er.owner = p->ss->tag;          /* the driver's per-owner share */
	er.principal = p->ss->pr->tag;  /* and its principals' turns */
	if (!sess_live_to_driver(p->s, &p->live, p->id, p->driver)) {
		pending_fail(p, MSC__V1__CODE__CANCELLED,
		    MSC__V1__REASON__REASON_CANCELLED, "cancelled");
		return;
	}
	er.cancel_key = p->live.driver_key;
	/* The driver enforces the timeout; allow it time to kill and reply,
	 * and time to wait its turn on a busy computer, within what the
	 * caller has left. */
	if (msc_client_call(msc_fleet_client(p->s->fleet, p->driver),
		&msc__v1__driver__descriptor, "Exec", &er.base,
		sess_hop_ms(sess_left_ms(p->deadline_ms),
		    (int)er.timeout_s * 1000 + SESS_EXEC_SLACK_MS),
		executed, p) == 0)
		return;
	msc_reason_driver_unreachable(p->id, msc_fleet_id(p->s->fleet,
	    p->driver), msg, sizeof(msg));
	pending_fail(p, MSC__V1__CODE__UNAVAILABLE,
	    MSC__V1__REASON__REASON_COMPUTER_UNAVAILABLE, msg);
}

/* Runs every call that waited for a resolve; each may queue again. */
static void
drain(struct sess_service *s, struct sess *ss)
{
	STAILQ_HEAD(, pending) list = STAILQ_HEAD_INITIALIZER(list);
	struct pending *p;

	pthread_mutex_lock(&s->mu);
	STAILQ_CONCAT(&list, &ss->queue);
	ss->queued = 0;
	pthread_mutex_unlock(&s->mu);
	while ((p = STAILQ_FIRST(&list)) != NULL) {
		STAILQ_REMOVE_HEAD(&list, link);
		resolve(p);
	}
}

static void
acquired(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct pending *p = arg;
	struct sess_service *s = p->s;
	struct sess *ss = p->ss;
	Msc__V1__Computer *c = (Msc__V1__Computer *)resp;
	bool closed;

	/* Ending p may drop the last reference; drain() still needs ss. */
	pthread_mutex_lock(&s->mu);
	sess_ref_locked(ss);
	ss->resolving = false;
	closed = ss->closed;
	int driver = c != NULL ? msc_fleet_index(s->fleet, c->driver) : -1;

	if (c != NULL && driver >= 0) {
		snprintf(p->id, sizeof(p->id), "%s", c->computer_id);
		p->temporary = c->temporary;
		p->driver = (size_t)driver;
		if (!closed &&
		    msc_map_put(ss->owned, p->id,
			SESS_OWN(p->temporary, p->driver)) == 0 &&
		    (!p->explicit_id || ss->sandbox) &&
		    ss->default_id[0] == '\0')
			strcpy(ss->default_id, p->id);
	}
	pthread_mutex_unlock(&s->mu);
	if (c != NULL && driver < 0) {
		char msg[300];

		snprintf(msg, sizeof(msg), "computer '%s' is on driver '%s', "
		    "which this session service does not know (check "
		    "--driver-url)", c->computer_id, c->driver);
		protobuf_c_message_free_unpacked(resp, NULL);
		pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED, msg);
		drain(s, ss);
		sess_put(s, ss);
		return;
	}
	if (c != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (c != NULL && closed) {
		release(p, false);
		pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED,
		    "the session ended");
	} else if (c == NULL && msc_reason_call_failed(st->reason)) {
		char msg[768];

		/* Our own call to the inventory broke: say so, by name. */
		snprintf(msg, sizeof(msg), "%s (%s); retry in a few seconds",
		    msc_reason_inventory_unreachable(),
		    msc_reason_detail(st->reason, st->message));
		pending_fail(p, st->code, MSC__V1__REASON__REASON_UNSPECIFIED,
		    msg);
	} else if (c == NULL)
		pending_fail(p, st->code, st->reason, sess_agent_text(st,
		    MSC_REASON_STEP_CREATE, ss->tag));
	else
		run(p);
	drain(s, ss);
	sess_put(s, ss);
}

static void
resolve(struct pending *p)
{
	struct sess_service *s = p->s;
	struct sess *ss = p->ss;
	Msc__V1__AcquireRequest ar = MSC__V1__ACQUIRE_REQUEST__INIT;
	char msg[256];
	void *mode;

	pthread_mutex_lock(&s->mu);
	if (ss->closed) {
		/* Ended while this call waited behind an Acquire. */
		pthread_mutex_unlock(&s->mu);
		pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED,
		    "the session ended");
		return;
	}
	if (ss->resolving) {
		if (ss->queued >= SESS_MAX_PENDING) {
			pthread_mutex_unlock(&s->mu);
			pending_fail(p, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    MSC__V1__REASON__REASON_OVERLOADED,
			    "too many calls wait for this session's computer");
			return;
		}
		STAILQ_INSERT_TAIL(&ss->queue, p, link);
		ss->queued++;
		pthread_mutex_unlock(&s->mu);
		return;
	}
	if (ss->sandbox && p->explicit_id && ss->default_id[0] != '\0' &&
	    strcmp(p->id, ss->default_id) != 0) {
		/* A handle addresses exactly one computer. */
		pthread_mutex_unlock(&s->mu);
		pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_INVALID_ARGUMENT,
		    "computer_id does not match sandbox_handle");
		return;
	}
	if (!p->explicit_id)
		strcpy(p->id, ss->default_id);
	mode = p->id[0] != '\0' ? msc_map_get(ss->owned, p->id) : NULL;
	if (mode != NULL) {
		bool temporary = SESS_OWN_TEMPORARY(mode);

		p->driver = SESS_OWN_DRIVER(mode);
		pthread_mutex_unlock(&s->mu);
		if (p->explicit_id && p->temporary != temporary) {
			snprintf(msg, sizeof(msg), "Computer '%s' is already "
			    "attached with temporary=%s.", p->id,
			    temporary ? "true" : "false");
			pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED, msg);
			return;
		}
		p->temporary = temporary;
		run(p);
		return;
	}
	if (sess_computers_full_locked(s, ss, msg, sizeof(msg))) {
		pthread_mutex_unlock(&s->mu);
		pending_fail(p, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    MSC__V1__REASON__REASON_OVERLOADED, msg);
		return;
	}
	ss->resolving = true;
	pthread_mutex_unlock(&s->mu);
	ar.computer_id = p->id;
	ar.temporary = p->temporary;
	ar.owner = ss->id;
	ar.principal = ss->pr->tag;
	ar.exclusive = true;    /* a temporary one is this session's alone */
	if (msc_client_call(s->inventory, &msc__v1__inventory__descriptor,
		"Acquire", &ar.base, sess_hop_ms(sess_left_ms(p->deadline_ms),
		    SESS_STEP_MS), acquired, p) != 0) {
		struct msc_status st = { MSC__V1__CODE__UNAVAILABLE,
			msc_reason_inventory_unreachable(),
			MSC__V1__REASON__REASON_UNSPECIFIED };
		acquired(p, &st, NULL);
	}
}

/*
 * A call that may become a task keeps its own copy of the request (the
 * call's goes when it is answered) and a timer for its promotion.
 */
static int
prepare_task(struct pending *p, const Msc__V1__TerminalExecRequest *req)
{
	size_t n = protobuf_c_message_get_packed_size(&req->base);
	uint8_t *buf = malloc(n > 0 ? n : 1);

	if (buf == NULL)
		return -ENOMEM;
	protobuf_c_message_pack(&req->base, buf);
	p->own_req = msc__v1__terminal_exec_request__unpack(NULL, n, buf);
	free(buf);
	if (p->own_req == NULL)
		return -ENOMEM;
	p->req = p->own_req;
	return nng_aio_alloc(&p->promote, promote, p) != 0 ? -ENOMEM : 0;
}

void
sess_exec_start(struct sess_service *s, struct msc_call *call,
    const Msc__V1__TerminalExecRequest *req)
{
	char buf[512], msg[512];
	const char *invalid = sess_validate(req, buf, sizeof(buf));
	long timeout = req->has_timeout ? (long)req->timeout : s->cfg->timeout;
	struct sess_principal *pr;
	struct pending *p;
	struct sess *ss;
	int rv;

	if (invalid != NULL) {
		msc_call_fail_reason(call, MSC__V1__CODE__INVALID_ARGUMENT,
		    MSC__V1__REASON__REASON_INVALID_ARGUMENT, "%s", invalid);
		return;
	}
	(void)msc_call_bound_ms(call, sess_exec_budget_ms(timeout));
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	p->s = s;
	p->call = call;
	p->req = req;
	p->deadline_ms = msc_now_ms() + (uint64_t)msc_call_remaining_ms(call);
	if (req->task_after_ms > 0 && prepare_task(p, req) != 0) {
		pending_free(p);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	req = p->req;
	p->temporary = req->has_temporary ? req->temporary : true;
	if (req->has_computer_id) {
		(void)msc_slug_normalize(req->computer_id, p->id);
		p->explicit_id = true;
	}
	pthread_mutex_lock(&s->mu);
	if ((pr = sess_principal_get_locked(s, req->principal)) == NULL) {
		pthread_mutex_unlock(&s->mu);
		pending_free(p);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	/*
	 * Pinned until ss counts the call in it: opening a handle may end
	 * pr's last session to make room, and a failed open releases pr.
	 */
	pr->pins++;
	if (sess_calls_full_locked(s, pr, NULL, buf, sizeof(buf))) {
		pr->pins--;
		sess_principal_release_locked(s, pr);
		/* The whole server's bound: before a handle is minted. */
		pthread_mutex_unlock(&s->mu);
		pending_free(p);
		msc_call_fail_reason(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    MSC__V1__REASON__REASON_OVERLOADED, "%s", buf);
		return;
	}
	if (req->new_sandbox) {
		rv = sess_open_locked(s, req->principal,
		    (uint32_t)s->cfg->session_timeout, true, &ss, msg,
		    sizeof(msg));
		if (rv != 0) {
			pr->pins--;
			sess_principal_release_locked(s, pr);
			pthread_mutex_unlock(&s->mu);
			pending_free(p);
			msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    "%s", rv == -ENOMEM ? "out of memory" : msg);
			return;
		}
		p->fresh = true;
	} else
		ss = sess_find_locked(s, req->session_id, req->principal);
	if (ss != NULL && sess_calls_full_locked(s, NULL, ss, buf,
		sizeof(buf))) {
		pr->pins--;
		sess_touch_locked(s, ss);
		pthread_mutex_unlock(&s->mu);
		pending_free(p);
		msc_call_fail_reason(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    MSC__V1__REASON__REASON_OVERLOADED, "%s", buf);
		return;
	}
	/*
	 * Past the task quota the call runs as a plain one (the extension
	 * lets a server answer any call synchronously): the session's
	 * finished tasks, kept for their ttl, never block its commands.
	 */
	if (ss != NULL && p->promote != NULL &&
	    (rv = sess_task_new_locked(s, ss, req->task_owner, p->fresh,
		 timeout, &p->live, &p->task)) == -ENOSPC)
		p->task = NULL;
	else if (ss != NULL && p->promote != NULL && rv != 0) {
		sess_touch_locked(s, ss);
		if (p->fresh)
			(void)sess_end_locked(s, ss, NULL);
		pr->pins--;
		sess_principal_release_locked(s, pr);
		pthread_mutex_unlock(&s->mu);
		pending_free(p);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "out of memory");
		return;
	}
	if (ss != NULL) {
		sess_ref_locked(ss);
		sess_live_add_locked(ss, &p->live, req->call_key);
		ss->running++;
		s->calls++;
		ss->pr->calls++;
		sess_touch_locked(s, ss);
	}
	pr->pins--;
	sess_principal_release_locked(s, pr);
	pthread_mutex_unlock(&s->mu);
	if (ss == NULL) {
		pending_free(p);
		msc_call_fail_as(call, MSC__V1__CODE__NOT_FOUND,
		    MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
		return;
	}
	p->ss = ss;
	if (p->task != NULL)
		nng_sleep_aio((nng_duration)req->task_after_ms, p->promote);
	resolve(p);
}
