/*
 * docker_pool_size.c - the warm pool's size follows the bursts it sees.
 * A new computer that finds the pool empty (a miss) adds one to its
 * target and opens a burst, which lasts while cold creations run or
 * misses follow each other within POOL_BURST_GAP_MS; the
 * target grows to --warm-pool plus the computers the burst asked for
 * (taken or cold) when that is more, up to --warm-pool-max, so that the
 * next burst of that size finds them ready.
 * Every --warm-pool-shrink-after seconds (p->shrink_ms, default 30 s)
 * without a miss, with the pool full, takes one off, down to --warm-pool,
 * and a waiting container beyond the target is removed.
 * Refills stay within --driver-creations.
 */
#include "docker_driver_int.h"
#include "docker_pool_int.h"

#include <string.h>
#include <time.h>

#include "msc_log.h"
#include "msc_time.h"

#define POOL_BURST_GAP_MS 1000  /* a burst's misses this close belong to it */

/* Waits on p->cv (p->mu held) at most ms (-1: without a bound). */
void
dock_pool_wait_ms(struct dock_pool *p, int64_t ms)
{
	struct timespec until;

	if (ms < 0) {
		pthread_cond_wait(&p->cv, &p->mu);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)(ms / 1000);
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	(void)pthread_cond_timedwait(&p->cv, &p->mu, &until);
}

/*
 * With p->mu held: steps the target down when p->shrink_ms passed
 * without a miss and the pool is full; returns a waiting container beyond it (to remove) or
 * NULL, and in *next_ms the time until the next step (-1: none due).
 */
struct pool_ctr *
dock_pool_shrink(struct dock_pool *p, int64_t *next_ms)
{
	uint64_t now = msc_now_ms();
	struct pool_ctr *extra = NULL;

	*next_ms = -1;
	/* Not while it fills: a slow engine does not undo the growth. */
	if (p->target > p->base && p->n_ready >= p->target &&
	    now - p->resized_ms >= p->shrink_ms) {
		p->target--;
		p->resized_ms = now;
		if (p->target == p->base)
			msc_log_info("warm pool: back to %d (no burst for %d s)",
			    p->base, (int)(p->shrink_ms / 1000));
	}
	if (p->target > p->base && p->n_ready >= p->target)
		*next_ms = (int64_t)(p->resized_ms + p->shrink_ms - now);
	if (p->n_ready > p->target) {
		/* The oldest goes: the others have waited less. */
		extra = p->ready[0];
		memmove(&p->ready[0], &p->ready[1],
		    (size_t)(--p->n_ready) * sizeof(p->ready[0]));
	}
	return extra;
}

void
dock_pool_asked(struct dock_pool *p, bool hit)
{
	uint64_t now = msc_now_ms();
	int want;

	pthread_mutex_lock(&p->mu);
	want = p->target;
	/* A burst ends when its cold creations have and its misses stopped. */
	if (p->in_burst && p->cold == 0 &&
	    now - p->missed_ms > POOL_BURST_GAP_MS)
		p->in_burst = false;
	if (!hit) {
		p->resized_ms = p->missed_ms = now;
		if (!p->in_burst)
			p->burst_asked = 0;
		p->in_burst = true;
		want = p->target + 1;   /* each miss one more at least */
	}
	if (p->in_burst && p->base + ++p->burst_asked > want)
		want = p->base + p->burst_asked;
	if (want > p->cap)
		want = p->cap;
	if (want > p->target) {
		if (p->target == p->base)
			msc_log_info("warm pool: a new computer found none ready; "
				     "growing (up to %d)", p->cap);
		p->target = want;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
}
