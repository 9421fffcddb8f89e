/*
 * msc_pool.h - a fixed set of worker threads with a bounded job queue,
 * for work that must block (engine HTTP calls). Handlers of an RPC server
 * hand such work here instead of blocking an NNG callback.
 */
#ifndef MSC_POOL_H
#define MSC_POOL_H

#include <stdbool.h>
#include <stddef.h>

struct msc_pool;

typedef void (*msc_job_fn)(void *arg);

/* Starts `nthreads` workers; at most `max_queued` jobs wait. */
int msc_pool_new(int nthreads, size_t max_queued, struct msc_pool **pp);

/*
 * Queues fn(arg). Returns 0, or -EAGAIN when the queue is full, or
 * -ESHUTDOWN after msc_pool_free began; then fn never runs.
 */
int msc_pool_submit(struct msc_pool *p, msc_job_fn fn, void *arg);

#define MSC_POOL_STOP_WAIT_S 5

/*
 * Lets the workers finish the queued jobs and joins them, waiting at most
 * MSC_POOL_STOP_WAIT_S; workers still busy then (a long command) are left
 * running with the pool's memory, which is only ever freed when all have
 * been joined, so this is for the end of the process. Returns true when
 * every worker was joined (then what the jobs use may be freed), false
 * when some are left. Accepts NULL.
 */
bool msc_pool_free(struct msc_pool *p);

#endif /* MSC_POOL_H */
