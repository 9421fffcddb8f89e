/*
 * mcp_call.c - tools/call for one connection: the tool, the call to the
 * session service in the session it runs in (mcp_session.c), and the
 * result when it answers; computer_upload and computer_download go to
 * mcp_xfer.c.
 */
#include "mcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_live.h"
#include "mcp_tasks.h"
#include "msc_backend.h"
#include "msc_random.h"
#include "msc_reason.h"
#include "msc_slug.h"
#include "session.pb-c.h"
#include "tools.h"

/* A tools/call waiting for the session service. */
struct pending_call {
	struct mcp_conn *c;
	json_t *id;
	int tool;               /* TOOL_EXEC or a lifecycle tool */
	bool modern;            /* a 2026-07-28 request */
	bool tasks;             /* it declared the tasks extension */
	bool by_handle;         /* the call named its sandbox_handle */
	char computer_id[MSC_SLUG_MAX + 1];
	char handle[64];        /* the handle it names, ends or minted */
	bool opening;           /* minting its handle first (Session/Open) */
	bool fresh;             /* the handle was minted for this call */
	json_t *args;           /* while opening: the call's arguments, and */
	json_t *token;          /* its progressToken (both owned then;
	                         * otherwise the token is borrowed until
	                         * call_session, and args unused) */
	struct mcp_progress *progress;  /* NULL: none asked */
};

#define TOOL_EXEC (-1)
#define TOOL_RELEASE (-3)

/*
 * The connection's own session was released (stdio's default handle):
 * the next call opens a new one.
 */
static void
forget_released(struct pending_call *pc)
{
	pthread_mutex_lock(&pc->c->mu);
	if (strcmp(pc->c->session_id, pc->handle) == 0)
		pc->c->session_id[0] = '\0';
	pthread_mutex_unlock(&pc->c->mu);
}

static void pending_done(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp);

/* computer_create in the handle just minted: the whole request. */
static int
create_in_handle(struct pending_call *pc)
{
	Msc__V1__ComputerRequest req = MSC__V1__COMPUTER_REQUEST__INIT;
	char *msg = tools_lifecycle_request(pc->tool, pc->args, &req);
	int rv = -EINVAL;

	if (msg == NULL) {      /* checked before the Open: cannot fail */
		req.session_id = pc->handle;
		req.principal = pc->c->principal;
		rv = msc_client_call(pc->c->session,
		    &msc__v1__session__descriptor,
		    tools_lifecycle_method(pc->tool), &req.base,
		    MCP_CALL_MAX_MS, pending_done, pc);
	}
	free(msg);
	tools_lifecycle_request_fini(&req);
	return rv;
}

/* terminal_execute in the handle just minted, with its progress. */
static int
exec_in_handle(struct pending_call *pc)
{
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	json_t *keep = json_array();
	char key[MCP_LIVE_KEY_MAX];
	char *msg = tools_exec_request(pc->args, &req, keep);
	int rv = -EINVAL;

	if (msg == NULL) {      /* checked before the Open: cannot fail */
		req.session_id = pc->handle;
		req.principal = pc->c->principal;
		if (pc->c->stateless)   /* as in exec_call */
			msc_random_hex(key, 16);
		if (pc->c->stateless || mcp_live_call_key(pc->id, key)) {
			req.call_key = key;
			pc->progress = mcp_progress_start(pc->c->session,
			    pc->c->principal, pc->token, pc->handle, key,
			    pc->c->send, pc->c->send_ctx);
			/*
			 * Before the call: once it is sent, its reply may
			 * free pc (pending_done) and the transport's call
			 * (finished) before this thread reads either again.
			 */
			if (pc->c->exec_sent != NULL)
				pc->c->exec_sent(pc->c->send_ctx, pc->handle,
				    key);
		}
		rv = msc_client_call(pc->c->session,
		    &msc__v1__session__descriptor, "TerminalExec", &req.base,
		    MCP_CALL_MAX_MS, pending_done, pc);
		if (rv != 0) {
			mcp_progress_stop(pc->progress);
			pc->progress = NULL;
		}
	}
	free(msg);
	tools_exec_request_fini(&req);
	json_decref(keep);
	return rv;
}

/*
 * A call that minted its handle first (computer_create over stateless
 * HTTP, or a terminal_execute there that asks for progress, which names
 * the call by its handle): the handle was opened; now the call itself.
 * Returns true when it is on its way; false with *st set to why not.
 */
