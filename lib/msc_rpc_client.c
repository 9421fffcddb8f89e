#include "msc_rpc.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/util/platform.h>

#include "msc_hop.h"
#include "msc_log.h"
#include "msc_rpc_int.h"
#include "msc_tls.h"

#define CLIENT_MAX_OPEN 8192

struct msc_client {
	nng_socket sock;
	atomic_int open;
	atomic_int pipes;               /* connections up now */
	atomic_uint_fast64_t connects;  /* connections made since open */
	atomic_uint_fast64_t next_id;
	atomic_uint_fast64_t since;     /* open time, or when the last pipe went */
	char url[256];
	char peer_role[MSC_TLS_ROLE_MAX];
	pthread_mutex_t mu;             /* guards calls, conns and shut */
	LIST_HEAD(, client_call) calls; /* open calls */
	bool shut;                      /* msc_client_shutdown: no new calls */
	struct msc_rpc_pipes conns;     /* the pipes counted in `pipes` */
	nng_dialer dialer;              /* replaced by the redialer only */
	nng_time redialed;              /* when the dialer was last made */
	atomic_bool want_redial;        /* a call found the peer down */
	LIST_ENTRY(msc_client) link;    /* on redialer.clients */
};

/* A peer down this long makes calls fail at once, not at their deadline. */
#define CLIENT_DOWN_GRACE_MS 3000
/* How often at most a new dialer replaces one that may have given up. */
#define CLIENT_REDIAL_MS 2000

enum call_state { CALL_SEND, CALL_RECV };

struct client_call {
	struct msc_client *cli;
	LIST_ENTRY(client_call) link;   /* on cli->calls */
	nng_ctx ctx;
	nng_aio *aio;
	nng_aio *end_aio;               /* frees aio and ctx: call_end */
	enum call_state state;
	nng_time deadline;              /* 0: none */
	const ProtobufCMessageDescriptor *output;
	msc_reply_fn cb;
	void *arg;
};

int
msc_rpc_pack(Msc__V1__Envelope *env, const ProtobufCMessage *body,
    nng_msg **msgp)
{
	uint8_t *payload = NULL;
	nng_msg *msg;
	size_t len;

	if (body != NULL) {
		len = protobuf_c_message_get_packed_size(body);
		if (len > MSC_RPC_MAX_MSG - 4096)
			return -E2BIG;
		if ((payload = malloc(len ? len : 1)) == NULL)
			return -ENOMEM;
		protobuf_c_message_pack(body, payload);
		env->payload.data = payload;
		env->payload.len = len;
	}
	len = msc__v1__envelope__get_packed_size(env);
	if (nng_msg_alloc(&msg, len) != 0) {
		free(payload);
		return -ENOMEM;
	}
	msc__v1__envelope__pack(env, nng_msg_body(msg));
	env->payload.data = NULL;
	env->payload.len = 0;
	free(payload);
	*msgp = msg;
	return 0;
}

Msc__V1__Code
msc_rpc_code_from_nng(int rv)
{
	switch (rv) {
	case NNG_ETIMEDOUT:
		return MSC__V1__CODE__DEADLINE_EXCEEDED;
	case NNG_ENOMEM:
		return MSC__V1__CODE__RESOURCE_EXHAUSTED;
	default:
		return MSC__V1__CODE__UNAVAILABLE;
	}
}

/*
 * After the call's callback: frees its aio, then closes its context, on
 * a thread of NNG's that is not the aio's. NNG 1.5's expiry thread takes
 * an aio's cancel function, drops its lock and then calls it with the
 * context; a reply that completes the aio in that window ends the call.
 * Freeing the aio waits until no expiry holds it (and its callback has
 * returned), so the context is closed only when nothing can reach it.
 * Closing it from the callback (as before) had the expiry thread cancel
 * on a freed context (tests/unit/test_rpc_expire.c).
 */
static void
call_end(void *arg)
{
	struct client_call *cc = arg;
	struct msc_client *c = cc->cli;
	nng_aio *end_aio = cc->end_aio;

	nng_aio_free(cc->aio);
	nng_ctx_close(cc->ctx);
	free(cc);
	/* Freeing an aio from its own callback would wait for itself. */
	nng_aio_reap(end_aio);
	/* Last: msc_client_close waits for this before closing the socket. */
	atomic_fetch_sub(&c->open, 1);
}

