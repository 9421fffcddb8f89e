/*
 * mcp_http.h - MCP over Streamable HTTP (2025-11-25, also 2025-06-18 and
 * 2025-03-26) on libmicrohttpd: POST /mcp answered with JSON, DELETE /mcp
 * to end a session, GET /mcp refused with 405 (no standalone SSE stream),
 * /healthz and / open; a Host/Origin allowlist on /mcp whatever the bind
 * address; deadlines and connection caps against slow clients. Sessions
 * live in the session service (Mcp-Session-Id is its session id), so the
 * edge keeps no per-session state and any edge can serve any session.
 */
#ifndef EDGE_MCP_HTTP_H
#define EDGE_MCP_HTTP_H

#include "edge_desc.h"
#include "msc_cfg.h"
#include "msc_rpc.h"

/* Largest accepted request body; a longer one gets 413. */
#define EDGE_HTTP_MAX_BODY (4u * 1024 * 1024)

struct edge_http;

/*
 * Listens on cfg->host:cfg->port, after raising the descriptor soft limit
 * to the hard one. `session` and `desc` are borrowed and must
 * outlive the server. Returns 0 or a negative errno after logging why.
 */
int edge_http_start(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc *desc, struct edge_http **hp);

/* SIGHUP: reads --tokens-file again (the table in use stays if it fails). */
void edge_http_reload(struct edge_http *h);

/* Stops listening and answers open requests 503; h goes with the last. */
void edge_http_stop(struct edge_http *h);

#endif /* EDGE_MCP_HTTP_H */