static bool
run_in_new_handle(struct pending_call *pc, ProtobufCMessage *opened,
    struct msc_status *st)
{
	int rv;

	pc->opening = false;
	snprintf(pc->handle, sizeof(pc->handle), "%s",
	    ((Msc__V1__SessionRef *)opened)->session_id);
	protobuf_c_message_free_unpacked(opened, NULL);
	pc->fresh = true;
	pc->by_handle = true;
	rv = pc->tool == TOOL_EXEC ? exec_in_handle(pc) : create_in_handle(pc);
	if (rv == 0)
		return true;
	if (rv == -EINVAL)
		st->message = "the call's arguments could not be read again";
	else
		st->message = msc_reason_session_unsent(rv, NULL);
	return false;
}

static void
c_send_task(struct pending_call *pc, const Msc__V1__Task *task)
{
	json_t *r = mcp_tasks_created(task);
	json_t *msg = r == NULL ? NULL : json_pack("{s:s, s:O, s:o}",
	    "jsonrpc", "2.0", "id", pc->id, "result", r);

	if (msg != NULL)
		pc->c->send(pc->c->send_ctx, msg);
	else
		mcp_conn_send_error(pc->c, pc->id, -32603, "Internal error");
	json_decref(msg);
}

static void
pending_done(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct pending_call *pc = arg;
	struct msc_status unsent = { MSC__V1__CODE__UNAVAILABLE, NULL,
		MSC__V1__REASON__REASON_UNSPECIFIED };
	struct msc_status lost = { MSC__V1__CODE__UNAVAILABLE,
		msc_reason_session_lost(),
		MSC__V1__REASON__REASON_UNSPECIFIED };
	json_t *result;
	const char *handle = NULL;
	char failed[1024];
	bool cancelled = resp == NULL && st->code == MSC__V1__CODE__CANCELLED;

	mcp_progress_stop(pc->progress);        /* none after the result */
	pc->progress = NULL;
	if (pc->opening && resp != NULL) {
		if (run_in_new_handle(pc, resp, &unsent))
			return;
		resp = NULL;
		st = &unsent;
	}
	if (resp == NULL && pc->fresh) {
		/* Nobody learnt the handle: it goes now, not when idle. */
		Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;

		ref.session_id = pc->handle;
		ref.principal = pc->c->principal;
		(void)msc_client_call(pc->c->session,
		    &msc__v1__session__descriptor, "Close", &ref.base, 30000,
		    msc_reply_ignore, NULL);
	}
	if (cancelled)
		goto out;       /* the client cancelled it: no response */
	if (resp == NULL && pc->by_handle && !pc->fresh &&
	    st->reason == MSC__V1__REASON__REASON_SESSION_NOT_FOUND) {
		lost.message = MCP_HANDLE_UNKNOWN_TEXT;
		lost.code = MSC__V1__CODE__NOT_FOUND;
		st = &lost;
	} else if (resp == NULL &&
	    st->reason == MSC__V1__REASON__REASON_SESSION_NOT_FOUND) {
		/* The next call opens a new session (stdio keeps one). */
		pthread_mutex_lock(&pc->c->mu);
		pc->c->session_id[0] = '\0';
		pthread_mutex_unlock(&pc->c->mu);
		st = &lost;
	}
	if (resp != NULL && pc->tool == TOOL_EXEC &&
	    ((Msc__V1__TerminalExecReply *)resp)->task != NULL) {
		/* Still running: the client polls the task (mcp_tasks.c). */
		c_send_task(pc, ((Msc__V1__TerminalExecReply *)resp)->task);
		goto out;
	}
	if (resp != NULL && (pc->tool == TOOL_EXEC ||
	    tools_is_process(pc->tool) || tools_is_file(pc->tool)) &&
	    (pc->modern || pc->by_handle))
		handle = ((Msc__V1__TerminalExecReply *)resp)->sandbox_handle;
	if (handle != NULL && handle[0] == '\0')
		handle = NULL;
	if (pc->tool == TOOL_RELEASE) {
		if (resp != NULL)
			forget_released(pc);
		result = tools_release_result(st, resp);
	} else if (tools_is_process(pc->tool))
		result = resp != NULL ? tools_process_result(pc->tool,
		    (Msc__V1__TerminalExecReply *)resp, handle)
				      : tools_error_result(mcp_failed_text(st,
					  failed, sizeof(failed)));
	else if (tools_is_file(pc->tool))
		result = resp != NULL ? tools_file_result(pc->tool,
		    (Msc__V1__TerminalExecReply *)resp, handle)
				      : tools_error_result(mcp_failed_text(st,
					  failed, sizeof(failed)));
	else if (pc->tool == TOOL_EXEC)
		result = resp != NULL ? tools_exec_result(
		    (Msc__V1__TerminalExecReply *)resp, handle)
				      : tools_error_result(mcp_failed_text(st,
					  failed, sizeof(failed)));
	else
		result = tools_lifecycle_result(pc->tool, pc->computer_id, st,
		    resp, pc->modern || pc->by_handle ? pc->handle : NULL);
	mcp_conn_send_result(pc->c, pc->id, result, pc->modern);
out:
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	mcp_conn_call_done(pc->c);
	if (pc->c->finished != NULL)
		pc->c->finished(pc->c->send_ctx);
	json_decref(pc->args);
	json_decref(pc->token);
	json_decref(pc->id);
	free(pc);
}

