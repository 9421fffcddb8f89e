/*
 * inventory_acquire.c - Acquire: a computer found (driver Attach on every
 * driver) or made (driver Create on the least loaded one) once, however
 * many sessions ask for it at the same moment; the callers wait on its
 * record and are answered together (settle). A new random id is drawn
 * again while a record or a driver has it.
 */
#include "inventory_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"
#include "inventory.pb-c.h"
#include "msc_log.h"
#include "msc_map.h"
#include "msc_principal.h"
#include "msc_rpc.h"
#include "msc_slug.h"
#include "msc_snapshot.h"
#include "msc_time.h"

/* Answers an Acquire for record r (locked by the caller's caller). */
static void
answer(struct inv_service *s, struct record *r, struct waiter *w)
{
	if (w->temporary != r->temporary) {
		msc_call_fail(w->call, MSC__V1__CODE__FAILED_PRECONDITION,
		    "Computer '%s' already exists with temporary=%s; requested "
		    "temporary=%s.", r->id, r->temporary ? "true" : "false",
		    w->temporary ? "true" : "false");
		return;
	}
	if (!msc_principal_may(r->computer->principal, w->principal)) {
		msc_call_fail(w->call, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC_PRINCIPAL_NOT_YOURS, r->id);
		return;
	}
	if (r->temporary && r->n_owners > 0 && !inv_owner_has(r, w->owner) &&
	    (r->exclusive || w->exclusive)) {
		msc_call_fail(w->call, MSC__V1__CODE__FAILED_PRECONDITION, "%s",
		    INV_HELD_TEXT);
		return;
	}
	if (inv_owner_add(r, w->owner) != 0) {
		msc_call_fail(w->call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "out of memory");
		return;
	}
	if (w->exclusive && r->temporary)
		r->exclusive = true;
	/* The session routes commands by the driver's identity. */
	Msc__V1__Computer c = *r->computer;

	c.driver = (char *)msc_fleet_id(s->fleet, (size_t)r->driver);
	msc_call_reply(w->call, &c.base);
}

/* Ends the driver work on r: answers every waiter, drops r if unowned. */
static void
settle(struct inv_service *s, struct record *r, const struct msc_status *st)
{
	struct waiter *w;

	pthread_mutex_lock(&s->mu);
	r->n_waiters = 0;
	r->ready = true;
	while ((w = SLIST_FIRST(&r->waiters)) != NULL) {
		SLIST_REMOVE_HEAD(&r->waiters, link);
		if (st->code != MSC__V1__CODE__OK)
			msc_call_fail_reason(w->call, st->code, st->reason,
			    "%s", st->message);
		else
			answer(s, r, w);
		free(w);
	}
	if (r->n_owners == 0) {
		msc_map_del(s->records, r->id);
		inv_record_free(r);
	}
	pthread_mutex_unlock(&s->mu);
}

struct op {
	struct inv_service *s;
	struct record *r;       /* not ready: this op's alone (see int.h) */
	bool temporary;         /* the mode of the first caller */
	int driver;             /* the driver that has or makes it */
	bool creating;          /* counted in s->creating[driver] */
	int redraws_left;       /* a random id: new draws if a driver has it */
	/* The first caller's principal tag: a computer it makes records it,
	 * and Attach refuses another principal's before starting it. */
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];
	Msc__V1__NetworkPolicy *network;        /* the first caller's, owned */
	char from_snapshot[MSC_SNAPSHOT_ID_LEN + 1];  /* "": the image */
	/* The first caller's deadline (msc_now_ms): the Attach and the
	 * Create it makes share it; callers that join later wait for it. */
	uint64_t deadline_ms;
};

/* The timeout of op's next driver call: what its first caller has left. */
static int
op_hop_ms(const struct op *op)
{
	uint64_t now = msc_now_ms();

	return msc_hop_ms(op->deadline_ms > now ?
	    (int)(op->deadline_ms - now) : 0, 0);
}

/* A copy of the caller's policy (it may go before the create), or NULL. */
static Msc__V1__NetworkPolicy *
policy_copy(const Msc__V1__NetworkPolicy *np)
{
	Msc__V1__NetworkPolicy *out;
	uint8_t *buf;
	size_t n;

	if (np == NULL || (buf = malloc((n =
	    msc__v1__network_policy__get_packed_size(np)) + 1)) == NULL)
		return NULL;
	msc__v1__network_policy__pack(np, buf);
	out = msc__v1__network_policy__unpack(NULL, n, buf);
	free(buf);
	return out;
}

static void
op_free(struct op *op)
{
	if (op->network != NULL)
		msc__v1__network_policy__free_unpacked(op->network, NULL);
	free(op);
}

/*
 * Draws a random id that no record holds into out (lock held). The
 * reference drew without looking: with a few thousand computers two
 * sessions met on one id (about 9.4 million ids), and the second shared
 * the first one's temporary computer. Returns false when every draw was
 * taken (never seen: a full id space).
 */
static bool
draw_free_id_locked(struct inv_service *s, char out[MSC_SLUG_MAX + 1])
{
	for (int i = 0; i < INV_ID_DRAWS; i++) {
		msc_slug_random(out);
		if (msc_map_get(s->records, out) == NULL)
			return true;
	}
	return false;
}

