/*
 * mcp.c - JSON-RPC 2.0 framing rules and MCP methods for one connection.
 */
#include "mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp_era.h"
#include "mcp_tasks.h"
#include "mcp_live.h"
#include "msc_log.h"
#include "msc_reason.h"
#include "session.pb-c.h"
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

static void
read_resource(struct mcp_conn *c, json_t *id, json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	json_t *res = NULL;

	if (uri != NULL && c->cfg->lifecycle_tools)
		res = tools_resource_read(uri);
	if (res == NULL) {
		mcp_conn_send_error(c, id, -32002, "Resource not found");
		return;
	}
	mcp_conn_send_result(c, id, res, false);
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
	json_t *list = tools_list(d, c->cfg->lifecycle_tools, c->cfg->network);

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

static bool
dispatch(struct mcp_conn *c, const char *method, json_t *id, json_t *params)
{
	json_t *tl;

	if (strcmp(method, "tools/call") == 0)
		return mcp_tools_call(c, id, params, false);
	if (strcmp(method, "initialize") == 0) {
		pthread_mutex_lock(&c->mu);
		c->roots_declared = json_is_object(json_object_get(
		    json_object_get(params, "capabilities"), "roots"));
		pthread_mutex_unlock(&c->mu);
		mcp_conn_send_result(c, id, mcp_initialize_result(params),
		    false);
	}
	else if (strcmp(method, "ping") == 0)
		mcp_conn_send_result(c, id, json_object(), false);
	else if (strcmp(method, "tools/list") == 0) {
		if ((tl = mcp_tools_list(c, id)) != NULL)
			mcp_conn_send_result(c, id, tl, false);
	}
	else if (strcmp(method, "resources/list") == 0)
		mcp_conn_send_result(c, id,
		    tools_resources_list(c->cfg->lifecycle_tools), false);
	else if (strcmp(method, "resources/read") == 0)
		read_resource(c, id, params);
	else if (strcmp(method, "resources/templates/list") == 0)
		mcp_conn_send_result(c, id,
		    json_pack("{s:[]}", "resourceTemplates"), false);
	else if (strcmp(method, "prompts/list") == 0)
		mcp_conn_send_result(c, id, json_pack("{s:[]}", "prompts"),
		    false);
	else if (strcmp(method, "logging/setLevel") == 0)
		mcp_conn_send_result(c, id, json_object(), false);
	else
		mcp_conn_send_error(c, id, -32601, "Method not found");
	return false;
}

void
mcp_conn_handle(struct mcp_conn *c, const char *buf, size_t len)
{
	json_error_t jerr;
	json_t *msg;

	msg = json_loadb(buf, len, JSON_ALLOW_NUL, &jerr);
	if (msg == NULL) {
		char text[256];

		snprintf(text, sizeof(text), "Parse error: %s", jerr.text);
		mcp_conn_send_error(c, NULL, -32700, text);
		return;
	}
	(void)mcp_conn_handle_json(c, msg);
	json_decref(msg);
}

bool
mcp_conn_handle_json(struct mcp_conn *c, json_t *msg)
{
	json_t *id, *params;
	const char *method, *version;
	char why[160];

	if (json_is_array(msg)) {
		mcp_conn_send_error(c, NULL, -32600,
		    "Invalid Request: batches are not supported");
		return false;
	}
	id = json_object_get(msg, "id");
	if (id != NULL && !json_is_string(id) && !json_is_integer(id)) {
		mcp_conn_send_error(c, NULL, -32600, "Invalid Request: bad id");
		return false;
	}
	version = json_string_value(json_object_get(msg, "jsonrpc"));
	method = json_string_value(json_object_get(msg, "method"));
	if (!json_is_object(msg) || version == NULL ||
	    strcmp(version, "2.0") != 0) {
		mcp_conn_send_error(c, id, -32600, "Invalid Request");
		return false;
	}
	if (method == NULL) {
		/* A response from the client (to roots/list) or junk. */
		if (mcp_roots_answered(c, msg))
			return false;
		if (json_object_get(msg, "result") == NULL &&
		    json_object_get(msg, "error") == NULL)
			mcp_conn_send_error(c, id, -32600,
			    "Invalid Request: no method");
		return false;
	}
	if (!mcp_msg_clean(msg, &id, why, sizeof(why))) {
		if (json_object_get(msg, "id") != NULL)  /* not a notification */
			mcp_conn_send_error(c, id, -32602, why);
		return false;
	}
	if (id == NULL) {
		/* Notifications need no answer. */
		char sid[64];

		pthread_mutex_lock(&c->mu);
		snprintf(sid, sizeof(sid), "%s", c->session_id);
		pthread_mutex_unlock(&c->mu);
		mcp_live_notified(c->session, c->principal, sid, method,
		    json_object_get(msg, "params"));
		if (strcmp(method, "notifications/initialized") == 0 ||
		    strcmp(method, "notifications/roots/list_changed") == 0)
			mcp_roots_ask(c);
		return false;
	}
	params = json_object_get(msg, "params");
	if (params != NULL && !json_is_object(params)) {
		mcp_conn_send_error(c, id, -32602,
		    "Invalid params: must be an object");
		return false;
	}
	if (c->stateless || mcp_era_body_modern(msg)) {
		struct mcp_reject r;

		/* 2026-07-28, per message (HTTP checked its headers). */
		if (!mcp_era_check_envelope(msg, &r) ||
		    !mcp_era_check_version(msg, &r) ||
		    !mcp_era_check_method(method, &r) ||
		    !mcp_tasks_check_caps(msg, method, &r)) {
			json_t *err = mcp_era_error(id, &r);

			if (err != NULL)
				c->send(c->send_ctx, err);
			json_decref(err);
			return false;
		}
		return mcp_modern_dispatch(c, method, id, params);
	}
	return dispatch(c, method, id, params);
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

void
mcp_conn_fini(struct mcp_conn *c, int wait_ms)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	char err[256];
	struct timespec until;

	if (c->session_id[0] != '\0') {
		ref.session_id = c->session_id;
		ref.principal = c->principal;
		if (msc_client_call_sync(c->session,
			&msc__v1__session__descriptor, "Close", &ref.base,
			wait_ms, NULL, err, sizeof(err)) != MSC__V1__CODE__OK)
			msc_log_warn("closing the session failed: %s", err);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	pthread_mutex_lock(&c->mu);
	while (c->inflight > 0)
		if (pthread_cond_timedwait(&c->idle_cv, &c->mu, &until) != 0)
			break;
	pthread_mutex_unlock(&c->mu);
	mcp_roots_fini(c);
	/* The mutex stays valid: a late reply may still take it. */
}
