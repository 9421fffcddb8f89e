/*
 * msc_driver_live.h - the commands a driver has queued or running, by
 * (computer, ExecRequest.cancel_key): Driver/Cancel kills one, and
 * Driver/Progress reads its output so far.
 *
 * The skeleton (msc_driver.c) registers each Exec that has a key when it
 * arrives and ends it when it is answered. While a backend's exec op runs
 * on a worker thread, that thread's command is "current": the backend
 * polls msc_driver_cancel_fd() beside its own I/O and kills the command
 * when it becomes readable, and hands each piece of output it receives
 * to msc_driver_output(). A backend that does neither still works: its
 * commands run to their end and their reply is dropped.
 */
#ifndef MSC_DRIVER_LIVE_H
#define MSC_DRIVER_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.pb-c.h"
#include "msc_rpc.h"

#define MSC_LIVE_TAIL 1024      /* bytes of the latest output kept */

struct msc_live;
struct msc_live_table;

int msc_live_table_new(struct msc_live_table **tp);
/* Accepts NULL. No command may be registered any more. */
void msc_live_table_free(struct msc_live_table *t);

/*
 * Registers a command of `computer_id` named `key` (both borrowed; an
 * empty key: not registered, NULL returned with 0). -EEXIST when the key
 * is taken on that computer, -ENOMEM.
 */
int msc_live_add(struct msc_live_table *t, const char *computer_id,
    const char *key, struct msc_live **lp);
/* Forgets and frees l (NULL accepted). */
void msc_live_end(struct msc_live_table *t, struct msc_live *l);

/*
 * Makes l current on this thread while its exec op runs (NULL accepted:
 * a command without a key). Returns false, and makes nothing current,
 * when it was cancelled before it started (or no eventfd could be made:
 * then it runs uncancellable, and true is returned).
 */
bool msc_live_begin(struct msc_live *l);
/* Ends the current command of this thread. */
void msc_live_finish(struct msc_live *l);
/*
 * A command handed off by exec_start: this thread's current command no
 * longer (it still runs), and, from any thread, its cancel eventfd (-1:
 * none) and output received.
 */
void msc_live_detach(void);
int msc_live_fd(const struct msc_live *l);
void msc_live_output(struct msc_live *l, const void *p, size_t n);

/*
 * msc_live_add for Driver/Exec request r: false when it was refused
 * (then call was failed: a key in use, or invalid).
 */
bool msc_live_add_call(struct msc_live_table *t, struct msc_call *call,
    const Msc__V1__ExecRequest *r, struct msc_live **lp);
/*
 * Runs exec(be, req, out, err, errlen) with l current (msc_live_begin and
 * _finish); -ECANCELED, with err set, when l was cancelled before.
 */
int msc_live_run(struct msc_live *l, int (*exec)(void *be,
    const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *out, char *err,
    size_t errlen), void *be, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen);

/*
 * At stop: cancels every registered command, so that the running ones
 * are killed and the waiting ones never start.
 */
void msc_live_cancel_all(struct msc_live_table *t);

/* Driver/Cancel: 0, or -ENOENT when no such command is registered. */
int msc_live_cancel(struct msc_live_table *t, const char *computer_id,
    const char *key);
/*
 * Driver/Progress: the output bytes so far, whether it runs, and its
 * latest output (at most MSC_LIVE_TAIL bytes into tail, *tail_len set).
 * 0 or -ENOENT.
 */
int msc_live_peek(struct msc_live_table *t, const char *computer_id,
    const char *key, uint64_t *bytes, bool *running, char *tail,
    size_t *tail_len);

/* The Driver/Cancel and Driver/Progress handlers (msc_driver.c). */
void msc_live_h_cancel(struct msc_live_table *t, struct msc_call *call,
    const ProtobufCMessage *req);
void msc_live_h_progress(struct msc_live_table *t, struct msc_call *call,
    const ProtobufCMessage *req);

/*
 * For backends, on the thread that runs an exec op: the fd that becomes
 * readable when the command is cancelled (-1: it cannot be), whether it
 * was, and the output received (counted, the last bytes kept).
 */
int msc_driver_cancel_fd(void);
bool msc_driver_cancelled(void);
void msc_driver_output(const void *p, size_t n);

#endif /* MSC_DRIVER_LIVE_H */
