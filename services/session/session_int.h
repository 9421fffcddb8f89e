/* session_int.h - state shared by the session service's files. */
#ifndef SESS_SESSION_INT_H
#define SESS_SESSION_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <nng/nng.h>

#include "msc_fleet.h"
#include "msc_map.h"
#include "msc_principal.h"
#include "msc_reason.h"
#include "msc_rpc.h"
#include "msc_slug.h"
#include "msc_time.h"
#include "session.h"
#include "session_deadline.h"
#include "session.pb-c.h"

#define SESS_MAX_SESSIONS 100000
#define SESS_MAX_PENDING 1024
#define SESS_EPOCH_LEN 8
#define SESS_RANDOM_BYTES 16            /* 128 random bits per id */
#define SESS_ID_LEN (SESS_EPOCH_LEN + 2 * SESS_RANDOM_BYTES)
#define SESS_TAG_LEN 12
#define SESS_TASK_ID_LEN 32             /* 128 random bits, hex */
#define SESS_PRINCIPAL_MAX 64           /* a principal's name, bytes */

struct pending;
struct closing;
struct sess_task;

/*
 * A TerminalExec's cancellation and progress state (session_live.c),
 * part of its struct pending; on its session's `live` list while the call
 * is open. All under s->mu.
 */
struct sess_live {
	LIST_ENTRY(sess_live) link;     /* in its session's live, if listed */
	bool listed;
	const char *call_key;           /* the edge's; borrowed from the call */
	char driver_key[33];            /* random: ExecRequest.cancel_key */
	char computer_id[MSC_SLUG_MAX + 1];     /* once on a driver */
	size_t driver;                  /* fleet index, once on a driver */
	bool on_driver;                 /* Driver/Exec was sent */
	bool cancelled;                 /* CancelExec came */
};
struct sess_release;

/*
 * What one principal holds (session_principal.c): kept while it has a
 * session, a task or a call in flight. All under s->mu.
 */
struct sess_principal {
	char name[SESS_PRINCIPAL_MAX + 1];      /* "": the unnamed one */
	char tag[MSC_PRINCIPAL_TAG_LEN + 1];    /* its computers record it */
	int sessions;                   /* live sessions, handles included */
	int sandboxes;                  /* live sandbox handles */
	int tasks;                      /* MCP tasks, working or kept */
	long calls;                     /* calls in flight */
	int pins;                       /* holders across an eviction */
	TAILQ_HEAD(, sess) lru;         /* its sessions, least recent first */
};

/*
 * A session's lifetime: `refs` counts the sessions map (until the session
 * ends) and every holder below, all under s->mu. The rule: whoever uses
 * a struct sess after a call that may end a command or drop a reference
 * (pending_fail, pending_end, run, resolve, drain, sess_end) holds a
 * reference of its own across it: sess_ref_locked() before, sess_put()
 * as the last use. Each struct pending holds one until pending_end; a
 * callback that goes on with the session after ending its pending takes
 * one at its top. Code that keeps only a session id (lifecycle calls,
 * releases) looks the session up again under the lock.
 */
struct sess {
	char id[SESS_ID_LEN + 1];       /* a bearer credential: never logged */
	char tag[SESS_TAG_LEN + 1];     /* random, for logs and driver owner */
	int refs;                       /* see above */
	bool closed;
	bool sandbox;                   /* a sandbox_handle: --max-sandboxes */
	uint32_t idle_timeout_s;        /* 0: never expires */
	uint64_t last_active_ms;        /* monotonic */
	int running;                    /* TerminalExec calls in flight */
	int lc_running;                 /* lifecycle calls in flight */
	char default_id[MSC_SLUG_MAX + 1];
	struct msc_map *owned;          /* id -> (void *)1 temp / 2 perm */
	bool resolving;                 /* an Acquire is in flight */
	int creating;                   /* computer_create calls in flight */
	STAILQ_HEAD(, pending) queue;   /* calls waiting for the resolve */
	size_t queued;
	LIST_HEAD(, sess_live) live;    /* TerminalExec calls open */
	int tasks;                      /* its MCP tasks (session_task.c) */
	struct sess_principal *pr;      /* its owner */
	TAILQ_ENTRY(sess) lru_all;      /* on s->lru while not closed */
	TAILQ_ENTRY(sess) lru_own;      /* on pr->lru while not closed */
};

