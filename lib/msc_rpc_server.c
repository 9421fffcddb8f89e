#include "msc_rpc.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "msc_hop.h"
#include "msc_log.h"
#include "msc_pb_check.h"
#include "msc_reason.h"
#include "msc_redact.h"
#include "msc_rpc_int.h"
#include "msc_rpc_roles.h"
#include "msc_tls.h"
#include "msc_time.h"

/*
 * A server context is both an NNG receive context and, between receiving
 * a request and sending its reply, the open call (struct msc_call).
 */
enum ctx_state { CTX_RECV, CTX_CALL, CTX_SEND };

struct msc_call {
	struct msc_server *srv;
	nng_ctx ctx;
	nng_aio *aio;
	enum ctx_state state;
	uint64_t request_id;
	uint64_t deadline_ms;   /* monotonic */
	bool caller_deadline;   /* the caller set deadline_ms */
	const ProtobufCMethodDescriptor *method;
	ProtobufCMessage *req;  /* owned; freed when the call ends */
	SLIST_ENTRY(msc_call) link;     /* in srv->all */
};

struct msc_server {
	nng_socket sock;
	const ProtobufCServiceDescriptor *svc;
	msc_handler_fn *handlers;   /* indexed like svc->methods */
	void *state;
	bool check_roles;       /* tls+tcp://: callers' roles are checked */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int nctx;
	int max_inflight;
	int idle;       /* contexts waiting to receive */
	int open_calls;
	int closing;
	SLIST_HEAD(, msc_call) all;     /* every context, freed at stop */
};


static void ctx_cb(void *arg);

static int
ctx_add(struct msc_server *s)
{
	struct msc_call *c;
	int rv;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	c->srv = s;
	if ((rv = nng_aio_alloc(&c->aio, ctx_cb, c)) != 0) {
		free(c);
		return -ENOMEM;
	}
	if ((rv = nng_ctx_open(&c->ctx, s->sock)) != 0) {
		nng_aio_free(c->aio);
		free(c);
		return -EIO;
	}
	SLIST_INSERT_HEAD(&s->all, c, link);
	s->nctx++;
	s->idle++;
	c->state = CTX_RECV;
	nng_ctx_recv(c->ctx, c->aio);
	return 0;
}

static void
send_status(struct msc_call *c, Msc__V1__Code code, Msc__V1__Reason reason,
    const char *message, const ProtobufCMessage *body)
{
	Msc__V1__Envelope env = MSC__V1__ENVELOPE__INIT;
	Msc__V1__Status st = MSC__V1__STATUS__INIT;
	nng_msg *msg = NULL;
	int rv;

	env.request_id = c->request_id;
	env.method = (char *)(c->method ? c->method->name : "");
	if (code != MSC__V1__CODE__OK) {
		st.code = code;
		st.reason = msc_reason_passed_on(reason);
		st.message = (char *)message;
		env.status = &st;
		body = NULL;
	}
	MSC_HOP("handler_reply_start");
	rv = msc_rpc_pack(&env, body, &msg);
	if (rv != 0 && code == MSC__V1__CODE__OK) {
		st.code = MSC__V1__CODE__INTERNAL;
		st.reason = MSC__V1__REASON__REASON_UNSPECIFIED;
		st.message = "reply too large or out of memory";
		env.status = &st;
		rv = msc_rpc_pack(&env, NULL, &msg);
	}
	if (c->req != NULL) {
		protobuf_c_message_free_unpacked(c->req, NULL);
		c->req = NULL;
	}
	if (rv != 0) {
		/* Cannot even build an error: let the caller's deadline run. */
		msc_log_err("rpc: cannot pack a reply: %s", strerror(-rv));
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
	} else {
		c->state = CTX_SEND;
		nng_aio_set_msg(c->aio, msg);
		MSC_HOP("server_pack_send");
		nng_ctx_send(c->ctx, c->aio);
	}
	/*
	 * Only now is the call over for msc_server_stop(): the aio has its
	 * next operation, which nng_aio_stop() there waits for. Counting it
	 * down before would let the server free c under this function.
	 */
	pthread_mutex_lock(&c->srv->mu);
	c->srv->open_calls--;
	pthread_cond_broadcast(&c->srv->cv);
	pthread_mutex_unlock(&c->srv->mu);
}

