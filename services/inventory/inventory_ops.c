/*
 * inventory_ops.c - the lifecycle operations (restart, factory reset,
 * delete) and the list merged from every driver and the records in use.
 * An operation goes to the driver that has the computer; when no record
 * says which, it goes to all of them and the one that has it answers.
 */
#include "inventory_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"
#include "msc_principal.h"

struct op {
	struct inv_service *s;
	struct msc_call *call;
	char id[MSC_SLUG_MAX + 1];
	char owner[64];          /* the session asking (List, operations) */
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];      /* its tag */
	const char *method;
	bool had_record;
	bool count_processes;   /* passed on to the driver */
	/* The request to pass on as it is (the call's, until answered);
	 * NULL: a ComputerRef of id. */
	const ProtobufCMessage *fwd;
	char snapshot_id[64];   /* DeleteSnapshot: for its not-found text */
};

static struct op *
op_new(struct inv_service *s, struct msc_call *call, const char *id,
    const char *method)
{
	struct op *op = calloc(1, sizeof(*op));

	if (op == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return NULL;
	}
	op->s = s;
	op->call = call;
	op->method = method;
	/* The caller's deadline, or ours when it set none. */
	(void)msc_call_bound_ms(call, strcmp(method, "List") == 0 ||
	    strcmp(method, "ListSnapshots") == 0 ? INV_LIST_MS : INV_STEP_MS);
	if (id != NULL && msc_slug_normalize(id, op->id) != 0) {
		msc_call_fail(call, MSC__V1__CODE__INVALID_ARGUMENT,
		    MSC_SLUG_ERROR);
		free(op);
		return NULL;
	}
	return op;
}

/* Keeps the record's computer current after a restart or reset. */
static void
replace_computer(struct op *op, ProtobufCMessage **respp)
{
	struct record *r;

	if (strcmp(op->method, "Restart") != 0 &&
	    strcmp(op->method, "Reset") != 0 &&
	    strcmp(op->method, "Restore") != 0)
		return;
	pthread_mutex_lock(&op->s->mu);
	r = msc_map_get(op->s->records, op->id);
	if (r != NULL && r->ready) {
		if (r->computer != NULL)
			protobuf_c_message_free_unpacked(&r->computer->base,
			    NULL);
		r->computer = (Msc__V1__Computer *)*respp;
		r->computer->processes_ended = 0;       /* this reply's only */
		*respp = NULL;
	}
	pthread_mutex_unlock(&op->s->mu);
}

static void
answer(struct op *op, const struct msc_status *st, ProtobufCMessage *resp)
{
	Msc__V1__Computer e = MSC__V1__COMPUTER__INIT;

	if (resp != NULL) {
		msc_call_reply(op->call, resp);
		replace_computer(op, &resp);
	} else if (st->code == MSC__V1__CODE__NOT_FOUND && op->had_record) {
		/* A record whose container is already gone: deleted anyway. */
		e.computer_id = op->id;
		msc_call_reply(op->call, &e.base);
	}
	else
		msc_call_fail_reason(op->call, st->code, st->reason, "%s",
		    st->message);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	free(op);
}

static void
one_answered(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	answer(arg, st, resp);
}

static void
all_answered(void *arg, struct inv_fan *f)
{
	struct op *op = arg;
	int ok = inv_fan_first_ok(f), bad = inv_fan_first_error(f);
	struct msc_status st = { MSC__V1__CODE__NOT_FOUND, "",
		MSC__V1__REASON__REASON_UNSPECIFIED };
	char msg[256];

	if (ok >= 0) {
		st.code = MSC__V1__CODE__OK;
		if (strcmp(op->method, "Delete") == 0) {
			pthread_mutex_lock(&op->s->mu);
			inv_counts_removed_locked(op->s, ok);
			pthread_mutex_unlock(&op->s->mu);
		}
		answer(op, &st, f->r[ok].resp);
		f->r[ok].resp = NULL;
	} else if (bad >= 0) {
		st.code = f->r[bad].code;
		st.reason = f->r[bad].reason;
		st.message = f->r[bad].msg;
		answer(op, &st, NULL);
	} else {
		if (op->snapshot_id[0] != '\0')
			snprintf(msg, sizeof(msg), "Snapshot '%s' was not "
			    "found.", op->snapshot_id);
		else
			snprintf(msg, sizeof(msg), "Computer '%s' was not "
			    "found.", op->id);
		st.message = msg;
		answer(op, &st, NULL);
	}
	inv_fan_free(f);
}