struct sess_service {
	const struct msc_cfg *cfg;
	pthread_mutex_t mu;             /* guards all below and every sess */
	pthread_cond_t cv;
	int releasing;                  /* Release calls in flight */
	LIST_HEAD(, closing) closings;  /* Close calls not answered yet */
	LIST_HEAD(, sess_release) owed; /* releases to send again */
	size_t n_owed;
	nng_aio *sweep;                 /* expires idle sessions each second */
	bool stopping;
	bool forgot, forgetting;        /* Inventory/ForgetOwners at start */
	/* Inventory/Claim after each new connection to the inventory. */
	uint64_t claimed_conn;          /* the connection claimed on */
	uint64_t claim_conn;            /* the one a round in flight is for */
	int claim_calls;                /* calls of that round in flight */
	size_t claim_n;                 /* computers claimed in that round */
	bool claim_failed;
	char epoch[SESS_EPOCH_LEN + 1]; /* this run: the prefix of its ids */
	struct msc_map *sessions;       /* id -> struct sess */
	struct msc_map *tasks;          /* task id -> struct sess_task */
	struct msc_map *principals;     /* name -> struct sess_principal */
	TAILQ_HEAD(, sess) lru;         /* live sessions, least recent first */
	int detached;                   /* promoted calls still running */
	size_t n_sandboxes;             /* live sessions with sandbox set */
	long calls;                     /* every session's calls in flight:
	                                 * --max-pending-calls */
	struct msc_client *inventory;
	struct msc_fleet *fleet;        /* the drivers: clients of our own */
	struct msc_server *srv;
};

/*
 * What a session records per owned computer: its mode and the fleet index
 * of its driver, packed in the map's value pointer (never NULL).
 */
#define SESS_OWN(temporary, driver)                                           \
	((void *)(uintptr_t)(((uintptr_t)(driver) << 1 | 1) << 1 |             \
	    ((temporary) ? 1u : 0u)))
#define SESS_OWN_TEMPORARY(v) (((uintptr_t)(v) & 1u) != 0)
#define SESS_OWN_DRIVER(v) ((size_t)((uintptr_t)(v) >> 2))

/* session_records.c: the sessions' records; every handler calls down
 * into these. */

/*
 * Makes a session of `principal` (lock held): a sandbox handle when
 * `sandbox`. A full table (the server's, or the principal's share) first
 * ends an unused session to make room (sess_evict_locked). Returns 0 and
 * *ssp (the sessions map's reference), or -ENOSPC when the server or the
 * principal holds as many as it may (then `msg` says so to the agent,
 * naming the flag), -ENOMEM, -ESHUTDOWN when stopping.
 */
int sess_open_locked(struct sess_service *s, const char *principal,
    uint32_t idle_timeout_s, bool sandbox, struct sess **ssp, char *msg,
    size_t msglen);
/*
 * Ends session ss (lock held): removes it, releases its computers, and
 * answers `call` (may be NULL) when every release has been tried once,
 * or after a few seconds (they go on). -ENOMEM when it could not start.
 */
int sess_end_locked(struct sess_service *s, struct sess *ss,
    struct msc_call *call);

/* Session `id` if `principal` owns it, else NULL (as unknown). Lock held. */
struct sess *sess_find_locked(struct sess_service *s, const char *id,
    const char *principal);
/* ss was used: its last activity and its place on the lists. Lock held. */
void sess_touch_locked(struct sess_service *s, struct sess *ss);
/*
 * Ends the least recently used session that costs nothing to drop (no
 * computer, call or task; never a sandbox handle): pr's (NULL: anyone's).
 * Whether one was ended. Lock held.
 */
bool sess_evict_locked(struct sess_service *s, struct sess_principal *pr);
/* Takes one more reference (lock held). */
void sess_ref_locked(struct sess *ss);
/* Drops one reference; frees the session at zero. Locked by caller. */
void sess_unref(struct sess *ss);
/* sess_unref under s->mu (lock not held). */
void sess_put(struct sess_service *s, struct sess *ss);

/*
 * Whether one more call may start (lock held): false when the server has
 * --max-pending-calls in flight, principal pr (NULL: not checked) its
 * --max-principal-calls, or session ss (NULL: none yet) has
 * --max-session-commands; then `msg` says so to the agent.
 */
bool sess_calls_full_locked(const struct sess_service *s,
    const struct sess_principal *pr, const struct sess *ss, char *msg,
    size_t msglen);

/*
 * Whether ss holds as many computers as it may (owned ones, and those a
 * computer_create is making); then `msg` says so to the agent. Lock held.
 */
bool sess_computers_full_locked(const struct sess_service *s,
    const struct sess *ss, char *msg, size_t msglen);

/* session_lc_op.c: one lifecycle call in flight, for session_lifecycle.c
 * and session_snapshots.c. */