/*
 * Sends `req` to the session service; true when the reply will come.
 * With a progress token in `how`, session `sid` and call key `key`, the
 * call reports its progress until then.
 */
static bool
call_session(struct mcp_conn *c, struct pending_call *how, const char *method,
    const ProtobufCMessage *req, int timeout_ms, const char *computer_id,
    const char *sid, const char *key)
{
	struct pending_call *pc;
	json_t *id = how->id;
	int rv;

	if (c->session == NULL) {       /* a connection without a service */
		mcp_conn_send_result(c, id, tools_error_result(
		    msc_reason_session_unsent(-ENOTCONN, NULL)), how->modern);
		return false;
	}
	if ((pc = calloc(1, sizeof(*pc))) == NULL) {
		mcp_conn_send_error(c, id, -32603, "Internal error: out of memory");
		return false;
	}
	*pc = *how;
	pc->c = c;
	pc->id = json_incref(id);
	if (computer_id != NULL &&
	    msc_slug_normalize(computer_id, pc->computer_id) != 0)
		pc->computer_id[0] = '\0';
	pthread_mutex_lock(&c->mu);
	c->inflight++;
	pthread_mutex_unlock(&c->mu);
	if (how->token != NULL && sid != NULL && sid[0] != '\0' && key != NULL)
		pc->progress = mcp_progress_start(c->session, c->principal,
		    how->token, sid, key, c->send, c->send_ctx);
	/* Borrowed from the request: kept only for the call after an Open. */
	pc->token = how->opening ? json_incref(how->token) : NULL;
	pc->args = how->opening ? json_incref(how->args) : NULL;
	if ((rv = msc_client_call(c->session, &msc__v1__session__descriptor,
		 method, req, timeout_ms, pending_done, pc)) != 0) {
		mcp_progress_stop(pc->progress);
		mcp_conn_send_result(c, id, tools_error_result(
		    msc_reason_session_unsent(rv, NULL)), pc->modern);
		json_decref(pc->args);
		json_decref(pc->token);
		json_decref(pc->id);
		free(pc);
		mcp_conn_call_done(c);
		return false;
	}
	return true;
}

/* Which session the call runs in (mcp_pick_session); false after
 * answering the call. */
static bool
pick_session(struct mcp_conn *c, struct pending_call *how, json_t *args,
    char sid[64], bool *mint)
{
	bool by_handle;

	if (!mcp_pick_session(c, how->id, how->modern, args, sid, &by_handle,
		mint))
		return false;
	if (by_handle) {
		snprintf(how->handle, sizeof(how->handle), "%s", sid);
		how->by_handle = true;
	}
	return true;
}

/*
 * Mints a handle (Session/Open) for a call whose arguments were checked;
 * the call follows in it (run_in_new_handle). True when the reply will
 * come.
 */
static bool
open_then_call(struct mcp_conn *c, struct pending_call *how, json_t *args,
    const char *computer_id)
{
	Msc__V1__OpenRequest open = MSC__V1__OPEN_REQUEST__INIT;

	open.client_name = "http";
	open.idle_timeout_s = (uint32_t)c->cfg->session_timeout;
	open.sandbox = true;
	open.principal = c->principal;
	how->opening = true;
	how->args = args;
	return call_session(c, how, "Open", &open.base, MCP_CALL_MAX_MS,
	    computer_id, NULL, NULL);
}

