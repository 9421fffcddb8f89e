/*
 * msc_driver.h - the msc.v1.Driver service that every backend shares: the
 * dispatch table, jobs on a bounded worker pool (backend calls block), and
 * per-computer lanes: create, attach, exec, restart and reset run one at a
 * time per computer and in parallel across computers; stop, delete (which
 * end whatever runs) and list go straight to the pool.
 *
 * A backend provides blocking operations that return 0 or a negative
 * errno with a one-line message in err. The errno becomes the status code
 * and reason. The agent reads the message as is, unless the code is one
 * msc_driver_backend_reason marks as the provider's (internal,
 * unavailable, deadline, failed precondition): the session service logs
 * that message and the agent reads the step's generic text
 * (session_agent_text.c, lib/msc_reason.c).
 */
#ifndef MSC_DRIVER_H
#define MSC_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.pb-c.h"
#include "msc_cfg.h"
#include "msc_rpc.h"

#define MSC_DRIVER_ERRLEN 1024

struct msc_driver;
struct msc_exec;        /* a command started by exec_start, not yet done */

#define MSC_EXEC_SYNC 1 /* exec_start: run it with exec instead */

struct msc_driver_ops {
	const char *name;       /* "NAME-driver", in overload messages */
	int (*create)(void *be, const char *id, bool temporary,
	    Msc__V1__Computer *out, char *err, size_t errlen);
	int (*attach)(void *be, const char *id, Msc__V1__Computer *out,
	    char *err, size_t errlen);
	int (*restart)(void *be, const char *id, Msc__V1__Computer *out,
	    char *err, size_t errlen);
	int (*reset)(void *be, const char *id, Msc__V1__Computer *out,
	    char *err, size_t errlen);
	/* remove: Delete (gone for good; -ENOENT when absent); else Stop. */
	int (*stop)(void *be, const char *id, bool remove, char *err,
	    size_t errlen);
	int (*list)(void *be, Msc__V1__ComputerList *out, char *err,
	    size_t errlen);
	/*
	 * req has a timeout_s and an output_limit (msc_driver_exec_defaults).
	 * out->stdout/stderr data are malloc'd; the skeleton frees them.
	 */
	int (*exec)(void *be, const Msc__V1__ExecRequest *req,
	    Msc__V1__ExecResult *out, char *err, size_t errlen);
	/*
	 * Optional (a command that only waits holds no worker): starts req
	 * and returns without waiting for its end. Runs on a worker, as
	 * exec, with req (its strings and bytes too) valid until
	 * msc_exec_done. 0: the backend took the command and calls
	 * msc_exec_done(x, ...) exactly once, from any thread, when it
	 * ended; MSC_EXEC_SYNC: it cannot run this one so (no helper to
	 * talk to), and the skeleton runs exec on the worker instead; a
	 * negative errno with err: the command failed.
	 */
	int (*exec_start)(void *be, const Msc__V1__ExecRequest *req,
	    struct msc_exec *x, char *err, size_t errlen);
	/* The status code of an error (msc_driver_code, or _cloud). */
	Msc__V1__Code (*code)(int rv);
	/* Driver/Describe: the tool description (malloc'd) or NULL. Must not
	 * block: it runs on an NNG thread. */
	char *(*describe)(void *be);
	/*
	 * Optional: records the network policy of computer `id`, about to be
	 * created (Create with a policy). NULL: the backend has none, and
	 * such a Create is refused.
	 */
	int (*set_network)(void *be, const char *id,
	    const Msc__V1__NetworkPolicy *np, char *err, size_t errlen);
	/*
	 * Optional: the background processes (issue 28) running in computer
	 * `id` now, or a negative errno (none kept, or not known). Called
	 * before a Restart, Reset or Delete asked with count_processes; its
	 * reply carries the count (Computer.processes_ended). Blocking.
	 */
	int (*processes)(void *be, const char *id);
	/* The backend's Restart keeps the computer's memory (a provider's
	 * pause and resume): its processes live on, none are counted as ended. */
	bool restart_keeps_processes;

	/*
	 * Optional, all or none (issue 31): snapshots. snapshot saves
	 * computer req->computer_id; restore recreates it from
	 * req->snapshot_id (on its lane, as a creation); snapshots lists
	 * them and snapshot_delete removes one (req->snapshot_id);
	 * create_from is Create with from_snapshot set (the skeleton sorts
	 * snapshots' list, oldest first). The strings put in
	 * out are freed by msc_snapshot_fini, msc_snapshot_list_fini and
	 * msc_computer_fini. NULL: every such call is UNIMPLEMENTED.
	 */
	int (*snapshot)(void *be, const Msc__V1__SnapshotRequest *req,
	    Msc__V1__Snapshot *out, char *err, size_t errlen);
	int (*restore)(void *be, const Msc__V1__SnapshotRequest *req,
	    Msc__V1__Computer *out, char *err, size_t errlen);
	int (*snapshots)(void *be, const Msc__V1__SnapshotRequest *req,
	    Msc__V1__SnapshotList *out, char *err, size_t errlen);
	int (*snapshot_delete)(void *be, const Msc__V1__SnapshotRequest *req,
	    char *err, size_t errlen);
	int (*create_from)(void *be, const Msc__V1__CreateRequest *req,
	    Msc__V1__Computer *out, char *err, size_t errlen);

