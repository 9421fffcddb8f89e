/*
 * session_lc_op.c - one lifecycle call of a session in flight (struct
 * lc_op): begun on the caller's session (the id checked, the call
 * counted), passed on to the inventory, its answer relayed, a computer
 * it made recorded as the session's, and ended. The lifecycle tools
 * (session_lifecycle.c) and the snapshot tools (session_snapshots.c)
 * both call down into these.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"

struct lc_op *
sess_lc_begin(struct sess_service *s, struct msc_call *call,
    const Msc__V1__ComputerRequest *r, bool empty_id_ok)
{
	struct lc_op *op;
	struct sess *ss;
	char tag[SESS_TAG_LEN + 1] = "";
	char msg[256];

	(void)msc_call_bound_ms(call, SESS_LIFECYCLE_MS);
	if (!(empty_id_ok && r->computer_id[0] == '\0')) {
		char id[MSC_SLUG_MAX + 1];

		if (msc_slug_normalize(r->computer_id, id) != 0) {
			msc_call_fail(call, MSC__V1__CODE__INVALID_ARGUMENT,
			    MSC_SLUG_ERROR);
			return NULL;
		}
	}
	if ((op = calloc(1, sizeof(*op))) == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return NULL;
	}
	pthread_mutex_lock(&s->mu);
	if ((ss = sess_find_locked(s, r->session_id, r->principal)) == NULL ||
	    sess_calls_full_locked(s, ss->pr, ss, msg, sizeof(msg))) {
		pthread_mutex_unlock(&s->mu);
		free(op);
		if (ss == NULL)
			msc_call_fail_as(call, MSC__V1__CODE__NOT_FOUND,
			    MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
		else
			msc_call_fail_reason(call,
			    MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    MSC__V1__REASON__REASON_OVERLOADED, "%s", msg);
		return NULL;
	}
	snprintf(tag, sizeof(tag), "%s", ss->tag);
	ss->lc_running++;               /* lc_end takes them back */
	s->calls++;
	ss->pr->calls++;
	op->pr = ss->pr;
	snprintf(op->principal, sizeof(op->principal), "%s", ss->pr->tag);
	sess_touch_locked(s, ss);
	pthread_mutex_unlock(&s->mu);
	op->s = s;
	op->call = call;
	snprintf(op->session_id, sizeof(op->session_id), "%s", r->session_id);
	snprintf(op->tag, sizeof(op->tag), "%s", tag);
	op->step = MSC_REASON_STEP_OTHER;
	if (r->computer_id[0] != '\0')
		(void)msc_slug_normalize(r->computer_id, op->id);
	op->temporary = r->has_temporary ? r->temporary : true;
	return op;
}

void
sess_lc_end(struct lc_op *op)
{
	struct sess_service *s = op->s;
	struct sess *ss;

	pthread_mutex_lock(&s->mu);
	s->calls--;
	op->pr->calls--;
	if ((ss = msc_map_get(s->sessions, op->session_id)) != NULL)
		ss->lc_running--;
	sess_principal_release_locked(s, op->pr);
	pthread_mutex_unlock(&s->mu);
	free(op);
}

void
sess_lc_relay(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct lc_op *op = arg;

	if (resp == NULL)
		msc_call_fail_reason(op->call, st->code, st->reason, "%s",
		    sess_agent_text(st, op->step, op->tag));
	else {
		msc_call_reply(op->call, resp);
		protobuf_c_message_free_unpacked(resp, NULL);
	}
	sess_lc_end(op);
}

void
sess_lc_call_inventory(struct lc_op *op, const char *method,
    const ProtobufCMessage *req, msc_reply_fn done)
{
	if (msc_client_call(op->s->inventory, &msc__v1__inventory__descriptor,
		method, req, sess_hop_ms(msc_call_remaining_ms(op->call),
		    SESS_STEP_MS), done, op) != 0) {
		msc_call_fail(op->call, MSC__V1__CODE__UNAVAILABLE,
		    "%s", msc_reason_inventory_unreachable());
		sess_lc_end(op);
	}
}

int
sess_lc_own(struct lc_op *op, Msc__V1__Computer *c)
{
	struct sess_service *s = op->s;
	struct sess *ss;
	int driver = c != NULL ? msc_fleet_index(s->fleet, c->driver) : -1;
	int rv = 0;

	pthread_mutex_lock(&s->mu);
	ss = msc_map_get(s->sessions, op->session_id);
	if (ss != NULL)
		ss->creating--;
	if (c != NULL && driver >= 0) {
		if (ss == NULL)
			rv = -ESRCH;
		else if (msc_map_put(ss->owned, c->computer_id,
		    SESS_OWN(c->temporary, driver)) != 0)
			rv = -ENOMEM;
		if (rv != 0)
			sess_release_locked(s, c->computer_id, op->session_id,
			    c->temporary, (size_t)driver, false, NULL);
		else if (ss->sandbox && ss->default_id[0] == '\0')
			/* A handle addresses one computer: its first. */
			snprintf(ss->default_id, sizeof(ss->default_id), "%s",
			    c->computer_id);
	}
	pthread_mutex_unlock(&s->mu);
	return rv;
}