static bool
exec_call(struct mcp_conn *c, struct pending_call *how, json_t *args)
{
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	json_t *keep = json_array();
	bool pending = false, mint;
	char sid[64], key[MCP_LIVE_KEY_MAX], owner[64], err[512];
	char *msg;

	msg = tools_exec_request(args, &req, keep);
	if (msg == NULL && tools_is_process(how->tool))
		msg = tools_process_request(how->tool, c->cfg, args, &req,
		    keep);
	else if (msg == NULL && tools_is_file(how->tool))
		msg = tools_file_request(how->tool, c->cfg, args, &req, keep);
	if (msg != NULL) {
		mcp_conn_send_result(c, how->id, tools_error_result(msg),
		    how->modern);
		free(msg);
		goto done;
	}
	if (!pick_session(c, how, args, sid, &mint))
		goto done;
	if (mint && how->token != NULL) {
		/* Progress names the call by its handle: mint it first. */
		pending = open_then_call(c, how, args, NULL);
		goto done;
	}
	req.session_id = sid;
	req.principal = c->principal;
	req.new_sandbox = mint;
	if (how->tasks) {
		/* Stdio: the connection's session reads its tasks; stateless
		 * HTTP: whoever holds the task id. */
		if (c->stateless || mcp_conn_session(c, owner, err,
			sizeof(err)) != 0)
			owner[0] = '\0';
		req.task_after_ms = MCP_TASK_AFTER_MS;
		req.task_owner = owner;
	}
	/* Stateless HTTP: no notifications/cancelled names the call, and
	 * JSON-RPC ids repeat across clients; a random key instead. */
	if (c->stateless)
		msc_random_hex(key, 16);
	if (c->stateless || mcp_live_call_key(how->id, key))
		req.call_key = key;
	pending = call_session(c, how, "TerminalExec", &req.base,
	    MCP_CALL_MAX_MS, NULL, sid, req.call_key[0] != '\0' ? key : NULL);
	if (pending && c->exec_sent != NULL && req.call_key[0] != '\0')
		c->exec_sent(c->send_ctx, sid, key);
done:
	tools_exec_request_fini(&req);
	json_decref(keep);
	return pending;
}

/*
 * Snapshots (issue 31): their tools, or computer_create's from_snapshot,
 * need the snapshots group and a backend that keeps them (docker, the WASM
 * backends, E2B, Modal). computer_create with count becomes TOOLS_SNAP_FORK.
 * NULL or the error text (malloc'd).
 */
static char *
snapshot_refused(struct mcp_conn *c, struct pending_call *how,
    const Msc__V1__ComputerRequest *req)
{
	char *msg;

	if (!tools_is_snapshot(how->tool) && req->from_snapshot[0] == '\0')
		return NULL;
	if (!(c->cfg->tool_groups & MSC_TOOLS_SNAPSHOTS))
		return strdup("from_snapshot needs the snapshots tool group "
		    "(--tools snapshots)");
	if (!tools_backend_has(c->cfg, MSC_BACKEND_SNAPSHOTS)) {
		if (asprintf(&msg, "Snapshots are kept on the docker backend "
		    "(Docker and Podman), the WASM backends, E2B and Modal "
		    "only: the %s backend has none yet.", c->cfg->backend) < 0)
			return NULL;
		return msg;
	}
	if (tools_lifecycle_is_create(how->tool) && req->count > 0)
		how->tool = TOOLS_SNAP_FORK;
	return NULL;
}

static bool
lifecycle_call(struct mcp_conn *c, struct pending_call *how, json_t *args)
{
	Msc__V1__ComputerRequest req = MSC__V1__COMPUTER_REQUEST__INIT;
	char *msg = tools_lifecycle_request(how->tool, args, &req);
	const char *refusal;
	char sid[64];
	bool mint, pending = false;

	if (msg == NULL)
		msg = snapshot_refused(c, how, &req);
	if (msg == NULL && tools_is_port(how->tool) &&
	    c->cfg->chosen != NULL &&
	    (refusal = c->cfg->chosen->preview_refusal) != NULL)
		msg = strdup(refusal);
	if (msg != NULL) {
		mcp_conn_send_result(c, how->id, tools_error_result(msg),
		    how->modern);
		free(msg);
		goto out;
	}
	if (!pick_session(c, how, args, sid, &mint))
		goto out;
	if (mint && tools_lifecycle_is_create(how->tool)) {
		/* A new handle first, then its computer (pending_done). */
		pending = open_then_call(c, how, args, req.computer_id);
		goto out;
	}
	if (mint) {
		mcp_conn_send_result(c, how->id, tools_error_result(
		    "Pass the sandbox_handle of an earlier terminal_execute "
		    "result: over HTTP at protocol 2026-07-28 the lifecycle "
		    "tools act for a handle."), how->modern);
		goto out;
	}
	req.session_id = sid;
	req.principal = c->principal;
	/* Restart, reset and delete say how many background processes ended. */
	req.count_processes = (c->cfg->tool_groups & MSC_TOOLS_PROCESSES) != 0;
	pending = call_session(c, how, tools_lifecycle_method(how->tool),
	    &req.base, MCP_CALL_MAX_MS, how->tool == TOOLS_SNAP_DELETE ?
	    req.snapshot_id : req.computer_id, NULL, NULL);
out:
	tools_lifecycle_request_fini(&req);
	return pending;
}

