/*
 * mcp_http.c - the Streamable HTTP transport: the server, routing, the
 * DNS-rebinding guard, bearer auth, DELETE, and the replies; POST is in
 * mcp_http_post.c. No thread waits on anything.
 */
#include "mcp_http_int.h"

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

void
http_respond(nng_aio *aio, uint16_t status, const char *type, const char *body,
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

void
http_respond_json(nng_aio *aio, uint16_t status, json_t *body, const char *hname,
    const char *hvalue)
{
	char *text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII);

	http_respond(aio, status, "application/json", text ? text : "{}",
	    text ? strlen(text) : 2, hname, hvalue);
	free(text);
}

/* A JSON-RPC error as the whole HTTP reply. */
void
http_respond_rpc_error(nng_aio *aio, uint16_t status, int code, const char *msg)
{
	json_t *body = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", "error", "code", code, "message", msg);

	http_respond_json(aio, status, body, NULL, NULL);
	json_decref(body);
}

void
http_respond_unsent(nng_aio *aio, int rv)
{
	int retry_s;
	const char *text = mcp_unsent_text(rv, &retry_s);
	char after[16];
	json_t *body = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", "error", "code", -32603, "message", text);

	snprintf(after, sizeof(after), "%d", retry_s);
	http_respond_json(aio, 503, body, "Retry-After", after);
	json_decref(body);
}

void
http_respond_failed(nng_aio *aio, const struct msc_status *st)
{
	char buf[512];
	const char *text = mcp_failed_text(st, buf, sizeof(buf));
	json_t *body = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", "error", "code", -32603, "message", text);
	bool retry = st->code == MSC__V1__CODE__UNAVAILABLE ||
	    st->code == MSC__V1__CODE__RESOURCE_EXHAUSTED ||
	    st->code == MSC__V1__CODE__DEADLINE_EXCEEDED;

	http_respond_json(aio, 503, body, retry ? "Retry-After" : NULL,
	    retry ? "5" : NULL);
	json_decref(body);
}

bool
http_call_claim(struct http_call *c)
{
	bool mine;

	pthread_mutex_lock(&c->h->mu);
	mine = !c->answered;
	c->answered = true;
	pthread_mutex_unlock(&c->h->mu);
	return mine;
}

static void
server_free(struct edge_http *h)
{
	pthread_mutex_destroy(&h->mu);
	free(h);
}

void
http_call_free(struct http_call *c)
{
	struct edge_http *h = c->h;
	bool last;

	pthread_mutex_lock(&h->mu);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else if (h->calls == c)
		h->calls = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	/* The last call of a stopped server frees it. */
	last = atomic_fetch_sub(&h->open, 1) == 1 && h->stopped;
	pthread_mutex_unlock(&h->mu);
	atomic_fetch_sub(&h->body_bytes, c->len);
	if (c->rd != NULL)
		nng_aio_reap(c->rd);    /* may run inside its own callback */
	json_decref(c->msg);
	free(c->body);
	free(c);
	if (last)
		server_free(h);
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

bool
http_header_has(nng_http_req *req, const char *name, const char *value)
{
	const char *v = nng_http_req_get_header(req, name);

	return v != NULL && strcasestr(v, value) != NULL;
}

/* --- DELETE --------------------------------------------------------------- */

static void
closed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	nng_aio *aio = arg;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code == MSC__V1__CODE__NOT_FOUND)
		http_respond_rpc_error(aio, 404, -32001, "Session not found");
	else if (st->code != MSC__V1__CODE__OK)
		http_respond_failed(aio, st);
	else
		http_respond(aio, 200, NULL, NULL, 0, NULL, NULL);
}

static void
handle_delete(struct edge_http *h, nng_aio *aio, nng_http_req *req)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	const char *sid = nng_http_req_get_header(req, "Mcp-Session-Id");
	int rv;

	if (sid == NULL) {
		http_respond_rpc_error(aio, 400, -32000,
		    "Bad Request: Mcp-Session-Id header is required");
		return;
	}
	ref.session_id = (char *)sid;
	if ((rv = msc_client_call(h->session, &msc__v1__session__descriptor,
		 "Close", &ref.base, 120000, closed, aio)) != 0)
		http_respond_unsent(aio, rv);
}

/* --- routing ------------------------------------------------------------ */

