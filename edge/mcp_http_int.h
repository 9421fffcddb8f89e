/* mcp_http_int.h - state and helpers shared by mcp_http*.c. */
#ifndef EDGE_MCP_HTTP_INT_H
#define EDGE_MCP_HTTP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <jansson.h>
#include <microhttpd.h>

#include "mcp.h"
#include "mcp_http.h"

#define MAX_INFLIGHT_BYTES (256u * 1024 * 1024)
#define SESSION_CALL_MS 15000

#define EDGE_PRINCIPAL_MAX MCP_PRINCIPAL_MAX

struct http_conns;
struct http_loop;
struct http_principals;
struct http_proxy;
struct http_sse;
struct http_watch;
struct sockaddr;

/* A client's address: AF_INET (b[0..3]) or AF_INET6; v4-mapped is v4. */
struct http_addr {
	int family;
	unsigned char b[16];
};

/*
 * Whose share a connection counts in: a client address, as text, or
 * "principal:" and a principal's name.
 */
#define HTTP_OWNER_MAX (sizeof("principal:") + EDGE_PRINCIPAL_MAX)

struct edge_http {
	const struct msc_cfg *cfg;
	struct msc_client *session;
	struct edge_desc *desc;         /* the tool description */
	struct MHD_Daemon *d;
	struct http_loop *loop;       /* under mu: runs d; NULL once stopped */
	struct http_conns *conns;     /* deadlines and drains */
	const char **hosts;           /* allowed Host names (NULL-ended) */
	const char **origins;         /* allowed Origins beyond loopback */
	char *env_copy;               /* the strings of the env lists */
	pthread_mutex_t principals_mu;  /* guards principals (SIGHUP) */
	struct http_principals *principals;     /* --tokens-file; or NULL */
	struct http_proxy *proxies;   /* --trusted-proxy entries */
	size_t nproxies;
	atomic_size_t body_bytes;     /* request bodies held in memory */
	pthread_mutex_t mu;           /* guards the calls and their state */
	LIST_HEAD(, http_call) calls; /* every call alive */
	int ncalls;
	int nserving;                 /* calls MHD still holds */
	bool stopping;                /* under mu: new calls get 503 */
	bool stopped;                 /* under mu: the last call frees h */
};

/*
 * One request, from its headers until both MHD is done with it (the
 * request completed) and the session service's reply has come: `refs`.
 */
struct http_call {
	struct edge_http *h;
	struct MHD_Connection *conn;  /* MHD's; valid while mhd_ref */
	int refs;                     /* under h->mu */
	bool mhd_ref;                 /* MHD has not completed it yet */
	bool post;
	bool dispatched;              /* the body was handled */
	bool suspended;               /* under h->mu */
	bool answered;                /* under h->mu: resp is set */
	bool closing;                 /* refused with Connection: close */
	unsigned status;
	struct MHD_Response *resp;    /* under h->mu until queued */
	char *body;
	size_t len, got;
	json_t *msg;
	char session_id[64];
	char principal[EDGE_PRINCIPAL_MAX + 1];  /* who asked ("": the one) */
	struct mcp_conn mc;
	bool replied;
	struct http_sse *sse;         /* under h->mu: the reply streams */
	/* 2026-07-28 tools/call: cancelled when the client goes away. */
	struct http_watch *watch;     /* under h->mu: until the reply */
	bool watch_done;              /* under h->mu: the reply came */
	char call_sid[64], call_key[40];  /* its Session/CancelExec */
	atomic_bool abandoned;        /* the client closed: send nothing */
	LIST_ENTRY(http_call) link;   /* in h->calls, under h->mu */
};

/* Header value (borrowed) or NULL. */
const char *http_header(struct http_call *c, const char *name);
/* Whether header `name` contains `value` (case-insensitive). */
bool http_header_has(struct http_call *c, const char *name,
    const char *value);

/*
 * Answers call c once: the first answer (a reply or the shutdown's 503)
 * wins and the others are dropped. From any thread: a suspended
 * connection is resumed and the http-loop thread queues the response. Copies
 * body; hname/hvalue is one extra header (may be NULL).
 */
void http_answer(struct http_call *c, unsigned status, const char *type,
    const char *body, size_t len, const char *hname, const char *hvalue);
void http_answer_json(struct http_call *c, unsigned status, json_t *body,
    const char *hname, const char *hvalue);
/* The same with a response of the caller's making (taken). */
void http_answer_response(struct http_call *c, unsigned status,
    struct MHD_Response *r);
/* A JSON-RPC error (id null) as the whole reply. */
void http_answer_rpc_error(struct http_call *c, unsigned status, int code,
    const char *msg);
