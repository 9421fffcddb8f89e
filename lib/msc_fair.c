/*
 * msc_fair.c - slots shared round-robin between keys (msc_fair.h). The
 * keys with items waiting are on one list in the order they were last
 * served; a freed slot goes to the first of them that runs the fewest.
 */
#include "msc_fair.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "msc_map.h"
#include "msc_queue.h"

struct waiting {
	void *item;
	struct msc_qnode qn;
};

/* One key: its slots held and its items waiting. */
struct key {
	int running;
	size_t queued;
	struct msc_queue waiting;       /* struct waiting */
	bool named;                     /* not the empty key: capped */
	bool listed;                    /* on f->ready */
	TAILQ_ENTRY(key) ready;         /* while it has items waiting */
	char name[];
};

TAILQ_HEAD(key_list, key);

struct msc_fair {
	pthread_mutex_t mu;
	int slots, used;
	int cap;                        /* of a named key */
	size_t queue;                   /* of a named key */
	size_t max_queued, queued;
	struct msc_map *keys;           /* name -> struct key */
	struct key_list ready;          /* least recently served first */
};

int
msc_fair_new(int slots, int cap, size_t queue, size_t max_queued,
    struct msc_fair **fp)
{
	struct msc_fair *f = calloc(1, sizeof(*f));

	if (f == NULL || msc_map_new(&f->keys) != 0) {
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->mu, NULL);
	f->slots = slots > 0 ? slots : 1;
	f->cap = cap > 0 && cap < f->slots ? cap : f->slots;
	f->queue = queue;
	f->max_queued = max_queued;
	TAILQ_INIT(&f->ready);
	*fp = f;
	return 0;
}

static int
cap_of(const struct msc_fair *f, const struct key *k)
{
	return k->named ? f->cap : f->slots;
}

/* Drops k when it holds and queues nothing (lock held). */
static void
key_done(struct msc_fair *f, struct key *k)
{
	if (k->running > 0 || k->queued > 0)
		return;
	if (k->listed)
		TAILQ_REMOVE(&f->ready, k, ready);
	msc_map_del(f->keys, k->name);
	free(k);
}

int
msc_fair_enter(struct msc_fair *f, const char *key, void *item)
{
	struct waiting *w;
	struct key *k;
	size_t len = strlen(key);

	pthread_mutex_lock(&f->mu);
	if ((k = msc_map_get(f->keys, key)) == NULL) {
		if ((k = calloc(1, sizeof(*k) + len + 1)) == NULL) {
			pthread_mutex_unlock(&f->mu);
			return -ENOMEM;
		}
		memcpy(k->name, key, len + 1);
		k->named = len > 0;
		msc_queue_init(&k->waiting);
		if (msc_map_put(f->keys, k->name, k) != 0) {
			pthread_mutex_unlock(&f->mu);
			free(k);
			return -ENOMEM;
		}
	}
	/* Nothing of its own waits (order), and a slot is free for it. */
	if (k->queued == 0 && f->used < f->slots && k->running < cap_of(f, k)) {
		k->running++;
		f->used++;
		pthread_mutex_unlock(&f->mu);
		return 1;
	}
	if (k->named && k->queued >= f->queue) {
		key_done(f, k);
		pthread_mutex_unlock(&f->mu);
		return -EBUSY;
	}
	if (f->queued >= f->max_queued ||
	    (w = calloc(1, sizeof(*w))) == NULL) {
		bool full = f->queued >= f->max_queued;

		key_done(f, k);
		pthread_mutex_unlock(&f->mu);
		return full ? -EAGAIN : -ENOMEM;
	}
	w->item = item;
	msc_queue_push(&k->waiting, &w->qn);
	k->queued++;
	f->queued++;
	if (!k->listed) {
		TAILQ_INSERT_TAIL(&f->ready, k, ready);
		k->listed = true;
	}
	pthread_mutex_unlock(&f->mu);
	return 0;
}

/* The waiting key a free slot goes to, or NULL (lock held). */
static struct key *
next_key(struct msc_fair *f)
{
	struct key *k, *best = NULL;

	if (f->used >= f->slots)
		return NULL;
	TAILQ_FOREACH(k, &f->ready, ready)
		if (k->running < cap_of(f, k) &&
		    (best == NULL || k->running < best->running))
			best = k;
	return best;
}

void *
msc_fair_leave(struct msc_fair *f, const char *key)
{
	struct key *k;
	struct msc_qnode *n;
	struct waiting *w = NULL;
	void *next = NULL;

	pthread_mutex_lock(&f->mu);
	if ((k = msc_map_get(f->keys, key)) != NULL && k->running > 0) {
		k->running--;
		f->used--;
		key_done(f, k);
	}
	if ((k = next_key(f)) != NULL) {
		n = msc_queue_pop(&k->waiting);
		w = msc_queue_item(n, struct waiting, qn);
		next = w->item;
		k->queued--;
		f->queued--;
		k->running++;
		f->used++;
		/* Served: the others come first next time. */
		TAILQ_REMOVE(&f->ready, k, ready);
		if (k->queued > 0)
			TAILQ_INSERT_TAIL(&f->ready, k, ready);
		else
			k->listed = false;
	}
	pthread_mutex_unlock(&f->mu);
	free(w);
	return next;
}

void
msc_fair_count(struct msc_fair *f, const char *key, int *running,
    size_t *queued)
{
	struct key *k;

	pthread_mutex_lock(&f->mu);
	k = msc_map_get(f->keys, key);
	*running = k != NULL ? k->running : 0;
	*queued = k != NULL ? k->queued : 0;
	pthread_mutex_unlock(&f->mu);
}

void
msc_fair_drain(struct msc_fair *f, void (*fn)(void *item))
{
	struct msc_queue drained = MSC_QUEUE_INIT;
	struct msc_qnode *n;
	struct key *k;

	pthread_mutex_lock(&f->mu);
	while ((k = TAILQ_FIRST(&f->ready)) != NULL) {
		TAILQ_REMOVE(&f->ready, k, ready);
		k->listed = false;
		msc_queue_take_all(&drained, &k->waiting);
		f->queued -= k->queued;
		k->queued = 0;
		key_done(f, k);
	}
	pthread_mutex_unlock(&f->mu);
	while ((n = msc_queue_pop(&drained)) != NULL) {
		struct waiting *w = msc_queue_item(n, struct waiting, qn);

		fn(w->item);
		free(w);
	}
}

static void
free_key(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	free(value);
}

void
msc_fair_free(struct msc_fair *f)
{
	if (f == NULL)
		return;
	msc_map_each(f->keys, free_key, NULL);
	msc_map_free(f->keys);
	pthread_mutex_destroy(&f->mu);
	free(f);
}
