/*
 * session.c - the session service: Open, Close and the dispatch table;
 * TerminalExec lives in session_exec.c.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"
#include "msc_log.h"

void
sess_unref(struct sess *ss)
{
	if (--ss->refs > 0)
		return;
	msc_map_free(ss->owned);
	free(ss);
}

static void
h_open(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	unsigned char raw[16];
	struct sess *ss;

	(void)req;
	if ((ss = calloc(1, sizeof(*ss))) == NULL ||
	    msc_map_new(&ss->owned) != 0) {
		free(ss);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	msc_random_bytes(raw, sizeof(raw));
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(ss->id + 2 * i, 3, "%02x", raw[i]);
	ss->refs = 1;
	pthread_mutex_lock(&s->mu);
	if (msc_map_len(s->sessions) >= SESS_MAX_SESSIONS ||
	    msc_map_put(s->sessions, ss->id, ss) != 0) {
		pthread_mutex_unlock(&s->mu);
		sess_unref(ss);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED,
		    "too many sessions");
		return;
	}
	pthread_mutex_unlock(&s->mu);
	ref.session_id = ss->id;
	msc_call_reply(call, &ref.base);
}

/* A Close waits for one Release per owned computer. */
struct closing {
	struct msc_call *call;
	pthread_mutex_t mu;
	size_t left;
	int failures;
};

static void
close_step(struct closing *c, bool failed)
{
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	bool done;

	pthread_mutex_lock(&c->mu);
	c->failures += failed;
	done = --c->left == 0;
	pthread_mutex_unlock(&c->mu);
	if (!done)
		return;
	if (c->failures > 0)
		msc_call_fail(c->call, MSC__V1__CODE__UNAVAILABLE,
		    "%d computer(s) could not be released", c->failures);
	else
		msc_call_reply(c->call, &e.base);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static void
released(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code != MSC__V1__CODE__OK)
		msc_log_warn("session: release failed: %s", st->message);
	close_step(arg, st->code != MSC__V1__CODE__OK);
}

struct release_args {
	struct sess_service *s;
	struct closing *c;
	const char *owner;
	int timeout_ms;
};

static void
release_one(void *arg, const char *key, void *value)
{
	struct release_args *ra = arg;
	Msc__V1__ReleaseRequest rr = MSC__V1__RELEASE_REQUEST__INIT;

	(void)value;
	rr.computer_id = (char *)key;
	rr.owner = (char *)ra->owner;
	if (msc_client_call(ra->s->inventory, &msc__v1__inventory__descriptor,
		"Release", &rr.base, ra->timeout_ms, released, ra->c) != 0)
		close_step(ra->c, true);
}

static void
h_close(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__SessionRef *ref = (const void *)req;
	struct sess_service *s = state;
	struct release_args ra = { s, NULL, ref->session_id, 0 };
	struct sess *ss;

	if ((ra.c = calloc(1, sizeof(*ra.c))) == NULL) {
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	ra.c->call = call;
	pthread_mutex_init(&ra.c->mu, NULL);
	ra.timeout_ms = msc_call_remaining_ms(call);
	pthread_mutex_lock(&s->mu);
	ss = msc_map_del(s->sessions, ref->session_id);
	if (ss == NULL) {
		pthread_mutex_unlock(&s->mu);
		pthread_mutex_destroy(&ra.c->mu);
		free(ra.c);
		msc_call_fail(call, MSC__V1__CODE__NOT_FOUND,
		    "Session not found");
		return;
	}
	ss->closed = true;
	/* One extra step so the reply waits for the loop below. */
	ra.c->left = msc_map_len(ss->owned) + 1;
	msc_map_each(ss->owned, release_one, &ra);
	msc_log_debug("session %s closed", ss->id);
	sess_unref(ss);
	pthread_mutex_unlock(&s->mu);
	close_step(ra.c, false);
}

static void
h_exec(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	sess_exec_start(state, call, (const Msc__V1__TerminalExecRequest *)req);
}

static const struct msc_method session_methods[] = {
	{ "Open", h_open },
	{ "Close", h_close },
	{ "TerminalExec", h_exec },
	{ NULL, NULL },
};

int
sess_start(const struct msc_cfg *cfg, const char *url,
    const char *inventory_url, const char *driver_url,
    struct sess_service **sp)
{
	struct sess_service *s = calloc(1, sizeof(*s));
	int rv;

	if (s == NULL)
		return -ENOMEM;
	s->cfg = cfg;
	pthread_mutex_init(&s->mu, NULL);
	if ((rv = msc_map_new(&s->sessions)) != 0 ||
	    (rv = msc_client_open(inventory_url, &s->inventory)) != 0 ||
	    (rv = msc_client_open(driver_url, &s->driver)) != 0 ||
	    (rv = msc_server_start(url, &msc__v1__session__descriptor,
		 session_methods, s, 8192, &s->srv)) != 0) {
		sess_stop(s);
		return rv;
	}
	*sp = s;
	return 0;
}

static void
drop_session(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	sess_unref(value);
}

void
sess_stop(struct sess_service *s)
{
	if (s == NULL)
		return;
	msc_server_stop(s->srv);
	msc_client_close(s->inventory);
	msc_client_close(s->driver);
	if (s->sessions != NULL) {
		msc_map_each(s->sessions, drop_session, NULL);
		msc_map_free(s->sessions);
	}
	pthread_mutex_destroy(&s->mu);
	free(s);
}