/*
 * 503 for a call to the session service that could not be sent (`rv`
 * from msc_client_call) or that failed on the way or at the service
 * (`st`): the text says overloaded or unavailable, and Retry-After when.
 */
void http_answer_unsent(struct http_call *c, int rv);
void http_answer_failed(struct http_call *c, const struct msc_status *st);
/* The shutdown's 503 for a call still waiting (h->mu held). */
void http_answer_shutdown_locked(struct http_call *c);

/* mcp_http_call.c: a call's life, and its reply as an SSE stream. */
/* A new call on conn, with one reference (MHD's); NULL when out of memory. */
struct http_call *http_call_new(struct edge_http *h,
    struct MHD_Connection *conn);
/* Frees a stopped server that has no call left. */
void http_server_free(struct edge_http *h);
/*
 * Suspends c's connection until its answer (the http-loop thread only). Returns
 * false when the server is stopping (then c was answered 503).
 */
bool http_call_suspend(struct http_call *c);
/* Takes one reference to c (for a call to the session service). */
void http_call_ref(struct http_call *c);
/* Drops one; the last frees c and gives back what it counted. */
void http_call_unref(struct http_call *c);

/*
 * Sends msg on c's stream: a notification starts it (c is answered 200
 * text/event-stream), the result ends it. False when c has no stream and
 * msg is the result: then it goes as plain JSON.
 */
bool http_sse_send(struct http_call *c, json_t *msg);
/* Ends c's stream after what is queued (h->mu held; none: nothing). */
void http_sse_end_locked(struct http_call *c);
/* Frees c's stream state (the last reference to c is going). */
void http_sse_free(struct http_call *c);

/* mcp_http_guard.c: who may call /mcp. */
/*
 * Fills h->hosts and h->origins: the loopback names, the --allowed-host
 * and --allowed-origin flags, KILNTAINERS_ALLOWED_HOSTS and
 * KILNTAINERS_ALLOWED_ORIGINS (comma or space separated). 0 or -ENOMEM.
 */
int http_allowlists_init(struct edge_http *h);
/*
 * Returns 0, or the status that refuses the request: a Host that is not
 * on the list (421) or a foreign Origin (403), against DNS rebinding and
 * cross-site requests, whatever address the server is bound to.
 */
unsigned http_guard(const struct edge_http *h, struct http_call *c);

/* mcp_http_principals.c: the bearer token and its principal. */
/*
 * Reads --tokens-file, if given (h->principals_mu is initialized): 0, or
 * -EINVAL after logging why.
 */
int http_principals_init(struct edge_http *h);
/* SIGHUP: reads --tokens-file again (kept as it was when it fails). */
void http_principals_reload(struct edge_http *h);
/* Frees the table and destroys h->principals_mu. */
void http_principals_fini(struct edge_http *h);
/*
 * Whether the request carries a token of ours (or none is needed); sets
 * c->principal: the name --tokens-file gives the token, else "".
 */
bool http_authorized(struct http_call *c);
/*
 * A named principal's connections count in its own share from here on,
 * whatever address they come from (clients behind one proxy or load
 * balancer are told apart by their token): false when that share is full
 * of requests in flight, and c was answered 429.
 */
bool http_principal_charge(struct http_call *c);

/* mcp_http_strict.c: the request head read one way only. */
/*
 * Answers c 400 with Connection: close and returns true when its headers
 * could be read two ways: a repeated or non-numeric Content-Length,
 * whitespace in a header name (before its colon), a second Host, or no
 * Host in an HTTP/1.1 request (`version`, as MHD gives it).
 */
bool http_strict_refused(struct http_call *c, const char *version);
/* mcp_http_client.c: whose share a connection counts in. */
/*
 * Fills h->proxies from --trusted-proxy and KILNTAINERS_TRUSTED_PROXIES
 * (ADDR or ADDR/PREFIX, comma or space separated). 0, -ENOMEM, or
 * -EINVAL after saying which entry is bad.
 */
int http_proxies_init(struct edge_http *h);
/* Whether a is one of the trusted proxies. */
bool http_proxy_trusted(const struct edge_http *h, const struct http_addr *a);
/* sa as an http_addr; false when it is not an IP address. */
bool http_addr_from_sockaddr(const struct sockaddr *sa, struct http_addr *a);
/* The share a counts in, as text: the address, an IPv6 one's /64. */
void http_addr_owner(const struct http_addr *a, char *buf, size_t len);
/*
 * c's headers are in. True when c came from a trusted proxy: owner (len
 * bytes, HTTP_OWNER_MAX will do) is then the share of the client it was
 * forwarded from (X-Forwarded-For, else Forwarded, read from the end past
 * trusted proxies; the proxy's own when they name none). False from
 * anyone else: its connection counts in its address's share already.
 */
