/*
 * mcp_http_post.c - POST /mcp: check the headers, collect the body (one
 * past the limit gets 413 before it is read), Open the session
 * (initialize) or Touch it, run the MCP message, reply.
 */
#include "mcp_http_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_era.h"
#include "mcp_live.h"
#include "msc_log.h"
#include "session.pb-c.h"

static void
http_send(void *ctx, json_t *msg)
{
	struct http_call *c = ctx;
	json_t *err = json_object_get(msg, "error");
	int code = (int)json_integer_value(json_object_get(err, "code"));

	if (http_sse_send(c, msg)) {
		c->replied = json_object_get(msg, "id") != NULL;
		return;
	}
	c->replied = true;
	http_answer_json(c, err != NULL && (code == -32700 || code == -32600)
		? 400
		: 200,
	    msg, NULL, NULL);
}

static void
http_finished(void *ctx)
{
	struct http_call *c = ctx;

	/* A cancelled call gets no response: its stream ends without it. */
	if (!c->replied) {
		pthread_mutex_lock(&c->h->mu);
		http_sse_end_locked(c);
		pthread_mutex_unlock(&c->h->mu);
		http_answer(c, 200, "text/event-stream", "", 0, NULL, NULL);
	}
	http_call_unref(ctx);
}

static void
opened(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct http_call *c = arg;
	json_t *result, *reply;

	if (resp == NULL) {
		http_answer_failed(c, st);
		http_call_unref(c);
		return;
	}
	result = mcp_initialize_result(json_object_get(c->msg, "params"));
	reply = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    json_object_get(c->msg, "id"), "result", result);
	http_answer_json(c, 200, reply, "Mcp-Session-Id",
	    ((Msc__V1__SessionRef *)resp)->session_id);
	json_decref(reply);
	protobuf_c_message_free_unpacked(resp, NULL);
	http_call_unref(c);
}

static void
touched(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct http_call *c = arg;
	struct edge_http *h = c->h;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->reason == MSC__V1__REASON__REASON_SESSION_NOT_FOUND) {
		http_answer_rpc_error(c, 404, -32001,
		    msc_reason_text(MSC__V1__REASON__REASON_SESSION_NOT_FOUND));
		http_call_unref(c);
		return;
	}
	if (st->code != MSC__V1__CODE__OK) {
		http_answer_failed(c, st);
		http_call_unref(c);
		return;
	}
	if (json_object_get(c->msg, "method") == NULL ||
	    json_object_get(c->msg, "id") == NULL) {
		/* A notification or a response: accepted, nothing to say. */
		const char *m = json_string_value(json_object_get(c->msg,
		    "method"));

		if (m != NULL)
			mcp_live_notified(h->session, c->principal,
			    c->session_id, m,
			    json_object_get(c->msg, "params"));
		http_answer(c, 202, NULL, NULL, 0, NULL, NULL);
		http_call_unref(c);
		return;
	}
	mcp_conn_init(&c->mc, h->cfg, h->session, NULL, http_send, c);
	c->mc.desc = h->desc;
	c->mc.finished = http_finished;
	snprintf(c->mc.session_id, sizeof(c->mc.session_id), "%s",
	    c->session_id);
	snprintf(c->mc.principal, sizeof(c->mc.principal), "%s",
	    c->principal);
	/*
	 * The reply may come, and http_finished drop c, before
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

/* A JSON-RPC 2.0 request, notification or response (no batches). */
static bool
jsonrpc_shaped(json_t *msg)
{
	const char *v = json_string_value(json_object_get(msg, "jsonrpc"));
	json_t *method = json_object_get(msg, "method");

	if (!json_is_object(msg) || v == NULL || strcmp(v, "2.0") != 0)
		return false;
	if (method != NULL)
		return json_is_string(method);
	return json_object_get(msg, "result") != NULL ||
	    json_object_get(msg, "error") != NULL;
}

/*
 * The Touch before a tools/call is that call's first step, and bounded
 * like it (MCP_CALL_MAX_MS): at a session service so loaded that it
 * answers late, the call would wait its turn, so the Touch waits too
 * instead of failing "unavailable (deadline exceeded)" (seen at 10,000
 * sessions). What the edge answers itself after the Touch (ping,
 * tools/list, notifications) keeps SESSION_CALL_MS.
 */
static int
touch_ms(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return m != NULL && strcmp(m, "tools/call") == 0 &&
	    json_object_get(msg, "id") != NULL ? MCP_CALL_MAX_MS
					       : SESSION_CALL_MS;
}

static bool
is_initialize(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return m != NULL && strcmp(m, "initialize") == 0 &&
	    json_object_get(msg, "id") != NULL;
}

