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
#include <stdint.h>

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
void mcp_live_notified(struct msc_client *session, const char *principal,
    const char *sid,
    const char *method, json_t *params);

/*
 * Progress of one tools/call: started with the request's
 * params._meta.progressToken (borrowed; NULL or not a string or integer:
 * none, NULL returned), its session id and call key, and the transport's
 * send (mcp.h). About once a second the edge asks Session/PeekExec and,
 * when the output grew (and once at the first second), sends
 * notifications/progress: progress = the output bytes so far, message =
 * its latest lines. One edge-wide thread times every call's polls.
 */
struct mcp_progress;

struct mcp_progress *mcp_progress_start(struct msc_client *session,
    const char *principal, json_t *token, const char *sid, const char *key,
    void (*send)(void *ctx, json_t *msg), void *send_ctx);
/*
 * Stops p (NULL accepted) before the call's result is sent: no
 * notification goes out after this returns.
 */
void mcp_progress_stop(struct mcp_progress *p);

/*
 * The message of a progress notification: the last lines (at most 5, each
 * at most 200 bytes) of `tail`, valid UTF-8, control characters dropped.
 * Caller frees; NULL when out of memory.
 */
char *mcp_progress_message(const uint8_t *tail, size_t len);

#endif /* EDGE_MCP_LIVE_H */
