/*
 * docker_fxloop.h - one thread that waits for every command sent to an
 * exec helper (docker_fastexec.h), and every Engine API exec's stream
 * (docker_api.h), at once: it reads their output, sends their stdin,
 * enforces their deadlines and cancellation, and ends each with a
 * callback, so that a command that only waits holds no worker thread.
 * One epoll set; each command costs its connection and a small record.
 */
#ifndef DOCK_FXLOOP_H
#define DOCK_FXLOOP_H

#include "docker_api.h"
#include "docker_fastexec.h"

struct dock_fxloop;

/*
 * Called once on the loop's thread when a command ended: rv and err as
 * dock_fx_run returns them, res (owned by the callee:
 * dock_exec_res_fini, or a copy of it) its result when rv is 0. Must not
 * block.
 */
typedef void (*dock_fxloop_done_fn)(void *arg, int rv,
    struct dock_exec_res *res, const char *err);

/* output_bound: the bytes of output its commands may hold at once, over
 * all of them and per principal (dock_fx_budget_new); 0: no bound. A
 * result's output counts until dock_exec_res_fini or
 * dock_fx_charge_release(&res->charge), which must come before
 * dock_fxloop_stop returns. */
int dock_fxloop_start(uint64_t output_bound, struct dock_fxloop **lp);

/*
 * Takes c (begun with dock_fx_begin) and watches it until it ends:
 * cancel_fd (-1: none) readable kills it (DOCK_EXEC_CANCELLED), its
 * deadline passed kills it (DOCK_EXEC_TIMEOUT). Any thread; done runs
 * on the loop's thread, maybe before this returns.
 */
void dock_fxloop_add(struct dock_fxloop *l, struct dock_fx *c, int cancel_fd,
    dock_fxloop_done_fn done, void *arg);

/*
 * The same for an Engine API exec x (dock_exec_begin, its stream still
 * open: dock_exec_fd not -1): the loop reads its stream, charges its
 * output to the bound, and stops watching it at its end (EOF, the output
 * limit, the deadline, cancel_fd, an error), closing the stream; done
 * then gets rv (0, or a negative errno with err) and res->outcome only:
 * x holds the rest, and its end must be seen to, off the loop's thread
 * (dock_exec_finish blocks: it asks the exit code, kills what did not
 * exit).
 */
void dock_fxloop_add_exec(struct dock_fxloop *l, struct dock_xexec *x,
    int cancel_fd, dock_fxloop_done_fn done, void *arg);

/* Ends the thread; the commands still watched are killed and ended
 * (cancelled). Accepts NULL. */
void dock_fxloop_stop(struct dock_fxloop *l);

#endif /* DOCK_FXLOOP_H */
