/*
 * mcp_http.c - the Streamable HTTP transport: routing, the DNS-rebinding
 * guard, bearer auth, header checks, and each POST/DELETE as a small
 * asynchronous state machine (read body -> Open or Touch the session ->
 * MCP -> reply). No thread waits on anything.
 */
#include "mcp_http.h"

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>
#include <nng/supplemental/util/platform.h>

#include "mcp.h"
#include "msc_log.h"
#include "session.pb-c.h"

#define MAX_INFLIGHT_BYTES (256u * 1024 * 1024)
#define SESSION_CALL_MS 15000

struct edge_http {
	const struct msc_cfg *cfg;
	struct msc_client *session;
	const char *description;
	nng_url *url;
	nng_http_server *srv;
	bool loopback;
	atomic_int open;              /* POST/DELETE calls in flight */
	atomic_size_t body_bytes;     /* request bodies held in memory */
};

/* One POST or DELETE to /mcp, from the handler until the reply. */
struct http_call {
	struct edge_http *h;
	nng_aio *aio;                 /* the server's; finished once */
	nng_http_req *req;            /* borrowed from the server */
	nng_aio *rd;                  /* our body read */
	char *body;
	size_t len;
	json_t *msg;
	char session_id[64];
	struct mcp_conn mc;
	bool replied;
};

static const char *const protocols[] = { "2025-11-25", "2025-06-18",
	"2025-03-26", "2024-11-05", NULL };

/* Finishes the server's aio with a response; status 0 = hard close. */
static void
respond(nng_aio *aio, uint16_t status, const char *type, const char *body,
    size_t len, const char *hname, const char *hvalue)
{
	nng_http_res *res;

	if (nng_http_res_alloc(&res) != 0) {
		nng_aio_finish(aio, NNG_ENOMEM);
		return;
	}
	nng_http_res_set_status(res, status);
	if (type != NULL)
		nng_http_res_set_header(res, "Content-Type", type);
	if (hname != NULL)
		nng_http_res_set_header(res, hname, hvalue);
	if (body != NULL && len > 0)
		nng_http_res_copy_data(res, body, len);
	else    /* else clients wait for a body until the connection ends */
		nng_http_res_set_header(res, "Content-Length", "0");
	nng_aio_set_output(aio, 0, res);
	nng_aio_finish(aio, 0);
}

static void
respond_json(nng_aio *aio, uint16_t status, json_t *body, const char *hname,
    const char *hvalue)
{
	char *text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII);

	respond(aio, status, "application/json", text ? text : "{}",
	    text ? strlen(text) : 2, hname, hvalue);
	free(text);
}

/* A JSON-RPC error as the whole HTTP reply. */
static void
respond_rpc_error(nng_aio *aio, uint16_t status, int code, const char *msg)
{
	json_t *body = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", "error", "code", code, "message", msg);

	respond_json(aio, status, body, NULL, NULL);
	json_decref(body);
}

static void
call_free(struct http_call *c)
{
	atomic_fetch_sub(&c->h->body_bytes, c->len);
	atomic_fetch_sub(&c->h->open, 1);
	if (c->rd != NULL)
		nng_aio_reap(c->rd);    /* may run inside its own callback */
	json_decref(c->msg);
	free(c->body);
	free(c);
}

/* Constant-time comparison of a presented secret with ours. */
static bool
secret_equal(const char *given, size_t glen, const char *ours, size_t olen)
{
	unsigned char diff = (unsigned char)(glen != olen);

	for (size_t i = 0; i < olen; i++)
		diff |= (unsigned char)(ours[i] ^ (i < glen ? given[i] : 0));
	return diff == 0;
}

static bool
authorized(const struct edge_http *h, nng_http_req *req)
{
	const char *token = h->cfg->auth_token;
	const char *auth, *sp;

	if (token == NULL || *token == '\0')
		return true;
	auth = nng_http_req_get_header(req, "Authorization");
	if (auth == NULL || (sp = strchr(auth, ' ')) == NULL ||
	    (size_t)(sp - auth) != 6 || strncasecmp(auth, "Bearer", 6) != 0)
		return false;
	return secret_equal(sp + 1, strlen(sp + 1), token, strlen(token));
}