/*
 * A driver already has the random id op drew (a permanent computer with a
 * random name that no session holds): moves op's record to a new id, if
 * no one else waits for the old one. True when op should create again.
 */
static bool
redraw_taken_id(struct op *op)
{
	struct inv_service *s = op->s;
	struct record *r = op->r;
	char id[MSC_SLUG_MAX + 1];
	bool moved = false;

	if (op->redraws_left <= 0)
		return false;
	op->redraws_left--;
	pthread_mutex_lock(&s->mu);
	if (r->n_waiters == 1 && draw_free_id_locked(s, id) &&
	    msc_map_put(s->records, id, r) == 0) {
		(void)msc_map_del(s->records, r->id);
		strcpy(r->id, id);
		moved = true;
	}
	pthread_mutex_unlock(&s->mu);
	return moved;
}

/*
 * A temporary computer's Create that passed its deadline here may still
 * end on the driver: nobody would hold or release what it makes. A Stop
 * queued behind it on the computer's lane removes it (nothing, if the
 * create failed); its outcome is the driver's business.
 */
static void
remove_late(struct op *op)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;

	ref.computer_id = op->r->id;
	ref.principal = op->principal;
	if (msc_client_call(msc_fleet_client(op->s->fleet, (size_t)op->driver),
		&msc__v1__driver__descriptor, "Stop", &ref.base,
		INV_STOP_TIMEOUT_MS, msc_reply_ignore, NULL) != 0)
		msc_log_warn("inventory: computer %s may outlive its late "
		    "creation: its driver cannot be reached", op->r->id);
}

static void create_on(struct op *op, int i);

static void
created(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct op *op = arg;

	if (op->creating) {
		pthread_mutex_lock(&op->s->mu);
		op->s->creating[op->driver]--;
		pthread_mutex_unlock(&op->s->mu);
		inv_counts_created(op->s, op->driver, st->code);
	}
	if (st->code == MSC__V1__CODE__DEADLINE_EXCEEDED && op->temporary &&
	    op->creating)
		remove_late(op);
	if (st->code == MSC__V1__CODE__ALREADY_EXISTS && redraw_taken_id(op)) {
		create_on(op, op->driver);
		return;
	}
	if (resp != NULL) {
		op->r->computer = (Msc__V1__Computer *)resp;
		op->r->temporary = op->r->computer->temporary;
		op->r->driver = op->driver;
	}
	settle(op->s, op->r, st);
	op_free(op);
}

static void
fail_op_reason(struct op *op, Msc__V1__Code code, Msc__V1__Reason reason,
    const char *msg)
{
	struct msc_status st = { code, msg, reason };

	settle(op->s, op->r, &st);
	op_free(op);
}

static void
fail_op(struct op *op, Msc__V1__Code code, const char *msg)
{
	fail_op_reason(op, code, MSC__V1__REASON__REASON_UNSPECIFIED, msg);
}

/* Creates the computer on driver i, in the mode of the first caller. */
static void
create_on(struct op *op, int i)
{
	Msc__V1__CreateRequest cr = MSC__V1__CREATE_REQUEST__INIT;
	struct inv_service *s = op->s;

	cr.computer_id = op->r->id;
	/* Not r->waiters: later callers join that list under the lock. */
	cr.temporary = op->temporary;
	cr.network = op->network;
	cr.from_snapshot = op->from_snapshot;
	cr.principal = op->principal;
	op->driver = i;
	op->creating = true;
	pthread_mutex_lock(&s->mu);
	s->creating[i]++;
	pthread_mutex_unlock(&s->mu);
	if (msc_client_call(msc_fleet_client(s->fleet, (size_t)i),
		&msc__v1__driver__descriptor, "Create", &cr.base,
		op_hop_ms(op), created, op) != 0) {
		pthread_mutex_lock(&s->mu);
		s->creating[i]--;
		pthread_mutex_unlock(&s->mu);
		fail_op(op, MSC__V1__CODE__UNAVAILABLE,
		    "the chosen driver cannot be reached; retry");
	}
}

/* Placement: the reachable driver with the fewest computers. */
static void
placed(void *arg, int driver)
{
	struct op *op = arg;

	if (driver < 0) {
		fail_op(op, MSC__V1__CODE__UNAVAILABLE,
		    "no driver can be reached; retry later");
		return;
	}
	create_on(op, driver);
}

/* Creates the computer on the least loaded driver. */
static void
place(struct op *op)
{
	if (msc_fleet_size(op->s->fleet) == 1) {
		create_on(op, 0);
		return;
	}
	inv_counts_pick(op->s, placed, op);
}

