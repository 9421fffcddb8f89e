/*
 * mcp_conn.c - what a connection answers with, for every dispatcher
 * (mcp.c's methods, mcp_modern.c's of 2026-07-28, the replies of
 * tools/call, tasks and copies): JSON-RPC results and errors, the
 * results of initialize and tools/list, the text of a failed session
 * call, and the count of calls in flight. It calls no dispatcher: the
 * files above it call down into it.
 */
#include "mcp.h"

#include <stdio.h>
#include <string.h>

#include "mcp_era.h"
#include "msc_reason.h"
#include "tools.h"

#define LATEST_PROTOCOL "2025-11-25"

void
mcp_conn_init(struct mcp_conn *c, const struct msc_cfg *cfg,
    struct msc_client *session, const char *description, mcp_send_fn send,
    void *send_ctx)
{
	memset(c, 0, sizeof(*c));
	c->cfg = cfg;
	c->session = session;
	c->description = description;
	c->send = send;
	c->send_ctx = send_ctx;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->idle_cv, NULL);
}

void
mcp_conn_send_error(struct mcp_conn *c, json_t *id, int code,
    const char *message)
{
	json_t *msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0",
	    "id", id ? id : json_null(), "error", "code", code, "message",
	    message);

	if (msg != NULL)
		c->send(c->send_ctx, msg);
	json_decref(msg);
}

void
mcp_conn_send_result(struct mcp_conn *c, json_t *id, json_t *result,
    bool modern)
{
	json_t *msg;

	if (modern)
		result = mcp_era_complete(result);
	if (result == NULL) {
		mcp_conn_send_error(c, id, -32603, "Internal error");
		return;
	}
	msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
	    "result", result);
	if (msg != NULL)
		c->send(c->send_ctx, msg);
	json_decref(msg);
}

json_t *
mcp_initialize_result(json_t *params)
{
	const char *asked = json_string_value(json_object_get(params,
	    "protocolVersion"));
	const char *version = LATEST_PROTOCOL;

	if (mcp_era_legacy_version(asked))
		version = asked;        /* json_pack copies it */
	return json_pack("{s:s, s:{s:{s:b}, s:{s:b, s:b}, s:{s:b}, "
			 "s:{s:{s:[s]}}}, s:{s:s, s:s}, s:s}",
	    "protocolVersion", version, "capabilities", "tools", "listChanged",
	    0, "resources", "subscribe", 0, "listChanged", 0, "prompts",
	    "listChanged", 0, "extensions", "io.modelcontextprotocol/ui",
	    "mimeTypes", "text/html;profile=mcp-app",
	    "serverInfo", "name", "Kilntainers", "version",
	    MSC_VERSION, "instructions",
	    "Use terminal_execute to run commands in your own isolated Linux "
	    "sandbox computer.");
}

const char *
mcp_failed_text(const struct msc_status *st, char *buf, size_t len)
{
	if (!msc_reason_call_failed(st->reason))
		return st->message;
	return msc_reason_session_unreachable(msc_reason_detail(st->reason,
	    st->message), buf, len);
}

/* How long tools/list waits for the driver's description at most. */
#define DESCRIPTION_WAIT_MS 15000

/* The description is the driver's: it may still be on its way. */
json_t *
mcp_tools_list(struct mcp_conn *c, json_t *id)
{
	const char *d = c->description;
	char text[160];

	if (d == NULL && c->desc != NULL)
		d = edge_desc_get(c->desc, DESCRIPTION_WAIT_MS);
	if (d == NULL) {
		mcp_conn_send_error(c, id, -32603,
		    msc_reason_session_unreachable("the tool description is "
		    "not known yet", text, sizeof(text)));
		return NULL;
	}
	json_t *list = tools_list(d, c->cfg->network);

	if (list != NULL && c->cfg->lifecycle_tools)
		tools_lifecycle_extend(list);
	if (list != NULL && (c->cfg->tool_groups & MSC_TOOLS_PROCESSES))
		tools_processes_extend(list);
	if (list != NULL && (c->cfg->tool_groups & MSC_TOOLS_FILES))
		tools_files_extend(list);
	if (list != NULL && (c->cfg->tool_groups & MSC_TOOLS_SNAPSHOTS))
		tools_snapshots_extend(list);
	if (list != NULL && (c->cfg->tool_groups & MSC_TOOLS_PORTS))
		tools_ports_extend(list);
	return list;
}

void
mcp_conn_reject_oversized(struct mcp_conn *c, size_t limit)
{
	char text[128];

	snprintf(text, sizeof(text), "Invalid Request: message longer than "
	    "%zu bytes", limit);
	mcp_conn_send_error(c, NULL, -32600, text);
}

void
mcp_conn_call_done(struct mcp_conn *c)
{
	pthread_mutex_lock(&c->mu);
	if (--c->inflight == 0)
		pthread_cond_broadcast(&c->idle_cv);
	pthread_mutex_unlock(&c->mu);
}
