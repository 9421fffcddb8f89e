/*
 * mcp_http_post.c - POST /mcp as an asynchronous state machine: check the
 * headers, read the body (or drain one past the limit before the 413),
 * Open the session (initialize) or Touch it, run the MCP message, reply.
 */
#include "mcp_http_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"
#include "session.pb-c.h"

static const char *const protocols[] = { "2025-11-25", "2025-06-18",
	"2025-03-26", "2024-11-05", NULL };

/* --- POST --------------------------------------------------------------- */

static void
http_send(void *ctx, json_t *msg)
{
	struct http_call *c = ctx;
	json_t *err = json_object_get(msg, "error");
	int code = (int)json_integer_value(json_object_get(err, "code"));

	c->replied = true;
	if (http_call_claim(c))
		http_respond_json(c->aio, err != NULL && (code == -32700 || code == -32600)
		? 400
		: 200,
	    msg, NULL, NULL);
}

static void
http_finished(void *ctx)
{
	http_call_free(ctx);
}

static void
opened(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct http_call *c = arg;
	json_t *result, *reply;

	if (resp == NULL) {
		if (http_call_claim(c))
			http_respond_failed(c->aio, st);
		http_call_free(c);
		return;
	}
	result = mcp_initialize_result(json_object_get(c->msg, "params"));
	reply = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    json_object_get(c->msg, "id"), "result", result);
	if (http_call_claim(c))
		http_respond_json(c->aio, 200, reply, "Mcp-Session-Id",
	    ((Msc__V1__SessionRef *)resp)->session_id);
	json_decref(reply);
	protobuf_c_message_free_unpacked(resp, NULL);
	http_call_free(c);
}

static void
touched(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct http_call *c = arg;
	struct edge_http *h = c->h;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code == MSC__V1__CODE__NOT_FOUND) {
		if (http_call_claim(c))
			http_respond_rpc_error(c->aio, 404, -32001, "Session not found");
		http_call_free(c);
		return;
	}
	if (st->code != MSC__V1__CODE__OK) {
		if (http_call_claim(c))
			http_respond_failed(c->aio, st);
		http_call_free(c);
		return;
	}
	if (json_object_get(c->msg, "method") == NULL ||
	    json_object_get(c->msg, "id") == NULL) {
		/* A notification or a response: accepted, nothing to say. */
		if (http_call_claim(c))
			http_respond(c->aio, 202, NULL, NULL, 0, NULL, NULL);
		http_call_free(c);
		return;
	}
	mcp_conn_init(&c->mc, h->cfg, h->session, h->description, http_send, c);
	c->mc.finished = http_finished;
	snprintf(c->mc.session_id, sizeof(c->mc.session_id), "%s",
	    c->session_id);
	if (mcp_conn_handle_json(&c->mc, c->msg))
		return;         /* http_finished frees c after the reply */
	if (!c->replied)
		if (http_call_claim(c))
			http_respond(c->aio, 202, NULL, NULL, 0, NULL, NULL);
	http_call_free(c);
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

static bool
is_initialize(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return m != NULL && strcmp(m, "initialize") == 0 &&
	    json_object_get(msg, "id") != NULL;
}

static void
body_read(void *arg)
{
	struct http_call *c = arg;
	struct edge_http *h = c->h;
	Msc__V1__OpenRequest open = MSC__V1__OPEN_REQUEST__INIT;
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	json_error_t jerr;
	const char *sid;
	int rv;

	if (nng_aio_result(c->rd) != 0) {
		if (http_call_claim(c))
			nng_aio_finish(c->aio, nng_aio_result(c->rd));
		http_call_free(c);
		return;
	}
	c->msg = json_loadb(c->body, c->len, JSON_ALLOW_NUL, &jerr);
	if (c->msg == NULL || !jsonrpc_shaped(c->msg)) {
		if (http_call_claim(c))
			http_respond_rpc_error(c->aio, 400, c->msg ? -32600 : -32700,
		    c->msg ? "Invalid Request" : "Parse error");
		http_call_free(c);
		return;
	}
	sid = nng_http_req_get_header(c->req, "Mcp-Session-Id");
	if (is_initialize(c->msg) && sid == NULL) {
		open.client_name = "http";
		open.idle_timeout_s = (uint32_t)h->cfg->session_timeout;
		rv = msc_client_call(h->session, &msc__v1__session__descriptor,
		    "Open", &open.base, SESSION_CALL_MS, opened, c);
	} else if (sid == NULL) {
		if (http_call_claim(c))
			http_respond_rpc_error(c->aio, 400, -32000,
		    "Bad Request: Mcp-Session-Id header is required");
		http_call_free(c);
		return;
	} else {
		snprintf(c->session_id, sizeof(c->session_id), "%s", sid);
		ref.session_id = c->session_id;
		rv = msc_client_call(h->session, &msc__v1__session__descriptor,
		    "Touch", &ref.base, SESSION_CALL_MS, touched, c);
	}
	if (rv != 0) {
		if (http_call_claim(c))
			http_respond_unsent(c->aio, rv);
		http_call_free(c);
	}
}

/*
 * A body over the limit: the 413 goes out at once, then the body still on
 * its way is read and dropped before the connection closes, so that a
 * client still sending gets the answer instead of a reset connection. The
 * connection is taken over from the server for that (hijacked). Past
 * DRAIN_MAX, or when the client goes quiet, it closes straight away.
 */
#define DRAIN_MAX (64u * 1024 * 1024)
#define DRAIN_IDLE_MS 1000      /* per chunk */
#define DRAIN_CHUNK 65536