/*
 * computer_release: ends the handle now (Session/Close); its temporary
 * computers go, permanent ones stay.
 */
static bool
release_call(struct mcp_conn *c, struct pending_call *how, json_t *args)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	const char *handle = NULL, *bad = NULL;

	if (args != NULL && !json_is_object(args))
		bad = "Error executing tool computer_release: arguments: Input "
		      "should be a valid dictionary";
	else if ((bad = mcp_handle_arg(args, &handle)) == NULL && handle == NULL)
		bad = "Error executing tool computer_release: sandbox_handle: "
		      "Field required";
	if (bad != NULL) {
		mcp_conn_send_result(c, how->id, tools_error_result(bad),
		    how->modern);
		return false;
	}
	snprintf(how->handle, sizeof(how->handle), "%s", handle);
	how->by_handle = true;
	ref.session_id = how->handle;
	ref.principal = c->principal;
	return call_session(c, how, "Close", &ref.base, MCP_CALL_MAX_MS, NULL,
	    NULL, NULL);
}

bool
mcp_tools_call(struct mcp_conn *c, json_t *id, json_t *params, bool modern)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	struct pending_call how = { .id = id, .tool = TOOL_EXEC,
		.modern = modern, .tasks = modern && mcp_tasks_declared(params),
		.token = json_object_get(json_object_get(
		    params, "_meta"), "progressToken") };
	int tool = -2;

	if (name == NULL) {
		mcp_conn_send_error(c, id, -32602,
		    "Invalid params: missing tool name");
		return false;
	}
	if (strcmp(name, "computer_release") == 0) {
		how.tool = TOOL_RELEASE;
		return release_call(c, &how, args);
	}
	if (c->cfg->lifecycle_tools)
		tool = tools_lifecycle_find(name);
	if (tool < 0 && (c->cfg->tool_groups & MSC_TOOLS_PROCESSES))
		tool = tools_processes_find(name);
	if (tool < 0 && (c->cfg->tool_groups & MSC_TOOLS_FILES))
		tool = tools_files_find(name);
	if (tool < 0 && (c->cfg->tool_groups & MSC_TOOLS_SNAPSHOTS))
		tool = tools_snapshots_find(name);
	if (tool < 0 && (c->cfg->tool_groups & MSC_TOOLS_PORTS))
		tool = tools_ports_find(name);
	if (strcmp(name, "terminal_execute") != 0 && tool < 0) {
		char text[300];

		snprintf(text, sizeof(text), "Unknown tool: %.200s", name);
		if (modern)     /* 2026-07-28: a JSON-RPC error */
			mcp_conn_send_error(c, id, -32602, text);
		else
			mcp_conn_send_result(c, id, tools_error_result(text),
			    false);
		return false;
	}
	if (tool < 0 && json_is_true(json_object_get(args, "background")))
		tool = TOOLS_PROC_START;
	if (tool == TOOLS_FILE_UPLOAD || tool == TOOLS_FILE_DOWNLOAD)
		return mcp_xfer_call(c, id, args, tool, modern);
	if (tools_is_file(tool)) {
		/* Short helper commands: no task, no progress. */
		how.tool = tool;
		how.tasks = false;
		how.token = NULL;
		return exec_call(c, &how, args);
	}
	if (tools_is_process(tool)) {
		if (!(c->cfg->tool_groups & MSC_TOOLS_PROCESSES)) {
			mcp_conn_send_result(c, id, tools_error_result(
			    "background: true needs the processes tool group "
			    "(--tools processes)"), modern);
			return false;
		}
		/* Short helper commands: no task, no progress. */
		how.tool = tool;
		how.tasks = false;
		how.token = NULL;
		return exec_call(c, &how, args);
	}
	if (tool >= 0) {
		how.tool = tool;
		return lifecycle_call(c, &how, args);
	}
	return exec_call(c, &how, args);
}

