/*
 * mcp_tasks.c - the MCP tasks extension for one connection: the
 * extension's capability checks, the CreateTaskResult, and tasks/get,
 * tasks/cancel, tasks/update as Session/GetTask and Session/CancelTask.
 *
 * Who may see a task: its principal (mcp_conn.principal), and of it over
 * stdio the connection's session (the task was started with it as
 * TerminalExecRequest.task_owner); over stateless HTTP whoever of the
 * principal holds the task id, 128 random bits. Another principal's or
 * session's task is answered as an unknown one, and a task's state names
 * its sandbox_handle only to a caller that holds it or for whom the call
 * minted it (session_task.c).
 */
#include "mcp_tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp_era.h"
#include "msc_reason.h"
#include "tools.h"

/* How long a task lookup and a cancel (the driver's kill) may take. */
#define TASK_GET_MS 10000
#define TASK_CANCEL_MS 15000
/* What the client is told to wait between two tasks/get. */
#define TASK_POLL_MS 1000
/* A task id is 32 hex digits; anything much longer names none. */
#define TASK_ID_MAX 128

/* Matches no task owner: a stateful connection that has no session. */
#define NO_OWNER "-"

bool
mcp_tasks_declared(json_t *params)
{
	json_t *caps = json_object_get(json_object_get(params, "_meta"),
	    MCP_META_CAPS);

	return json_is_object(json_object_get(json_object_get(caps,
	    "extensions"), MCP_TASKS_EXTENSION));
}

bool
mcp_tasks_method(const char *method)
{
	return strcmp(method, "tasks/get") == 0 ||
	    strcmp(method, "tasks/cancel") == 0 ||
	    strcmp(method, "tasks/update") == 0;
}

bool
mcp_tasks_check_caps(json_t *msg, const char *method, struct mcp_reject *r)
{
	json_t *params = json_object_get(msg, "params");
	bool wants = mcp_tasks_method(method) ||
	    (strcmp(method, "subscriptions/listen") == 0 &&
		json_object_get(json_object_get(params, "notifications"),
		    "taskIds") != NULL);

	if (!wants || mcp_tasks_declared(params))
		return true;
	r->status = 400;
	r->code = MCP_ERR_MISSING_CAPABILITY;
	r->message = "Missing required client capability";
	r->data = json_pack("{s:{s:{s:{}}}}", "requiredCapabilities",
	    "extensions", MCP_TASKS_EXTENSION);
	return false;
}

static json_t *
iso_time(uint64_t wall_ms)
{
	time_t sec = (time_t)(wall_ms / 1000);
	struct tm tm;
	char buf[40], out[48];

	gmtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, sizeof(out), "%s.%03uZ", buf,
	    (unsigned)(wall_ms % 1000));
	return json_string(out);
}

static const char *
status_name(Msc__V1__TaskStatus st)
{
	switch (st) {
	case MSC__V1__TASK_STATUS__TASK_COMPLETED:
		return "completed";
	case MSC__V1__TASK_STATUS__TASK_CANCELLED:
		return "cancelled";
	default:
		return "working";
	}
}

/* The task's base fields into `out` (taken and returned). */
static json_t *
task_fields(json_t *out, const Msc__V1__Task *t)
{
	if (out == NULL)
		return NULL;
	json_object_set_new(out, "taskId", json_string(t->task_id));
	json_object_set_new(out, "status", json_string(status_name(t->status)));
	json_object_set_new(out, "createdAt", iso_time(t->created_at_ms));
	json_object_set_new(out, "lastUpdatedAt", iso_time(t->updated_at_ms));
	json_object_set_new(out, "ttlMs", json_integer((json_int_t)t->ttl_ms));
	if (t->status == MSC__V1__TASK_STATUS__TASK_WORKING)
		json_object_set_new(out, "pollIntervalMs",
		    json_integer(TASK_POLL_MS));
	else if (t->status == MSC__V1__TASK_STATUS__TASK_CANCELLED)
		json_object_set_new(out, "statusMessage", json_string(
		    "cancelled: the command was killed"));
	return out;
}

json_t *
mcp_tasks_created(const Msc__V1__Task *t)
{
	json_t *r = task_fields(mcp_era_complete(json_object()), t);

	if (r != NULL)
		json_object_set_new(r, "resultType", json_string("task"));
	return r;
}

