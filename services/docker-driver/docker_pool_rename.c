/*
 * docker_pool_rename.c - a taken pool container becomes kilntainer-<id>
 * behind the answer, once its first command ended (docker_pool.c's hold):
 * the renamer thread renames taken containers in order, and whoever asks
 * the engine for a computer by name (dock_find) first waits until its
 * container has that name, which ends the hold.
 */
#include "docker_driver_int.h"
#include "docker_pool.h"
#include "docker_pool_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "docker_api_int.h"
#include "msc_log.h"

#define POOL_RENAME_WAIT_S 30

/* POST /containers/{id}/rename?name=<name>: -EEXIST when taken. */
static int
rename_ctr(struct dock_driver *d, const char *cid, const char *name,
    char *err, size_t errlen)
{
	struct dock_http_res res;
	char path[DOCK_PATH_MAX], tail[160];
	int rc;

	snprintf(tail, sizeof(tail), "/rename?name=%s", name);
	if ((rc = dock_path(path, sizeof(path), "/containers/%s%s", cid, tail,
		 err, errlen)) < 0 ||
	    (rc = dock_simple(d->engine, "POST", path, NULL, T_POOL_OP, &res,
		 err, errlen)) < 0)
		return rc;
	if (res.status != 204 && res.status != 200)
		rc = dock_http_status_err(&res, -EEXIST, "rename container", err,
		    errlen);
	dock_http_res_fini(&res);
	return rc;
}

/* Renames one; a container that cannot get its name is removed. */
static void
rename_one(struct dock_driver *d, const struct pool_rename *r)
{
	char err[DOCK_ERRLEN], ignore[DOCK_ERRLEN];
	int rv;

	/* A factory reset's old container may still be going away. */
	for (int i = 0; i < 50; i++) {
		if ((rv = rename_ctr(d, r->cid, r->name, err, sizeof(err))) == 0)
			return;
		if (rv != -EEXIST)
			break;
		usleep(100 * 1000);
	}
	msc_log_warn("warm pool: cannot name container %.12s %s (%s): "
		     "removing it", r->cid, r->name, err);
	(void)dock_container_remove(d->engine, r->cid, T_POOL_OP, ignore,
	    sizeof(ignore));
	dock_fx_forget(d, r->name);
}

int
dock_pool_rename_later(struct dock_pool *p, const char *cid,
    const char *name)
{
	struct pool_rename *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	snprintf(r->cid, sizeof(r->cid), "%s", cid);
	snprintf(r->name, sizeof(r->name), "%s", name);
	pthread_mutex_lock(&p->mu);
	if (p->stopping && !p->renaming) {
		/* The renamer is gone: do it here. */
		pthread_mutex_unlock(&p->mu);
		rename_one(p->d, r);
		free(r);
		return 0;
	}
	STAILQ_INSERT_TAIL(&p->renames, r, link);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

void *
dock_pool_renamer_main(void *arg)
{
	struct dock_pool *p = arg;
	struct pool_rename *r;
	uint64_t held_since = 0;
	int64_t held_ms;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		if ((r = STAILQ_FIRST(&p->renames)) == NULL) {
			if (p->stopping)
				break;
			pthread_cond_wait(&p->cv, &p->mu);
			continue;
		}
		if (dock_pool_held(p, &held_since, &held_ms)) {
			dock_pool_wait_ms(p, held_ms);
			continue;
		}
		held_since = 0;
		pthread_mutex_unlock(&p->mu);
		rename_one(p->d, r);    /* stays listed until done */
		pthread_mutex_lock(&p->mu);
		STAILQ_REMOVE_HEAD(&p->renames, link);
		free(r);
		pthread_cond_broadcast(&p->cv);
	}
	p->renaming = false;
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static bool
pending(const struct dock_pool *p, const char *name)
{
	const struct pool_rename *r;

	STAILQ_FOREACH(r, &p->renames, link)
		if (name == NULL || strcmp(r->name, name) == 0)
			return true;
	return false;
}

void
dock_pool_wait_named(struct dock_driver *d, const char *name)
{
	struct dock_pool *p = d->pool;
	struct timespec until;

	if (p == NULL)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += POOL_RENAME_WAIT_S;
	pthread_mutex_lock(&p->mu);
	if (pending(p, name)) {
		/* Needed now: no longer held back for a first command. */
		p->hold_until_ms = 0;
		pthread_cond_broadcast(&p->cv);
	}
	while (pending(p, name) &&
	    pthread_cond_timedwait(&p->cv, &p->mu, &until) == 0)
		;
	pthread_mutex_unlock(&p->mu);
}