/* host is "name", "name:port", "[v6]" or "[v6]:port". */
static bool
loopback_host(const char *host)
{
	static const char *const names[] = { "127.0.0.1", "localhost",
		"[::1]", NULL };

	for (int i = 0; names[i] != NULL; i++) {
		size_t n = strlen(names[i]);

		if (strncasecmp(host, names[i], n) == 0 &&
		    (host[n] == '\0' || host[n] == ':'))
			return true;
	}
	return false;
}

/* Returns 0, or the status that refuses a DNS-rebinding attempt. */
static uint16_t
rebinding_guard(const struct edge_http *h, nng_http_req *req)
{
	const char *host, *origin;

	if (!h->loopback)
		return 0;
	host = nng_http_req_get_header(req, "Host");
	if (host != NULL && !loopback_host(host))
		return 421;
	origin = nng_http_req_get_header(req, "Origin");
	if (origin != NULL) {
		const char *rest = NULL;

		if (strncasecmp(origin, "http://", 7) == 0)
			rest = origin + 7;
		else if (strncasecmp(origin, "https://", 8) == 0)
			rest = origin + 8;
		if (rest == NULL || !loopback_host(rest))
			return 403;
	}
	return 0;
}

static bool
header_has(nng_http_req *req, const char *name, const char *value)
{
	const char *v = nng_http_req_get_header(req, name);

	return v != NULL && strcasestr(v, value) != NULL;
}

/* --- POST --------------------------------------------------------------- */

static void
http_send(void *ctx, json_t *msg)
{
	struct http_call *c = ctx;
	json_t *err = json_object_get(msg, "error");
	int code = (int)json_integer_value(json_object_get(err, "code"));

	c->replied = true;
	respond_json(c->aio, err != NULL && (code == -32700 || code == -32600)
		? 400
		: 200,
	    msg, NULL, NULL);
}

static void
http_finished(void *ctx)
{
	call_free(ctx);
}

static void
opened(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct http_call *c = arg;
	json_t *result, *reply;

	if (resp == NULL) {
		respond_rpc_error(c->aio, 503, -32603, st->message);
		call_free(c);
		return;
	}
	result = mcp_initialize_result(json_object_get(c->msg, "params"));
	reply = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    json_object_get(c->msg, "id"), "result", result);
	respond_json(c->aio, 200, reply, "Mcp-Session-Id",
	    ((Msc__V1__SessionRef *)resp)->session_id);
	json_decref(reply);
	protobuf_c_message_free_unpacked(resp, NULL);
	call_free(c);
}

static void
touched(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct http_call *c = arg;
	struct edge_http *h = c->h;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code == MSC__V1__CODE__NOT_FOUND) {
		respond_rpc_error(c->aio, 404, -32001, "Session not found");
		call_free(c);
		return;
	}
	if (st->code != MSC__V1__CODE__OK) {
		respond_rpc_error(c->aio, 503, -32603, st->message);
		call_free(c);
		return;
	}
	if (json_object_get(c->msg, "method") == NULL ||
	    json_object_get(c->msg, "id") == NULL) {
		/* A notification or a response: accepted, nothing to say. */
		respond(c->aio, 202, NULL, NULL, 0, NULL, NULL);
		call_free(c);
		return;
	}
	mcp_conn_init(&c->mc, h->cfg, h->session, h->description, http_send, c);
	c->mc.finished = http_finished;
	snprintf(c->mc.session_id, sizeof(c->mc.session_id), "%s",
	    c->session_id);
	if (mcp_conn_handle_json(&c->mc, c->msg))
		return;         /* http_finished frees c after the reply */
	if (!c->replied)
		respond(c->aio, 202, NULL, NULL, 0, NULL, NULL);
	call_free(c);
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
		nng_aio_finish(c->aio, nng_aio_result(c->rd));
		call_free(c);
		return;
	}
	c->msg = json_loadb(c->body, c->len, JSON_ALLOW_NUL, &jerr);
	if (c->msg == NULL || !json_is_object(c->msg)) {
		respond_rpc_error(c->aio, 400, c->msg ? -32600 : -32700,
		    c->msg ? "Invalid Request" : "Parse error");
		call_free(c);
		return;
	}
	sid = nng_http_req_get_header(c->req, "Mcp-Session-Id");
	if (is_initialize(c->msg) && sid == NULL) {
		open.client_name = "http";
		open.idle_timeout_s = (uint32_t)h->cfg->session_timeout;
		rv = msc_client_call(h->session, &msc__v1__session__descriptor,
		    "Open", &open.base, SESSION_CALL_MS, opened, c);
	} else if (sid == NULL) {
		respond_rpc_error(c->aio, 400, -32000,
		    "Bad Request: Mcp-Session-Id header is required");
		call_free(c);
		return;
	} else {
		snprintf(c->session_id, sizeof(c->session_id), "%s", sid);
		ref.session_id = c->session_id;
		rv = msc_client_call(h->session, &msc__v1__session__descriptor,
		    "Touch", &ref.base, SESSION_CALL_MS, touched, c);
	}
	if (rv != 0) {
		respond_rpc_error(c->aio, 503, -32603,
		    "the session service is overloaded");
		call_free(c);
	}
}

