/*
 * mcp_stdio.h - MCP over stdio: newline-delimited JSON-RPC on stdin/stdout,
 * logs on stderr. One MCP session per process.
 */
#ifndef EDGE_MCP_STDIO_H
#define EDGE_MCP_STDIO_H

#include "msc_cfg.h"
#include "edge_desc.h"
#include "msc_rpc.h"

/* Longest accepted message line; longer ones get a JSON-RPC error. */
#define EDGE_STDIO_MAX_LINE (16u * 1024 * 1024)

/*
 * Serves until stdin ends or SIGTERM/SIGINT arrives, then closes the
 * session (removing its temporary computers) within a bounded time.
 * `session` and `desc` are borrowed. Returns the process exit status.
 */
int edge_stdio_run(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc *desc);

#endif /* EDGE_MCP_STDIO_H */