/* Sends op to the computer's driver, or to every driver. */
static void
route(struct op *op)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	struct msc_client *driver = NULL;
	struct record *r;
	int rv;

	ref.computer_id = op->id;
	ref.count_processes = op->count_processes;
	ref.principal = op->principal;  /* the driver checks it too */
	pthread_mutex_lock(&op->s->mu);
	r = msc_map_get(op->s->records, op->id);
	if (r != NULL && op->owner[0] != '\0' &&
	    inv_held_by_other(r, op->owner)) {
		pthread_mutex_unlock(&op->s->mu);
		msc_call_fail(op->call, MSC__V1__CODE__FAILED_PRECONDITION,
		    "%s", INV_NOT_OWNED_TEXT);
		free(op);
		return;
	}
	if (r != NULL && r->ready && r->computer != NULL &&
	    !msc_principal_may(r->computer->principal, op->principal)) {
		pthread_mutex_unlock(&op->s->mu);
		msc_call_fail(op->call, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC_PRINCIPAL_NOT_YOURS, op->id);
		free(op);
		return;
	}
	if (r != NULL && r->ready)
		driver = inv_driver_of(op->s, r);
	if (r != NULL && r->ready && strcmp(op->method, "Delete") == 0) {
		inv_counts_removed_locked(op->s, r->driver);
		msc_map_del(op->s->records, r->id);
		inv_record_free(r);
		op->had_record = true;
	}
	pthread_mutex_unlock(&op->s->mu);
	if (driver != NULL)
		rv = msc_client_call(driver, &msc__v1__driver__descriptor,
		    op->method, op->fwd != NULL ? op->fwd : &ref.base,
		    msc_call_hop_ms(op->call, 0), one_answered, op);
	else
		rv = inv_fan_out(op->s, op->method, op->fwd != NULL ? op->fwd :
		    &ref.base, msc_call_hop_ms(op->call, 0), all_answered, op);
	if (rv != 0) {
		msc_call_fail(op->call, MSC__V1__CODE__UNAVAILABLE,
		    "the computer's driver cannot be reached; retry later");
		free(op);
	}
}

#define OP_HANDLER(name, method)                                              \
	void name(void *state, struct msc_call *call,                         \
	    const ProtobufCMessage *req)                                      \
	{                                                                     \
		const Msc__V1__ComputerRef *ref = (const void *)req;         \
		struct op *op = op_new(state, call, ref->computer_id, method);\
		if (op != NULL) {                                             \
			snprintf(op->owner, sizeof(op->owner), "%s",          \
			    ref->owner);                                      \
			op->count_processes = ref->count_processes;           \
			snprintf(op->principal, sizeof(op->principal), "%s",  \
			    ref->principal);                                  \
			route(op);                                            \
		}                                                             \
	}
OP_HANDLER(inv_h_restart, "Restart")
OP_HANDLER(inv_h_reset, "Reset")
OP_HANDLER(inv_h_delete, "Delete")

/*
 * Snapshot and Restore go where the computer is, as Restart does (a
 * temporary computer other sessions hold is not this one's); the
 * request goes on as it came.
 */
static void
snapshot_op(void *state, struct msc_call *call, const ProtobufCMessage *req,
    const char *method)
{
	const Msc__V1__SnapshotRequest *r = (const void *)req;
	struct op *op = op_new(state, call, r->computer_id, method);

	if (op == NULL)
		return;
	snprintf(op->owner, sizeof(op->owner), "%s", r->owner);
	/* Another principal's computer is refused as for Restart. */
	snprintf(op->principal, sizeof(op->principal), "%s", r->principal);
	op->fwd = req;
	route(op);
}

void
inv_h_snapshot(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	snapshot_op(state, call, req, "Snapshot");
}

void
inv_h_restore(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	snapshot_op(state, call, req, "Restore");
}

void
inv_h_expose(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	snapshot_op(state, call, req, "ExposePort");
}

/* The snapshot is on one driver: the one that has it answers. */
void
inv_h_snapshot_delete(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	const Msc__V1__SnapshotRequest *r = (const void *)req;
	struct op *op = op_new(state, call, NULL, "DeleteSnapshot");

	if (op == NULL)
		return;
	snprintf(op->snapshot_id, sizeof(op->snapshot_id), "%.40s",
	    r->snapshot_id);
	if (inv_fan_out(op->s, "DeleteSnapshot", req,
	    msc_call_hop_ms(call, 0), all_answered, op) != 0) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		free(op);
	}
}

