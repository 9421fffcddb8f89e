/*
 * mcp.h - MCP over JSON-RPC for one client connection: message
 * validation, initialize/ping/tools/resources, and tools/call handed
 * asynchronously to the session service. The transport gives lines in
 * and takes replies out through `send`. The calls go one way: mcp.c
 * (framing, 2025 methods) -> mcp_modern.c (2026-07-28 methods) ->
 * mcp_call.c, mcp_tasks*.c -> mcp_xfer.c -> mcp_session.c -> mcp_conn.c
 * (the answers); none calls back up.
 */
#ifndef EDGE_MCP_H
#define EDGE_MCP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "edge_desc.h"
#include "msc_cfg.h"
#include "msc_rpc.h"

struct mcp_conn;

/* A principal's name (--tokens-file), bytes. */
#define MCP_PRINCIPAL_MAX 64

/*
 * The agent sets no deadline on a tool call; the edge's own bound is that
 * no request waits longer than two hours, well past what any call may
 * take (a command runs 3600 s at most). The session bounds the call by
 * the command's timeout and its own steps within what is left
 * (session_deadline.h), and each hop below gets what is left of that.
 */
#define MCP_CALL_MAX_MS (2 * 3600 * 1000)

/*
 * Sends one JSON-RPC message (borrowed) to the client; may run on any
 * thread. `ctx` is the transport's.
 */
typedef void (*mcp_send_fn)(void *ctx, json_t *msg);

/* Called after the last use of the connection by an asynchronous reply. */
typedef void (*mcp_finished_fn)(void *ctx);

struct mcp_conn {
	const struct msc_cfg *cfg;
	struct msc_client *session;     /* borrowed */
	const char *description;        /* borrowed; NULL: from desc */
	struct edge_desc *desc;         /* borrowed; set after init */
	mcp_send_fn send;
	mcp_finished_fn finished;       /* optional */
	void *send_ctx;
	pthread_mutex_t mu;
	pthread_cond_t idle_cv;
	int inflight;                   /* tools/call awaiting replies */
	char session_id[64];            /* empty until the first call */
	/* Who the client is (the transport authenticated it): every call
	 * to the session service carries it. "": the one principal. */
	char principal[MCP_PRINCIPAL_MAX + 1];
	/* The client left (set by the transport): a stream ends unsent. */
	atomic_bool closing;
	/*
	 * HTTP at 2026-07-28: no session of the connection; a call without
	 * a sandbox_handle mints a new one. The transport checked the
	 * envelope, so every message is a modern one.
	 */
	bool stateless;
	/*
	 * Optional: a terminal_execute went to the session service as call
	 * `key` of session `sid` (empty: a handle it mints), for
	 * Session/CancelExec. Stateless calls get a random key.
	 */
	void (*exec_sent)(void *ctx, const char *sid, const char *key);
	/*
	 * Optional: a stream began that only its tasks end
	 * (subscriptions/listen); the transport sets `closing` when its
	 * client leaves.
	 */
	void (*watch_client)(void *ctx);
	/*
	 * The client's MCP roots (stdio, legacy era; mcp_roots.c), under mu:
	 * whether its initialize declared the capability, whether an
	 * answer to roots/list is awaited, and the folders last answered
	 * (real paths, owned).
	 */
	bool stdio;
	bool roots_declared;
	bool roots_waiting;
	bool roots_known;
	unsigned roots_asked;
	char **roots;
	size_t n_roots;
};

/*
 * Handles one JSON-RPC message of `len` bytes (borrowed). Answers errors
 * itself; answers tools/call later, from another thread. Never blocks
 * beyond opening the session on the first tools/call.
 */
void mcp_conn_handle(struct mcp_conn *c, const char *buf, size_t len);

/*
 * Handles one parsed message (borrowed). Returns true when a reply will
 * come later (then `finished` runs after it), false when any reply was
 * already sent.
 */
bool mcp_conn_handle_json(struct mcp_conn *c, json_t *msg);

/*
 * Ends the connection: closes its session (its temporary computers are
 * removed) and waits up to `wait_ms`, then 2 s for open calls. Blocks.
 * `c` must stay allocated until the session client is closed.
 */
void mcp_conn_fini(struct mcp_conn *c, int wait_ms);

/*
 * Handles one parsed request of 2026-07-28 whose envelope and version
 * were checked (mcp_modern.c). Same return as mcp_conn_handle_json.
 */