struct drain {
	nng_http_conn *conn;            /* ours, after the hijack */
	nng_http_req *req;              /* ours too */
	nng_http_res *res;
	nng_aio *aio;
	bool reading;
	unsigned long long left;
	char buf[DRAIN_CHUNK];
};

static void
drain_end(struct drain *d)
{
	nng_http_conn_close(d->conn);
	nng_http_res_free(d->res);
	nng_http_req_free(d->req);
	nng_aio_reap(d->aio);
	free(d);
}

static void
drain_step(void *arg)
{
	struct drain *d = arg;
	nng_iov iov;

	if (nng_aio_result(d->aio) != 0) {
		drain_end(d);
		return;
	}
	if (d->reading)
		d->left -= nng_aio_count(d->aio);
	d->reading = true;
	if (d->left == 0) {
		drain_end(d);
		return;
	}
	iov.iov_buf = d->buf;
	iov.iov_len = d->left < DRAIN_CHUNK ? (size_t)d->left : DRAIN_CHUNK;
	nng_aio_set_iov(d->aio, 1, &iov);
	nng_aio_set_timeout(d->aio, DRAIN_IDLE_MS);
	nng_http_conn_read(d->conn, d->aio);
}

static void
drain_then_413(nng_aio *aio, nng_http_conn *conn, nng_http_req *req,
    unsigned long long len)
{
	static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":null,"
	    "\"error\":{\"code\":-32600,\"message\":\"Request body too "
	    "large\"}}";
	struct drain *d = NULL;

	if (len > DRAIN_MAX || (d = calloc(1, sizeof(*d))) == NULL ||
	    nng_aio_alloc(&d->aio, drain_step, d) != 0 ||
	    nng_http_res_alloc(&d->res) != 0 || nng_http_hijack(conn) != 0) {
		if (d != NULL) {
			if (d->aio != NULL)
				nng_aio_free(d->aio);
			if (d->res != NULL)
				nng_http_res_free(d->res);
			free(d);
		}
		http_respond(aio, 413, NULL, NULL, 0, "Connection", "close");
		return;
	}
	/* The server lets go of the connection: no response from it. */
	nng_aio_finish(aio, 0);
	d->conn = conn;
	d->req = req;
	d->left = len;
	nng_http_res_set_status(d->res, 413);
	nng_http_res_set_header(d->res, "Content-Type", "application/json");
	nng_http_res_set_header(d->res, "Connection", "close");
	nng_http_res_copy_data(d->res, body, sizeof(body) - 1);
	nng_aio_set_timeout(d->aio, DRAIN_IDLE_MS * 5);
	nng_http_conn_write_res(conn, d->res, d->aio);
}

static bool
protocol_supported(const char *v)
{
	for (int i = 0; protocols[i] != NULL; i++)
		if (strcmp(v, protocols[i]) == 0)
			return true;
	return false;
}

void
http_handle_post(struct edge_http *h, nng_aio *aio, nng_http_req *req,
    nng_http_conn *conn)
{
	const char *cl = nng_http_req_get_header(req, "Content-Length");
	const char *pv = nng_http_req_get_header(req, "MCP-Protocol-Version");
	struct http_call *c = NULL;
	unsigned long long len;
	nng_iov iov;
	char *end;

	if (!http_header_has(req, "Content-Type", "application/json")) {
		http_respond_rpc_error(aio, 415, -32000, "Unsupported Media Type: "
		    "Content-Type must be application/json");
		return;
	}
	if (!http_header_has(req, "Accept", "*/*") &&
	    !(http_header_has(req, "Accept", "application/json") &&
		http_header_has(req, "Accept", "text/event-stream"))) {
		http_respond_rpc_error(aio, 406, -32000, "Not Acceptable: Client "
		    "must accept both application/json and text/event-stream");
		return;
	}
	if (pv != NULL && !protocol_supported(pv)) {
		http_respond_rpc_error(aio, 400, -32000,
		    "Bad Request: Unsupported protocol version");
		return;
	}
	if (cl == NULL) {
		http_respond(aio, 411, NULL, NULL, 0, "Connection", "close");
		return;
	}
	len = strtoull(cl, &end, 10);
	if (*end != '\0' || end == cl) {
		http_respond(aio, 400, NULL, NULL, 0, "Connection", "close");
		return;
	}
	if (len > EDGE_HTTP_MAX_BODY) {
		drain_then_413(aio, conn, req, len);
		return;
	}
	if (len == 0) {
		http_respond_rpc_error(aio, 400, -32700, "Parse error: empty body");
		return;
	}
	if (atomic_fetch_add(&h->body_bytes, len) + len > MAX_INFLIGHT_BYTES ||
	    (c = calloc(1, sizeof(*c))) == NULL ||
	    (c->body = malloc(len)) == NULL ||
	    nng_aio_alloc(&c->rd, body_read, c) != 0) {
		atomic_fetch_sub(&h->body_bytes, len);
		if (c != NULL)
			free(c->body);
		free(c);
		http_respond(aio, 503, NULL, NULL, 0, "Retry-After", "1");
		return;
	}
	atomic_fetch_add(&h->open, 1);
	c->h = h;
	c->aio = aio;
	pthread_mutex_lock(&h->mu);
	c->next = h->calls;
	if (h->calls != NULL)
		h->calls->prev = c;
	h->calls = c;
	pthread_mutex_unlock(&h->mu);
	c->req = req;
	c->len = len;
	iov.iov_buf = c->body;
	iov.iov_len = len;
	nng_aio_set_iov(c->rd, 1, &iov);
	nng_aio_set_timeout(c->rd, 60000);      /* a stalled upload ends */
	nng_http_conn_read_all(conn, c->rd);
}

