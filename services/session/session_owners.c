/*
 * session_owners.c - what the session service tells the inventory about
 * the computers its sessions hold. Releases are sent until the inventory
 * confirms them (a loaded engine may take minutes to remove a computer;
 * the Close that ended the session does not wait that long). Claims are
 * sent after each new connection to the inventory, so that an inventory
 * that restarted knows again who holds which computer.
 */
#include "session_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"
#include "msc_log.h"

#define SESS_RELEASE_MS 600000          /* removal on a loaded engine */
#define SESS_RELEASE_TRIES 10           /* about 6 minutes of retries */
#define SESS_RELEASE_DELAY_MAX_MS 120000
#define SESS_OWED_MAX 100000
#define SESS_CLOSE_WAIT_MS 5000
#define SESS_CLAIM_BATCH 1024
#define SESS_CLAIM_MS 30000

/* An ended session waits (a while) for one Release per owned computer. */
struct closing {
	struct sess_service *s;
	struct msc_call *call;          /* NULL once answered */
	size_t left;
	bool failed;                    /* a release's first try failed */
	uint64_t started_ms;
	LIST_ENTRY(closing) link;       /* in s->closings while call is set */
};

/* One Release the inventory has not confirmed yet. */
struct sess_release {
	struct sess_service *s;
	struct closing *c;              /* counts its first try, or NULL */
	char id[MSC_SLUG_MAX + 1];
	char owner[SESS_ID_LEN + 1];
	bool temporary;
	bool dead;
	size_t driver;
	int tries;
	uint64_t due_ms;                /* when it goes again */
	LIST_ENTRY(sess_release) link;  /* in s->owed, or a due list */
};

/* Answers c's Close: the session has ended, whatever its releases do. */
static void
closing_answer(struct closing *c)
{
	Msc__V1__CloseReply r = MSC__V1__CLOSE_REPLY__INIT;

	if (c->call == NULL)
		return;
	r.cleanup_complete = c->left == 0 && !c->failed;
	msc_call_reply(c->call, &r.base);
	c->call = NULL;
	LIST_REMOVE(c, link);
}

struct closing *
sess_closing_new(struct sess_service *s, struct msc_call *call, size_t n)
{
	struct closing *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->s = s;
	c->call = call;
	c->left = n + 1;        /* one extra step: the caller's */
	c->started_ms = msc_now_ms();
	if (call != NULL)
		LIST_INSERT_HEAD(&s->closings, c, link);
	return c;
}

void
sess_closing_step_locked(struct closing *c)
{
	if (--c->left > 0)
		return;
	closing_answer(c);
	free(c);
}

static void release_send(struct sess_release *rel);

/* The delay before try n + 1: 1 s, 2 s, 4 s, ... up to two minutes. */
static uint64_t
retry_delay_ms(int n)
{
	uint64_t ms = 1000ull << (n < 8 ? n - 1 : 7);

	return ms < SESS_RELEASE_DELAY_MAX_MS ? ms : SESS_RELEASE_DELAY_MAX_MS;
}

/* A try failed (lock held): owed again later, or given up. */
static void
release_failed(struct sess_release *rel, const char *why)
{
	struct sess_service *s = rel->s;

	if (rel->c != NULL) {
		rel->c->failed = true;
		sess_closing_step_locked(rel->c);
		rel->c = NULL;
	}
	if (s->stopping || rel->tries >= SESS_RELEASE_TRIES ||
	    s->n_owed >= SESS_OWED_MAX) {
		msc_log_err("session: computer %s could not be released after "
			    "%d tries: %s", rel->id, rel->tries, why);
		free(rel);
		return;
	}
	rel->due_ms = msc_now_ms() + retry_delay_ms(rel->tries);
	msc_log_warn("session: releasing computer %s failed (%s); trying "
		     "again in %llu s", rel->id, why,
	    (unsigned long long)((rel->due_ms - msc_now_ms()) / 1000));
	LIST_INSERT_HEAD(&s->owed, rel, link);
	s->n_owed++;
}

static void
released(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct sess_release *rel = arg;
	struct sess_service *s = rel->s;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&s->mu);
	if (--s->releasing == 0)
		pthread_cond_broadcast(&s->cv);
	if (st->code != MSC__V1__CODE__OK)
		release_failed(rel, st->message);
	else {
		if (rel->c != NULL)
			sess_closing_step_locked(rel->c);
		free(rel);
	}
	pthread_mutex_unlock(&s->mu);
}

/* Sends one try of rel (lock held). */
static void
release_send(struct sess_release *rel)
{
	struct sess_service *s = rel->s;
	Msc__V1__ReleaseRequest rr = MSC__V1__RELEASE_REQUEST__INIT;

	rr.computer_id = rel->id;
	rr.owner = rel->owner;
	rr.dead = rel->dead;
	rr.temporary = rel->temporary;
	rr.driver = (char *)msc_fleet_id(s->fleet, rel->driver);
	rel->tries++;
	if (msc_client_call(s->inventory, &msc__v1__inventory__descriptor,
		"Release", &rr.base, SESS_RELEASE_MS, released, rel) == 0) {
		s->releasing++;
		return;
	}
	release_failed(rel, msc_reason_inventory_unreachable());
}

void
sess_release_locked(struct sess_service *s, const char *id,
    const char *owner, bool temporary, size_t driver, bool dead,
    struct closing *c)
{
	struct sess_release *rel = calloc(1, sizeof(*rel));

	if (rel == NULL) {
		msc_log_err("session: out of memory releasing computer %s", id);
		if (c != NULL) {
			c->failed = true;
			sess_closing_step_locked(c);
		}
		return;
	}
	rel->s = s;
	rel->c = c;
	snprintf(rel->id, sizeof(rel->id), "%s", id);
	snprintf(rel->owner, sizeof(rel->owner), "%s", owner);
	rel->temporary = temporary;
	rel->driver = driver;
	rel->dead = dead;
	release_send(rel);
}

