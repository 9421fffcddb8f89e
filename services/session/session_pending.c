/*
 * session_pending.c - one terminal_execute call in flight (struct
 * pending, session_int.h) once its computer is known: its run on the
 * computer's driver, the result shaped (the timeout and output limit
 * markers, raw output, the reply's output bound in session_output.c),
 * its promotion to an MCP task (session_task.c) and its end. The start
 * and the resolve of its computer (session_exec.c) call down into these.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"
#include "session_output.h"

static void pending_end(struct pending *p);

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

void
sess_pending_free(struct pending *p)
{
	if (p->promote != NULL)
		nng_aio_free(p->promote);       /* waits for promote() */
	if (p->own_req != NULL)
		protobuf_c_message_free_unpacked(&p->own_req->base, NULL);
	free(p);
}

void
sess_pending_fail(struct pending *p, Msc__V1__Code code, Msc__V1__Reason reason,
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
	sess_pending_free(p);
}

static void
set_text(ProtobufCBinaryData *out, const char *text)
{
	out->data = (uint8_t *)strdup(text);
	out->len = out->data != NULL ? strlen(text) : 0;
}

void
sess_pending_release(struct pending *p, bool dead)
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
		sess_pending_fail(p, MSC__V1__CODE__CANCELLED,
		    MSC__V1__REASON__REASON_CANCELLED, "cancelled");
		return;
	}
	if (res == NULL) {
		if (st->code == MSC__V1__CODE__ABORTED) {
			pthread_mutex_lock(&p->s->mu);
			msc_map_del(p->ss->owned, p->id);
			pthread_mutex_unlock(&p->s->mu);
			sess_pending_release(p, true);
		}
		if (st->code == MSC__V1__CODE__UNAVAILABLE &&
		    msc_reason_call_failed(st->reason)) {
			char msg[1024];

			/* The link to the driver broke during the call. */
			sess_pending_fail(p, st->code,
			    MSC__V1__REASON__REASON_COMPUTER_UNAVAILABLE,
			    msc_reason_computer_unavailable(p->id,
				msc_fleet_id(p->s->fleet, p->driver),
				st->message, msg, sizeof(msg)));
			return;
		}
		sess_pending_fail(p, st->code, st->reason, sess_agent_text(st,
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

void
sess_pending_run(struct pending *p)
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
		sess_pending_fail(p, MSC__V1__CODE__CANCELLED,
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
	sess_pending_fail(p, MSC__V1__CODE__UNAVAILABLE,
	    MSC__V1__REASON__REASON_COMPUTER_UNAVAILABLE, msg);
}

int
sess_pending_prepare_task(struct pending *p,
    const Msc__V1__TerminalExecRequest *req)
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