static bool
protocol_supported(const char *v)
{
	for (int i = 0; protocols[i] != NULL; i++)
		if (strcmp(v, protocols[i]) == 0)
			return true;
	return false;
}

static void
handle_post(struct edge_http *h, nng_aio *aio, nng_http_req *req,
    nng_http_conn *conn)
{
	const char *cl = nng_http_req_get_header(req, "Content-Length");
	const char *pv = nng_http_req_get_header(req, "MCP-Protocol-Version");
	struct http_call *c = NULL;
	unsigned long long len;
	nng_iov iov;
	char *end;

	if (!header_has(req, "Content-Type", "application/json")) {
		respond_rpc_error(aio, 415, -32000, "Unsupported Media Type: "
		    "Content-Type must be application/json");
		return;
	}
	if (!header_has(req, "Accept", "*/*") &&
	    !(header_has(req, "Accept", "application/json") &&
		header_has(req, "Accept", "text/event-stream"))) {
		respond_rpc_error(aio, 406, -32000, "Not Acceptable: Client "
		    "must accept both application/json and text/event-stream");
		return;
	}
	if (pv != NULL && !protocol_supported(pv)) {
		respond_rpc_error(aio, 400, -32000,
		    "Bad Request: Unsupported protocol version");
		return;
	}
	if (cl == NULL) {
		respond(aio, 411, NULL, NULL, 0, "Connection", "close");
		return;
	}
	len = strtoull(cl, &end, 10);
	if (*end != '\0' || end == cl) {
		respond(aio, 400, NULL, NULL, 0, "Connection", "close");
		return;
	}
	if (len > EDGE_HTTP_MAX_BODY) {
		/* The body stays unread: close the connection after this. */
		respond_rpc_error(aio, 413, -32600, "Request body too large");
		return;
	}
	if (len == 0) {
		respond_rpc_error(aio, 400, -32700, "Parse error: empty body");
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
		respond(aio, 503, NULL, NULL, 0, "Retry-After", "1");
		return;
	}
	atomic_fetch_add(&h->open, 1);
	c->h = h;
	c->aio = aio;
	c->req = req;
	c->len = len;
	iov.iov_buf = c->body;
	iov.iov_len = len;
	nng_aio_set_iov(c->rd, 1, &iov);
	nng_aio_set_timeout(c->rd, 60000);      /* a stalled upload ends */
	nng_http_conn_read_all(conn, c->rd);
}

/* --- DELETE --------------------------------------------------------------- */

static void
closed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	nng_aio *aio = arg;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code == MSC__V1__CODE__NOT_FOUND)
		respond_rpc_error(aio, 404, -32001, "Session not found");
	else if (st->code != MSC__V1__CODE__OK)
		respond_rpc_error(aio, 503, -32603, st->message);
	else
		respond(aio, 200, NULL, NULL, 0, NULL, NULL);
}

static void
handle_delete(struct edge_http *h, nng_aio *aio, nng_http_req *req)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	const char *sid = nng_http_req_get_header(req, "Mcp-Session-Id");

	if (sid == NULL) {
		respond_rpc_error(aio, 400, -32000,
		    "Bad Request: Mcp-Session-Id header is required");
		return;
	}
	ref.session_id = (char *)sid;
	if (msc_client_call(h->session, &msc__v1__session__descriptor, "Close",
		&ref.base, 120000, closed, aio) != 0)
		respond_rpc_error(aio, 503, -32603,
		    "the session service is overloaded");
}

/* --- routing ------------------------------------------------------------ */