/* Every driver's snapshots, one list. */
static void
snapshots_listed(void *arg, struct inv_fan *f)
{
	struct op *op = arg;
	Msc__V1__SnapshotList out = MSC__V1__SNAPSHOT_LIST__INIT;
	size_t cap = 0, reached = 0;

	for (size_t i = 0; i < f->n; i++)
		if (f->r[i].resp != NULL) {
			cap += ((Msc__V1__SnapshotList *)f->r[i].resp)
				   ->n_snapshots;
			reached++;
		}
	if (reached == 0 && f->n == 0)
		msc_call_fail(op->call, MSC__V1__CODE__UNAVAILABLE,
		    "no driver is reachable; retry later");
	else if (reached == 0)
		msc_call_fail_reason(op->call, f->r[0].code, f->r[0].reason,
		    "%s", f->r[0].msg);
	else if ((out.snapshots = calloc(cap + 1,
	    sizeof(*out.snapshots))) == NULL)
		msc_call_fail(op->call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "oom");
	else {
		for (size_t i = 0; i < f->n; i++) {
			Msc__V1__SnapshotList *l = (void *)f->r[i].resp;

			for (size_t j = 0; l != NULL && j < l->n_snapshots; j++)
				out.snapshots[out.n_snapshots++] =
				    l->snapshots[j];
		}
		msc_call_reply(op->call, &out.base);
	}
	free(out.snapshots);    /* the rows stay the fan's */
	inv_fan_free(f);
	free(op);
}

void
inv_h_snapshots(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	struct op *op = op_new(state, call, NULL, "ListSnapshots");

	if (op == NULL)
		return;
	if (inv_fan_out(op->s, "ListSnapshots", req, msc_call_hop_ms(call, 0),
	    snapshots_listed, op) != 0) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		free(op);
	}
}

/* --- the merged list ---------------------------------------------------- */

static int
by_id(const void *a, const void *b)
{
	const Msc__V1__Computer *const *x = a, *const *y = b;

	return strcmp((*x)->computer_id, (*y)->computer_id);
}

struct merge {
	Msc__V1__Computer **rows;
	size_t n, cap;
	struct inv_service *s;
	const char *owner;      /* the viewer; "" sees everything */
	const char *principal;  /* the viewer's principal tag */
};

/* Whether the viewer may not see computer c (lock held). */
static bool
hidden(const struct merge *m, const Msc__V1__Computer *c)
{
	const struct record *r;

	if (!msc_principal_may(c->principal, m->principal))
		return true;
	if (m->owner[0] == '\0')
		return false;
	r = msc_map_get(m->s->records, c->computer_id);
	return r != NULL && inv_held_by_other(r, m->owner);
}

static bool
listed_already(const struct merge *m, const char *id)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->rows[i]->computer_id, id) == 0)
			return true;
	return false;
}

static void
add_unlisted(void *arg, const char *key, void *value)
{
	struct merge *m = arg;
	struct record *r = value;

	if (!r->ready || r->computer == NULL || m->n == m->cap ||
	    listed_already(m, key) || hidden(m, r->computer))
		return;         /* a driver's own row wins */
	m->rows[m->n++] = r->computer;
}

static void
listed(void *arg, struct inv_fan *f)
{
	struct op *op = arg;
	Msc__V1__ComputerList out = MSC__V1__COMPUTER_LIST__INIT;
	struct merge m = { NULL, 0, 0, op->s, op->owner, op->principal };
	size_t reached = 0;

	pthread_mutex_lock(&op->s->mu);
	m.cap = msc_map_len(op->s->records);
	for (size_t i = 0; i < f->n; i++)
		if (f->r[i].resp != NULL) {
			m.cap += ((Msc__V1__ComputerList *)f->r[i].resp)
				     ->n_computers;
			reached++;
		}
	m.rows = calloc(m.cap + 1, sizeof(*m.rows));
	if (m.rows != NULL && reached > 0) {
		for (size_t i = 0; i < f->n; i++) {
			Msc__V1__ComputerList *l = (void *)f->r[i].resp;

			for (size_t j = 0; l != NULL && j < l->n_computers; j++)
				if (!hidden(&m, l->computers[j]))
					m.rows[m.n++] = l->computers[j];
		}
		msc_map_each(op->s->records, add_unlisted, &m);
		qsort(m.rows, m.n, sizeof(*m.rows), by_id);
		out.computers = m.rows;
		out.n_computers = m.n;
		msc_call_reply(op->call, &out.base);
	} else if (m.rows != NULL)
		msc_call_fail_reason(op->call, f->r[0].code, f->r[0].reason,
		    "%s", f->r[0].msg);
	else
		msc_call_fail(op->call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "oom");
	pthread_mutex_unlock(&op->s->mu);
	free(m.rows);
	inv_fan_free(f);
	free(op);
}

void
inv_h_list(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__ListRequest *lr = (const void *)req;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	struct op *op = op_new(state, call, NULL, "List");

	if (op == NULL)
		return;
	snprintf(op->owner, sizeof(op->owner), "%s", lr->owner);
	snprintf(op->principal, sizeof(op->principal), "%s", lr->principal);
	if (inv_fan_out(op->s, "List", &e.base, msc_call_hop_ms(call, 0), listed,
	    op) != 0) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		free(op);
	}
}
