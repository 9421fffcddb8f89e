/* mcp_http_int.h - state and helpers shared by mcp_http*.c. */
#ifndef EDGE_MCP_HTTP_INT_H
#define EDGE_MCP_HTTP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <nng/nng.h>
#include <nng/supplemental/http/http.h>

#include "mcp.h"
#include "mcp_http.h"

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
	pthread_mutex_t mu;           /* guards calls and their `answered` */
	struct http_call *calls;      /* POSTs in flight, for shutdown */
	bool stopped;                 /* under mu: the last call frees h */
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
	bool answered;                /* aio finished (by a reply or stop) */
	struct http_call *prev, *next;
};

/*
 * Takes the right to answer call c: true once, for the first of a reply
 * and the shutdown that answers every call still open.
 */
bool http_call_claim(struct http_call *c);

/* Finishes the server's aio with a response (copies body). */
void http_respond(nng_aio *aio, uint16_t status, const char *type,
    const char *body, size_t len, const char *hname, const char *hvalue);
void http_respond_json(nng_aio *aio, uint16_t status, json_t *body,
    const char *hname, const char *hvalue);
/* A JSON-RPC error (id null) as the whole reply. */
void http_respond_rpc_error(nng_aio *aio, uint16_t status, int code,
    const char *msg);
/*
 * 503 for a call to the session service that could not be sent (`rv`
 * from msc_client_call) or that failed on the way or at the service
 * (`st`): the text says overloaded or unavailable, and Retry-After when.
 */
void http_respond_unsent(nng_aio *aio, int rv);
void http_respond_failed(nng_aio *aio, const struct msc_status *st);
/* Frees a POST call and gives back what it counted. */
void http_call_free(struct http_call *c);
/* Whether header `name` contains `value` (case-insensitive). */
bool http_header_has(nng_http_req *req, const char *name, const char *value);

/* mcp_http_post.c: POST /mcp. */
void http_handle_post(struct edge_http *h, nng_aio *aio, nng_http_req *req,
    nng_http_conn *conn);

#endif /* EDGE_MCP_HTTP_INT_H */
