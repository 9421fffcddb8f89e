/*
 * msc_pool.h - a fixed set of worker threads with a bounded job queue,
 * for work that must block (engine HTTP calls). Handlers of an RPC server
 * hand such work here instead of blocking an NNG callback.
 */
#ifndef MSC_POOL_H
#define MSC_POOL_H

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

/* Runs the queued jobs, joins the workers and frees. Accepts NULL. */
void msc_pool_free(struct msc_pool *p);

#endif /* MSC_POOL_H */