static void
call_finish(struct client_call *cc, Msc__V1__Code code,
    Msc__V1__Reason reason, const char *message, ProtobufCMessage *resp)
{
	struct msc_status st = { code, message, reason };
	struct msc_client *c = cc->cli;

	pthread_mutex_lock(&c->mu);
	LIST_REMOVE(cc, link);
	pthread_mutex_unlock(&c->mu);
	MSC_HOP("client_unpack");
	cc->cb(cc->arg, &st, resp);
	/* call_end on a task thread of NNG's. Not nng_sleep_aio(0): NNG
	 * 1.5's expiry thread fires an expiry only once the millisecond
	 * clock has passed it, and until then it rescans in a loop: every
	 * call cost up to 1 ms of a core (a quarter of the program's CPU). */
	if (nng_aio_begin(cc->end_aio))
		nng_aio_finish(cc->end_aio, 0);
}

static void
call_recv_done(struct client_call *cc, nng_msg *msg)
{
	Msc__V1__Envelope *env;
	ProtobufCMessage *resp;

	env = msc__v1__envelope__unpack(NULL, nng_msg_len(msg),
	    nng_msg_body(msg));
	nng_msg_free(msg);
	if (env == NULL) {
		call_finish(cc, MSC__V1__CODE__INTERNAL, 0,
		    "malformed reply envelope", NULL);
		return;
	}
	if (env->status != NULL && env->status->code != MSC__V1__CODE__OK) {
		call_finish(cc, env->status->code, env->status->reason,
		    env->status->message, NULL);
		msc__v1__envelope__free_unpacked(env, NULL);
		return;
	}
	resp = protobuf_c_message_unpack(cc->output, NULL, env->payload.len,
	    env->payload.data);
	msc__v1__envelope__free_unpacked(env, NULL);
	if (resp == NULL) {
		call_finish(cc, MSC__V1__CODE__INTERNAL, 0,
		    "malformed reply payload", NULL);
		return;
	}
	call_finish(cc, MSC__V1__CODE__OK, 0, "", resp);
}

static void
call_cb(void *arg)
{
	struct client_call *cc = arg;
	int rv = nng_aio_result(cc->aio);
	char msg[256];

	if (rv != 0 && cc->state == CALL_SEND) {
		nng_msg_free(nng_aio_get_msg(cc->aio));
		/* Never handed to a connection: it did not happen. */
		call_finish(cc, rv == NNG_ENOMEM ?
		    MSC__V1__CODE__RESOURCE_EXHAUSTED :
		    MSC__V1__CODE__UNAVAILABLE,
		    MSC__V1__REASON__REASON_NOT_SENT,
		    msc_reason_call_failed_message(
			MSC__V1__REASON__REASON_NOT_SENT, NULL, msg,
			sizeof(msg)), NULL);
		return;
	}
	if (rv != 0) {
		/* Sent, and then no answer. */
		Msc__V1__Reason why = rv == NNG_ETIMEDOUT
		    ? MSC__V1__REASON__REASON_DEADLINE
		    : MSC__V1__REASON__REASON_MAYBE_RAN;

		msc_reason_call_failed_message(why, rv == NNG_ETIMEDOUT ? NULL
		    : nng_strerror(rv), msg, sizeof(msg));
		call_finish(cc, msc_rpc_code_from_nng(rv), why, msg, NULL);
		return;
	}
	if (cc->state == CALL_SEND) {
		nng_duration left = NNG_DURATION_INFINITE;

		if (cc->deadline != 0) {
			nng_time now = nng_clock();

			left = cc->deadline > now ? (nng_duration)(cc->deadline -
			    now) : 1;
		}
		cc->state = CALL_RECV;
		nng_aio_set_timeout(cc->aio, left);
		nng_ctx_recv(cc->ctx, cc->aio);
		return;
	}
	MSC_HOP("nng_reply_hop");
	call_recv_done(cc, nng_aio_get_msg(cc->aio));
}

bool
msc_rpc_pipes_added(struct msc_rpc_pipes *t, uint32_t id)
{
	if (id == 0)
		return false;
	for (size_t i = 0; i < MSC_RPC_PIPES_MAX; i++)
		if (t->gone[i] == id) {
			t->gone[i] = 0;
			return false;
		}
	for (size_t i = 0; i < MSC_RPC_PIPES_MAX; i++)
		if (t->live[i] == 0) {
			t->live[i] = id;
			return true;
		}
	return false;
}

bool
msc_rpc_pipes_removed(struct msc_rpc_pipes *t, uint32_t id)
{
	if (id == 0)
		return false;
	for (size_t i = 0; i < MSC_RPC_PIPES_MAX; i++)
		if (t->live[i] == id) {
			t->live[i] = 0;
			return true;
		}
	t->gone[t->next_gone] = id;
	t->next_gone = (t->next_gone + 1) % MSC_RPC_PIPES_MAX;
	return false;
}

