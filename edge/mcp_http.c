/*
 * mcp_http.c - the Streamable HTTP transport on libmicrohttpd: the
 * server, MHD's callbacks, routing and DELETE. Elsewhere: a request's
 * references and its SSE stream (mcp_http_call.c), POST
 * (mcp_http_post.c; the 2026 era's in mcp_http_modern.c), the replies
 * (mcp_http_answer.c), the share a proxied client counts in
 * (mcp_http_client.c), the Host/Origin guard and auth
 * (mcp_http_guard.c), the refusal of ambiguous headers
 * (mcp_http_strict.c), deadlines and drains (mcp_http_conn.c), the
 * event loop (mcp_http_loop.c).
 *
 * One event thread (epoll) serves every connection: the edge's own,
 * which runs MHD (mcp_http_loop.c says why not MHD's). A request that
 * waits for the session service is suspended and resumed by the reply,
 * on whatever thread that comes. An answer decided from the headers
 * alone while a body is on its way goes out at once and MHD closes the
 * connection after it: the unread body is never taken for the next
 * request.
 */
#include "mcp_http_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msc_hop.h"
#include "msc_log.h"
#include "msc_reason.h"
#include "session.pb-c.h"

#define CONN_LIMIT 4096         /* connections at once, at most */
#define FD_ROOM 256             /* descriptors kept for the rest */
#define CLOSING_ROOM 64         /* closed to make room, not yet gone */
#define IDLE_TIMEOUT_S 30       /* MHD's inactivity timeout */
#define CONN_MEMORY (32u * 1024) /* per connection: headers must fit */

/* MHD_OPTION_NOTIFY_COMPLETED: MHD is done with the request. */
static void
on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct edge_http *h = cls;
	struct http_call *c = *req_cls;

	(void)toe;
	if (c == NULL)
		return;
	*req_cls = NULL;
	pthread_mutex_lock(&h->mu);
	c->mhd_ref = false;
	c->suspended = false;
	h->nserving--;
	if (c->resp != NULL)
		MHD_destroy_response(c->resp);
	c->resp = NULL;
	c->conn = NULL;
	pthread_mutex_unlock(&h->mu);
	/* The next request on this connection (or an idle close). */
	http_conns_idle(h->conns, conn);
	http_call_unref(c);
}

/* --- DELETE ------------------------------------------------------------- */

static void
closed(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct http_call *c = arg;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->reason == MSC__V1__REASON__REASON_SESSION_NOT_FOUND)
		http_answer_rpc_error(c, 404, -32001,
		    msc_reason_text(MSC__V1__REASON__REASON_SESSION_NOT_FOUND));
	else if (st->code != MSC__V1__CODE__OK)
		http_answer_failed(c, st);
	else
		http_answer(c, 200, NULL, NULL, 0, NULL, NULL);
	http_call_unref(c);
}

static void
run_delete(struct http_call *c)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	const char *sid = http_header(c, "Mcp-Session-Id");
	int rv;

	if (sid == NULL && http_modern_selected(c)) {
		/* 2026-07-28 has no sessions to end. */
		http_answer(c, 405, NULL, NULL, 0, "Allow", "POST");
		return;
	}
	if (sid == NULL) {
		http_answer_rpc_error(c, 400, -32000,
		    "Bad Request: Mcp-Session-Id header is required");
		return;
	}
	snprintf(c->session_id, sizeof(c->session_id), "%s", sid);
	ref.session_id = c->session_id;
	ref.principal = c->principal;
	if (!http_call_suspend(c))
		return;
	http_call_ref(c);
	if ((rv = msc_client_call(c->h->session, &msc__v1__session__descriptor,
		 "Close", &ref.base, 120000, closed, c)) != 0) {
		http_answer_unsent(c, rv);
		http_call_unref(c);
	}
}

/* --- routing ------------------------------------------------------------ */

/* Whether a body follows the headers (declared, or chunked). */
static bool
has_body(struct http_call *c)
{
	const char *cl = http_header(c, "Content-Length");

	return http_header(c, "Transfer-Encoding") != NULL ||
	    (cl != NULL && strspn(cl, "0") != strlen(cl));
}

/*
 * Decides from the headers: answers c, or leaves it for the body (POST)
 * or for the final call (DELETE).
 */
