/*
 * docker_pool_hold.c - engine work held back for a taken computer's first
 * command (docker_pool_int.h): the refill threads and the renamer ask
 * dock_pool_held before each piece of work; a take starts the hold, the
 * command's end (dock_pool_ran) or 250 ms in all for each piece ends it.
 * Below the pool's other files: it calls none of them.
 */
#include "docker_driver_int.h"
#include "docker_pool.h"
#include "docker_pool_int.h"

#include <stdio.h>
#include <string.h>

#include "msc_time.h"

#define POOL_HOLD_MS 250        /* engine work held for a first command */

bool
dock_pool_held(const struct dock_pool *p, uint64_t *since, int64_t *ms)
{
	uint64_t now = msc_now_ms(), until = p->hold_until_ms;

	if (p->stopping || p->n_ready == 0 || until == 0 || now >= until) {
		*since = 0;
		return false;
	}
	/* Each piece of work waits POOL_HOLD_MS at most, however many
	 * takes follow one another. */
	if (*since == 0)
		*since = now;
	if (until > *since + POOL_HOLD_MS)
		until = *since + POOL_HOLD_MS;
	if (now >= until)
		return false;
	*ms = (int64_t)(until - now);
	return true;
}

void
dock_pool_ran(struct dock_driver *d, const char *name)
{
	struct dock_pool *p = d->pool;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	if (p->hold_until_ms != 0 && strcmp(p->hold_name, name) == 0) {
		p->hold_until_ms = 0;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
}

void
dock_pool_hold_for(struct dock_pool *p, const char *name)
{
	pthread_mutex_lock(&p->mu);
	p->hold_until_ms = msc_now_ms() + POOL_HOLD_MS;
	snprintf(p->hold_name, sizeof(p->hold_name), "%s", name);
	pthread_mutex_unlock(&p->mu);
}