bool mcp_modern_dispatch(struct mcp_conn *c, const char *method, json_t *id,
    json_t *params);

/*
 * Whether msg's method, id, names, ids and paths hold no NUL or control
 * character, and its command and args no NUL (mcp_names.c). When not,
 * `why` says which field, for a -32602, and *idp is the id to answer
 * (NULL when the id is the bad field); msg is borrowed, so is *idp.
 */
bool mcp_msg_clean(json_t *msg, json_t **idp, char *why, size_t len);

/*
 * tools/call (modern: the 2026-07-28 rules for sandbox_handle); true
 * when the reply will come later (mcp_call.c).
 */
bool mcp_tools_call(struct mcp_conn *c, json_t *id, json_t *params,
    bool modern);

/* --- mcp_conn.c: what a connection answers with ------------------------- */

void mcp_conn_init(struct mcp_conn *c, const struct msc_cfg *cfg,
    struct msc_client *session, const char *description, mcp_send_fn send,
    void *send_ctx);

/* The initialize result for the client's params (new reference). */
json_t *mcp_initialize_result(json_t *params);

/*
 * The text of a failed call to the session service: the service's own
 * message, or for a call that failed on the way (the service cannot be
 * reached, the connection broke) one that says so and when to retry, in
 * buf. Returns st->message or buf.
 */
const char *mcp_failed_text(const struct msc_status *st, char *buf,
    size_t len);

/*
 * Sends a result (taken; NULL: out of memory, -32603); a modern one gets
 * resultType and serverInfo.
 */
void mcp_conn_send_result(struct mcp_conn *c, json_t *id, json_t *result,
    bool modern);

/* tools/list's result for this connection, or NULL after an error sent. */
json_t *mcp_tools_list(struct mcp_conn *c, json_t *id);

/* Sends a JSON-RPC error to the client. `id` is borrowed (may be NULL). */
void mcp_conn_send_error(struct mcp_conn *c, json_t *id, int code,
    const char *message);

/* Answers a message the transport refused (too long): -32600. */
void mcp_conn_reject_oversized(struct mcp_conn *c, size_t limit);

/* One of c's calls in flight ended (mcp_conn_fini waits for the last). */
void mcp_conn_call_done(struct mcp_conn *c);

/* --- mcp_session.c: which session a call runs in ----------------------- */

/* The reference's text for a sandbox_handle that addresses nothing. */
#define MCP_HANDLE_UNKNOWN_TEXT "Unknown or expired sandbox_handle"
#define MCP_HANDLE_MAX_LEN 128

/*
 * Copies this connection's session id into sid, opening the session
 * first when there is none (blocking, bounded). 0, or -EAGAIN (the
 * service has no room), -ENOTCONN, -EIO with the reason in err.
 */
int mcp_conn_session(struct mcp_conn *c, char sid[64], char *err,
    size_t errlen);

/*
 * The sandbox_handle argument: *hp is NULL when absent (or empty).
 * Returns NULL or the error text shown to the agent (static).
 */
const char *mcp_handle_arg(json_t *args, const char **hp);

/*
 * Which session a call runs in: its sandbox_handle (*by_handle; sid is
 * the handle), else this connection's session (stdio's default handle, a
 * 2025 HTTP session), opened on first use, else (stateless HTTP) a new
 * handle, minted by the session service once the arguments are valid
 * (*mint, sid empty). False after answering the call with why not.
 */
bool mcp_pick_session(struct mcp_conn *c, json_t *id, bool modern,
    json_t *args, char sid[64], bool *by_handle, bool *mint);

/* --- mcp_xfer.c: computer_upload and computer_download ------------------ */

/* Runs computer_upload or computer_download; true when it answers later. */
bool mcp_xfer_call(struct mcp_conn *c, json_t *id, json_t *args, int tool,
    bool modern);

/* --- mcp_roots.c: the client's MCP roots --------------------------------- */

/* The most roots kept of one answer. */
#define MCP_ROOTS_MAX 64
/* Asks the client for its roots (roots/list) when it declared them. */
void mcp_roots_ask(struct mcp_conn *c);
/* A response from the client: true when it was the roots' answer. */
bool mcp_roots_answered(struct mcp_conn *c, json_t *msg);
/* Forgets the roots (at the connection's end). */
void mcp_roots_fini(struct mcp_conn *c);

#endif /* EDGE_MCP_H */
