/*
 * mcp_tasks.h - the MCP tasks extension (io.modelcontextprotocol/tasks,
 * 2026-07-28): a terminal_execute still running after a short wait
 * answers with a task; tasks/get, tasks/cancel and tasks/update read and
 * act on it. The tasks themselves live in the session service
 * (Session/GetTask, Session/CancelTask), so any edge answers for them.
 */
#ifndef EDGE_MCP_TASKS_H
#define EDGE_MCP_TASKS_H

#include <stdbool.h>

#include <jansson.h>

#include "mcp.h"
#include "mcp_era.h"
#include "session.pb-c.h"

#define MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"
#define MCP_ERR_MISSING_CAPABILITY (-32021)

/* How long a terminal_execute runs before it answers with a task. */
#define MCP_TASK_AFTER_MS 2000

/* Whether a request's params._meta declares the tasks extension. */
bool mcp_tasks_declared(json_t *params);

/* Whether `method` is one of the extension's (tasks/get, ...). */
bool mcp_tasks_method(const char *method);

/*
 * A tasks/get, tasks/update or tasks/cancel request, or a subscriptions/listen for taskIds, from a
 * request that does not declare the extension: false with r set to
 * -32021 (400 over HTTP), checked before any task lookup.
 */
bool mcp_tasks_check_caps(json_t *msg, const char *method,
    struct mcp_reject *r);

/*
 * Serves tasks/get, tasks/cancel or tasks/update for connection c; true
 * when the reply will come later (as mcp_conn_handle_json).
 */
bool mcp_tasks_dispatch(struct mcp_conn *c, const char *method, json_t *id,
    json_t *params);

/*
 * tasks/get's result for `t` (new reference): the task and, once
 * completed, the result the call would have given.
 */
json_t *mcp_tasks_state(const Msc__V1__Task *t);

/*
 * Who asks, for Session/GetTask's session_id: the connection's session
 * (stdio), or empty (stateless HTTP: the task id alone).
 */
void mcp_tasks_caller(struct mcp_conn *c, char sid[64]);

/*
 * subscriptions/listen with notifications.taskIds (mcp_tasks_listen.c):
 * true when the stream goes on (as mcp_conn_handle_json).
 */
bool mcp_tasks_listen(struct mcp_conn *c, json_t *id, json_t *task_ids);

/* The CreateTaskResult for a call that became task `t` (new reference). */
json_t *mcp_tasks_created(const Msc__V1__Task *t);

#endif /* EDGE_MCP_TASKS_H */