static void
pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct msc_client *c = arg;
	uint32_t id = (uint32_t)nng_pipe_id(p);
	struct client_call *cc;
	bool counted;

	if (ev != NNG_PIPE_EV_ADD_POST && ev != NNG_PIPE_EV_REM_POST)
		return;
	pthread_mutex_lock(&c->mu);
	counted = ev == NNG_PIPE_EV_ADD_POST
	    ? msc_rpc_pipes_added(&c->conns, id)
	    : msc_rpc_pipes_removed(&c->conns, id);
	if (counted && ev == NNG_PIPE_EV_ADD_POST) {
		pthread_mutex_unlock(&c->mu);
		/*
		 * Count it first: calls may already flow on it, and the
		 * watch scans this process's descriptors (slow).
		 */
		atomic_fetch_add(&c->pipes, 1);
		atomic_fetch_add(&c->connects, 1);
		msc_tls_pipe_watch(p);
		return;
	}
	if (counted) {
		if (atomic_fetch_sub(&c->pipes, 1) == 1)
			atomic_store(&c->since, nng_clock());
		/*
		 * REQ would send the open requests again on the next
		 * connection: a command could run twice. End them instead
		 * (one peer per client).
		 */
		LIST_FOREACH(cc, &c->calls, link)
			nng_aio_cancel(cc->aio);
	}
	pthread_mutex_unlock(&c->mu);
}

/* Makes and starts c's dialer (in the background). redialer.mu held. */
static int
client_dial(struct msc_client *c)
{
	nng_dialer d;

	if (nng_dialer_create(&d, c->sock, c->url) != 0)
		return -EINVAL;
	if (msc_tls_dialer(d, c->url, c->peer_role) != 0 ||
	    nng_dialer_start(d, NNG_FLAG_NONBLOCK) != 0) {
		(void)nng_dialer_close(d);
		return -EINVAL;
	}
	c->dialer = d;
	c->redialed = nng_clock();
	return 0;
}

/*
 * The redialer: one thread per process that gives a client a new dialer
 * when a call (or msc_client_up) found its peer down past the grace, as
 * soon as it asks, and on its own when the peer has been down for
 * CLIENT_IDLE_REDIAL_MS (an idle client). NNG 1.5's dialer can stop for
 * good when a connection closes while it is being set up (NNG_ECLOSED:
 * a peer killed as it accepted). nng_dialer_close blocks until the
 * dialer's callbacks end, so it never runs on NNG's threads, where it
 * can wait for itself (seen when a timer callback redialed: a session
 * service whose four task threads all closed dialers to its stopped
 * drivers hung at exit; the calls of callbacks redialed there too).
 * Closing a dialer also closes a connection it made just then: hence
 * redials only on demand, or rarely.
 */
#define CLIENT_IDLE_REDIAL_MS 10000

static struct {
	pthread_once_t once;
	pthread_mutex_t mu;             /* guards clients; held while redialing */
	pthread_cond_t cv;              /* a client wants a redial */
	bool up;
	LIST_HEAD(, msc_client) clients;
} redialer = { PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_COND_INITIALIZER, false,
	LIST_HEAD_INITIALIZER(redialer.clients) };

/*
 * Asks the redialer for a new dialer of c. Does not block: not even on
 * redialer.mu, held while a dialer closes (a wake-up lost to that is
 * made up within the second).
 */
static void
client_want_redial(struct msc_client *c)
{
	if (!atomic_exchange(&c->want_redial, true))
		pthread_cond_signal(&redialer.cv);
}

/* Replaces c's dialer if it asked, or if idle down long (redialer.mu). */
static void
client_redial_locked(struct msc_client *c, nng_time now)
{
	nng_time since = atomic_load(&c->since);
	bool want = atomic_load(&c->want_redial);

	if (atomic_load(&c->pipes) > 0 || now - c->redialed < CLIENT_REDIAL_MS)
		return;
	if (!want && (now <= since || now - since < CLIENT_IDLE_REDIAL_MS ||
	    now - c->redialed < CLIENT_IDLE_REDIAL_MS))
		return;
	atomic_store(&c->want_redial, false);
	msc_log_debug("rpc: %s cannot be reached; dialing anew", c->url);
	(void)nng_dialer_close(c->dialer);
	if (client_dial(c) != 0)
		c->redialed = now;      /* try again later */
}

static void *
redialer_main(void *arg)
{
	struct msc_client *c;

	(void)arg;
	pthread_mutex_lock(&redialer.mu);
	for (;;) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		(void)pthread_cond_timedwait(&redialer.cv, &redialer.mu,
		    &until);
		LIST_FOREACH(c, &redialer.clients, link)
			client_redial_locked(c, nng_clock());
	}
	return NULL;
}