/*
 * Whether the caller on pipe p may call method m; else answers the call
 * PERMISSION_DENIED. Only tls+tcp:// callers have (and need) a role.
 */
static bool
caller_allowed(struct msc_call *c, nng_pipe p,
    const ProtobufCMethodDescriptor *m)
{
	struct msc_server *s = c->srv;
	char role[MSC_TLS_ROLE_MAX], allowed[128], msg[512];
	int rv;

	if (!s->check_roles)
		return true;
	if ((rv = msc_tls_pipe_role(p, role, sizeof(role))) != 0) {
		snprintf(msg, sizeof(msg), "%s/%s refused: the caller's "
		    "certificate names no cluster role (%s); issue it with "
		    "scripts/make-certs", s->svc->name, m->name,
		    nng_strerror(rv));
	} else if (msc_rpc_role_allowed(s->svc->name, m->name, role, allowed,
		       sizeof(allowed)))
		return true;
	else
		snprintf(msg, sizeof(msg), "%s/%s refused: a caller with the "
		    "role '%s' may not call it (allowed: %s)", s->svc->name,
		    m->name, role, allowed[0] ? allowed : "nobody");
	msc_log_warn("rpc: %s", msg);
	send_status(c, MSC__V1__CODE__PERMISSION_DENIED, 0, msg, NULL);
	return false;
}

static void
dispatch(struct msc_call *c, nng_msg *msg)
{
	struct msc_server *s = c->srv;
	Msc__V1__Envelope *env;
	const char *slash;
	const ProtobufCMethodDescriptor *m = NULL;
	nng_pipe pipe = nng_msg_get_pipe(msg);

	env = msc__v1__envelope__unpack(NULL, nng_msg_len(msg),
	    nng_msg_body(msg));
	nng_msg_free(msg);
	c->method = NULL;
	c->request_id = 0;
	c->deadline_ms = msc_now_ms() + 30000;
	c->caller_deadline = false;
	if (env == NULL) {
		send_status(c, MSC__V1__CODE__INVALID_ARGUMENT, 0,
		    "malformed envelope", NULL);
		return;
	}
	c->request_id = env->request_id;
	if (env->timeout_ms > 0) {
		c->deadline_ms = msc_now_ms() + env->timeout_ms;
		c->caller_deadline = true;
	}
	slash = strrchr(env->method, '/');
	if (slash != NULL &&
	    strncmp(env->method, s->svc->name, (size_t)(slash - env->method)) == 0 &&
	    strlen(s->svc->name) == (size_t)(slash - env->method))
		m = protobuf_c_service_descriptor_get_method_by_name(s->svc,
		    slash + 1);
	if (m == NULL) {
		send_status(c, MSC__V1__CODE__UNIMPLEMENTED, 0, "unknown method",
		    NULL);
		msc__v1__envelope__free_unpacked(env, NULL);
		return;
	}
	c->method = m;
	if (!caller_allowed(c, pipe, m)) {
		msc__v1__envelope__free_unpacked(env, NULL);
		return;
	}
	if (s->handlers[m - s->svc->methods] == NULL) {
		send_status(c, MSC__V1__CODE__UNIMPLEMENTED, 0,
		    "method not implemented", NULL);
		msc__v1__envelope__free_unpacked(env, NULL);
		return;
	}
	if (!msc_pb_strings_clean(m->input, env->payload.data,
		env->payload.len)) {
		send_status(c, MSC__V1__CODE__INVALID_ARGUMENT, 0,
		    "malformed request payload, or a string with a NUL byte",
		    NULL);
		msc__v1__envelope__free_unpacked(env, NULL);
		return;
	}
	c->req = protobuf_c_message_unpack(m->input, NULL, env->payload.len,
	    env->payload.data);
	msc__v1__envelope__free_unpacked(env, NULL);
	if (c->req == NULL) {
		send_status(c, MSC__V1__CODE__INVALID_ARGUMENT, 0,
		    "malformed request payload", NULL);
		return;
	}
	MSC_HOP("server_unpack");
	s->handlers[m - s->svc->methods](s->state, c, c->req);
}

