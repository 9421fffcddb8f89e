/*
 * mcp_tasks_listen.c - notifications/tasks on a subscriptions/listen
 * stream (the tasks extension's optional push). The acknowledgement
 * echoes the taskIds followed; then, about once a second, the edge reads
 * each task that is not terminal yet (Session/GetTask, one at a time)
 * and sends notifications/tasks (what tasks/get gives at that moment)
 * when its status changed. Once every followed task is terminal or gone,
 * the subscription ends with its response; when its client leaves
 * (the transport's watch_client), at the next round, unsent. A stream
 * follows at most
 * LISTEN_MAX_TASKS ids; an edge holds at most LISTEN_MAX streams.
 */
#include "mcp_tasks.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "msc_time.h"

#define LISTEN_MAX_TASKS 16
#define LISTEN_MAX 64
#define LISTEN_EVERY_MS 1000
#define LISTEN_GET_MS 10000
/* The edge's outer bound on any request (mcp_call.c). */
#define LISTEN_MAX_MS (2 * 3600 * 1000)

static atomic_int listens;

struct task_listen {
	struct mcp_conn *c;
	json_t *id;             /* the listen request's */
	json_t *ids;            /* the taskIds followed */
	char sid[64];           /* the caller, as in mcp_tasks_dispatch */
	int last[LISTEN_MAX_TASKS];     /* status sent; -1: none yet */
	bool done[LISTEN_MAX_TASKS];    /* terminal or gone */
	size_t next;            /* the task being read this round */
	uint64_t until_ms;
	nng_aio *timer;
};

static void read_next(struct task_listen *l);

static void
listen_end(struct task_listen *l)
{
	struct mcp_conn *c = l->c;

	if (!atomic_load(&c->closing))
		mcp_conn_send_result(c, l->id, json_pack("{s:{s:O}}", "_meta",
		    MCP_META_SUBSCRIPTION, l->id), true);
	mcp_conn_call_done(c);
	if (c->finished != NULL)
		c->finished(c->send_ctx);
	json_decref(l->id);
	json_decref(l->ids);
	atomic_fetch_sub(&listens, 1);
	/* The timer's callback (this thread, or done) is its last use. */
	nng_aio_reap(l->timer);
	free(l);
}

static void
notify(struct task_listen *l, json_t *task)
{
	json_t *meta = json_pack("{s:O}", MCP_META_SUBSCRIPTION, l->id);
	json_t *msg;

	json_object_del(task, "resultType");
	json_object_set_new(task, "_meta", meta);
	msg = json_pack("{s:s, s:s, s:O}", "jsonrpc", "2.0", "method",
	    "notifications/tasks", "params", task);
	if (msg != NULL)
		l->c->send(l->c->send_ctx, msg);
	json_decref(msg);
}

static void
got(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct task_listen *l = arg;
	const Msc__V1__Task *t = (const Msc__V1__Task *)resp;
	size_t i = l->next;

	if (t != NULL) {
		if ((int)t->status != l->last[i]) {
			json_t *task = mcp_tasks_state(t);

			l->last[i] = (int)t->status;
			if (task != NULL)
				notify(l, task);
			json_decref(task);
		}
		l->done[i] = t->status != MSC__V1__TASK_STATUS__TASK_WORKING;
		protobuf_c_message_free_unpacked(resp, NULL);
	} else if (st->code == MSC__V1__CODE__NOT_FOUND)
		l->done[i] = true;      /* unknown or expired: nothing to say */
	l->next++;
	read_next(l);
}

/* The timer: a new round. */
static void
tick(void *arg)
{
	struct task_listen *l = arg;

	l->next = 0;
	read_next(l);
}

/* Reads the next task of this round; at the end, waits or ends. */
static void
read_next(struct task_listen *l)
{
	Msc__V1__TaskRef ref = MSC__V1__TASK_REF__INIT;
	size_t n = json_array_size(l->ids);
	bool all = true;

	while (l->next < n && l->done[l->next])
		l->next++;
	if (l->next < n && !atomic_load(&l->c->closing)) {
		ref.session_id = l->sid;
		ref.principal = l->c->principal;
		ref.task_id = (char *)json_string_value(json_array_get(l->ids,
		    l->next));
		if (msc_client_call(l->c->session,
			&msc__v1__session__descriptor, "GetTask", &ref.base,
			LISTEN_GET_MS, got, l) == 0)
			return;
		l->next++;      /* not sent: next round */
		read_next(l);
		return;
	}
	for (size_t i = 0; i < n; i++)
		all = all && l->done[i];
	if (all || atomic_load(&l->c->closing) ||
	    msc_now_ms() >= l->until_ms) {
		listen_end(l);
		return;
	}
	nng_sleep_aio(LISTEN_EVERY_MS, l->timer);
}

bool
mcp_tasks_listen(struct mcp_conn *c, json_t *id, json_t *task_ids)
{
	struct task_listen *l;
	json_t *ack;
	size_t i;
	json_t *v;

	if (!json_is_array(task_ids) || json_array_size(task_ids) >
	    LISTEN_MAX_TASKS) {
		mcp_conn_send_error(c, id, -32602, "Invalid params: "
		    "notifications.taskIds must be an array of at most 16 "
		    "task ids");
		return false;
	}
	json_array_foreach (task_ids, i, v)
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > 128) {
			mcp_conn_send_error(c, id, -32602, "Invalid params: "
			    "notifications.taskIds must hold task ids");
			return false;
		}
	if (c->session == NULL || atomic_fetch_add(&listens, 1) >= LISTEN_MAX) {
		if (c->session != NULL)
			atomic_fetch_sub(&listens, 1);
		mcp_conn_send_error(c, id, -32603, "Too many task subscriptions "
		    "are open on this server; poll with tasks/get instead");
		return false;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    nng_aio_alloc(&l->timer, tick, l) != 0) {
		free(l);
		atomic_fetch_sub(&listens, 1);
		mcp_conn_send_error(c, id, -32603, "Internal error: out of memory");
		return false;
	}
	l->c = c;
	l->id = json_incref(id);
	l->ids = json_incref(task_ids);
	l->until_ms = msc_now_ms() + LISTEN_MAX_MS;
	for (i = 0; i < LISTEN_MAX_TASKS; i++)
		l->last[i] = -1;
	mcp_tasks_caller(c, l->sid);
	pthread_mutex_lock(&c->mu);
	c->inflight++;
	pthread_mutex_unlock(&c->mu);
	ack = json_pack("{s:s, s:s, s:{s:{s:O}, s:{s:O}}}", "jsonrpc", "2.0",
	    "method", "notifications/subscriptions/acknowledged", "params",
	    "_meta", MCP_META_SUBSCRIPTION, id, "notifications", "taskIds",
	    task_ids);
	if (ack != NULL)
		c->send(c->send_ctx, ack);
	json_decref(ack);
	if (c->watch_client != NULL)
		c->watch_client(c->send_ctx);
	read_next(l);   /* the tasks' state now, then on each change */
	return true;
}
