/*
 * session_exec.c - terminal_execute's start: the call admitted (its
 * session found, or a sandbox handle minted for it; the bounds on calls
 * and tasks) and its computer resolved (one Acquire at a time per
 * session, so concurrent first calls share one default computer). Then
 * session_pending.c runs it on the driver, shapes the result and ends
 * it. Its arguments are checked in session_validate.c.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"


static void resolve(struct pending *p);

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
		sess_pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED, msg);
		drain(s, ss);
		sess_put(s, ss);
		return;
	}
	if (c != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (c != NULL && closed) {
		sess_pending_release(p, false);
		sess_pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED,
		    "the session ended");
	} else if (c == NULL && msc_reason_call_failed(st->reason)) {
		char msg[768];

		/* Our own call to the inventory broke: say so, by name. */
		snprintf(msg, sizeof(msg), "%s (%s); retry in a few seconds",
		    msc_reason_inventory_unreachable(),
		    msc_reason_detail(st->reason, st->message));
		sess_pending_fail(p, st->code,
		    MSC__V1__REASON__REASON_UNSPECIFIED, msg);
	} else if (c == NULL)
		sess_pending_fail(p, st->code, st->reason, sess_agent_text(st,
		    MSC_REASON_STEP_CREATE, ss->tag));
	else
		sess_pending_run(p);
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
		sess_pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED,
		    "the session ended");
		return;
	}
	if (ss->resolving) {
		if (ss->queued >= SESS_MAX_PENDING) {
			pthread_mutex_unlock(&s->mu);
			sess_pending_fail(p, MSC__V1__CODE__RESOURCE_EXHAUSTED,
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
		sess_pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
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
			sess_pending_fail(p, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC__V1__REASON__REASON_UNSPECIFIED, msg);
			return;
		}
		p->temporary = temporary;
		sess_pending_run(p);
		return;
	}
	if (sess_computers_full_locked(s, ss, msg, sizeof(msg))) {
		pthread_mutex_unlock(&s->mu);
		sess_pending_fail(p, MSC__V1__CODE__RESOURCE_EXHAUSTED,
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
	if (req->task_after_ms > 0 && sess_pending_prepare_task(p, req) != 0) {
		sess_pending_free(p);
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
		sess_pending_free(p);
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
		sess_pending_free(p);
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
			sess_pending_free(p);
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
		sess_pending_free(p);
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
		sess_pending_free(p);
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
		sess_pending_free(p);
		msc_call_fail_as(call, MSC__V1__CODE__NOT_FOUND,
		    MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
		return;
	}
	p->ss = ss;
	if (p->task != NULL)
		nng_sleep_aio((nng_duration)req->task_after_ms, p->promote);
	resolve(p);
}
