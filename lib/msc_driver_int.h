/*
 * msc_driver_int.h - what the driver skeleton's files share: a job (one
 * Driver call on its way to the backend) and the driver's state. The
 * skeleton (msc_driver.c) makes jobs and runs them; the scheduling
 * (msc_driver_sched.c) orders them: each computer's lane keeps its jobs
 * serial, the creation gate bounds creations at once, the owners' shares
 * bound an owner's commands at once, and the principals share the
 * command workers round-robin. The scheduling calls nothing above it: a
 * worker runs a job through d->run, the skeleton's. The Exec and snapshot
 * jobs (msc_driver_exec.c, msc_driver_snap.c) call down into it and into
 * msc_driver_job.c.
 */
#ifndef MSC_DRIVER_INT_H
#define MSC_DRIVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "msc_driver.h"
#include "msc_driver_live.h"
#include "msc_fair.h"
#include "msc_map.h"
#include "msc_pool.h"
#include "msc_principal.h"
#include "msc_queue.h"
#include "msc_share.h"
#include "msc_slug.h"

#define DRIVER_MAX_QUEUED 4096
/* A creation that cannot start this long before its deadline fails. */
#define DRIVER_CREATE_MIN_MS 1000
/* A Create whose caller set no deadline is bounded to this (a pull). */
#define DRIVER_CREATE_BOUND_MS 660000
/* A temporary computer made with less than this left of its caller's
 * time is removed: its reply may reach the caller after it gave up, and
 * nobody would hold or release it. */
#define DRIVER_CREATE_LATE_MS 200

enum job_kind { JOB_CREATE, JOB_ATTACH, JOB_EXEC, JOB_STOP, JOB_DELETE,
	JOB_RESTART, JOB_RESET, JOB_LIST, JOB_SNAPSHOT, JOB_RESTORE,
	JOB_SNAPSHOTS, JOB_SNAPSHOT_DELETE, JOB_EXPOSE };

struct job {
	struct msc_driver *d;
	struct msc_call *call;
	const ProtobufCMessage *req;   /* borrowed from the call */
	enum job_kind kind;
	char lane_id[MSC_SLUG_MAX + 1]; /* "" when not on a lane */
	char owner[64];                /* holds a slot of this owner's share */
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];      /* Exec: whose */
	bool fair;                     /* holds or waits for a command slot */
	struct msc_live *live;         /* Exec with a cancel_key, else NULL */
	struct msc_qnode qn;           /* on a lane's or the gate's queue */
	/* Exec: the request with the driver's defaults (a shallow copy). */
	Msc__V1__ExecRequest q;
	/* Handed off by exec_start (msc_driver_exec.c): a slot of
	 * d->waiting, its own cancel eventfd when it has no live (-1), and
	 * its place on d->started until msc_exec_done. */
	bool waiting;
	int efd;
	TAILQ_ENTRY(job) started;
	/* Handed off, then deferred (msc_exec_defer): what runs in the
	 * principal's turn instead of the call; NULL otherwise. */
	msc_exec_defer_fn deferred;
	void *deferred_arg;
};

TAILQ_HEAD(job_list, job);

#define JOB(n) msc_queue_item(n, struct job, qn)

struct msc_driver {
	const struct msc_driver_ops *ops;
	void *be;
	/*
	 * Runs j's call on the backend (a worker thread), answering it: the
	 * skeleton's (msc_driver.c), which the scheduling calls up through.
	 * true: j's command was handed off (msc_driver_exec.c) and ends
	 * later; j's turns at the workers are given back already, and j
	 * may be gone.
	 */
	bool (*run)(struct job *j, char *err);
	struct msc_pool *pool;
	struct msc_server *srv;
	pthread_mutex_t mu;             /* lanes, the gate, exec defaults */
	struct msc_map *lanes;          /* computer id -> struct lane */
	/* The creation gate: creates and resets at once, and those waiting. */
	int max_creating;               /* 0: no bound but the pool's */
	int creating;
	struct msc_queue gate;          /* struct job, waiting their turn */
	size_t gate_queued;
	struct msc_share *owners;       /* Exec: workers per owner */
	struct msc_fair *principals;    /* Exec: workers between principals */
	uint32_t exec_timeout_s;        /* for an Exec without its own */
	uint64_t exec_output_limit;
	struct msc_live_table *live;    /* keyed commands: Cancel, Progress */
	bool stopping;                  /* the gates take no more */
	/* Commands started by exec_start: their slots, by principal
	 * (never queued), and those not done yet (under mu; started_cv
	 * signalled when the last is done). */
	struct msc_fair *waiting;
	struct job_list started;
	size_t n_started;
	pthread_cond_t started_cv;
};

/*
 * Exec (msc_driver_exec.c): runs j's call (a worker thread), answering
 * it, as d->run does. true: j's command was handed off and ends later;
 * j's turns at the workers are given back already, and j may be gone.
 */
bool msc_job_run_exec(struct job *j, char *err);
/* Gives back the turns at the workers a job held (msc_driver_sched.c). */
void msc_job_leave_turns(struct msc_driver *d, bool fair,
    const char *principal, const char *owner);
/* A handed-off job ended: its lane's next job starts. */
void msc_job_lane_next(struct job *j);
/* At stop: cancels the handed-off commands and waits for their ends;
 * false when some did not end in time. */
bool msc_exec_stop_all(struct msc_driver *d);
/* The slots of the commands without a worker, for `workers`. */
int msc_exec_waiting_new(int workers, struct msc_fair **fp);
/* The snapshot jobs (msc_driver_snap.c); false: not one of them. */
bool msc_job_run_snapshot(struct job *j, char *err);
/*
 * Whether `principal` (a tag; "" the operator) may act on computer `id`
 * as the backend records its owner; false after failing j's call.
 * Blocking (asks the backend). msc_driver_job.c, as msc_job_fail.
 */
bool msc_job_principal_may(struct job *j, const char *id,
    const char *principal, char *err);
/* Fails j's call with the backend's error (msc_driver_job.c). */
void msc_job_fail(struct job *j, int rv, const char *err);
/* Frees j and forgets its command. */
void msc_job_free(struct job *j);
/* Ends j without running it: fails its call, frees its lane's turn. */
void msc_job_abort(struct job *j, Msc__V1__Code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Starts j now or queues it (the creation gate, its owner's share). */
void msc_job_submit(struct job *j);
/* Queues j's deferred end for a turn of its principal (msc_exec_defer):
 * 0, or -EAGAIN (no turn to wait for, the pool full). */
int msc_job_submit_deferred(struct job *j);
/* Queues j on the lane of computer `id` (a slug), after its earlier jobs. */
void msc_job_submit_on_lane(struct job *j, const char *id);

#endif /* MSC_DRIVER_INT_H */