	/*
	 * Optional (issue 30): exposes port req->port of computer
	 * req->computer_id (or revokes it, req->unexpose) and writes its
	 * preview URL to out (freed by msc_preview_fini). The principal is
	 * checked before. NULL: every such call is UNIMPLEMENTED with the
	 * text of `preview_refusal` when set.
	 */
	int (*expose_port)(void *be, const Msc__V1__SnapshotRequest *req,
	    Msc__V1__Preview *out, char *err, size_t errlen);
	const char *preview_refusal;

	/*
	 * Optional, both or neither: a backend that keeps who made each
	 * computer (msc_principal.h). create_owned is create recording the
	 * principal tag `principal` (used when it is not empty); owner
	 * writes the tag computer `id` records ("" for none) to tag, or
	 * returns -ENOENT when there is no such computer. With them,
	 * Attach, Restart, Reset and Delete of another principal's computer
	 * are refused before they touch it.
	 */
	int (*create_owned)(void *be, const char *id, bool temporary,
	    const char *principal, Msc__V1__Computer *out, char *err,
	    size_t errlen);
	int (*owner)(void *be, const char *id, char *tag, size_t taglen,
	    char *err, size_t errlen);
};

/*
 * Defines `static const struct msc_driver_ops VAR` for a backend whose
 * operations are PREFIX_create(struct PREFIX_driver *, ...), _attach,
 * _restart, _reset, _stop, _list and _exec, with the strings they put in
 * computers freed by msc_computer_fini and msc_computer_list_fini, and
 * the description describe_fn (the backend's NAME_cfg_describe) makes
 * of struct PREFIX_driver's cfg.
 */
