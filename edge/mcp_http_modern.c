/*
 * mcp_http_modern.c - POST /mcp at MCP 2026-07-28: no session; every
 * request carries its version and capabilities in params._meta, and its
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name headers must mirror the
 * body (a load balancer routes on them). Rejections are plain JSON with
 * the spec's statuses; a reply that has notifications before it (a
 * subscription's acknowledgement) goes out as one SSE body.
 */
#include "mcp_http_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_era.h"
#include "mcp_tasks.h"
#include "msc_log.h"
#include "session.pb-c.h"

/* How long the session service has to kill a left client's command. */
#define CANCEL_MS 10000

bool
http_modern_selected(struct http_call *c)
{
	const char *pv = http_header(c, "MCP-Protocol-Version");

	if (http_header(c, "Mcp-Session-Id") != NULL)
		return false;   /* a 2025 session, whatever the body says */
	return mcp_era_body_modern(c->msg) ||
	    (pv != NULL && !mcp_era_legacy_version(pv));
}

static void
answer_reject(struct http_call *c, struct mcp_reject *r)
{
	json_t *err = mcp_era_error(json_object_get(c->msg, "id"), r);

	http_answer_json(c, r->status, err, NULL, NULL);
	json_decref(err);
}

/* Whether header `name` is there and equals `want` once decoded. */
static bool
header_matches(struct http_call *c, const char *name, const char *want)
{
	const char *raw = http_header(c, name);
	char *v;
	bool ok;

	if (raw == NULL || want == NULL)
		return false;
	v = mcp_era_header_value(raw);
	ok = v != NULL && strcmp(v, want) == 0;
	free(v);
	return ok;
}

static bool
check_headers(struct http_call *c, const char *method, struct mcp_reject *r)
{
	json_t *params = json_object_get(c->msg, "params");
	const char *pv = json_string_value(json_object_get(json_object_get(
	    params, "_meta"), MCP_META_VERSION));
	const char *key = mcp_era_name_key(method);
	const char *v = http_header(c, "MCP-Protocol-Version");

	r->status = 400;
	r->code = MCP_ERR_HEADER_MISMATCH;
	r->data = NULL;
	if (v == NULL || strcmp(v, pv) != 0)
		r->message = "Header mismatch: MCP-Protocol-Version must equal "
			     "params._meta's protocolVersion";
	else if (!header_matches(c, "Mcp-Method", method))
		r->message = "Header mismatch: Mcp-Method must equal the "
			     "request's method";
	else if (key != NULL && !header_matches(c, "Mcp-Name",
		     json_string_value(json_object_get(params, key))))
		r->message = "Header mismatch: Mcp-Name must equal the "
			     "request's name or uri";
	else
		return true;
	return false;
}

/*
 * The client closed the connection before the reply: at 2026-07-28 that
 * is the cancellation. The command is killed (Session/CancelExec) and
 * nothing is sent. Runs on the connections' thread (http_conns_watch).
 */
static void
client_gone(void *arg)
{
	struct http_call *c = arg;
	Msc__V1__ExecCallRef ref = MSC__V1__EXEC_CALL_REF__INIT;

	atomic_store(&c->abandoned, true);
	ref.session_id = c->call_sid;
	ref.call_key = c->call_key;
	ref.principal = c->principal;
	if (msc_client_call(c->h->session, &msc__v1__session__descriptor,
		"CancelExec", &ref.base, CANCEL_MS, msc_reply_ignore, NULL) != 0)
		msc_log_warn("http: cancelling a call whose client left failed: "
		    "it could not be sent");
}

/* mcp_conn's exec_sent: watch the connection until the reply. */
static void
modern_exec_sent(void *ctx, const char *sid, const char *key)
{
	struct http_call *c = ctx;
	struct edge_http *h = c->h;

	snprintf(c->call_sid, sizeof(c->call_sid), "%s", sid);
	snprintf(c->call_key, sizeof(c->call_key), "%s", key);
	pthread_mutex_lock(&h->mu);
	if (!c->watch_done)
		c->watch = http_conns_watch(h->conns, c->conn, client_gone, c);
	pthread_mutex_unlock(&h->mu);
}