static void
route(struct edge_http *h, struct http_call *c, const char *url,
    const char *method)
{
	static const char health[] = "{\"status\":\"ok\"}";
	static const char root[] =
	    "{\"name\":\"mcp-sandbox-computer-vm-for-ai\",\"mcp_endpoint\":"
	    "\"/mcp\",\"dashboard_resource\":\"ui://kilntainers/computers\","
	    "\"health\":\"/healthz\"}";
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	unsigned refused;

	if (strncmp(url, "/mcp", 4) != 0) {
		if (get && strcmp(url, "/healthz") == 0)
			http_answer(c, 200, "application/json", health,
			    sizeof(health) - 1, NULL, NULL);
		else if (get && strcmp(url, "/") == 0)
			http_answer(c, 200, "application/json", root,
			    sizeof(root) - 1, NULL, NULL);
		else
			http_answer(c, 404, NULL, NULL, 0, NULL, NULL);
		return;
	}
	if ((refused = http_guard(h, c)) != 0) {
		http_answer_rpc_error(c, refused, -32000, refused == 421
			? "Invalid Host header"
			: "Invalid Origin header");
		return;
	}
	if (!http_authorized(c)) {
		http_answer(c, 401, "application/json",
		    "{\"error\":\"unauthorized\"}", 24, "WWW-Authenticate",
		    "Bearer");
		return;
	}
	if (!http_principal_charge(c))
		return;
	if (url[4] != '\0')     /* only /mcp itself below /mcp */
		http_answer(c, 404, NULL, NULL, 0, NULL, NULL);
	else if (strcmp(method, "POST") == 0)
		c->post = http_post_start(c) == 0;
	else if (strcmp(method, "DELETE") != 0)
		http_answer(c, 405, NULL, NULL, 0, "Allow", "POST, DELETE");
}

/*
 * From a trusted proxy, c's connection counts in the share of the client
 * it was forwarded from (mcp_http_client.c). False when that share is
 * full of requests in flight: then c was answered 429. From anyone else:
 * true, unchanged.
 */
static bool
charge_forwarded(struct http_call *c)
{
	char owner[HTTP_OWNER_MAX];

	if (!http_client_forwarded_owner(c, owner, sizeof(owner)) ||
	    http_conns_charge(c->h->conns, c->conn, owner) == 0)
		return true;
	http_answer_rpc_error(c, 429, -32000, "Too many connections from "
	    "this client (--max-address-connections); retry when one of its "
	    "requests has ended");
	return false;
}

/* Queues c's answer if it has one (the http-loop thread: without MHD's
 * own thread, MHD no longer checks that only its thread queues one). */
static enum MHD_Result
queue_answer(struct http_call *c)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned status;

	pthread_mutex_lock(&c->h->mu);
	r = c->resp;
	status = c->status;
	c->resp = NULL;
	ret = c->answered ? MHD_NO : MHD_YES;
	pthread_mutex_unlock(&c->h->mu);
	if (r == NULL)
		return ret;     /* suspended, or no memory for the answer */
	ret = MHD_queue_response(c->conn, status, r);
	MSC_HOP("edge_mhd_queue");
	if (status == 200)
		MSC_HOP_DUMP();
	MHD_destroy_response(r);
	return ret;
}

/*
 * MHD's access handler: the first call has the headers, the next ones
 * pieces of the body, the last one none (*size == 0); after a suspension
 * it is called again to queue the answer.
 */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *data, size_t *size,
    void **req_cls)
{
	struct edge_http *h = cls;
	struct http_call *c = *req_cls;

	if (c == NULL) {
		MSC_HOP_RESET();
		MSC_HOP("t0");
		if ((c = http_call_new(h, conn)) == NULL)
			return MHD_NO;
		*req_cls = c;
		http_conns_request(h->conns, conn, has_body(c));
		if (http_strict_refused(c, version))
			c->closing = true;
		else if (charge_forwarded(c))
			route(h, c, url, method);
		if (!c->answered)
			return MHD_YES;
		if (!has_body(c) && !c->closing)
			return MHD_YES; /* answered in the last call */
		/* Refused before the body (or refused and closing): answer
		 * now, then close. */
		http_conns_serving(h->conns, conn);
		http_conns_drain(h->conns, conn);
		return queue_answer(c);
	}
	if (*size > 0) {
		if (c->post && !c->answered)
			http_post_data(c, data, *size);
		*size = 0;
		return MHD_YES;
	}
	if (!c->dispatched) {
		c->dispatched = true;
		http_conns_serving(h->conns, conn);
		if (c->post && !c->answered)
			http_post_run(c);
		else if (!c->answered)
			run_delete(c);
	}
	return queue_answer(c);
}

/* --- the server ----------------------------------------------------------- */

static void
on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	if (!msc_log_enabled(MSC_LOG_DEBUG))
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	msc_log_debug("http: %s", line);
}

/*
 * Raises the descriptor soft limit to the hard one, says so, and returns
 * how many connections fit, keeping room for the rest of the program and
 * for the connections closed to make room that MHD has not closed yet.
 */
