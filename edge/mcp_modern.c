/*
 * mcp_modern.c - the methods of MCP 2026-07-28 for one request whose
 * envelope was checked: discover, the lists with their cache hints,
 * resources/read's -32602, subscriptions/listen, tools/call.
 */
#include "mcp.h"

#include <string.h>

#include "mcp_era.h"
#include "mcp_tasks.h"
#include "tools.h"

static void
send_cacheable(struct mcp_conn *c, json_t *id, json_t *result)
{
	mcp_conn_send_result(c, id, mcp_era_cacheable(result, MCP_LIST_TTL_MS),
	    true);
}

static void
read_resource(struct mcp_conn *c, json_t *id, json_t *params)
{
	json_t *uri = json_object_get(params, "uri");
	json_t *res = NULL, *err;

	if (json_is_string(uri) && c->cfg->lifecycle_tools)
		res = tools_resource_read(json_string_value(uri));
	if (res != NULL) {
		send_cacheable(c, id, res);
		return;
	}
	/* 2026-07-28: -32602 with the uri (2025 sessions keep -32002). */
	err = json_pack("{s:s, s:O, s:{s:i, s:s, s:{s:O}}}", "jsonrpc", "2.0",
	    "id", id, "error", "code", -32602, "message",
	    "Resource not found", "data", "uri", uri ? uri : json_null());
	if (err != NULL)
		c->send(c->send_ctx, err);
	json_decref(err);
}

/*
 * Our lists never change: the subscription is acknowledged with nothing
 * to follow, then ended at once with its response (the spec's graceful
 * end), so no stream is held open for nothing.
 */
static void
listen(struct mcp_conn *c, json_t *id)
{
	json_t *ack = json_pack("{s:s, s:s, s:{s:{s:O}, s:{}}}", "jsonrpc",
	    "2.0", "method", "notifications/subscriptions/acknowledged",
	    "params", "_meta", MCP_META_SUBSCRIPTION, id, "notifications");

	if (ack != NULL)
		c->send(c->send_ctx, ack);
	json_decref(ack);
	mcp_conn_send_result(c, id, json_pack("{s:{s:O}}", "_meta",
	    MCP_META_SUBSCRIPTION, id), true);
}

bool
mcp_modern_dispatch(struct mcp_conn *c, const char *method, json_t *id,
    json_t *params)
{
	json_t *tl;

	if (strcmp(method, "tools/call") == 0)
		return mcp_tools_call(c, id, params, true);
	if (mcp_tasks_method(method))
		return mcp_tasks_dispatch(c, method, id, params);
	if (strcmp(method, "server/discover") == 0)
		mcp_conn_send_result(c, id, mcp_era_discover_result(), false);
	else if (strcmp(method, "tools/list") == 0) {
		if ((tl = mcp_tools_list(c, id)) != NULL)
			send_cacheable(c, id, tl);
	} else if (strcmp(method, "resources/list") == 0)
		send_cacheable(c, id,
		    tools_resources_list(c->cfg->lifecycle_tools));
	else if (strcmp(method, "resources/read") == 0)
		read_resource(c, id, params);
	else if (strcmp(method, "resources/templates/list") == 0)
		send_cacheable(c, id, json_pack("{s:[]}", "resourceTemplates"));
	else if (strcmp(method, "prompts/list") == 0)
		send_cacheable(c, id, json_pack("{s:[]}", "prompts"));
	else if (strcmp(method, "prompts/get") == 0)
		mcp_conn_send_error(c, id, -32602, "Unknown prompt");
	else if (strcmp(method, "subscriptions/listen") == 0) {
		json_t *ids = json_object_get(json_object_get(params,
		    "notifications"), "taskIds");

		if (ids != NULL)
			return mcp_tasks_listen(c, id, ids);
		listen(c, id);
	}
	else
		mcp_conn_send_error(c, id, -32601, "Method not found");
	return false;
}
