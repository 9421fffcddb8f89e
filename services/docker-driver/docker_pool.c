/*
 * docker_pool.c - the warm pool (see docker_pool.h): refill threads keep
 * --warm-pool containers started and ready (created with the computers'
 * create body, the helper answering); a new temporary computer takes one
 * and renames it, so its first command is as fast as every later one.
 * Refills run at most --driver-creations at once, fewer while cold
 * creations run, and stop when the driver stops, which removes the
 * containers still waiting; a killed run's end with their lease. A take
 * asks the engine nothing: the image's id is kept while no image event
 * comes (docker_pool_image.c) and the rename follows the answer
 * (docker_pool_rename.c).
 * Its size follows the bursts it sees (docker_pool_size.c).
 */
#include "docker_driver_int.h"
#include "docker_lease.h"
#include "docker_pool.h"
#include "docker_pool_int.h"
#include "docker_policy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker_api_int.h"
#include "msc_hop.h"
#include "msc_log.h"
#include "msc_random.h"

#define POOL_DEFAULT 2
#define T_POOL_CREATE 60000
#define POOL_BACKOFF_MS 2000    /* after a failed refill */
#define POOL_ANSWER_MS 1000     /* for a waiting helper's answer */
#define POOL_FRESH_MS 5000      /* an answer this recent needs no new one */
#define POOL_RECHECK_MS 3000    /* a waiting helper asked again after */
#define POOL_REFILL_WAIT_MS 5000 /* a take waits for a refill under way */

void
dock_pool_ctr_free(struct pool_ctr *pc)
{
	if (pc != NULL)
		json_decref(pc->ctr);
	free(pc);
}

/* Removes a pool container that will not be handed out. */
void
dock_pool_discard(struct dock_driver *d, struct pool_ctr *pc, const char *why)
{
	char err[DOCK_ERRLEN];

	if (why != NULL)
		msc_log_warn("warm pool: removing %s: %s", pc->name, why);
	if (dock_container_remove(d->engine, pc->cid, T_POOL_OP, err,
		sizeof(err)) != 0)
		msc_log_warn("warm pool: cannot remove %s: %s", pc->name, err);
	dock_lease_drop(d, pc->name);
	dock_fx_forget(d, pc->name);
	dock_pool_ctr_free(pc);
}

/* The pool filter of this driver: "kilntainers.pool=<driver>". */
static void
pool_filter(const struct dock_driver *d, char *buf, size_t len)
{
	snprintf(buf, len, DOCK_POOL_LABEL "=%s", d->cfg->driver_id);
}

/* The create body of a pool container; *fastp: with the helper. */
static json_t *
pool_body(struct dock_driver *d, bool *fastp)
{
	json_t *body = json_deep_copy(d->create_template), *labels;

	if (body == NULL)
		return NULL;
	if (!json_is_object(labels = json_object_get(body, "Labels"))) {
		labels = json_object();
		json_object_set_new(body, "Labels", labels);
	}
	json_object_set_new(labels, "kilntainers", json_string("true"));
	json_object_set_new(labels, DOCK_POOL_LABEL,
	    json_string(d->cfg->driver_id));
	json_object_set_new(labels, "kilntainers.temporary",
	    json_string("true"));
	json_object_set_new(labels, "kilntainers.image",
	    json_string(dock_cfg(d->cfg)->image));
	json_object_set_new(json_object_get(body, "HostConfig"), "AutoRemove",
	    json_true());
	dock_disk_body(d, body);
	dock_runtime_label(body);
	/* Under gVisor the helper runs but the driver cannot reach it. */
	*fastp = dock_fx_body(d, body) == 0 && !d->rt_hides_helper;
	/* A lease like any temporary computer's: a server killed leaves no
	 * waiting container behind for long (docker_lease.h). */
	if (*fastp && dock_lease_body(d, body, true) != 0) {
		json_decref(body);
		return NULL;
	}
	return body;
}