static unsigned
conn_limit(void)
{
	struct rlimit rl;
	rlim_t room, was;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		msc_log_warn("http: getrlimit: %s", strerror(errno));
		return 512;
	}
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		/* No process may have an unlimited number. */
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 65536 : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			msc_log_warn("http: cannot raise the descriptor limit "
			    "from %llu to %llu: %s", (unsigned long long)was,
			    (unsigned long long)rl.rlim_cur, strerror(errno));
			rl.rlim_cur = was;
		} else {
			msc_log_info("http: descriptor limit raised from %llu "
			    "to %llu", (unsigned long long)was,
			    (unsigned long long)rl.rlim_cur);
		}
	} else {
		msc_log_info("http: descriptor limit %llu, its hard limit "
		    "too: it cannot be raised", (unsigned long long)was);
	}
	room = rl.rlim_cur > 2 * (FD_ROOM + CLOSING_ROOM)
	    ? rl.rlim_cur - FD_ROOM - CLOSING_ROOM : rl.rlim_cur / 2;
	return room > CONN_LIMIT ? CONN_LIMIT : (unsigned)room;
}

int
edge_http_start(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc *desc, struct edge_http **hp)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	struct edge_http *h;
	unsigned limit = conn_limit();
	unsigned per_address = (unsigned)cfg->max_address_connections;
	char url[300], port[16];
	int rv;

	if ((h = calloc(1, sizeof(*h))) == NULL)
		return -ENOMEM;
	h->cfg = cfg;
	h->session = session;
	h->desc = desc;
	LIST_INIT(&h->calls);
	pthread_mutex_init(&h->mu, NULL);
	pthread_mutex_init(&h->principals_mu, NULL);
	snprintf(url, sizeof(url), strchr(cfg->host, ':') ? "http://[%s]:%ld"
							  : "http://%s:%ld",
	    cfg->host, cfg->port);
	snprintf(port, sizeof(port), "%ld", cfg->port);
	if ((rv = http_proxies_init(h)) != 0 ||
	    (rv = http_allowlists_init(h)) != 0 ||
	    (rv = http_principals_init(h)) != 0 ||
	    (rv = http_conns_start(h, limit, per_address, &h->conns)) != 0) {
		if (rv != -EINVAL)      /* else a bad entry was named */
			msc_log_err("cannot serve HTTP on %s: %s", url,
			    strerror(-rv));
		edge_http_stop(h);
		return rv;
	}
	if ((rv = getaddrinfo(cfg->host, port, &hints, &ai)) != 0) {
		msc_log_err("cannot serve HTTP on %s: %s", url,
		    gai_strerror(rv));
		edge_http_stop(h);
		return -EINVAL;
	}
	/* No thread of MHD's: http_loop_start runs it. */
	h->d = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
		MHD_USE_ERROR_LOG |
		(ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
	    (uint16_t)cfg->port, NULL, NULL, on_request, h,
	    MHD_OPTION_SOCK_ADDR, ai->ai_addr,
	    MHD_OPTION_CONNECTION_LIMIT, limit + CLOSING_ROOM,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	    MHD_OPTION_NOTIFY_CONNECTION, http_conns_notify, h,
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
	    MHD_OPTION_END);
	rv = errno;
	freeaddrinfo(ai);
	if (h->d == NULL) {
		msc_log_err("cannot serve HTTP on %s: %s", url, strerror(rv));
		edge_http_stop(h);
		return -EIO;
	}
	if ((rv = http_loop_start(h)) != 0) {
		msc_log_err("cannot serve HTTP on %s: %s", url, strerror(-rv));
		edge_http_stop(h);
		return rv;
	}
	msc_log_info("serving MCP over HTTP on %s/mcp (up to %u connections, "
	    "%u per client address; past those the oldest without a request "
	    "in flight are closed to make room)", url, limit,
	    per_address < limit ? per_address : limit);
	*hp = h;
	return 0;
}

void
edge_http_reload(struct edge_http *h)
{
	http_principals_reload(h);
}

void
edge_http_stop(struct edge_http *h)
{
	struct http_call *c;
	bool last;

	if (h == NULL)
		return;
	/*
	 * Calls still waiting for the session service get 503 now, and
	 * have 2 s to go out before the server stops.
	 */
	pthread_mutex_lock(&h->mu);
	h->stopping = true;
	LIST_FOREACH(c, &h->calls, link) {
		http_sse_end_locked(c);   /* a stream ends after its queue */
		if (!c->answered && c->suspended)
			http_answer_shutdown_locked(c);
	}
	pthread_mutex_unlock(&h->mu);
	for (int i = 0; h->d != NULL && i < 200; i++) {
		pthread_mutex_lock(&h->mu);
		last = h->nserving == 0;
		pthread_mutex_unlock(&h->mu);
		if (last)
			break;
		usleep(10000);
	}
	http_loop_stop(h);
	if (h->d != NULL)
		MHD_stop_daemon(h->d);
	http_conns_stop(h->conns);
	/* Calls still open hold h: the last one frees it. */
	pthread_mutex_lock(&h->mu);
	h->stopped = true;
	last = h->ncalls == 0;
	pthread_mutex_unlock(&h->mu);
	if (last)
		http_server_free(h);
}
