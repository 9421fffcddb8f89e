/*
 * session_snapshots.c - the snapshot tools as seen from a session (issue
 * 31): computer_snapshot, computer_restore, snapshot_list and
 * snapshot_delete, passed on to the inventory with the caller's
 * principal (whose snapshots they are) and session (whose computers);
 * and computer_create's from_snapshot and count, the forks made in
 * parallel (the drivers' creation limit bounds them), all or none.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"
#include "msc_snapshot.h"

/* The most forks one call makes (also bounded by the session's share). */
#define SESS_FORKS_MAX 64

static bool
refuse(struct lc_op *op, Msc__V1__Code code, const char *msg)
{
	msc_call_fail(op->call, code, "%s", msg);
	sess_lc_end(op);
	return true;
}

bool
sess_snapshot_create_refused(struct lc_op *op,
    const Msc__V1__ComputerRequest *r)
{
	if (r->from_snapshot[0] == '\0')
		return false;
	if (!msc_snapshot_id_valid(r->from_snapshot))
		return refuse(op, MSC__V1__CODE__INVALID_ARGUMENT,
		    MSC_SNAPSHOT_ID_ERROR);
	if (op->id[0] != '\0')
		return refuse(op, MSC__V1__CODE__INVALID_ARGUMENT,
		    "from_snapshot makes a new computer: leave computer_id "
		    "out.");
	return false;
}

/* A SnapshotRequest of op's session and principal (its tag). */
static void
snap_request(struct lc_op *op, const Msc__V1__ComputerRequest *r,
    Msc__V1__SnapshotRequest *q)
{
	q->computer_id = op->id;
	q->snapshot_id = r->snapshot_id;
	q->name = r->name;
	q->principal = op->principal;
	q->owner = op->session_id;
	q->port = r->port;
	q->unexpose = r->unexpose;
}

/* What a snapshot call checks before it goes on. */
enum snap_check { SNAP_CHECK_NONE, SNAP_CHECK_NAME, SNAP_CHECK_ID };

/*
 * One snapshot call: begun on the request's computer (on_computer) or on
 * none, its name or snapshot_id checked, then passed to the inventory's
 * `method`, whose answer is relayed as it is.
 */
static void
snap_call(void *state, struct msc_call *call, const ProtobufCMessage *req,
    const char *method, bool on_computer, enum snap_check check)
{
	const Msc__V1__ComputerRequest *r = (const void *)req;
	Msc__V1__SnapshotRequest q = MSC__V1__SNAPSHOT_REQUEST__INIT;
	Msc__V1__ComputerRequest only = *r;
	struct lc_op *op;

	if (!on_computer)
		only.computer_id = (char *)"";  /* names none */
	if ((op = sess_lc_begin(state, call, &only, !on_computer)) == NULL)
		return;
	if (check == SNAP_CHECK_NAME) {
		op->step = MSC_REASON_STEP_OTHER;
		if (!msc_snapshot_name_valid(r->name)) {
			refuse(op, MSC__V1__CODE__INVALID_ARGUMENT,
			    MSC_SNAPSHOT_NAME_ERROR);
			return;
		}
	}
	if (check == SNAP_CHECK_ID && !msc_snapshot_id_valid(r->snapshot_id)) {
		refuse(op, MSC__V1__CODE__INVALID_ARGUMENT,
		    MSC_SNAPSHOT_ID_ERROR);
		return;
	}
	snap_request(op, r, &q);
	sess_lc_call_inventory(op, method, &q.base, sess_lc_relay);
}

void
sess_h_snapshot(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	snap_call(state, call, req, "Snapshot", true, SNAP_CHECK_NAME);
}

void
sess_h_restore(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	snap_call(state, call, req, "Restore", true, SNAP_CHECK_ID);
}

void
sess_h_snapshots(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	snap_call(state, call, req, "ListSnapshots", false, SNAP_CHECK_NONE);
}

void
sess_h_snapshot_delete(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	snap_call(state, call, req, "DeleteSnapshot", false, SNAP_CHECK_ID);
}

/* Preview URLs (issue 30): on the computer, as a snapshot; the driver
 * checks the port. */
void
sess_h_expose(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	snap_call(state, call, req, "ExposePort", true, SNAP_CHECK_NONE);
}

/* --- forks ------------------------------------------------------------- */

struct fork;

struct fork_one {
	struct fork *f;
	unsigned i;
};

struct fork {
	struct lc_op *op;
	pthread_mutex_t mu;
	unsigned n, left;
	bool failed;
	Msc__V1__Code code;
	Msc__V1__Reason reason;
	char msg[512];
	Msc__V1__Computer **made;       /* n slots; NULL: not made */
	struct fork_one *ones;          /* n: each Acquire's callback arg */
};

/* A fork that failed: the others go again (all or none). */
static void
undo(struct fork *f)
{
	struct sess_service *s = f->op->s;
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;

	for (unsigned i = 0; i < f->n; i++) {
		Msc__V1__Computer *c = f->made[i];
		struct sess *ss;

		if (c == NULL)
			continue;
		pthread_mutex_lock(&s->mu);
		if ((ss = msc_map_get(s->sessions, f->op->session_id)) != NULL) {
			msc_map_del(ss->owned, c->computer_id);
			if (strcmp(ss->default_id, c->computer_id) == 0)
				ss->default_id[0] = '\0';
		}
		pthread_mutex_unlock(&s->mu);
		ref.computer_id = c->computer_id;
		ref.owner = f->op->session_id;
		(void)msc_client_call(s->inventory,
		    &msc__v1__inventory__descriptor, "Delete", &ref.base,
		    SESS_STEP_MS, msc_reply_ignore, NULL);
	}
}

