/*
 * mcp_live.h - long tools/call support on every transport: a client's
 * notifications/cancelled becomes Session/CancelExec (its command is
 * killed and the call gets no response), and a call that carries a
 * progressToken gets notifications/progress about once a second with the
 * output so far (Session/PeekExec).
 */
#ifndef EDGE_MCP_LIVE_H
#define EDGE_MCP_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "msc_rpc.h"

#define MCP_LIVE_KEY_MAX 160

/*
 * The call key of JSON-RPC request id `id` (Session's call_key): "n:<int>"
 * or "s:<string>". False when the id cannot name one (a string with a NUL
 * or longer than the key allows): that call cannot be cancelled.
 */
bool mcp_live_call_key(json_t *id, char out[MCP_LIVE_KEY_MAX]);

/*
 * Handles a notification of session `sid` (may be empty: no session, no
 * call to cancel): notifications/cancelled sends Session/CancelExec for
 * its requestId; others are ignored. Does not block.
 */
void mcp_live_notified(struct msc_client *session, const char *sid,
    const char *method, json_t *params);

#endif /* EDGE_MCP_LIVE_H */
