/*
 * session_lifecycle.c - the lifecycle tools as seen from a session:
 * create (attach or make, this session becomes an owner), list, restart,
 * factory reset and delete, each passed on to the inventory as a
 * lifecycle call (session_lc_op.c).
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "inventory.pb-c.h"

/* The inventory's list, with the session's active computer. */
static void
listed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct lc_op *op = arg;
	struct sess *ss;
	Msc__V1__ComputerList out;

	if (resp == NULL) {
		sess_lc_relay(arg, st, resp);
		return;
	}
	pthread_mutex_lock(&op->s->mu);
	ss = msc_map_get(op->s->sessions, op->session_id);
	if (ss != NULL)
		snprintf(op->id, sizeof(op->id), "%s", ss->default_id);
	pthread_mutex_unlock(&op->s->mu);
	/* A shallow copy: the id is op's, the rows stay resp's. */
	out = *(Msc__V1__ComputerList *)resp;
	out.active_computer_id = op->id;
	msc_call_reply(op->call, &out.base);
	protobuf_c_message_free_unpacked(resp, NULL);
	sess_lc_end(op);
}

/*
 * The inventory made this session an owner: the session records it, or,
 * when it ended meanwhile, gives the computer back at once (else the
 * inventory would keep it for an owner that is gone).
 */
static void
created(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct lc_op *op = arg;
	int rv = sess_lc_own(op, (Msc__V1__Computer *)resp);

	if (rv != 0) {
		protobuf_c_message_free_unpacked(resp, NULL);
		if (rv == -ESRCH)
			msc_call_fail(op->call,
			    MSC__V1__CODE__FAILED_PRECONDITION,
			    "the session ended");
		else
			msc_call_fail(op->call,
			    MSC__V1__CODE__RESOURCE_EXHAUSTED, "out of memory");
		sess_lc_end(op);
		return;
	}
	sess_lc_relay(arg, st, resp);
}

void
sess_h_create(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	Msc__V1__AcquireRequest ar = MSC__V1__ACQUIRE_REQUEST__INIT;
	struct lc_op *op = sess_lc_begin(s, call, (const void *)req, true);
	struct sess *ss;
	Msc__V1__Code code = MSC__V1__CODE__FAILED_PRECONDITION;
	void *mode = NULL;
	char msg[512];

	if (op == NULL)
		return;
	op->step = MSC_REASON_STEP_CREATE;
	if (sess_snapshot_create_refused(op, (const void *)req))
		return;
	pthread_mutex_lock(&s->mu);
	ss = msc_map_get(s->sessions, op->session_id);
	if (ss != NULL && op->id[0] != '\0')
		mode = msc_map_get(ss->owned, op->id);
	if (mode != NULL && SESS_OWN_TEMPORARY(mode) != op->temporary)
		snprintf(msg, sizeof(msg), "Computer '%s' is already attached "
		    "with temporary=%s.", op->id,
		    SESS_OWN_TEMPORARY(mode) ? "true" : "false");
	else if (ss != NULL && mode == NULL &&
	    sess_computers_full_locked(s, ss, msg, sizeof(msg)))
		code = MSC__V1__CODE__RESOURCE_EXHAUSTED;
	else {
		code = MSC__V1__CODE__OK;
		if (ss != NULL)
			ss->creating++;         /* created() takes it back */
	}
	pthread_mutex_unlock(&s->mu);
	if (code != MSC__V1__CODE__OK) {
		msc_call_fail(call, code, "%s", msg);
		sess_lc_end(op);
		return;
	}
	ar.computer_id = op->id;      /* empty: a new random slug */
	ar.temporary = op->temporary;
	ar.network = ((const Msc__V1__ComputerRequest *)req)->network;
	ar.owner = op->session_id;
	ar.principal = op->principal;
	ar.exclusive = true;
	ar.from_snapshot = ((const Msc__V1__ComputerRequest *)req)->from_snapshot;
	if (msc_client_call(s->inventory, &msc__v1__inventory__descriptor,
		"Acquire", &ar.base, sess_hop_ms(msc_call_remaining_ms(op->call),
		    SESS_STEP_MS), created, op) != 0) {
		struct msc_status st = { MSC__V1__CODE__UNAVAILABLE,
			msc_reason_inventory_unreachable(),
			MSC__V1__REASON__REASON_UNSPECIFIED };

		created(op, &st, NULL);
	}
}

void
sess_h_list(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	Msc__V1__ComputerRequest r = MSC__V1__COMPUTER_REQUEST__INIT;
	Msc__V1__ListRequest lr = MSC__V1__LIST_REQUEST__INIT;
	struct lc_op *op;

	r.session_id = ((const Msc__V1__SessionRef *)req)->session_id;
	r.principal = ((const Msc__V1__SessionRef *)req)->principal;
	lr.owner = r.session_id;
	if ((op = sess_lc_begin(state, call, &r, true)) == NULL)
		return;
	lr.principal = op->principal;
	sess_lc_call_inventory(op, "List", &lr.base, listed);
}

static void
by_ref(void *state, struct msc_call *call, const ProtobufCMessage *req,
    const char *method)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	struct lc_op *op = sess_lc_begin(state, call, (const void *)req, false);

	if (op == NULL)
		return;
	ref.computer_id = op->id;
	ref.owner = ((const Msc__V1__ComputerRequest *)req)->session_id;
	ref.count_processes = ((const Msc__V1__ComputerRequest *)req)->
	    count_processes;
	ref.principal = op->principal;
	sess_lc_call_inventory(op, method, &ref.base, sess_lc_relay);
}

void
sess_h_restart(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	by_ref(state, call, req, "Restart");
}

void
sess_h_reset(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	by_ref(state, call, req, "Reset");
}

void
sess_h_delete(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	const Msc__V1__ComputerRequest *r = (const void *)req;
	char id[MSC_SLUG_MAX + 1];
	struct sess *ss;

	/* This session forgets the computer, whatever the provider says. */
	if (msc_slug_normalize(r->computer_id, id) == 0) {
		pthread_mutex_lock(&s->mu);
		ss = sess_find_locked(s, r->session_id, r->principal);
		if (ss != NULL) {
			msc_map_del(ss->owned, id);
			if (strcmp(ss->default_id, id) == 0)
				ss->default_id[0] = '\0';
		}
		pthread_mutex_unlock(&s->mu);
	}
	by_ref(state, call, req, "Delete");
}