static void
attached(void *arg, struct inv_fan *f)
{
	struct op *op = arg;
	int ok = inv_fan_first_ok(f), bad = inv_fan_first_error(f);
	char msg[768];

	if (ok >= 0) {
		/* Found: it lives there. */
		struct msc_status st = { MSC__V1__CODE__OK, "",
			MSC__V1__REASON__REASON_UNSPECIFIED };

		op->driver = ok;
		created(op, &st, f->r[ok].resp);
		f->r[ok].resp = NULL;
		inv_fan_free(f);
		return;
	}
	if (bad >= 0) {
		/*
		 * A driver that cannot answer may have it: making a second
		 * one elsewhere would split the computer in two.
		 */
		Msc__V1__Reason reason = f->r[bad].reason;

		if (reason != MSC__V1__REASON__REASON_PROVIDER &&
		    (f->r[bad].code == MSC__V1__CODE__UNAVAILABLE ||
		    f->r[bad].code == MSC__V1__CODE__DEADLINE_EXCEEDED))
			snprintf(msg, sizeof(msg), "Computer '%s' is unavailable: "
			    "driver '%s' cannot be reached (%s). Retry when it is "
			    "back.", op->r->id, msc_fleet_id(op->s->fleet,
						    (size_t)bad),
			    f->r[bad].msg);
		else
			snprintf(msg, sizeof(msg), "%s", f->r[bad].msg);
		Msc__V1__Code code = f->r[bad].code;

		inv_fan_free(f);
		fail_op_reason(op, code, reason, msg);
		return;
	}
	inv_fan_free(f);
	place(op);
}

void
inv_h_acquire(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__AcquireRequest *a = (const void *)req;
	struct inv_service *s = state;
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	char id[MSC_SLUG_MAX + 1];
	struct record *r;
	struct waiter *w;
	struct op *op;

	/* Found on whichever driver has it, else placed. */

	(void)msc_call_bound_ms(call, INV_STEP_MS);
	bool fresh = a->computer_id[0] == '\0';

	if (a->from_snapshot[0] != '\0' && (!fresh ||
	    !msc_snapshot_id_valid(a->from_snapshot) ||
	    strlen(a->principal) > 64)) {
		/* A snapshot makes a new computer, under a new id. */
		msc_call_fail(call, MSC__V1__CODE__INVALID_ARGUMENT, "%s",
		    fresh ? MSC_SNAPSHOT_ID_ERROR : "from_snapshot makes a new "
		    "computer: leave computer_id out.");
		return;
	}
	if (!fresh && msc_slug_normalize(a->computer_id, id) != 0) {
		msc_call_fail(call, MSC__V1__CODE__INVALID_ARGUMENT,
		    MSC_SLUG_ERROR);
		return;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	w->call = call;
	w->temporary = a->temporary;
	w->exclusive = a->exclusive;
	snprintf(w->owner, sizeof(w->owner), "%s", a->owner);
	snprintf(w->principal, sizeof(w->principal), "%s", a->principal);
	pthread_mutex_lock(&s->mu);
	if (fresh && !draw_free_id_locked(s, id)) {
		pthread_mutex_unlock(&s->mu);
		free(w);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "no free random computer id; retry");
		return;
	}
	r = msc_map_get(s->records, id);
	if (r != NULL && r->ready) {
		if (w->temporary != r->temporary)
			msc_call_fail(call, MSC__V1__CODE__FAILED_PRECONDITION,
			    "Computer '%s' already exists with temporary=%s; "
			    "lifecycle mode cannot be changed without a factory "
			    "reset or delete.", id,
			    r->temporary ? "true" : "false");
		else
			answer(s, r, w);
		pthread_mutex_unlock(&s->mu);
		free(w);
		return;
	}
	if (r != NULL) {
		if (r->n_waiters >= INV_MAX_WAITERS) {
			pthread_mutex_unlock(&s->mu);
			free(w);
			msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
			    "too many callers wait for computer '%s'", id);
			return;
		}
		SLIST_INSERT_HEAD(&r->waiters, w, link);
		r->n_waiters++;
		pthread_mutex_unlock(&s->mu);
		return;
	}
	r = calloc(1, sizeof(*r));
	op = calloc(1, sizeof(*op));
	if (r == NULL || op == NULL || msc_map_put(s->records, id, r) != 0) {
		pthread_mutex_unlock(&s->mu);
		free(r);
		free(op);
		free(w);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	strcpy(r->id, id);
	SLIST_INIT(&r->waiters);
	SLIST_INSERT_HEAD(&r->waiters, w, link);
	r->n_waiters = 1;
	op->s = s;
	op->r = r;
	op->deadline_ms = msc_now_ms() + (uint64_t)msc_call_remaining_ms(call);
	op->temporary = w->temporary;
	op->redraws_left = fresh ? INV_ID_DRAWS : 0;
	op->network = policy_copy(a->network);
	snprintf(op->from_snapshot, sizeof(op->from_snapshot), "%s",
	    a->from_snapshot);
	snprintf(op->principal, sizeof(op->principal), "%s", w->principal);
	pthread_mutex_unlock(&s->mu);
	ref.computer_id = r->id;
	ref.principal = op->principal;
	if (fresh) {
		/* No record holds the new random id, and a driver that has
		 * it answers ALREADY_EXISTS to the create: place it now. */
		place(op);
		return;
	}
	if (inv_fan_out(s, "Attach", &ref.base, op_hop_ms(op), attached,
		op) != 0)
		fail_op(op, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
}
