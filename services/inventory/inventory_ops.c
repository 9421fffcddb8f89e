/*
 * inventory_ops.c - the lifecycle operations (restart, factory reset,
 * delete) and the list merged from the provider and the records in use.
 */
#include "inventory_int.h"

#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"

struct op {
	struct inv_service *s;
	struct msc_call *call;
	char id[MSC_SLUG_MAX + 1];
};

static struct op *
op_new(struct inv_service *s, struct msc_call *call, const char *id)
{
	struct op *op = calloc(1, sizeof(*op));

	if (op == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return NULL;
	}
	op->s = s;
	op->call = call;
	if (id != NULL && msc_slug_normalize(id, op->id) != 0) {
		msc_call_fail(call, MSC__V1__CODE__INVALID_ARGUMENT,
		    MSC_SLUG_ERROR);
		free(op);
		return NULL;
	}
	return op;
}

static void
send_to_driver(struct op *op, const char *method, msc_reply_fn done)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	const ProtobufCMessage *req = op->id[0] ? &ref.base : &e.base;

	ref.computer_id = op->id;
	if (msc_client_call(op->s->driver, &msc__v1__driver__descriptor, method,
		req, INV_OP_TIMEOUT_MS, done, op) != 0) {
		msc_call_fail(op->call, MSC__V1__CODE__UNAVAILABLE,
		    "cannot reach the driver");
		free(op);
	}
}

/* Restart and Reset: the driver answers with the computer as it is now. */
static void
replaced(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct op *op = arg;
	struct record *r;

	if (resp == NULL) {
		msc_call_fail(op->call, st->code, "%s", st->message);
		free(op);
		return;
	}
	msc_call_reply(op->call, resp);
	pthread_mutex_lock(&op->s->mu);
	r = msc_map_get(op->s->records, op->id);
	if (r != NULL && r->ready) {
		if (r->computer != NULL)
			protobuf_c_message_free_unpacked(&r->computer->base,
			    NULL);
		r->computer = (Msc__V1__Computer *)resp;
		resp = NULL;
	}
	pthread_mutex_unlock(&op->s->mu);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	free(op);
}

void
inv_h_restart(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct op *op = op_new(state, call,
	    ((const Msc__V1__ComputerRef *)req)->computer_id);

	if (op != NULL)
		send_to_driver(op, "Restart", replaced);
}

void
inv_h_reset(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct op *op = op_new(state, call,
	    ((const Msc__V1__ComputerRef *)req)->computer_id);

	if (op != NULL)
		send_to_driver(op, "Reset", replaced);
}

struct delete_op {
	struct op op;
	bool had_record;
};

static void
deleted(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct delete_op *d = arg;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	/* A record whose container is already gone is deleted all the same. */
	if (st->code == MSC__V1__CODE__OK ||
	    (st->code == MSC__V1__CODE__NOT_FOUND && d->had_record))
		msc_call_reply(d->op.call, &e.base);
	else
		msc_call_fail(d->op.call, st->code, "%s", st->message);
	free(d);
}

void
inv_h_delete(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct inv_service *s = state;
	struct delete_op *d = calloc(1, sizeof(*d));
	struct record *r;

	if (d == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	d->op.s = s;
	d->op.call = call;
	if (msc_slug_normalize(((const Msc__V1__ComputerRef *)req)->computer_id,
		d->op.id) != 0) {
		msc_call_fail(call, MSC__V1__CODE__INVALID_ARGUMENT,
		    MSC_SLUG_ERROR);
		free(d);
		return;
	}
	pthread_mutex_lock(&s->mu);
	r = msc_map_get(s->records, d->op.id);
	if (r != NULL && r->ready) {
		msc_map_del(s->records, r->id);
		inv_record_free(r);
		d->had_record = true;
	}
	pthread_mutex_unlock(&s->mu);
	send_to_driver(&d->op, "Delete", deleted);
}

/* --- the merged list ---------------------------------------------------- */

static int
by_id(const void *a, const void *b)
{
	const Msc__V1__Computer *const *x = a, *const *y = b;

	return strcmp((*x)->computer_id, (*y)->computer_id);
}

struct merge {
	Msc__V1__ComputerList *provider;
	Msc__V1__Computer **extra;      /* borrowed from records */
	size_t n_extra, cap;
};

static void
add_unlisted(void *arg, const char *key, void *value)
{
	struct merge *m = arg;
	struct record *r = value;

	if (!r->ready || r->computer == NULL || m->n_extra == m->cap)
		return;
	for (size_t i = 0; i < m->provider->n_computers; i++)
		if (strcmp(m->provider->computers[i]->computer_id, key) == 0)
			return;         /* the provider's row wins */
	m->extra[m->n_extra++] = r->computer;
}

static void
listed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct op *op = arg;
	Msc__V1__ComputerList *pl = (Msc__V1__ComputerList *)resp;
	Msc__V1__ComputerList out = MSC__V1__COMPUTER_LIST__INIT;
	struct merge m = { pl, NULL, 0, 0 };

	if (pl == NULL) {
		msc_call_fail(op->call, st->code, "%s", st->message);
		free(op);
		return;
	}
	pthread_mutex_lock(&op->s->mu);
	m.cap = msc_map_len(op->s->records);
	m.extra = calloc(m.cap + 1, sizeof(*m.extra));
	out.computers = calloc(pl->n_computers + m.cap + 1,
	    sizeof(*out.computers));
	if (m.extra != NULL && out.computers != NULL) {
		msc_map_each(op->s->records, add_unlisted, &m);
		memcpy(out.computers, pl->computers,
		    pl->n_computers * sizeof(*out.computers));
		memcpy(out.computers + pl->n_computers, m.extra,
		    m.n_extra * sizeof(*out.computers));
		out.n_computers = pl->n_computers + m.n_extra;
		qsort(out.computers, out.n_computers, sizeof(*out.computers),
		    by_id);
		msc_call_reply(op->call, &out.base);
	} else
		msc_call_fail(op->call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "oom");
	pthread_mutex_unlock(&op->s->mu);
	free(m.extra);
	free(out.computers);
	protobuf_c_message_free_unpacked(resp, NULL);
	free(op);
}

void
inv_h_list(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct op *op = op_new(state, call, NULL);

	(void)req;
	if (op != NULL)
		send_to_driver(op, "List", listed);
}