/* Makes one ready pool container; NULL with a message in err. */
static struct pool_ctr *
fill_one(struct dock_driver *d, char *err, size_t errlen)
{
	struct pool_ctr *pc = calloc(1, sizeof(*pc));
	char hex[9];
	json_t *body;
	bool fast;
	int rv;

	snprintf(err, errlen, "out of memory");
	if (pc == NULL || d->pool->computers->validate(d, err, errlen) != 0 ||
	    dock_net_ensure(d, err, errlen) != 0 ||
	    (body = pool_body(d, &fast)) == NULL) {
		free(pc);
		return NULL;
	}
	msc_random_hex(hex, 4);
	snprintf(pc->name, sizeof(pc->name), DOCK_POOL_PREFIX "%s-%s",
	    d->cfg->driver_id, hex);
	pc->helper = fast;
	rv = dock_container_create(d->engine, pc->name, body, T_POOL_CREATE,
	    pc->cid, err, errlen);
	/* The engine has no size option after all: go without. */
	if (rv != 0 && dock_disk_refused(d, body, err)) {
		dock_disk_strip(body);
		rv = dock_container_create(d->engine, pc->name, body,
		    T_POOL_CREATE, pc->cid, err, errlen);
	}
	if (rv != 0) {
		dock_runtime_explain(d, pc->name, err, errlen);
		json_decref(body);
		free(pc);
		return NULL;
	}
	json_decref(body);
	if (dock_container_inspect(d->engine, pc->cid, T_POOL_OP, &pc->ctr,
		err, errlen) != 0 || dock_net_confirm(d, err, errlen) != 0) {
		dock_pool_discard(d, pc, NULL);
		return NULL;
	}
	dock_fx_track(d, pc->name, pc->ctr);
	dock_lease_hold(d, pc->name, pc->ctr);
	if (d->pool->computers->readiness(d, pc->name, fast, true, err,
	    errlen) != 0) {
		dock_pool_discard(d, pc, NULL);
		return NULL;
	}
	pc->answered_ms = msc_now_ms();         /* it just ran a command */
	return pc;
}

/*
 * With p->mu held (dropped while it asks): asks the waiting helper whose
 * answer is the oldest again when POOL_RECHECK_MS passed, so that a take
 * finds an answer under POOL_FRESH_MS old and asks none itself; one that
 * does not answer is removed. False when none was due (*next_ms lowered
 * to when one is).
 */
static bool
recheck(struct dock_pool *p, int64_t *next_ms)
{
	struct dock_driver *d = p->d;
	struct pool_ctr *pc = NULL;
	char name[sizeof(pc->name)];
	uint64_t now = msc_now_ms();
	int64_t due;
	bool answers;

	if (!dock_fx_enabled(d))
		return false;
	for (int i = 0; i < p->n_ready; i++)
		if (p->ready[i]->helper && !p->ready[i]->checking &&
		    (pc == NULL || p->ready[i]->answered_ms < pc->answered_ms))
			pc = p->ready[i];
	if (pc == NULL)
		return false;
	if ((due = (int64_t)(pc->answered_ms + POOL_RECHECK_MS - now)) > 0) {
		if (*next_ms < 0 || due < *next_ms)
			*next_ms = due;
		return false;
	}
	pc->checking = true;
	snprintf(name, sizeof(name), "%s", pc->name);
	pthread_mutex_unlock(&p->mu);
	/* Its lease socket, served by the helper's own loop: the exec
	 * socket's probe would use up its forked session. */
	answers = dock_lease_answers(d, name, POOL_ANSWER_MS);
	pthread_mutex_lock(&p->mu);
	/* A take may have had it meanwhile: found again by its name. */
	for (int i = 0; i < p->n_ready; i++) {
		if (strcmp(p->ready[i]->name, name) != 0)
			continue;
		pc = p->ready[i];
		pc->checking = false;
		if (answers) {
			pc->answered_ms = msc_now_ms();
			break;
		}
		memmove(&p->ready[i], &p->ready[i + 1],
		    (size_t)(--p->n_ready - i) * sizeof(p->ready[0]));
		pthread_mutex_unlock(&p->mu);
		dock_pool_discard(d, pc, "its exec helper does not answer");
		pthread_mutex_lock(&p->mu);
		break;
	}
	return true;
}

static bool
wants_refill(const struct dock_pool *p)
{
	return p->n_ready + p->filling < p->target &&
	    p->filling + p->cold < p->limit;
}

