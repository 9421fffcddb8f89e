/*
 * docker_fxloop.h - one thread that waits for every command sent to an
 * exec helper (docker_fastexec.h) at once: it reads their output frames,
 * sends their stdin, enforces their deadlines and cancellation, and ends
 * each with a callback, so that a command that only waits holds no
 * worker thread. One epoll set; each command costs its connection and a
 * small record.
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

/* Ends the thread; the commands still watched are killed and ended
 * (cancelled). Accepts NULL. */
void dock_fxloop_stop(struct dock_fxloop *l);

#endif /* DOCK_FXLOOP_H */