struct lc_op {
	struct sess_service *s;
	struct msc_call *call;
	char session_id[SESS_ID_LEN + 1];
	char id[MSC_SLUG_MAX + 1];
	bool temporary;
	enum msc_reason_step step;      /* what a provider failure was in */
	struct sess_principal *pr;      /* its session's; counts the call */
	char tag[SESS_TAG_LEN + 1];     /* the session's, for logs */
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];      /* its tag */
};
/*
 * Checks the session and the id (empty allowed when empty_id_ok) and
 * counts the call; NULL after failing it. sess_lc_end ends op (and
 * frees it); sess_lc_relay answers with the inventory's reply as it is
 * and ends op; sess_lc_call_inventory sends req, the answer to `done`
 * (ends op when it cannot be sent). sess_lc_own records computer c (a
 * Create's answer, may be NULL) as op's session's and takes back its
 * `creating`: 0, or -ESRCH (the session ended) or -ENOMEM after giving
 * the computer back.
 */
struct lc_op *sess_lc_begin(struct sess_service *s, struct msc_call *call,
    const Msc__V1__ComputerRequest *r, bool empty_id_ok);
void sess_lc_end(struct lc_op *op);
void sess_lc_relay(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp);
void sess_lc_call_inventory(struct lc_op *op, const char *method,
    const ProtobufCMessage *req, msc_reply_fn done);
int sess_lc_own(struct lc_op *op, Msc__V1__Computer *c);

