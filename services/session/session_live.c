/*
 * session_live.c - the TerminalExec calls a session has open, by the
 * edge's call key: CancelExec kills one (Driver/Cancel on its driver) and
 * PeekExec reads its output so far (Driver/Progress).
 *
 * A call cancelled before it reached a driver is never sent; one on a
 * driver is killed there, and its TerminalExec fails with CANCELLED
 * whatever the driver answers (the edge sends the client nothing).
 */
#include "session_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"
#include "msc_log.h"
#include "msc_random.h"

/* How long the driver has to confirm a kill or report progress. */
#define LIVE_DRIVER_MS 5000

void
sess_live_add_locked(struct sess *ss, struct sess_live *l,
    const char *call_key)
{
	l->call_key = call_key;
	LIST_INSERT_HEAD(&ss->live, l, link);
	l->listed = true;
}

void
sess_live_remove_locked(struct sess *ss, struct sess_live *l)
{
	(void)ss;
	if (l->listed)
		LIST_REMOVE(l, link);
	l->listed = false;
}

bool
sess_live_to_driver(struct sess_service *s, struct sess_live *l,
    const char *id, size_t driver)
{
	bool go;

	pthread_mutex_lock(&s->mu);
	/* A stopping service starts nothing that could outlive it. */
	go = !l->cancelled && !s->stopping;
	if (go) {
		msc_random_hex(l->driver_key, 16);
		snprintf(l->computer_id, sizeof(l->computer_id), "%s", id);
		l->driver = driver;
		l->on_driver = true;
	}
	pthread_mutex_unlock(&s->mu);
	return go;
}

bool
sess_live_cancelled(struct sess_service *s, const struct sess_live *l)
{
	bool c;

	pthread_mutex_lock(&s->mu);
	c = l->cancelled;
	pthread_mutex_unlock(&s->mu);
	return c;
}

/* A Driver/Cancel sent at stop, for a command on a driver. */
struct stop_kill {
	char computer_id[MSC_SLUG_MAX + 1];
	char key[sizeof(((struct sess_live *)0)->driver_key)];
	size_t driver;
};

struct stop_kills {
	struct stop_kill *k;
	size_t n, cap;
};

static void
cancel_session(void *arg, const char *id, void *value)
{
	struct stop_kills *ks = arg;
	struct sess *ss = value;
	struct sess_live *l;

	(void)id;
	LIST_FOREACH(l, &ss->live, link) {
		if (l->cancelled)
			continue;
		l->cancelled = true;
		if (!l->on_driver)
			continue;       /* it will not be sent */
		if (ks->n == ks->cap) {
			size_t cap = ks->cap ? 2 * ks->cap : 64;
			struct stop_kill *k = realloc(ks->k, cap * sizeof(*k));

			if (k == NULL)
				continue;       /* cut short later instead */
			ks->k = k;
			ks->cap = cap;
		}
		memcpy(ks->k[ks->n].computer_id, l->computer_id,
		    sizeof(l->computer_id));
		memcpy(ks->k[ks->n].key, l->driver_key, sizeof(l->driver_key));
		ks->k[ks->n].driver = l->driver;
		ks->n++;
	}
}

static void
stop_killed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	(void)st;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
}

void
sess_live_cancel_all(struct sess_service *s)
{
	struct stop_kills ks = { NULL, 0, 0 };
	Msc__V1__ExecRef dr = MSC__V1__EXEC_REF__INIT;

	pthread_mutex_lock(&s->mu);
	msc_map_each(s->sessions, cancel_session, &ks);
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < ks.n; i++) {
		dr.computer_id = ks.k[i].computer_id;
		dr.cancel_key = ks.k[i].key;
		/* Its Exec then fails CANCELLED; refused: it is cut short. */
		(void)msc_client_call(msc_fleet_client(s->fleet, ks.k[i].driver),
		    &msc__v1__driver__descriptor, "Cancel", &dr.base,
		    LIVE_DRIVER_MS, stop_killed, NULL);
	}
	free(ks.k);
}

struct any_call {
	const char *key;
	const char *principal;
	struct sess *ss;
	struct sess_live *l;
};

static void
find_any(void *arg, const char *id, void *value)
{
	struct any_call *a = arg;
	struct sess *ss = value;
	struct sess_live *l;

	(void)id;
	if (!sess_principal_is(ss->pr, a->principal))
		return;
	LIST_FOREACH(l, &ss->live, link)
		if (a->l == NULL && strcmp(l->call_key, a->key) == 0) {
			a->ss = ss;
			a->l = l;
		}
}

/*
 * The open call of session `sid` named `key`, lock held; or NULL. An
 * empty sid: the call of that key in any session (a stateless HTTP
 * call's random key, for a handle minted for it). Only `principal`'s
 * sessions are looked at.
 */
static struct sess_live *
find_locked(struct sess_service *s, const char *sid, const char *key,
    const char *principal, struct sess **ssp)
{
	struct sess *ss;
	struct sess_live *l;

	if (sid[0] == '\0' && key[0] != '\0') {
		struct any_call a = { key, principal, NULL, NULL };

		msc_map_each(s->sessions, find_any, &a);
		*ssp = a.ss;
		return a.l;
	}
	ss = sess_find_locked(s, sid, principal);
	*ssp = ss;
	if (ss == NULL || key[0] == '\0')
		return NULL;
	LIST_FOREACH(l, &ss->live, link)
		if (strcmp(l->call_key, key) == 0)
			return l;
	return NULL;
}