bool http_client_forwarded_owner(struct http_call *c, char *owner,
    size_t len);

/* mcp_http_post.c: POST /mcp. */
/* The checks on the headers: 0, or the status c was answered with. */
unsigned http_post_start(struct http_call *c);
/* A piece of the body (the http-loop thread). */
void http_post_data(struct http_call *c, const char *data, size_t len);
/* The whole body arrived: parse it and call the session service. */
void http_post_run(struct http_call *c);

/* mcp_http_modern.c: POST /mcp at MCP 2026-07-28. */
/*
 * Whether c's message is a 2026-07-28 one: no Mcp-Session-Id, and the
 * body's _meta (or an MCP-Protocol-Version that is none of 2025's) says so.
 */
bool http_modern_selected(struct http_call *c);
/* Checks the envelope and the Mcp-* headers, then serves c (stateless). */
void http_modern_run(struct http_call *c);

/* mcp_http_loop.c: MHD's event loop, on a thread of the edge's own. */
/*
 * Starts the thread that runs h->d (started without a thread of its
 * own): 0, or -errno.
 */
int http_loop_start(struct edge_http *h);
/* Stops and joins it (before MHD_stop_daemon); none started: nothing. */
void http_loop_stop(struct edge_http *h);
/*
 * Resumes c's suspended connection and wakes the loop to serve it (h->mu
 * held; any thread).
 */
void http_resume_locked(struct http_call *c);

/* mcp_http_conn.c: connection deadlines, shares and drains. */
#define HTTP_HEADER_MS 10000    /* headers (and idle keep-alive) */
#define HTTP_BODY_MS 60000      /* a whole body, once the headers are in */

/*
 * Starts the thread that enforces deadlines and drains refused bodies.
 * At most `limit` connections are open, `per_owner` in one share;
 * past either, room is made (mcp_http_conn.c) or the new one is closed.
 */
int http_conns_start(struct edge_http *h, unsigned limit, unsigned per_owner,
    struct http_conns **connsp);
void http_conns_stop(struct http_conns *conns);
/*
 * MHD_OPTION_NOTIFY_CONNECTION (cls: the edge_http): tracks each
 * connection, counted in its peer address's share (none for a trusted
 * proxy's), and makes room for it or closes it.
 */
void http_conns_notify(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode toe);
/*
 * conn's request's headers are in: its body must follow within
 * HTTP_BODY_MS (`body`), or it is in flight. Either way the connection
 * is no longer idle; only one whose body is still arriving may be
 * closed to make room, and only when no idle one is left.
 */
void http_conns_request(struct http_conns *conns, struct MHD_Connection *conn,
    bool body);
/* The request is in flight (its body read, or refused and draining). */
void http_conns_serving(struct http_conns *conns,
    struct MHD_Connection *conn);
/*
 * The request is done: conn waits for the next one's headers, closed
 * past HTTP_HEADER_MS, and may be closed to make room from now on.
 */
void http_conns_idle(struct http_conns *conns, struct MHD_Connection *conn);
/*
 * Counts conn in `owner`'s share from now on (HTTP_OWNER_MAX at most):
 * a client address (http_addr_owner) that a trusted proxy forwarded, or
 * the share of whoever the request authenticates as (a principal, named
 * so that it cannot read as an address). When that share is full, its
 * oldest connection without a request in flight is closed; -EBUSY when
 * it has none (the request should be refused), else 0.
 */
int http_conns_charge(struct http_conns *conns, struct MHD_Connection *conn,
    const char *owner);
/*
 * The answer to conn's request goes out before its body was read: MHD
 * closes the connection after it, and the rest of the body is read and
 * dropped here meanwhile (bounded), so the client gets the answer
 * instead of a reset.
 */
void http_conns_drain(struct http_conns *conns, struct MHD_Connection *conn);
/*
 * Calls gone(arg) once, from the connections' thread with its lock held
 * (it must not block or call back here), if the client closes conn's
 * socket before http_conns_unwatch(). NULL when it cannot watch.
 */
struct http_watch *http_conns_watch(struct http_conns *conns,
    struct MHD_Connection *conn, void (*gone)(void *arg), void *arg);
/* Stops watching and frees w (NULL: nothing); gone() has returned. */
void http_conns_unwatch(struct http_conns *conns, struct http_watch *w);

#endif /* EDGE_MCP_HTTP_INT_H */