void
http_post_data(struct http_call *c, const char *data, size_t len)
{
	/* MHD delivers exactly Content-Length bytes; never more. */
	if (len > c->len - c->got)
		len = c->len - c->got;
	memcpy(c->body + c->got, data, len);
	c->got += len;
}

void
http_post_run(struct http_call *c)
{
	struct edge_http *h = c->h;
	Msc__V1__OpenRequest open = MSC__V1__OPEN_REQUEST__INIT;
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	json_error_t jerr;
	json_t *id;
	const char *sid;
	char why[160];
	int rv;

	c->msg = json_loadb(c->body, c->got, JSON_ALLOW_NUL, &jerr);
	if (c->msg == NULL || !jsonrpc_shaped(c->msg)) {
		http_answer_rpc_error(c, 400, c->msg ? -32600 : -32700,
		    c->msg ? "Invalid Request" : "Parse error");
		return;
	}
	if (!mcp_msg_clean(c->msg, &id, why, sizeof(why))) {
		/* Before initialize or a session sees a name cut at a NUL. */
		json_t *err = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc",
		    "2.0", "id", id != NULL ? id : json_null(), "error", "code",
		    -32602, "message", why);

		http_answer_json(c, 400, err, NULL, NULL);
		json_decref(err);
		return;
	}
	if (http_modern_selected(c)) {
		http_modern_run(c);
		return;
	}
	sid = http_header(c, "Mcp-Session-Id");
	if (sid == NULL && !is_initialize(c->msg)) {
		http_answer_rpc_error(c, 400, -32000,
		    "Bad Request: Mcp-Session-Id header is required");
		return;
	}
	if (!http_call_suspend(c))
		return;
	http_call_ref(c);       /* for the reply */
	if (sid == NULL) {
		open.client_name = "http";
		open.idle_timeout_s = (uint32_t)h->cfg->session_timeout;
		open.principal = c->principal;
		rv = msc_client_call(h->session, &msc__v1__session__descriptor,
		    "Open", &open.base, SESSION_CALL_MS, opened, c);
	} else {
		snprintf(c->session_id, sizeof(c->session_id), "%s", sid);
		ref.session_id = c->session_id;
		ref.principal = c->principal;
		rv = msc_client_call(h->session, &msc__v1__session__descriptor,
		    "Touch", &ref.base, touch_ms(c->msg), touched, c);
	}
	if (rv != 0) {
		http_answer_unsent(c, rv);
		http_call_unref(c);
	}
}

unsigned
http_post_start(struct http_call *c)
{
	struct edge_http *h = c->h;
	const char *cl = http_header(c, "Content-Length");
	const char *pv = http_header(c, "MCP-Protocol-Version");
	unsigned long long len;
	char *end;

	if (!http_header_has(c, "Content-Type", "application/json")) {
		http_answer_rpc_error(c, 415, -32000, "Unsupported Media Type: "
		    "Content-Type must be application/json");
		return 415;
	}
	if (!http_header_has(c, "Accept", "*/*") &&
	    !(http_header_has(c, "Accept", "application/json") &&
		http_header_has(c, "Accept", "text/event-stream"))) {
		http_answer_rpc_error(c, 406, -32000, "Not Acceptable: Client "
		    "must accept both application/json and text/event-stream");
		return 406;
	}
	/* Without a session, 2026-07-28 rules decide from the body. */
	if (pv != NULL && !mcp_era_legacy_version(pv) &&
	    http_header(c, "Mcp-Session-Id") != NULL) {
		http_answer_rpc_error(c, 400, -32000,
		    "Bad Request: Unsupported protocol version");
		return 400;
	}
	/* Bodies have a length: no chunked uploads. */
	if (cl == NULL || http_header(c, "Transfer-Encoding") != NULL) {
		http_answer(c, 411, NULL, NULL, 0, NULL, NULL);
		return 411;
	}
	len = strtoull(cl, &end, 10);
	if (*end != '\0' || end == cl) {
		http_answer(c, 400, NULL, NULL, 0, NULL, NULL);
		return 400;
	}
	if (len > EDGE_HTTP_MAX_BODY) {
		http_answer_rpc_error(c, 413, -32600, "Request body too large");
		return 413;
	}
	if (len == 0) {
		http_answer_rpc_error(c, 400, -32700, "Parse error: empty body");
		return 400;
	}
	if (atomic_fetch_add(&h->body_bytes, len) + len > MAX_INFLIGHT_BYTES ||
	    (c->body = malloc(len)) == NULL) {
		atomic_fetch_sub(&h->body_bytes, len);
		http_answer(c, 503, NULL, NULL, 0, "Retry-After", "1");
		return 503;
	}
	c->len = len;
	return 0;
}
