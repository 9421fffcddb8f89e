/*
 * mcp.c - one connection's messages: the JSON-RPC 2.0 framing rules, the
 * methods of the 2025 protocol versions (a 2026-07-28 request goes to
 * mcp_modern.c once its envelope is checked), and the connection's end.
 * The answers are mcp_conn.c's.
 */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp_era.h"
#include "mcp_live.h"
#include "mcp_tasks.h"
#include "msc_log.h"
#include "session.pb-c.h"
#include "tools.h"

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