/* Sends the owed releases that are due (lock held). */
static void
send_due(struct sess_service *s)
{
	LIST_HEAD(, sess_release) due = LIST_HEAD_INITIALIZER(due);
	struct sess_release *rel, *next;
	uint64_t now = msc_now_ms();

	for (rel = LIST_FIRST(&s->owed); rel != NULL; rel = next) {
		next = LIST_NEXT(rel, link);
		if (rel->due_ms > now)
			continue;
		LIST_REMOVE(rel, link);
		s->n_owed--;
		LIST_INSERT_HEAD(&due, rel, link);      /* the oldest first */
	}
	while ((rel = LIST_FIRST(&due)) != NULL) {
		LIST_REMOVE(rel, link);
		release_send(rel);
	}
}

/* --- claims -------------------------------------------------------------- */

struct claim_batch {
	struct sess_service *s;
	Msc__V1__Claim *items;
	Msc__V1__Claim **ptrs;
	size_t n;
	const char *owner;              /* the session being walked */
	const char *principal;          /* its principal's tag */
	bool failed;
};

static void
claimed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct sess_service *s = arg;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&s->mu);
	/* An inventory without Claim (an older build): nothing to do. */
	if (st->code != MSC__V1__CODE__OK &&
	    st->code != MSC__V1__CODE__UNIMPLEMENTED) {
		if (!s->claim_failed)
			msc_log_warn("session: claiming computers at the "
				     "inventory failed (%s); trying again",
			    st->message);
		s->claim_failed = true;
	}
	if (--s->claim_calls == 0) {
		if (!s->claim_failed) {
			s->claimed_conn = s->claim_conn;
			msc_log_info("session: the connection to the inventory "
				     "is new: claimed %zu computer(s) there",
			    s->claim_n);
		}
	}
	pthread_mutex_unlock(&s->mu);
}

static void
claim_flush(struct claim_batch *b)
{
	Msc__V1__ClaimRequest req = MSC__V1__CLAIM_REQUEST__INIT;
	struct sess_service *s = b->s;

	if (b->n == 0)
		return;
	req.claims = b->ptrs;
	req.n_claims = b->n;
	if (msc_client_call(s->inventory, &msc__v1__inventory__descriptor,
		"Claim", &req.base, SESS_CLAIM_MS, claimed, s) == 0)
		s->claim_calls++;
	else
		b->failed = true;
	s->claim_n += b->n;
	b->n = 0;
}

static void
claim_computer(void *arg, const char *key, void *value)
{
	struct claim_batch *b = arg;
	Msc__V1__Claim *cl = &b->items[b->n];

	*cl = (Msc__V1__Claim)MSC__V1__CLAIM__INIT;
	cl->computer_id = (char *)key;
	cl->owner = (char *)b->owner;
	cl->principal = (char *)b->principal;
	cl->temporary = SESS_OWN_TEMPORARY(value);
	cl->exclusive = true;   /* as every Acquire of this service */
	cl->driver = (char *)msc_fleet_id(b->s->fleet, SESS_OWN_DRIVER(value));
	b->ptrs[b->n] = cl;
	if (++b->n == SESS_CLAIM_BATCH)
		claim_flush(b);
}

static void
claim_session(void *arg, const char *key, void *value)
{
	struct claim_batch *b = arg;
	struct sess *ss = value;

	b->owner = key;
	b->principal = ss->pr->tag;
	msc_map_each(ss->owned, claim_computer, b);
}

/*
 * Claims every owned computer when the connection to the inventory is
 * not the one last claimed on (lock held). The messages are packed
 * before msc_client_call returns, so the borrowed keys are fine.
 */
static void
claim_again(struct sess_service *s)
{
	uint64_t conn = msc_client_connections(s->inventory);
	struct claim_batch b = { s, NULL, NULL, 0, NULL, NULL, false };

	if (!msc_client_up(s->inventory) || conn == 0 ||
	    conn == s->claimed_conn || s->claim_calls > 0)
		return;
	b.items = calloc(SESS_CLAIM_BATCH, sizeof(*b.items));
	b.ptrs = calloc(SESS_CLAIM_BATCH, sizeof(*b.ptrs));
	if (b.items == NULL || b.ptrs == NULL)
		goto out;
	s->claim_conn = conn;
	s->claim_failed = false;
	s->claim_n = 0;
	msc_map_each(s->sessions, claim_session, &b);
	claim_flush(&b);
	if (b.failed)
		s->claim_failed = true;
	if (s->claim_calls == 0 && !s->claim_failed)
		s->claimed_conn = conn;         /* nothing to claim */
out:
	free(b.items);
	free(b.ptrs);
}

void
sess_owners_sweep(struct sess_service *s)
{
	uint64_t now = msc_now_ms();
	struct closing *c, *next;

	for (c = LIST_FIRST(&s->closings); c != NULL; c = next) {
		next = LIST_NEXT(c, link);
		if (now - c->started_ms >= SESS_CLOSE_WAIT_MS)
			closing_answer(c);
	}
	send_due(s);
	claim_again(s);
}

void
sess_owners_stop(struct sess_service *s)
{
	struct sess_release *rel;

	while (!LIST_EMPTY(&s->closings))
		closing_answer(LIST_FIRST(&s->closings));
	if (s->n_owed > 0)
		msc_log_warn("session: %zu computer release(s) still owed at "
			     "exit", s->n_owed);
	while ((rel = LIST_FIRST(&s->owed)) != NULL) {
		LIST_REMOVE(rel, link);
		free(rel);
	}
	s->n_owed = 0;
}
