/*
 * mcp.c - JSON-RPC 2.0 framing rules and MCP methods for one connection.
 */
#include "mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_log.h"
#include "msc_reason.h"
#include "msc_slug.h"
#include "session.pb-c.h"
#include "tools.h"

#define LATEST_PROTOCOL "2025-11-25"

static const char *const protocols[] = { "2025-11-25", "2025-06-18",
	"2025-03-26", "2024-11-05", NULL };

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

/* Takes `result`. */
static void
send_result(struct mcp_conn *c, json_t *id, json_t *result)
{
	json_t *msg;

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

	for (int i = 0; asked != NULL && protocols[i] != NULL; i++)
		if (strcmp(asked, protocols[i]) == 0)
			version = protocols[i];
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
mcp_unsent_text(int rv, int *retry_sp)
{
	int retry_s = 5;
	const char *text;

	switch (rv) {
	case -EAGAIN:
		retry_s = 1;
		text = "The session service is overloaded (too many calls in "
		       "flight); retry in a second.";
		break;
	case -ENOTCONN:
		text = "The session service is unavailable: it cannot be "
		       "reached; retry in a few seconds.";
		break;
	case -ENOMEM:
		text = "The server is out of memory; retry later.";
		break;
	default:
		text = "The call could not be sent to the session service; "
		       "retry in a few seconds.";
		break;
	}
	if (retry_sp != NULL)
		*retry_sp = retry_s;
	return text;
}

const char *
mcp_failed_text(const struct msc_status *st, char *buf, size_t len)
{
	if (!msc_reason_call_failed(st->reason))
		return st->message;
	return msc_reason_session_unreachable(msc_reason_detail(st->reason,
	    st->message), buf, len);
}

/*
 * Copies this connection's session id into sid, opening the session
 * first when there is none (blocking, bounded; only the reading thread
 * opens, a reply thread may clear it).
 */
static int
ensure_session(struct mcp_conn *c, char sid[64], char *err, size_t errlen)
{
	Msc__V1__OpenRequest req = MSC__V1__OPEN_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	Msc__V1__Code code;

	pthread_mutex_lock(&c->mu);
	snprintf(sid, 64, "%s", c->session_id);
	pthread_mutex_unlock(&c->mu);
	if (sid[0] != '\0')
		return 0;
	if (c->session == NULL) {
		snprintf(err, errlen, "no session service is configured");
		return -ENOTCONN;
	}
	code = msc_client_call_sync(c->session, &msc__v1__session__descriptor,
	    "Open", &req.base, 10000, &resp, err, errlen);
	if (code == MSC__V1__CODE__RESOURCE_EXHAUSTED)
		return -EAGAIN;
	if (code != MSC__V1__CODE__OK)
		return -EIO;
	snprintf(sid, 64, "%s", ((Msc__V1__SessionRef *)resp)->session_id);
	protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&c->mu);
	snprintf(c->session_id, sizeof(c->session_id), "%s", sid);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* A tools/call waiting for the session service. */
struct pending_call {
	struct mcp_conn *c;
	json_t *id;
	int tool;               /* TOOL_EXEC or a lifecycle tool */
	char computer_id[MSC_SLUG_MAX + 1];
};

#define TOOL_EXEC (-1)

/*
 * The agent sets no deadline on a tool call; the edge's own bound is that
 * no request waits longer than two hours, well past what any call may
 * take (a command runs 3600 s at most). The session bounds the call by
 * the command's timeout and its own steps within what is left
 * (session_deadline.h), and each hop below gets what is left of that.
 */
#define EDGE_CALL_MAX_MS (2 * 3600 * 1000)

/* How long tools/list waits for the driver's description at most. */
#define DESCRIPTION_WAIT_MS 15000

static void
call_done(struct mcp_conn *c)
{
	pthread_mutex_lock(&c->mu);
	if (--c->inflight == 0)
		pthread_cond_broadcast(&c->idle_cv);
	pthread_mutex_unlock(&c->mu);
}

static void
pending_done(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct pending_call *pc = arg;
	struct msc_status lost = { MSC__V1__CODE__UNAVAILABLE,
		msc_reason_session_lost(),
		MSC__V1__REASON__REASON_UNSPECIFIED };
	json_t *result;

	if (resp == NULL &&
	    st->reason == MSC__V1__REASON__REASON_SESSION_NOT_FOUND) {
		/* The next call opens a new session (stdio keeps one). */
		pthread_mutex_lock(&pc->c->mu);
		pc->c->session_id[0] = '\0';
		pthread_mutex_unlock(&pc->c->mu);
		st = &lost;
	}
	if (pc->tool == TOOL_EXEC)
		result = resp != NULL ? tools_exec_result(
		    (Msc__V1__TerminalExecReply *)resp)
				      : tools_error_result(st->message);
	else
		result = tools_lifecycle_result(pc->tool, pc->computer_id, st,
		    resp);
	send_result(pc->c, pc->id, result);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	call_done(pc->c);
	if (pc->c->finished != NULL)
		pc->c->finished(pc->c->send_ctx);
	json_decref(pc->id);
	free(pc);
}

/* Sends `req` to the session service; true when the reply will come. */
static bool
call_session(struct mcp_conn *c, json_t *id, int tool, const char *method,
    const ProtobufCMessage *req, int timeout_ms, const char *computer_id)
{
	struct pending_call *pc = calloc(1, sizeof(*pc));
	int rv;

	if (pc == NULL) {
		mcp_conn_send_error(c, id, -32603, "Internal error: out of memory");
		return false;
	}
	pc->c = c;
	pc->id = json_incref(id);
	pc->tool = tool;
	if (computer_id != NULL &&
	    msc_slug_normalize(computer_id, pc->computer_id) != 0)
		pc->computer_id[0] = '\0';
	pthread_mutex_lock(&c->mu);
	c->inflight++;
	pthread_mutex_unlock(&c->mu);
	if ((rv = msc_client_call(c->session, &msc__v1__session__descriptor,
		 method, req, timeout_ms, pending_done, pc)) != 0) {
		send_result(c, id, tools_error_result(mcp_unsent_text(rv,
		    NULL)));
		json_decref(pc->id);
		free(pc);
		call_done(c);
		return false;
	}
	return true;
}

static bool
exec_call(struct mcp_conn *c, json_t *id, json_t *args, char *sid)
{
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	json_t *keep = json_array();
	bool pending = false;
	char *msg;

	msg = tools_exec_request(args, &req, keep);
	if (msg != NULL) {
		send_result(c, id, tools_error_result(msg));
		free(msg);
		goto done;
	}
	req.session_id = sid;
	pending = call_session(c, id, TOOL_EXEC, "TerminalExec", &req.base,
	    EDGE_CALL_MAX_MS, NULL);
done:
	tools_exec_request_fini(&req);
	json_decref(keep);
	return pending;
}

static bool
lifecycle_call(struct mcp_conn *c, json_t *id, int tool, json_t *args,
    char *sid)
{
	Msc__V1__ComputerRequest req = MSC__V1__COMPUTER_REQUEST__INIT;
	char *msg = tools_lifecycle_request(tool, args, &req);
	bool pending;

	if (msg != NULL) {
		tools_lifecycle_request_fini(&req);
		send_result(c, id, tools_error_result(msg));
		free(msg);
		return false;
	}
	req.session_id = sid;
	pending = call_session(c, id, tool, tools_lifecycle_method(tool),
	    &req.base, EDGE_CALL_MAX_MS, req.computer_id);
	tools_lifecycle_request_fini(&req);
	return pending;
}

static bool
tools_call(struct mcp_conn *c, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	int tool = -2, rv;
	char err[512], sid[64];

	if (name == NULL) {
		mcp_conn_send_error(c, id, -32602,
		    "Invalid params: missing tool name");
		return false;
	}
	if (c->cfg->lifecycle_tools)
		tool = tools_lifecycle_find(name);
	if (strcmp(name, "terminal_execute") != 0 && tool < 0) {
		char text[300];

		snprintf(text, sizeof(text), "Unknown tool: %.200s", name);
		send_result(c, id, tools_error_result(text));
		return false;
	}
	if ((rv = ensure_session(c, sid, err, sizeof(err))) != 0) {
		char text[600];

		snprintf(text, sizeof(text), "The session service is %s: %s; "
		    "retry in a few seconds.", rv == -EAGAIN ? "overloaded"
		    : "not available", err);
		send_result(c, id, tools_error_result(text));
		return false;
	}
	if (tool >= 0)
		return lifecycle_call(c, id, tool, args, sid);
	return exec_call(c, id, args, sid);
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
	send_result(c, id, res);
}

/* The description is the driver's: it may still be on its way. */
static void
list_tools(struct mcp_conn *c, json_t *id)
{
	const char *d = c->description;
	char text[160];

	if (d == NULL && c->desc != NULL)
		d = edge_desc_get(c->desc, DESCRIPTION_WAIT_MS);
	if (d == NULL) {
		mcp_conn_send_error(c, id, -32603,
		    msc_reason_session_unreachable("the tool description is "
		    "not known yet", text, sizeof(text)));
		return;
	}
	send_result(c, id, tools_list(d, c->cfg->lifecycle_tools));
}

static bool
dispatch(struct mcp_conn *c, const char *method, json_t *id, json_t *params)
{
	if (strcmp(method, "tools/call") == 0)
		return tools_call(c, id, params);
	if (strcmp(method, "initialize") == 0)
		send_result(c, id, mcp_initialize_result(params));
	else if (strcmp(method, "ping") == 0)
		send_result(c, id, json_object());
	else if (strcmp(method, "tools/list") == 0)
		list_tools(c, id);
	else if (strcmp(method, "resources/list") == 0)
		send_result(c, id, tools_resources_list(c->cfg->lifecycle_tools));
	else if (strcmp(method, "resources/read") == 0)
		read_resource(c, id, params);
	else if (strcmp(method, "resources/templates/list") == 0)
		send_result(c, id, json_pack("{s:[]}", "resourceTemplates"));
	else if (strcmp(method, "prompts/list") == 0)
		send_result(c, id, json_pack("{s:[]}", "prompts"));
	else if (strcmp(method, "logging/setLevel") == 0)
		send_result(c, id, json_object());
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
		/* A response from the client (we send no requests) or junk. */
		if (json_object_get(msg, "result") == NULL &&
		    json_object_get(msg, "error") == NULL)
			mcp_conn_send_error(c, id, -32600,
			    "Invalid Request: no method");
		return false;
	}
	if (id == NULL)
		return false;   /* notifications need no answer */
	params = json_object_get(msg, "params");
	if (params != NULL && !json_is_object(params)) {
		mcp_conn_send_error(c, id, -32602,
		    "Invalid params: must be an object");
		return false;
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
mcp_conn_fini(struct mcp_conn *c, int wait_ms)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	char err[256];
	struct timespec until;

	if (c->session_id[0] != '\0') {
		ref.session_id = c->session_id;
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
	/* The mutex stays valid: a late reply may still take it. */
}