json_t *
mcp_tasks_state(const Msc__V1__Task *t)
{
	json_t *r = task_fields(json_object(), t), *res = NULL;
	char text[1024];

	if (r == NULL || t->status != MSC__V1__TASK_STATUS__TASK_COMPLETED)
		return r;
	if (t->result != NULL)
		res = tools_exec_result(t->result, t->result->sandbox_handle[0]
		    != '\0' ? t->result->sandbox_handle : NULL);
	else if (t->error != NULL) {
		struct msc_status st = { t->error->code, t->error->message,
			t->error->reason };

		/* Shaped as the same call's plain 2026 answer would be. */
		res = tools_error_result(mcp_failed_text(&st, text,
		    sizeof(text)));
		if (res != NULL)
			mcp_era_error_payload(res);
	}
	if (res == NULL) {
		json_decref(r);
		return NULL;
	}
	json_object_set_new(r, "result", res);
	return r;
}

void
mcp_tasks_caller(struct mcp_conn *c, char sid[64])
{
	pthread_mutex_lock(&c->mu);
	snprintf(sid, 64, "%s", c->stateless ? "" :
	    c->session_id[0] != '\0' ? c->session_id : NO_OWNER);
	pthread_mutex_unlock(&c->mu);
}

enum task_op { OP_GET, OP_CANCEL, OP_UPDATE };

struct task_call {
	struct mcp_conn *c;
	json_t *id;
	enum task_op op;
};

static void
task_done(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct task_call *tc = arg;
	struct mcp_conn *c = tc->c;
	const Msc__V1__Task *t = (const Msc__V1__Task *)resp;
	char text[1024];

	if (resp == NULL && st->code == MSC__V1__CODE__NOT_FOUND)
		mcp_conn_send_error(c, tc->id, -32602, st->message);
	else if (resp == NULL)
		mcp_conn_send_error(c, tc->id, -32603, mcp_failed_text(st, text,
		    sizeof(text)));
	else if (tc->op == OP_CANCEL || tc->op == OP_UPDATE)
		/*
		 * An acknowledgement, nothing more. A command never asks for
		 * input, so every key of an update is unknown, and the
		 * extension says to ignore those (§5.5 of the notes).
		 */
		mcp_conn_send_result(c, tc->id, json_object(), true);
	else
		mcp_conn_send_result(c, tc->id, mcp_tasks_state(t), true);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	mcp_conn_call_done(c);
	if (c->finished != NULL)
		c->finished(c->send_ctx);
	json_decref(tc->id);
	free(tc);
}

bool
mcp_tasks_dispatch(struct mcp_conn *c, const char *method, json_t *id,
    json_t *params)
{
	Msc__V1__TaskRef ref = MSC__V1__TASK_REF__INIT;
	json_t *tid = json_object_get(params, "taskId");
	struct task_call *tc;
	char sid[64];
	int rv;

	if (!json_is_string(tid) || json_string_length(tid) == 0 ||
	    json_string_length(tid) > TASK_ID_MAX ||
	    strlen(json_string_value(tid)) != json_string_length(tid)) {
		mcp_conn_send_error(c, id, -32602, "Invalid params: taskId "
		    "must be the taskId of a terminal_execute's task");
		return false;
	}
	if (c->session == NULL) {
		mcp_conn_send_error(c, id, -32603,
		    "no session service is configured");
		return false;
	}
	if ((tc = calloc(1, sizeof(*tc))) == NULL) {
		mcp_conn_send_error(c, id, -32603, "Internal error: out of memory");
		return false;
	}
	tc->c = c;
	tc->id = json_incref(id);
	tc->op = strcmp(method, "tasks/cancel") == 0 ? OP_CANCEL
	    : strcmp(method, "tasks/update") == 0 ? OP_UPDATE : OP_GET;
	mcp_tasks_caller(c, sid);
	pthread_mutex_lock(&c->mu);
	c->inflight++;
	pthread_mutex_unlock(&c->mu);
	ref.session_id = sid;
	ref.principal = c->principal;
	ref.task_id = (char *)json_string_value(tid);
	rv = msc_client_call(c->session, &msc__v1__session__descriptor,
	    tc->op == OP_CANCEL ? "CancelTask" : "GetTask", &ref.base,
	    tc->op == OP_CANCEL ? TASK_CANCEL_MS : TASK_GET_MS, task_done, tc);
	if (rv != 0) {
		mcp_conn_send_error(c, id, -32603,
		    msc_reason_session_unsent(rv, NULL));
		mcp_conn_call_done(c);
		json_decref(tc->id);
		free(tc);
		return false;
	}
	return true;
}