/* A CancelExec waiting for its Driver/Cancel. */
struct cancel_wait {
	struct msc_call *call;
	char computer_id[MSC_SLUG_MAX + 1];
	char tag[SESS_TAG_LEN + 1];
};

static void
driver_cancelled(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp)
{
	struct cancel_wait *w = arg;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	/* NOT_FOUND: it ended on its own meanwhile. */
	if (resp == NULL && st->code != MSC__V1__CODE__NOT_FOUND)
		msc_log_warn("session %s: cancelling a command on computer "
		    "'%s' failed: %s", w->tag, w->computer_id, st->message);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	msc_call_reply(w->call, &e.base);
	free(w);
}

void
sess_h_cancel_exec(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	const Msc__V1__ExecCallRef *r = (const Msc__V1__ExecCallRef *)req;
	Msc__V1__ExecRef dr = MSC__V1__EXEC_REF__INIT;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	struct cancel_wait *w = calloc(1, sizeof(*w));
	char key[sizeof(((struct sess_live *)0)->driver_key)];
	struct sess_live *l;
	struct sess *ss;
	size_t driver = 0;
	bool send = false;

	if (w == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	pthread_mutex_lock(&s->mu);
	l = find_locked(s, r->session_id, r->call_key, r->principal, &ss);
	if (ss == NULL) {
		pthread_mutex_unlock(&s->mu);
		free(w);
		msc_call_fail_as(call, MSC__V1__CODE__NOT_FOUND,
		    MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
		return;
	}
	sess_touch_locked(s, ss);
	if (l != NULL && !l->cancelled) {
		l->cancelled = true;
		if ((send = l->on_driver)) {
			memcpy(key, l->driver_key, sizeof(key));
			snprintf(w->computer_id, sizeof(w->computer_id), "%s",
			    l->computer_id);
			driver = l->driver;
		}
	}
	memcpy(w->tag, ss->tag, sizeof(w->tag));
	pthread_mutex_unlock(&s->mu);
	if (!send) {
		/* Unknown, cancelled already, or not on a driver yet (it will
		 * not be sent). */
		free(w);
		msc_call_reply(call, &e.base);
		return;
	}
	w->call = call;
	dr.computer_id = w->computer_id;
	dr.cancel_key = key;
	if (msc_client_call(msc_fleet_client(s->fleet, driver),
		&msc__v1__driver__descriptor, "Cancel", &dr.base,
		sess_hop_ms(msc_call_remaining_ms(call), LIVE_DRIVER_MS),
		driver_cancelled, w) != 0) {
		struct msc_status st = { MSC__V1__CODE__UNAVAILABLE,
			"its driver cannot be reached",
			MSC__V1__REASON__REASON_NOT_SENT };

		driver_cancelled(w, &st, NULL);
	}
}

static void
driver_progress(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp)
{
	struct msc_call *call = arg;
	Msc__V1__ExecProgress none = MSC__V1__EXEC_PROGRESS__INIT;

	if (resp != NULL) {
		msc_call_reply(call, resp);
		protobuf_c_message_free_unpacked(resp, NULL);
	} else if (st->code == MSC__V1__CODE__NOT_FOUND)
		msc_call_reply(call, &none.base);   /* ended meanwhile */
	else
		msc_call_fail_reason(call, st->code, st->reason, "%s",
		    st->message);
}

void
sess_h_peek_exec(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	const Msc__V1__ExecCallRef *r = (const Msc__V1__ExecCallRef *)req;
	Msc__V1__ExecRef dr = MSC__V1__EXEC_REF__INIT;
	Msc__V1__ExecProgress none = MSC__V1__EXEC_PROGRESS__INIT;
	char key[sizeof(((struct sess_live *)0)->driver_key)];
	char id[MSC_SLUG_MAX + 1];
	struct sess_live *l;
	struct sess *ss;
	size_t driver = 0;
	bool on_driver = false;

	pthread_mutex_lock(&s->mu);
	l = find_locked(s, r->session_id, r->call_key, r->principal, &ss);
	if (l != NULL && (on_driver = l->on_driver && !l->cancelled)) {
		memcpy(key, l->driver_key, sizeof(key));
		memcpy(id, l->computer_id, sizeof(id));
		driver = l->driver;
	}
	pthread_mutex_unlock(&s->mu);
	if (l == NULL) {
		msc_call_fail(call, MSC__V1__CODE__NOT_FOUND, "no such call "
		    "is open in this session");
		return;
	}
	if (!on_driver) {
		msc_call_reply(call, &none.base);   /* still on its way */
		return;
	}
	dr.computer_id = id;
	dr.cancel_key = key;
	if (msc_client_call(msc_fleet_client(s->fleet, driver),
		&msc__v1__driver__descriptor, "Progress", &dr.base,
		sess_hop_ms(msc_call_remaining_ms(call), LIVE_DRIVER_MS),
		driver_progress, call) != 0)
		msc_call_fail(call, MSC__V1__CODE__UNAVAILABLE, "the "
		    "computer's driver cannot be reached");
}