static void
redialer_start(void)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	redialer.up = pthread_create(&t, &a, redialer_main, NULL) == 0;
	pthread_attr_destroy(&a);
	if (!redialer.up)
		msc_log_warn("rpc: no redial thread: a peer that was down "
		    "may stay unreachable");
}

int
msc_client_open(const char *url, const char *peer_role,
    struct msc_client **cp)
{
	struct msc_client *c;
	int rv;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	LIST_INIT(&c->calls);
	if ((rv = nng_req0_open(&c->sock)) != 0) {
		free(c);
		return -EIO;
	}
	/* Never resend on our own: a command must not run twice. */
	nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME,
	    NNG_DURATION_INFINITE);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 50);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 1000);
	nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, MSC_RPC_MAX_MSG);
	pthread_mutex_init(&c->mu, NULL);
	atomic_init(&c->open, 0);
	atomic_init(&c->pipes, 0);
	atomic_init(&c->connects, 0);
	atomic_init(&c->next_id, 1);
	atomic_init(&c->since, nng_clock());
	atomic_init(&c->want_redial, false);
	snprintf(c->url, sizeof(c->url), "%s", url);
	snprintf(c->peer_role, sizeof(c->peer_role), "%s",
	    peer_role != NULL ? peer_role : "");
	nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, pipe_event, c);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, pipe_event, c);
	pthread_once(&redialer.once, redialer_start);
	pthread_mutex_lock(&redialer.mu);
	if ((rv = client_dial(c)) == 0)
		LIST_INSERT_HEAD(&redialer.clients, c, link);
	pthread_mutex_unlock(&redialer.mu);
	if (rv != 0) {
		nng_close(c->sock);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return rv;
	}
	*cp = c;
	return 0;
}

bool
msc_client_up(struct msc_client *c)
{
	nng_time now = nng_clock(), since;

	if (atomic_load(&c->pipes) > 0)
		return true;
	since = atomic_load(&c->since);
	if (now > since && now - since > CLIENT_DOWN_GRACE_MS)
		client_want_redial(c);
	return false;
}

uint64_t
msc_client_connections(struct msc_client *c)
{
	return atomic_load(&c->connects);
}

void
msc_client_shutdown(struct msc_client *c)
{
	struct client_call *cc;

	pthread_mutex_lock(&c->mu);
	c->shut = true;
	LIST_FOREACH(cc, &c->calls, link)
		nng_aio_cancel(cc->aio);
	pthread_mutex_unlock(&c->mu);
}

void
msc_client_close(struct msc_client *c)
{
	if (c == NULL)
		return;
	/*
	 * End the open calls and wait for their callbacks, each of which
	 * closes its context, before closing the socket: NNG 1.5 can panic
	 * on a context closed while its socket closes. A callback's own new
	 * call is refused, so the wait ends with the callbacks.
	 */
	msc_client_shutdown(c);
	pthread_mutex_lock(&redialer.mu);
	LIST_REMOVE(c, link);
	pthread_mutex_unlock(&redialer.mu);
	for (int i = 0; i < 500 && atomic_load(&c->open) > 0; i++)
		nng_msleep(10);
	nng_close(c->sock);
	if (atomic_load(&c->open) > 0)
		return;         /* a callback still runs: keep c valid */
	pthread_mutex_destroy(&c->mu);
	free(c);
}