static void *
refill_main(void *arg)
{
	struct dock_pool *p = arg;
	struct dock_driver *d = p->d;
	char err[DOCK_ERRLEN];
	int64_t next_ms;

	pthread_mutex_lock(&p->mu);
	uint64_t held_since = 0;

	while (!p->stopping) {
		struct pool_ctr *pc;
		int64_t held_ms;

		if ((pc = dock_pool_shrink(p, &next_ms)) != NULL) {
			pthread_mutex_unlock(&p->mu);
			dock_pool_discard(d, pc, NULL);
			pthread_mutex_lock(&p->mu);
			continue;
		}
		if (!wants_refill(p)) {
			if (!recheck(p, &next_ms))
				dock_pool_wait_ms(p, next_ms);
			continue;
		}
		if (dock_pool_held(p, &held_since, &held_ms)) {
			dock_pool_wait_ms(p, held_ms);
			continue;
		}
		held_since = 0;
		p->filling++;
		pthread_mutex_unlock(&p->mu);
		pc = fill_one(d, err, sizeof(err));
		pthread_mutex_lock(&p->mu);
		p->filling--;
		pthread_cond_broadcast(&p->cv);    /* a take may wait for it */
		if (pc != NULL && !p->stopping && p->n_ready < POOL_MAX) {
			p->ready[p->n_ready++] = pc;
			if (p->n_ready == p->target)
				msc_log_info("warm pool: %d of %d ready",
				    p->n_ready, p->target);
			/* A take finds the image's id known (asked here when
			 * an event came since). */
			pthread_mutex_unlock(&p->mu);
			free(dock_pool_image_id(p));
			pthread_mutex_lock(&p->mu);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		if (pc != NULL)
			dock_pool_discard(d, pc, NULL);   /* stopping: made too late */
		else
			msc_log_warn("warm pool: refill failed: %s", err);
		pthread_mutex_lock(&p->mu);
		if (pc == NULL && !p->stopping)
			dock_pool_wait_ms(p, POOL_BACKOFF_MS);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
dock_pool_start(struct dock_driver *d,
    const struct dock_pool_computers *computers)
{
	const struct dock_cfg *dc = dock_cfg(d->cfg);
	struct dock_pool *p;
	long target = dc->warm_pool < 0 ? POOL_DEFAULT : dc->warm_pool;
	long cap = dc->warm_pool_max;

	/* With principals every temporary computer is made cold, labelled
	 * with its principal (docker_computers.c, create_any): a pool would
	 * hold containers no call takes. */
	if (d->cfg->tokens_file != NULL && target != 0) {
		msc_log_info("warm pool: off: with --tokens-file each computer "
		    "is made for its principal, never taken from the pool");
		target = 0;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	STAILQ_INIT(&p->renames);
	p->d = d;
	p->computers = computers;
	p->base = p->target = (int)target;
	/* Off stays off; within what the ready array holds. */
	p->cap = target == 0 ? 0 : (int)(cap > target ? cap : target);
	if (p->cap > POOL_MAX)
		p->cap = POOL_MAX;
	p->limit = (int)dc->driver_creations;
	p->shrink_ms = (uint64_t)dc->warm_pool_shrink_after * 1000;
	d->pool = p;
	/*
	 * Nothing here removes what an earlier run left waiting: those
	 * containers hold a lease (or a lock file, without the helper) and
	 * end with it; servers sharing this engine and --driver-id have
	 * theirs waiting under the same label, and some are being taken.
	 */
	for (int i = 0; i < POOL_THREADS && i < p->cap && i < p->limit; i++) {
		if (pthread_create(&p->threads[i], NULL, refill_main, p) != 0)
			break;
		p->n_threads++;
	}
	if ((p->cap > 0 && p->n_threads == 0) ||
	    (p->base > 0 && strcmp(dock_engine_name(d->engine), "docker") ==
		0 && dock_pool_image_start(p) != 0) ||
	    pthread_create(&p->renamer, NULL, dock_pool_renamer_main, p) != 0) {
		msc_log_err("warm pool: cannot start its threads");
		dock_pool_free(d);
		return -EAGAIN;
	}
	p->renaming = true;
	if (p->target > 0)
		msc_log_info("warm pool: keeping %d container(s) ready "
			     "(up to %d after bursts, one off per %d s "
			     "without a miss)", p->target, p->cap,
			     (int)(p->shrink_ms / 1000));
	return 0;
}

void
dock_pool_drain(struct dock_driver *d)
{
	struct dock_pool *p = d->pool;
	struct pool_ctr *left[POOL_MAX];
	int n;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->n_threads; i++)
		pthread_join(p->threads[i], NULL);
	p->n_threads = 0;
	/* The renamer ends its queue first: those are computers in use. */
	if (p->renaming)
		pthread_join(p->renamer, NULL);
	p->renaming = false;
	dock_pool_image_stop(p);
	pthread_mutex_lock(&p->mu);
	n = p->n_ready;
	memcpy(left, p->ready, (size_t)n * sizeof(*left));
	p->n_ready = 0;
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < n; i++)
		dock_pool_discard(d, left[i], NULL);
}

void
dock_pool_free(struct dock_driver *d)
{
	struct dock_pool *p = d->pool;

	if (p == NULL)
		return;
	dock_pool_drain(d);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p);
	d->pool = NULL;
}

void
dock_pool_cold(struct dock_driver *d, int delta)
{
	struct dock_pool *p = d->pool;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->cold += delta;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* The next waiting container, or NULL; tells a refill thread. */
static struct pool_ctr *
pop_locked(struct dock_pool *p)
{
	struct pool_ctr *pc = NULL;

	if (!p->stopping && p->n_ready > 0) {
		/* The oldest first: none waits for ever. */
		pc = p->ready[0];
		memmove(&p->ready[0], &p->ready[1],
		    (size_t)(--p->n_ready) * sizeof(p->ready[0]));
		pthread_cond_broadcast(&p->cv);
	}
	return pc;
}

static struct pool_ctr *
pop(struct dock_pool *p)
{
	struct pool_ctr *pc;

	pthread_mutex_lock(&p->mu);
	pc = pop_locked(p);
	pthread_mutex_unlock(&p->mu);
	return pc;
}

/*
 * With none ready: waits for a refill under way that no other take waits
 * for, which comes sooner than a cold creation would (and is not slowed
 * down by one); the container it made, or NULL (none under way, all
 * taken by other waiters, it failed, or POOL_REFILL_WAIT_MS passed).
 */
static struct pool_ctr *
wait_refill(struct dock_pool *p)
{
	uint64_t until = msc_now_ms() + POOL_REFILL_WAIT_MS, now;
	struct pool_ctr *pc;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping && p->n_ready == 0 &&
	    p->waiting_takes < p->filling && (now = msc_now_ms()) < until) {
		p->waiting_takes++;
		dock_pool_wait_ms(p, (int64_t)(until - now));
		p->waiting_takes--;
	}
	pc = pop_locked(p);     /* under the same lock: no other take first */
	pthread_mutex_unlock(&p->mu);
	return pc;
}

static void
push_back(struct dock_pool *p, struct pool_ctr *pc)
{
	pthread_mutex_lock(&p->mu);
	pc->checking = false;   /* a recheck under way no longer finds it */
	if (!p->stopping && p->n_ready < POOL_MAX) {
		p->ready[p->n_ready++] = pc;
		pc = NULL;
	}
	pthread_mutex_unlock(&p->mu);
	if (pc != NULL)
		dock_pool_discard(p->d, pc, NULL);
}

/*
 * Why pc must not be handed out, or NULL: its helper (or, without one,
 * its container) no longer runs or does not answer (its lease socket,
 * served by the helper's own loop: no command, no engine), or the image
 * name now points to another image than the one it was made from.
 */
static const char *
unfit(struct dock_driver *d, struct pool_ctr *pc, const char *image_id)
{
	const char *made = json_string_value(json_object_get(pc->ctr, "Image"));
	char err[DOCK_ERRLEN];
	json_t *now = NULL;
	bool running;

	if (image_id != NULL && (made == NULL || strcmp(made, image_id) != 0))
		return "the image changed since it was made";
	/*
	 * Its helper answered a moment ago (the refill threads ask a
	 * waiting one again, recheck), still runs and is not frozen
	 * (docker pause; its /proc entry and cgroup say): no round trip to
	 * a helper that sleeps, and no connection that would use up the
	 * session it keeps forked for the first command. Else asked.
	 */
	if (pc->helper && dock_fx_enabled(d))
		return (msc_now_ms() - pc->answered_ms < POOL_FRESH_MS &&
			   dock_fx_awake(d, pc->name) == 1) ||
		    (dock_fx_wait(d, pc->name, 0) == 0 &&
			dock_lease_answers(d, pc->name, POOL_ANSWER_MS)) ? NULL
		    : "its exec helper does not answer";
	if (dock_container_inspect(d->engine, pc->cid, T_POOL_OP, &now, err,
		sizeof(err)) != 0)
		return "it is gone";
	running = json_is_true(json_object_get(json_object_get(now, "State"),
	    "Running"));
	json_decref(now);
	return running ? NULL : "it is not running";
}

int
dock_pool_take(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	struct dock_pool *p = d->pool;
	struct pool_ctr *pc;
	char name[128], *image_id;
	const char *why;
	bool missed = false;
	int rv;

	if (p == NULL || p->base == 0)
		return 1;
	/*
	 * Kept from the last ask while no image event came (no engine round
	 * trip); unknown (the engine did not say): each one is still checked.
	 */
	MSC_HOP("driver_take_start");
	image_id = dock_pool_image_id(p);
	MSC_HOP("take_image_id");
	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
	for (;;) {
		if ((pc = pop(p)) == NULL) {
			/* A miss (the pool grows for the next ones), then,
			 * once per take, maybe a refill under way. */
			if (missed)
				break;
			dock_pool_asked(p, false);
			missed = true;
			if ((pc = wait_refill(p)) == NULL)
				break;
		}
		MSC_HOP("take_pop");
		why = unfit(d, pc, image_id);
		MSC_HOP("take_helper_answers");
		if (why != NULL) {
			dock_pool_discard(d, pc, why);
			continue;
		}
		/*
		 * Its network rules, as a new computer's (docker_policy.c),
		 * from a fresh inspect: with the one kept from its creation,
		 * integration/sandbox once found a taken computer's public
		 * traffic blocked (not understood yet; the inspect costs
		 * about half a fork+exec).
		 */
		if (dock_pol_apply(d, id, pc->cid, err, errlen) != 0) {
			dock_pool_discard(d, pc, err);
			continue;
		}
		/*
		 * The rename (tens of ms on a busy engine) runs behind the
		 * answer, and with the refill after the first command (up to
		 * POOL_HOLD_MS): the helper is reached by the name from now
		 * on, and whoever asks the engine by name waits for it
		 * (dock_find), which ends the hold.
		 */
		if (pc->helper && dock_fx_enabled(d))
			dock_pool_hold_for(p, name);
		if ((rv = dock_pool_rename_later(p, pc->cid, name)) != 0) {
			push_back(p, pc);
			free(image_id);
			snprintf(err, errlen, "out of memory");
			return rv;
		}
		dock_fx_forget(d, pc->name);
		dock_fx_track(d, name, pc->ctr);
		/* Held from now on under the computer's name. */
		dock_lease_drop(d, pc->name);
		dock_lease_hold(d, name, pc->ctr);
		rv = p->computers->fill(d, pc->ctr, id, out,
		    dock_cfg(d->cfg)->image, d->cfg->driver_id);
		msc_log_info("created temporary computer %s from the warm pool "
			     "(container %.12s)", id, pc->cid);
		if (!missed)
			dock_pool_asked(p, true);
		dock_pool_ctr_free(pc);
		MSC_HOP("take_rules_track_fill");
		free(image_id);
		return rv;
	}
	free(image_id);
	return 1;
}

int
dock_pool_list_taken(struct dock_driver *d,
    const struct dock_pool_computers *computers, Msc__V1__ComputerList *out,
    char *err, size_t errlen)
{
	char filter[256];
	json_t *arr = NULL, *row;
	Msc__V1__Computer **grown;
	size_t i;
	int rv;

	/* Also with the pool off now: an earlier run's taken ones; a
	 * computer taken a moment ago is listed by its name. */
	dock_pool_wait_named(d, NULL);
	pool_filter(d, filter, sizeof(filter));
	if ((rv = dock_container_list(d->engine, filter, T_POOL_OP, &arr, err,
		 errlen)) != 0)
		return rv;
	grown = realloc(out->computers, (out->n_computers +
	    json_array_size(arr) + 1) * sizeof(*grown));
	if (grown == NULL) {
		json_decref(arr);
		return -ENOMEM;
	}
	out->computers = grown;
	json_array_foreach (arr, i, row) {
		const char *name = json_string_value(json_array_get(
		    json_object_get(row, "Names"), 0));
		Msc__V1__Computer *c;

		if (name == NULL || strncmp(name, "/" DOCK_NAME_PREFIX,
					sizeof(DOCK_NAME_PREFIX)) != 0 ||
		    (c = malloc(sizeof(*c))) == NULL)
			continue;
		*c = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
		out->computers[out->n_computers++] = c;
		if ((rv = computers->fill(d, row,
			 name + sizeof(DOCK_NAME_PREFIX), c, dock_cfg(d->cfg)->image,
			 d->cfg->driver_id)) != 0)
			break;
	}
	json_decref(arr);
	return rv;
}