static void
fork_end(struct fork *f)
{
	Msc__V1__ComputerList l = MSC__V1__COMPUTER_LIST__INIT;

	if (f->failed) {
		undo(f);
		msc_call_fail_reason(f->op->call, f->code, f->reason, "%s",
		    f->msg);
	} else {
		l.computers = f->made;
		l.n_computers = f->n;
		msc_call_reply(f->op->call, &l.base);
	}
	for (unsigned i = 0; i < f->n; i++)
		if (f->made[i] != NULL)
			protobuf_c_message_free_unpacked(&f->made[i]->base,
			    NULL);
	sess_lc_end(f->op);
	pthread_mutex_destroy(&f->mu);
	free(f->made);
	free(f->ones);
	free(f);
}

static void
forked(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct fork_one *one = arg;
	struct fork *f = one->f;
	int rv = sess_lc_own(f->op, (Msc__V1__Computer *)resp);
	bool last;

	pthread_mutex_lock(&f->mu);
	if (resp != NULL && rv == 0)
		f->made[one->i] = (Msc__V1__Computer *)resp;
	else if (!f->failed) {
		f->failed = true;
		f->code = resp == NULL ? st->code : rv == -ESRCH ?
		    MSC__V1__CODE__FAILED_PRECONDITION :
		    MSC__V1__CODE__RESOURCE_EXHAUSTED;
		f->reason = resp == NULL ? st->reason :
		    MSC__V1__REASON__REASON_UNSPECIFIED;
		snprintf(f->msg, sizeof(f->msg), "%s", resp == NULL ?
		    sess_agent_text(st, MSC_REASON_STEP_CREATE, f->op->tag) :
		    rv == -ESRCH ? "the session ended" : "out of memory");
	}
	if (resp != NULL && rv != 0)
		protobuf_c_message_free_unpacked(resp, NULL);
	last = --f->left == 0;
	pthread_mutex_unlock(&f->mu);
	if (last)
		fork_end(f);
}

void
sess_h_fork(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	const Msc__V1__ComputerRequest *r = (const void *)req;
	Msc__V1__AcquireRequest ar = MSC__V1__ACQUIRE_REQUEST__INIT;
	struct lc_op *op = sess_lc_begin(s, call, r, true);
	struct fork *f;
	struct sess *ss;
	char msg[512] = "";
	long max = s->cfg->max_session_computers;

	if (op == NULL)
		return;
	op->step = MSC_REASON_STEP_CREATE;
	if (r->count < 1 || r->count > SESS_FORKS_MAX) {
		snprintf(msg, sizeof(msg), "count must be 1 to %d.",
		    SESS_FORKS_MAX);
		refuse(op, MSC__V1__CODE__INVALID_ARGUMENT, msg);
		return;
	}
	if (r->from_snapshot[0] == '\0') {
		refuse(op, MSC__V1__CODE__INVALID_ARGUMENT, "count makes copies "
		    "of a snapshot: pass from_snapshot.");
		return;
	}
	if (sess_snapshot_create_refused(op, r))
		return;
	if ((f = calloc(1, sizeof(*f))) == NULL ||
	    (f->made = calloc(r->count, sizeof(*f->made))) == NULL ||
	    (f->ones = calloc(r->count, sizeof(*f->ones))) == NULL) {
		if (f != NULL)
			free(f->made);
		free(f);
		refuse(op, MSC__V1__CODE__RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	pthread_mutex_lock(&s->mu);
	ss = msc_map_get(s->sessions, op->session_id);
	if (ss != NULL && (long)msc_map_len(ss->owned) + ss->creating +
	    (long)r->count > max)
		snprintf(msg, sizeof(msg), "This session holds %zu computers; "
		    "%u more would pass its limit of %ld "
		    "(--max-session-computers). Ask for fewer, or remove some "
		    "with computer_delete.", msc_map_len(ss->owned) +
		    (size_t)ss->creating, r->count, max);
	else if (ss != NULL)
		ss->creating += (int)r->count;  /* each forked() takes one */
	pthread_mutex_unlock(&s->mu);
	if (msg[0] != '\0' || ss == NULL) {
		free(f->made);
		free(f->ones);
		free(f);
		refuse(op, msg[0] != '\0' ? MSC__V1__CODE__RESOURCE_EXHAUSTED :
		    MSC__V1__CODE__FAILED_PRECONDITION, msg[0] != '\0' ? msg :
		    "the session ended");
		return;
	}
	pthread_mutex_init(&f->mu, NULL);
	f->op = op;
	f->n = f->left = r->count;
	ar.temporary = op->temporary;
	ar.network = r->network;
	ar.owner = op->session_id;
	ar.exclusive = true;
	ar.from_snapshot = r->from_snapshot;
	ar.principal = op->principal;
	/* The last answer may end the call (and free r) at once. */
	for (unsigned i = 0, n = f->n; i < n; i++) {
		struct msc_status st = { MSC__V1__CODE__UNAVAILABLE,
			msc_reason_inventory_unreachable(),
			MSC__V1__REASON__REASON_UNSPECIFIED };

		f->ones[i].f = f;
		f->ones[i].i = i;
		if (msc_client_call(s->inventory,
		    &msc__v1__inventory__descriptor, "Acquire", &ar.base,
		    sess_hop_ms(msc_call_remaining_ms(op->call), SESS_STEP_MS),
		    forked, &f->ones[i]) != 0)
			forked(&f->ones[i], &st, NULL);
	}
}