/* session_lifecycle.c: the lifecycle tools. */
void sess_h_create(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_list(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_restart(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_reset(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_delete(void *state, struct msc_call *call,
    const ProtobufCMessage *req);

/* session_snapshots.c: the snapshot tools (issue 31). */
void sess_h_snapshot(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_restore(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_snapshots(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_expose(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_snapshot_delete(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_fork(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
/* CreateComputer's from_snapshot: true after failing and ending op. */
bool sess_snapshot_create_refused(struct lc_op *op,
    const Msc__V1__ComputerRequest *r);

/* session_principal.c: owners and their shares. */
/* The record of principal `name` (NULL: ""), made on first use; NULL
 * when out of memory or the name is too long. Lock held. */
struct sess_principal *sess_principal_get_locked(struct sess_service *s,
    const char *name);
/* Frees pr once it holds nothing (NULL: nothing). Lock held. */
void sess_principal_release_locked(struct sess_service *s,
    struct sess_principal *pr);
/* Whether pr is the principal named `name` (NULL: ""). */
bool sess_principal_is(const struct sess_principal *pr, const char *name);
/* pr's share of a table given the flag's value: -1 when unbounded (the
 * unnamed principal, or a flag of 0). */
long sess_share(const struct sess_principal *pr, long share);

/* session_describe.c: the drivers' tool description. */
void sess_h_describe(void *state, struct msc_call *call,
    const ProtobufCMessage *req);

/* session_owners.c: what the inventory is told about owned computers. */

/*
 * Sends Inventory/Release for computer `id` of session `owner` and sends
 * it again, with a growing delay, until the inventory confirms it: the
 * last release of a temporary computer removes it, which a loaded engine
 * may take long to do. `c` (may be NULL) is the Close that counts it.
 * Lock held.
 */
void sess_release_locked(struct sess_service *s, const char *id,
    const char *owner, bool temporary, size_t driver, bool dead,
    struct closing *c);
/*
 * A Close that answers `call` (may be NULL) when `n` releases have been
 * tried once, or after SESS_CLOSE_WAIT_MS, whichever comes first; the
 * releases go on after the answer. NULL when out of memory. Lock held.
 */
struct closing *sess_closing_new(struct sess_service *s,
    struct msc_call *call, size_t n);
/* One of c's releases was started (or could not be): lock held. */
void sess_closing_step_locked(struct closing *c);
/*
 * Each second (lock held): answers the Close calls that waited long
 * enough, sends the releases that are due again, and claims the
 * computers of every session when the connection to the inventory is a
 * new one (the inventory may have restarted without its records).
 */
void sess_owners_sweep(struct sess_service *s);
/* At stop (lock held): answers every Close, drops the releases owed. */
void sess_owners_stop(struct sess_service *s);

/* session_live.c: CancelExec and PeekExec. */
void sess_h_cancel_exec(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_peek_exec(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
/* Puts l on ss's list, named `call_key` (borrowed). Lock held. */
void sess_live_add_locked(struct sess *ss, struct sess_live *l,
    const char *call_key);
void sess_live_remove_locked(struct sess *ss, struct sess_live *l);
/*
 * The call is about to be sent to `driver` for computer `id`: false when
 * it was cancelled already (then it must not be sent). Takes the lock.
 */
bool sess_live_to_driver(struct sess_service *s, struct sess_live *l,
    const char *id, size_t driver);
/* Whether the call was cancelled. Takes the lock. */
bool sess_live_cancelled(struct sess_service *s, const struct sess_live *l);
/*
 * At stop: cancels every open call of every session, killing those on a
 * driver (Driver/Cancel, not waited for). Takes the lock.
 */
void sess_live_cancel_all(struct sess_service *s);

/* session_task.c: MCP tasks. */
void sess_h_get_task(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void sess_h_cancel_task(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
/*
 * A hidden task for a call of session ss that may become one, readable
 * by ss's principal's session `owner` (NULL or empty: ss) and kept
 * timeout_s plus --task-ttl; `live` is the call's, for CancelTask;
 * `minted`: ss was made for this call (its state may name it to any
 * reader). -ENOSPC past the quota (--max-session-tasks,
 * --max-principal-tasks, or the server's), -ENOMEM. Lock held.
 */
int sess_task_new_locked(struct sess_service *s, struct sess *ss,
    const char *owner, bool minted, long timeout_s, struct sess_live *live,
    struct sess_task **tp);
/* The call became task t: fills `out` (borrowing t's strings). Lock held. */
void sess_task_promote_locked(struct sess_task *t, Msc__V1__Task *out);
/*
 * t's call ended with `rep` (NULL: failed with `st`): a promoted task
 * keeps it, a hidden one is dropped. Lock held.
 */
void sess_task_end_locked(struct sess_service *s, struct sess_task *t,
    const Msc__V1__TerminalExecReply *rep, const struct msc_status *st);
/* Drops the tasks past their ttl (all finished ones: `all`). Lock held. */
void sess_task_sweep_locked(struct sess_service *s, bool all);

/* session_agent_text.c */

/*
 * The message the agent reads of st, a failure a driver's call came back
 * with (directly or through the inventory) at `step`: st->message, or,
 * for a provider's failure, the generic text (the details are logged
 * with `tag`, the session's log name). Static or st->message.
 */
const char *sess_agent_text(const struct msc_status *st,
    enum msc_reason_step step, const char *tag);

/*
 * session_exec.c: terminal_execute's start, which admits the call and
 * resolves its computer.
 */
void sess_exec_start(struct sess_service *s, struct msc_call *call,
    const Msc__V1__TerminalExecRequest *req);

/*
 * session_pending.c: one terminal_execute call in flight. sess_exec_start
 * makes it (counted in its session, on its live list), resolves its
 * computer, then these run it and end it.
 */
struct pending {
	struct sess_service *s;
	struct sess *ss;
	struct msc_call *call;       /* NULL once promoted to a task */
	const Msc__V1__TerminalExecRequest *req;   /* call's, or own_req */
	uint64_t deadline_ms;        /* the call's (msc_now_ms clock) */
	/* MCP tasks: a call that may become one (session_task.c). */
	Msc__V1__TerminalExecRequest *own_req;  /* outlives the call */
	struct sess_task *task;      /* its hidden task; NULL: never */
	nng_aio *promote;            /* fires at req->task_after_ms */
	bool promoted;               /* answered with the task */
	bool ended;                  /* its result came */
	char id[MSC_SLUG_MAX + 1];   /* explicit id, then the resolved one */
	bool explicit_id;
	bool fresh;                  /* its sandbox handle was minted for it */
	bool temporary;              /* requested, then resolved */
	size_t driver;               /* fleet index of the computer's driver */
	STAILQ_ENTRY(pending) link;  /* in its session's queue */
	struct sess_live live;       /* for CancelExec and PeekExec */
	Msc__V1__TerminalExecReply rep;   /* being shaped (session_output.c) */
};
/* Frees p, not yet counted in a session or no longer (its start failed,
 * or it ended); waits for a promotion that fires. */
void sess_pending_free(struct pending *p);
/* Fails the call and ends p (lock not held). */
void sess_pending_fail(struct pending *p, Msc__V1__Code code,
    Msc__V1__Reason reason, const char *msg);
/* Runs p on its computer's driver (p->id, p->driver): the reply is
 * shaped and sent, or the call failed, and p ends. */
void sess_pending_run(struct pending *p);
/* Tells the inventory p's session no longer holds p->id (`dead`: the
 * computer died under the command). Takes the lock. */
void sess_pending_release(struct pending *p, bool dead);
/*
 * A call that may become a task keeps its own copy of the request (the
 * call's goes when it is answered) and a timer for its promotion: 0 or
 * -ENOMEM.
 */
int sess_pending_prepare_task(struct pending *p,
    const Msc__V1__TerminalExecRequest *req);
/*
 * Checks the arguments as the reference does; returns NULL or the message
 * shown to the agent (static storage or `buf`).
 */
const char *sess_validate(const Msc__V1__TerminalExecRequest *r, char *buf,
    size_t buflen);

#endif /* SESS_SESSION_INT_H */