static void
on_health(nng_aio *aio)
{
	static const char body[] = "{\"status\":\"ok\"}";

	http_respond(aio, 200, "application/json", body, sizeof(body) - 1, NULL,
	    NULL);
}

static void
on_root(nng_aio *aio)
{
	static const char body[] =
	    "{\"name\":\"mcp-sandbox-computer-vm-for-ai\",\"mcp_endpoint\":"
	    "\"/mcp\",\"dashboard_resource\":\"ui://kilntainers/computers\","
	    "\"health\":\"/healthz\"}";

	http_respond(aio, 200, "application/json", body, sizeof(body) - 1, NULL,
	    NULL);
}

/*
 * Every request comes here: one handler for the whole tree, so that every
 * path starting with /mcp is authenticated, whatever follows it.
 */
static void
on_request(nng_aio *aio)
{
	struct edge_http *h = nng_http_handler_get_data(nng_aio_get_input(aio,
	    1));
	nng_http_req *req = nng_aio_get_input(aio, 0);
	nng_http_conn *conn = nng_aio_get_input(aio, 2);
	const char *method = nng_http_req_get_method(req);
	const char *uri = nng_http_req_get_uri(req);
	size_t plen = strcspn(uri, "?");
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	uint16_t refused;

	if (strncmp(uri, "/mcp", 4) != 0) {
		if (get && plen == 8 && strncmp(uri, "/healthz", 8) == 0)
			on_health(aio);
		else if (get && plen == 1)
			on_root(aio);
		else
			http_respond(aio, 404, NULL, NULL, 0, NULL, NULL);
		return;
	}
	if ((refused = rebinding_guard(h, req)) != 0) {
		http_respond_rpc_error(aio, refused, -32000, refused == 421
			? "Invalid Host header"
			: "Invalid Origin header");
		return;
	}
	if (!authorized(h, req)) {
		http_respond(aio, 401, "application/json", "{\"error\":\"unauthorized\"}",
		    24, "WWW-Authenticate", "Bearer");
		return;
	}
	if (plen != 4) {        /* only /mcp itself below /mcp */
		http_respond(aio, 404, NULL, NULL, 0, NULL, NULL);
		return;
	}
	if (strcmp(method, "POST") == 0)
		http_handle_post(h, aio, req, conn);
	else if (strcmp(method, "DELETE") == 0)
		handle_delete(h, aio, req);
	else
		http_respond(aio, 405, NULL, NULL, 0, "Allow", "POST, DELETE");
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
	pthread_mutex_init(&h->mu, NULL);
	h->loopback = strcmp(cfg->host, "127.0.0.1") == 0 ||
	    strcmp(cfg->host, "localhost") == 0 || strcmp(cfg->host, "::1") == 0;
	snprintf(url, sizeof(url), strchr(cfg->host, ':') ? "http://[%s]:%ld"
							  : "http://%s:%ld",
	    cfg->host, cfg->port);
	if ((rv = nng_url_parse(&h->url, url)) != 0 ||
	    (rv = nng_http_server_hold(&h->srv, h->url)) != 0 ||
	    (rv = add_handler(h, "/", on_request, NULL, true)) != 0 ||
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
	int open;

	if (h == NULL)
		return;
	/*
	 * Calls still waiting for a command get 503 now: the server's stop
	 * waits for every open request.
	 */
	pthread_mutex_lock(&h->mu);
	for (struct http_call *c = h->calls; c != NULL; c = c->next) {
		if (c->answered)
			continue;
		json_t *id = c->msg ? json_object_get(c->msg, "id") : NULL;
		json_t *err = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc",
		    "2.0", "id", id ? id : json_null(), "error", "code", -32603,
		    "message", "the server is shutting down; retry");

		c->answered = true;
		http_respond_json(c->aio, 503, err, NULL, NULL);
		json_decref(err);
	}
	pthread_mutex_unlock(&h->mu);
	if (h->srv != NULL) {
		nng_http_server_stop(h->srv);
		nng_http_server_release(h->srv);
	}
	if (h->url != NULL)
		nng_url_free(h->url);
	/* Calls still open hold h: the last one frees it. */
	pthread_mutex_lock(&h->mu);
	h->stopped = true;
	open = atomic_load(&h->open);
	pthread_mutex_unlock(&h->mu);
	if (open == 0)
		server_free(h);
}