static void
on_mcp(nng_aio *aio)
{
	struct edge_http *h = nng_http_handler_get_data(nng_aio_get_input(aio,
	    1));
	nng_http_req *req = nng_aio_get_input(aio, 0);
	nng_http_conn *conn = nng_aio_get_input(aio, 2);
	const char *method = nng_http_req_get_method(req);
	const char *uri = nng_http_req_get_uri(req);
	size_t plen = strcspn(uri, "?");
	uint16_t refused;

	if ((refused = rebinding_guard(h, req)) != 0) {
		respond_rpc_error(aio, refused, -32000, refused == 421
			? "Invalid Host header"
			: "Invalid Origin header");
		return;
	}
	if (!authorized(h, req)) {
		respond(aio, 401, "application/json", "{\"error\":\"unauthorized\"}",
		    24, "WWW-Authenticate", "Bearer");
		return;
	}
	if (plen != 4) {        /* only /mcp itself below /mcp */
		respond(aio, 404, NULL, NULL, 0, NULL, NULL);
		return;
	}
	if (strcmp(method, "POST") == 0)
		handle_post(h, aio, req, conn);
	else if (strcmp(method, "DELETE") == 0)
		handle_delete(h, aio, req);
	else
		respond(aio, 405, NULL, NULL, 0, "Allow", "POST, DELETE");
}

static void
on_health(nng_aio *aio)
{
	static const char body[] = "{\"status\":\"ok\"}";

	respond(aio, 200, "application/json", body, sizeof(body) - 1, NULL,
	    NULL);
}

static void
on_root(nng_aio *aio)
{
	static const char body[] =
	    "{\"name\":\"mcp-sandbox-computer-vm-for-ai\",\"mcp_endpoint\":"
	    "\"/mcp\",\"dashboard_resource\":\"ui://kilntainers/computers\","
	    "\"health\":\"/healthz\"}";

	respond(aio, 200, "application/json", body, sizeof(body) - 1, NULL,
	    NULL);
}

static int
add_handler(struct edge_http *h, const char *path, void (*cb)(nng_aio *),
    const char *method, bool tree)
{
	nng_http_handler *hd;
	int rv;

	if ((rv = nng_http_handler_alloc(&hd, path, cb)) != 0)
		return rv;
	if ((rv = nng_http_handler_set_method(hd, method)) != 0 ||
	    (rv = nng_http_handler_set_data(hd, h, NULL)) != 0 ||
	    (rv = nng_http_handler_collect_body(hd, false, 0)) != 0 ||
	    (tree && (rv = nng_http_handler_set_tree(hd)) != 0) ||
	    (rv = nng_http_server_add_handler(h->srv, hd)) != 0) {
		nng_http_handler_free(hd);
		return rv;
	}
	return 0;
}

int
edge_http_start(const struct msc_cfg *cfg, struct msc_client *session,
    const char *description, struct edge_http **hp)
{
	struct edge_http *h;
	char url[300];
	int rv;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return -ENOMEM;
	h->cfg = cfg;
	h->session = session;
	h->description = description;
	h->loopback = strcmp(cfg->host, "127.0.0.1") == 0 ||
	    strcmp(cfg->host, "localhost") == 0 || strcmp(cfg->host, "::1") == 0;
	snprintf(url, sizeof(url), strchr(cfg->host, ':') ? "http://[%s]:%ld"
							  : "http://%s:%ld",
	    cfg->host, cfg->port);
	if ((rv = nng_url_parse(&h->url, url)) != 0 ||
	    (rv = nng_http_server_hold(&h->srv, h->url)) != 0 ||
	    (rv = add_handler(h, "/mcp", on_mcp, NULL, true)) != 0 ||
	    (rv = add_handler(h, "/healthz", on_health, "GET", false)) != 0 ||
	    (rv = add_handler(h, "/", on_root, "GET", false)) != 0 ||
	    (rv = nng_http_server_start(h->srv)) != 0) {
		msc_log_err("cannot serve HTTP on %s: %s", url,
		    nng_strerror(rv));
		edge_http_stop(h);
		return -EIO;
	}
	msc_log_info("serving MCP over HTTP on %s/mcp", url);
	*hp = h;
	return 0;
}

void
edge_http_stop(struct edge_http *h)
{
	if (h == NULL)
		return;
	if (h->srv != NULL) {
		nng_http_server_stop(h->srv);
		nng_http_server_release(h->srv);
	}
	/* Replies still on their way hold the server struct. */
	for (int i = 0; i < 200 && atomic_load(&h->open) > 0; i++)
		nng_msleep(10);
	if (h->url != NULL)
		nng_url_free(h->url);
	if (atomic_load(&h->open) == 0)
		free(h);
}