#define MSC_DRIVER_OPS(var, prefix, label, code_fn, describe_fn)             \
	static int var##_create(void *be, const char *id, bool temporary,    \
	    Msc__V1__Computer *out, char *err, size_t errlen)                 \
	{                                                                     \
		return prefix##_create(be, id, temporary, out, err, errlen);  \
	}                                                                     \
	static int var##_attach(void *be, const char *id,                    \
	    Msc__V1__Computer *out, char *err, size_t errlen)                 \
	{                                                                     \
		return prefix##_attach(be, id, out, err, errlen);             \
	}                                                                     \
	static int var##_restart(void *be, const char *id,                   \
	    Msc__V1__Computer *out, char *err, size_t errlen)                 \
	{                                                                     \
		return prefix##_restart(be, id, out, err, errlen);            \
	}                                                                     \
	static int var##_reset(void *be, const char *id,                     \
	    Msc__V1__Computer *out, char *err, size_t errlen)                 \
	{                                                                     \
		return prefix##_reset(be, id, out, err, errlen);              \
	}                                                                     \
	static int var##_stop(void *be, const char *id, bool remove,         \
	    char *err, size_t errlen)                                         \
	{                                                                     \
		return prefix##_stop(be, id, remove, err, errlen);            \
	}                                                                     \
	static int var##_list(void *be, Msc__V1__ComputerList *out,          \
	    char *err, size_t errlen)                                         \
	{                                                                     \
		return prefix##_list(be, out, err, errlen);                   \
	}                                                                     \
	static int var##_exec(void *be, const Msc__V1__ExecRequest *req,     \
	    Msc__V1__ExecResult *out, char *err, size_t errlen)               \
	{                                                                     \
		return prefix##_exec(be, req, out, err, errlen);              \
	}                                                                     \
	static char *var##_describe(void *be)                                \
	{                                                                     \
		return describe_fn(((struct prefix##_driver *)be)->cfg);     \
	}                                                                     \
	static const struct msc_driver_ops var = {                           \
		.name = label,                                                \
		.create = var##_create,                                      \
		.attach = var##_attach,                                      \
		.restart = var##_restart,                                    \
		.reset = var##_reset,                                        \
		.stop = var##_stop,                                          \
		.list = var##_list,                                          \
		.exec = var##_exec,                                          \
		.code = code_fn,                                              \
		.describe = var##_describe,                                  \
	}

/*
 * For a backend's exec_start, from any thread until msc_exec_done: the
 * fd that becomes readable when command x is cancelled (Driver/Cancel,
 * or the driver stops), and the output it received (Driver/Progress).
 */
int msc_exec_cancel_fd(const struct msc_exec *x);
void msc_exec_output(struct msc_exec *x, const void *p, size_t n);

/*
 * Command x ended: rv 0 and its result res (NULL for none; the
 * stdout/stderr data are malloc'd and freed here), or a negative errno
 * and err, as exec returns them. Answers the call and frees x. Never
 * blocks; any thread.
 */
void msc_exec_done(struct msc_exec *x, int rv, Msc__V1__ExecResult *res,
    const char *err);

/*
 * Runs fn(x, arg, true) on a worker, in a turn of x's principal at the
 * workers (as its commands take them, msc_fair.h): what must block
 * before msc_exec_done (an engine asked whether the computer still
 * runs); fn must end x. Returns 0, or -EAGAIN when the principal has no
 * turn left to wait for or the pool takes no more: then fn will not run,
 * and the caller ends x without blocking (the caller's thread may be one
 * that serves every waiting command). A turn that never comes (the
 * driver stops) calls fn(x, arg, false), which ends x without blocking.
 */
typedef void (*msc_exec_defer_fn)(struct msc_exec *x, void *arg, bool run);
int msc_exec_defer(struct msc_exec *x, msc_exec_defer_fn fn, void *arg);

/*
 * Frees the malloc'd string fields of c (leaving protobuf-c's shared empty
 * string alone) and resets it; and the same for every computer of l, with
 * the array.
 */
void msc_computer_fini(Msc__V1__Computer *c);
void msc_computer_list_fini(Msc__V1__ComputerList *l);
void msc_snapshot_fini(Msc__V1__Snapshot *s);
void msc_preview_fini(Msc__V1__Preview *p);
void msc_snapshot_list_fini(Msc__V1__SnapshotList *l);

/*
 * Writes "Computer '<id>' died during command execution: <why>" to err,
 * the text every backend gives when a computer is gone under a command,
 * and returns -ECONNABORTED (ABORTED: the next call starts it again).
 */
int msc_driver_died(char *err, size_t errlen, const char *id,
    const char *why_fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The environment variable that marks every process of one command with
 * a random value, and a /bin/sh script that kills every process whose
 * environment has MSC_DRIVER_MARKER_VAR=$1 (the sweep after a timeout or
 * the output limit).
 */
#define MSC_DRIVER_MARKER_VAR "KILNTAINERS_EXEC"
extern const char msc_driver_sweep_sh[];

/* The usual mapping of a negative errno to a status code. */
Msc__V1__Code msc_driver_code(int rv);
/* Why a driver's call failed, as its callers act on it: the Reason of a
 * status with this code. */
Msc__V1__Reason msc_driver_reason(Msc__V1__Code code);

/*
 * The Reason of a backend's failure with this code: REASON_PROVIDER for
 * the codes whose message holds what the engine or provider said
 * (INTERNAL, UNAVAILABLE, DEADLINE_EXCEEDED, FAILED_PRECONDITION,
 * UNIMPLEMENTED), which the session service keeps from agents; else as
 * msc_driver_reason. The texts of the other codes are written for agents
 * (not found, already exists, died, invalid argument, cancelled).
 */
Msc__V1__Reason msc_driver_backend_reason(Msc__V1__Code code);

/* The same for a cloud provider, whose I/O errors (-EIO) are outages. */
Msc__V1__Code msc_driver_code_cloud(int rv);

/*
 * Serves msc.v1.Driver on url with `workers` pool threads. `ops` and
 * `backend` are borrowed and must outlive the service.
 */
int msc_driver_start(const char *url, const struct msc_driver_ops *ops,
    void *backend, int workers, struct msc_driver **dp);

/*
 * At most n creations (Create, Reset) run at once, of the pool's
 * workers; the others wait in order without holding a worker, and one
 * whose caller's deadline is less than a second away when its turn comes
 * fails with DEADLINE_EXCEEDED. 0: no bound but the pool's (the default).
 */
void msc_driver_limit_creations(struct msc_driver *d, int n);

/*
 * At most n commands (Exec) of one owner (ExecRequest.owner, a session)
 * run at once, of the pool's workers; the owner's others wait in order
 * without holding a worker, so one session's long commands leave workers
 * to the others. Commands without an owner are not counted. The default
 * is a quarter of the workers (at least 1); n <= 0 keeps it. Past the
 * owners' shares, the principals (ExecRequest.principal) take turns at
 * the workers left for commands (msc_driver.c, principals_new).
 */
void msc_driver_limit_owners(struct msc_driver *d, int n);

/*
 * Commands started by exec_start wait on their computers without a
 * worker: at most MSC_DRIVER_WAITING_PER_WORKER per worker at once, a
 * principal of --tokens-file at most three quarters of them; past that a
 * command runs on its worker as exec would (and its principal's turns
 * at the workers bound it, with the busy answer).
 */
#define MSC_DRIVER_WAITING_PER_WORKER 16

/*
 * What an ExecRequest without its own timeout_s or output_limit (0) gets
 * before the backend sees it: by default MSC_DRIVER_EXEC_TIMEOUT_S and
 * MSC_DRIVER_EXEC_OUTPUT_LIMIT.
 */
#define MSC_DRIVER_EXEC_TIMEOUT_S 120
#define MSC_DRIVER_EXEC_OUTPUT_LIMIT 2097152
void msc_driver_exec_defaults(struct msc_driver *d, uint32_t timeout_s,
    uint64_t output_limit);

/*
 * Stops serving and frees. Returns false when a job still runs (a long
 * command): the backend must then stay allocated, as the process ends.
 * Accepts NULL.
 */
bool msc_driver_stop(struct msc_driver *d);

#endif /* MSC_DRIVER_H */