/* The client of a subscriptions/listen stream left: it ends unsent. */
static void
listener_gone(void *arg)
{
	struct http_call *c = arg;

	atomic_store(&c->abandoned, true);
	atomic_store(&c->mc.closing, true);
}

/* mcp_conn's watch_client: watch the connection until the stream ends. */
static void
modern_watch_client(void *ctx)
{
	struct http_call *c = ctx;
	struct edge_http *h = c->h;

	pthread_mutex_lock(&h->mu);
	if (!c->watch_done && c->watch == NULL)
		c->watch = http_conns_watch(h->conns, c->conn, listener_gone,
		    c);
	pthread_mutex_unlock(&h->mu);
}

/* No more watching: the reply is on its way (or none will come). */
static void
stop_watching(struct http_call *c)
{
	struct http_watch *w;

	pthread_mutex_lock(&c->h->mu);
	c->watch_done = true;
	w = c->watch;
	c->watch = NULL;
	pthread_mutex_unlock(&c->h->mu);
	http_conns_unwatch(c->h->conns, w);
}

/*
 * What the connection sends: notifications (progress, a subscription's)
 * start an SSE stream as they come, and the reply ends it; a reply with
 * nothing before it is plain JSON.
 */
static void
modern_send(void *ctx, json_t *msg)
{
	struct http_call *c = ctx;
	json_t *err = json_object_get(msg, "error");
	int code = (int)json_integer_value(json_object_get(err, "code"));
	bool final = json_object_get(msg, "id") != NULL;

	if (atomic_load(&c->abandoned))
		return;         /* the client closed: it was cancelled */
	if (final)
		stop_watching(c);
	if (http_sse_send(c, msg)) {
		c->replied = c->replied || final;
		return;
	}
	c->replied = true;
	http_answer_json(c, err == NULL ? 200 : code == -32601 ? 404
		: code == -32700 || code == -32600 ? 400 : 200,
	    msg, NULL, NULL);
}

static void
modern_finished(void *ctx)
{
	struct http_call *c = ctx;
	bool streaming;

	stop_watching(c);
	if (!c->replied) {
		/* Cancelled (its client left): nothing more is sent. */
		pthread_mutex_lock(&c->h->mu);
		streaming = c->sse != NULL;
		http_sse_end_locked(c);
		pthread_mutex_unlock(&c->h->mu);
		if (!streaming)         /* resumed, for MHD to close */
			http_answer(c, 200, NULL, NULL, 0, NULL, NULL);
	}
	http_call_unref(c);
}

void
http_modern_run(struct http_call *c)
{
	struct edge_http *h = c->h;
	const char *method = json_string_value(json_object_get(c->msg,
	    "method"));
	struct mcp_reject r;

	if (method == NULL || json_object_get(c->msg, "id") == NULL) {
		/* A notification or a response: accepted, nothing to say. */
		http_answer(c, 202, NULL, NULL, 0, NULL, NULL);
		return;
	}
	if (!mcp_era_check_envelope(c->msg, &r) ||
	    !check_headers(c, method, &r) ||
	    !mcp_era_check_version(c->msg, &r) ||
	    !mcp_era_check_method(method, &r) ||
	    !mcp_tasks_check_caps(c->msg, method, &r)) {
		answer_reject(c, &r);
		return;
	}
	if (!http_call_suspend(c))
		return;
	http_call_ref(c);       /* for the reply */
	mcp_conn_init(&c->mc, h->cfg, h->session, NULL, modern_send, c);
	c->mc.desc = h->desc;
	c->mc.finished = modern_finished;
	c->mc.stateless = true;
	snprintf(c->mc.principal, sizeof(c->mc.principal), "%s",
	    c->principal);
	c->mc.exec_sent = modern_exec_sent;
	c->mc.watch_client = modern_watch_client;
	/*
	 * The reply may come, and modern_finished drop c, before
	 * mcp_conn_handle_json returns (it still reads c->mc): held until then.
	 */
	http_call_ref(c);
	if (!mcp_conn_handle_json(&c->mc, c->msg)) {
		if (!c->replied)
			http_answer(c, 202, NULL, NULL, 0, NULL, NULL);
		http_call_unref(c);     /* the reply's: none is coming */
	}
	http_call_unref(c);
}