/* A new connection: make it fail when its peer's host goes away. */
static void
pipe_added(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)ev;
	(void)arg;
	msc_tls_pipe_watch(p);
}

/* Whether a context must stop re-arming: the server is going away. */
static bool
ctx_done(struct msc_server *s, int rv)
{
	bool closing;

	if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
		return true;
	pthread_mutex_lock(&s->mu);
	closing = s->closing;
	pthread_mutex_unlock(&s->mu);
	return closing;
}

static void
ctx_cb(void *arg)
{
	struct msc_call *c = arg;
	struct msc_server *s = c->srv;
	int rv = nng_aio_result(c->aio);

	if (c->state == CTX_SEND) {
		if (rv != 0)
			nng_msg_free(nng_aio_get_msg(c->aio));
		if (ctx_done(s, rv))
			return;
		pthread_mutex_lock(&s->mu);
		s->idle++;
		pthread_mutex_unlock(&s->mu);
		c->state = CTX_RECV;
		nng_ctx_recv(c->ctx, c->aio);
		return;
	}
	/* CTX_RECV */
	if (rv != 0) {
		if (!ctx_done(s, rv))
			nng_ctx_recv(c->ctx, c->aio);
		return;
	}
	pthread_mutex_lock(&s->mu);
	s->idle--;
	s->open_calls++;
	c->state = CTX_CALL;
	if (s->idle == 0 && s->nctx < s->max_inflight && !s->closing)
		(void)ctx_add(s);
	pthread_mutex_unlock(&s->mu);
	MSC_HOP("nng_request_hop");
	dispatch(c, nng_aio_get_msg(c->aio));
}

int
msc_server_start(const char *url, const ProtobufCServiceDescriptor *svc,
    const struct msc_method *methods, void *state, int max_inflight,
    struct msc_server **sp)
{
	struct msc_server *s;
	int rv;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	s->svc = svc;
	s->state = state;
	s->check_roles = msc_tls_url(url);
	s->max_inflight = max_inflight > 0 ? max_inflight : 1024;
	SLIST_INIT(&s->all);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->handlers = calloc(svc->n_methods, sizeof(*s->handlers));
	if (s->handlers == NULL)
		goto fail_nomem;
	for (const struct msc_method *m = methods; m->name != NULL; m++) {
		const ProtobufCMethodDescriptor *md =
		    protobuf_c_service_descriptor_get_method_by_name(svc,
			m->name);
		if (md == NULL) {
			msc_log_err("rpc: %s has no method %s", svc->name,
			    m->name);
			rv = -EINVAL;
			goto fail;
		}
		s->handlers[md - svc->methods] = m->fn;
	}
	for (unsigned i = 0; i < svc->n_methods; i++)
		if (s->handlers[i] == NULL)
			msc_log_debug("rpc: %s/%s is not implemented here",
			    svc->name, svc->methods[i].name);
	if ((rv = nng_rep0_open(&s->sock)) != 0) {
		rv = -EIO;
		goto fail;
	}
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, MSC_RPC_MAX_MSG);
	nng_pipe_notify(s->sock, NNG_PIPE_EV_ADD_POST, pipe_added, NULL);
	nng_listener l;

	if ((rv = nng_listener_create(&l, s->sock, url)) != 0 ||
	    (rv = msc_tls_listener(l, url)) != 0 ||
	    (rv = nng_listener_start(l, 0)) != 0) {
		msc_log_err("rpc: cannot listen on %s: %s", url,
		    nng_strerror(rv));
		nng_close(s->sock);
		rv = rv == NNG_EADDRINUSE ? -EADDRINUSE : -EIO;
		goto fail;
	}
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < 4 && i < s->max_inflight; i++)
		if ((rv = ctx_add(s)) != 0)
			break;
	pthread_mutex_unlock(&s->mu);
	if (rv != 0) {
		msc_server_stop(s);
		return rv;
	}
	*sp = s;
	return 0;