int
msc_client_call(struct msc_client *c, const ProtobufCServiceDescriptor *svc,
    const char *method, const ProtobufCMessage *req, int timeout_ms,
    msc_reply_fn cb, void *arg)
{
	const ProtobufCMethodDescriptor *m;
	Msc__V1__Envelope env = MSC__V1__ENVELOPE__INIT;
	struct client_call *cc;
	nng_time now = nng_clock(), down;
	nng_duration send_ms;
	char name[256];
	nng_msg *msg;
	int rv;

	m = protobuf_c_service_descriptor_get_method_by_name(svc, method);
	if (m == NULL)
		return -ENOENT;
	send_ms = timeout_ms > 0 ? timeout_ms : NNG_DURATION_INFINITE;
	if (atomic_load(&c->pipes) == 0) {
		down = atomic_load(&c->since);
		down = now > down ? now - down : 0;
		if (down > CLIENT_DOWN_GRACE_MS) {
			client_want_redial(c);
			return -ENOTCONN;
		}
		/* Wait for the peer to come back until the grace ends. */
		if (send_ms == NNG_DURATION_INFINITE ||
		    (nng_time)send_ms > CLIENT_DOWN_GRACE_MS - down)
			send_ms = (nng_duration)(CLIENT_DOWN_GRACE_MS - down) + 1;
	}
	if (atomic_fetch_add(&c->open, 1) >= CLIENT_MAX_OPEN) {
		atomic_fetch_sub(&c->open, 1);
		return -EAGAIN;
	}
	if ((cc = calloc(1, sizeof(*cc))) == NULL) {
		rv = -ENOMEM;
		goto fail;
	}
	cc->cli = c;
	cc->output = m->output;
	cc->cb = cb;
	cc->arg = arg;
	cc->state = CALL_SEND;
	cc->deadline = timeout_ms > 0 ? now + (nng_time)timeout_ms : 0;
	snprintf(name, sizeof(name), "%s/%s", svc->name, method);
	env.request_id = atomic_fetch_add(&c->next_id, 1);
	env.method = name;
	env.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	MSC_HOP("caller_before_pack");
	if ((rv = msc_rpc_pack(&env, req, &msg)) != 0)
		goto fail;
	if (nng_aio_alloc(&cc->aio, call_cb, cc) != 0 ||
	    nng_aio_alloc(&cc->end_aio, call_end, cc) != 0) {
		nng_msg_free(msg);
		nng_aio_free(cc->aio);
		rv = -ENOMEM;
		goto fail;
	}
	if (nng_ctx_open(&cc->ctx, c->sock) != 0) {
		nng_msg_free(msg);
		nng_aio_free(cc->aio);
		nng_aio_free(cc->end_aio);
		rv = -EIO;
		goto fail;
	}
	nng_aio_set_timeout(cc->aio, send_ms);
	nng_aio_set_msg(cc->aio, msg);
	pthread_mutex_lock(&c->mu);
	if (c->shut) {
		/* Checked here, where a shutdown's cancel cannot miss it. */
		pthread_mutex_unlock(&c->mu);
		nng_msg_free(msg);
		nng_ctx_close(cc->ctx);
		nng_aio_free(cc->aio);
		nng_aio_free(cc->end_aio);
		rv = -ESHUTDOWN;
		goto fail;
	}
	LIST_INSERT_HEAD(&c->calls, cc, link);
	nng_ctx_send(cc->ctx, cc->aio);
	pthread_mutex_unlock(&c->mu);
	MSC_HOP("client_pack_alloc_send");
	return 0;
fail:
	free(cc);
	atomic_fetch_sub(&c->open, 1);
	return rv;
}

void
msc_reply_ignore(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp)
{
	(void)arg;
	(void)st;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
}

struct sync_wait {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	Msc__V1__Code code;
	ProtobufCMessage *resp;
	char *msgbuf;
	size_t msglen;
};

static void
sync_cb(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct sync_wait *w = arg;

	pthread_mutex_lock(&w->mu);
	w->code = st->code;
	w->resp = resp;
	if (w->msgbuf != NULL && w->msglen > 0)
		snprintf(w->msgbuf, w->msglen, "%s", st->message);
	w->done = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

Msc__V1__Code
msc_client_call_sync(struct msc_client *c,
    const ProtobufCServiceDescriptor *svc, const char *method,
    const ProtobufCMessage *req, int timeout_ms, ProtobufCMessage **respp,
    char *msgbuf, size_t msglen)
{
	struct sync_wait w = { .msgbuf = msgbuf, .msglen = msglen };
	int rv;

	pthread_mutex_init(&w.mu, NULL);
	pthread_cond_init(&w.cv, NULL);
	rv = msc_client_call(c, svc, method, req, timeout_ms, sync_cb, &w);
	if (rv != 0) {
		if (msgbuf != NULL && msglen > 0)
			snprintf(msgbuf, msglen, "cannot call %s: %s", method,
			    strerror(-rv));
		w.code = rv == -EAGAIN ? MSC__V1__CODE__RESOURCE_EXHAUSTED
		    : rv == -ENOTCONN || rv == -ESHUTDOWN
		    ? MSC__V1__CODE__UNAVAILABLE
				       : MSC__V1__CODE__INTERNAL;
	} else {
		pthread_mutex_lock(&w.mu);
		while (!w.done)
			pthread_cond_wait(&w.cv, &w.mu);
		pthread_mutex_unlock(&w.mu);
	}
	pthread_mutex_destroy(&w.mu);
	pthread_cond_destroy(&w.cv);
	if (respp != NULL)
		*respp = w.resp;
	else if (w.resp != NULL)
		protobuf_c_message_free_unpacked(w.resp, NULL);
	return w.code;
}