fail_nomem:
	rv = -ENOMEM;
fail:
	free(s->handlers);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
	return rv;
}

void
msc_server_stop(struct msc_server *s)
{
	struct timespec until;
	struct msc_call *c;

	if (s == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&s->mu);
	s->closing = 1;
	while (s->open_calls > 0)
		if (pthread_cond_timedwait(&s->cv, &s->mu, &until) != 0)
			break;
	int leaked = s->open_calls;
	pthread_mutex_unlock(&s->mu);
	nng_close(s->sock);
	SLIST_FOREACH(c, &s->all, link)
		nng_aio_stop(c->aio);
	if (leaked > 0) {
		/* A handler still holds calls: their memory must stay valid. */
		msc_log_warn("rpc: %s stopped with %d calls open", s->svc->name,
		    leaked);
		return;
	}
	while ((c = SLIST_FIRST(&s->all)) != NULL) {
		SLIST_REMOVE_HEAD(&s->all, link);
		nng_aio_free(c->aio);
		if (c->req != NULL)
			protobuf_c_message_free_unpacked(c->req, NULL);
		free(c);
	}
	free(s->handlers);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

int
msc_call_remaining_ms(const struct msc_call *call)
{
	uint64_t now = msc_now_ms();

	if (now >= call->deadline_ms)
		return 0;
	return (int)(call->deadline_ms - now);
}

int
msc_call_bound_ms(struct msc_call *call, int budget_ms)
{
	uint64_t bound = msc_now_ms() +
	    (uint64_t)(budget_ms > 0 ? budget_ms : 0);

	if (budget_ms > 0 &&
	    (!call->caller_deadline || bound < call->deadline_ms))
		call->deadline_ms = bound;
	return msc_call_remaining_ms(call);
}

int
msc_hop_ms(int remaining_ms, int step_ms)
{
	int margin = remaining_ms / 4, left;

	if (margin > MSC_RPC_REPLY_MARGIN_MS)
		margin = MSC_RPC_REPLY_MARGIN_MS;
	left = remaining_ms - margin;
	if (left < 1)
		left = 1;
	if (step_ms > 0 && step_ms < left)
		return step_ms;
	return left;
}

int
msc_call_hop_ms(const struct msc_call *call, int step_ms)
{
	return msc_hop_ms(msc_call_remaining_ms(call), step_ms);
}

void
msc_call_reply(struct msc_call *call, const ProtobufCMessage *resp)
{
	send_status(call, MSC__V1__CODE__OK, 0, NULL, resp);
}

void
msc_call_fail(struct msc_call *call, Msc__V1__Code code, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(void)msc_redact(msg, sizeof(msg), n < 0 || (size_t)n >= sizeof(msg));
	send_status(call, code == MSC__V1__CODE__OK ? MSC__V1__CODE__INTERNAL
						      : code, 0, msg, NULL);
}

void
msc_call_fail_reason(struct msc_call *call, Msc__V1__Code code,
    Msc__V1__Reason reason, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	(void)msc_redact(msg, sizeof(msg), n < 0 || (size_t)n >= sizeof(msg));
	send_status(call, code == MSC__V1__CODE__OK ? MSC__V1__CODE__INTERNAL
						      : code,
	    reason, msg, NULL);
}

void
msc_call_fail_as(struct msc_call *call, Msc__V1__Code code,
    Msc__V1__Reason reason)
{
	msc_call_fail_reason(call, code, reason, "%s", msc_reason_text(reason));
}
