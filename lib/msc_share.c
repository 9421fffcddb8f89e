/* msc_share.c - fair shares of a bounded resource by key (msc_share.h). */
#include "msc_share.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "msc_map.h"
#include "msc_queue.h"

struct waiting {
	void *item;
	struct msc_qnode qn;
};

/* One key: its slots held, and its items waiting (struct waiting). */
struct holder {
	int held;
	struct msc_queue waiting;
};

struct msc_share {
	pthread_mutex_t mu;
	int n;
	size_t max_waiting, waiting;
	struct msc_map *keys;           /* key -> struct holder */
};

int
msc_share_new(int n, size_t max_waiting, struct msc_share **sp)
{
	struct msc_share *sh = calloc(1, sizeof(*sh));

	if (sh == NULL || msc_map_new(&sh->keys) != 0) {
		free(sh);
		return -ENOMEM;
	}
	pthread_mutex_init(&sh->mu, NULL);
	sh->n = n > 0 ? n : 1;
	sh->max_waiting = max_waiting;
	*sp = sh;
	return 0;
}

void
msc_share_set(struct msc_share *sh, int n)
{
	pthread_mutex_lock(&sh->mu);
	sh->n = n > 0 ? n : 1;
	pthread_mutex_unlock(&sh->mu);
}

int
msc_share_enter(struct msc_share *sh, const char *key, void *item)
{
	struct holder *h;
	struct waiting *w;

	pthread_mutex_lock(&sh->mu);
	if ((h = msc_map_get(sh->keys, key)) == NULL) {
		if ((h = calloc(1, sizeof(*h))) == NULL ||
		    msc_map_put(sh->keys, key, h) != 0) {
			pthread_mutex_unlock(&sh->mu);
			free(h);
			return -ENOMEM;
		}
	}
	if (h->held < sh->n) {
		h->held++;
		pthread_mutex_unlock(&sh->mu);
		return 1;
	}
	if (sh->waiting >= sh->max_waiting) {
		pthread_mutex_unlock(&sh->mu);
		return -EAGAIN;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		pthread_mutex_unlock(&sh->mu);
		return -ENOMEM;
	}
	w->item = item;
	msc_queue_push(&h->waiting, &w->qn);
	sh->waiting++;
	pthread_mutex_unlock(&sh->mu);
	return 0;
}

void *
msc_share_leave(struct msc_share *sh, const char *key)
{
	struct holder *h;
	struct msc_qnode *n = NULL;
	struct waiting *w = NULL;
	void *next = NULL;

	pthread_mutex_lock(&sh->mu);
	h = msc_map_get(sh->keys, key);
	if (h != NULL && (n = msc_queue_pop(&h->waiting)) != NULL) {
		/* It inherits the slot. */
		w = msc_queue_item(n, struct waiting, qn);
		sh->waiting--;
		next = w->item;
	} else if (h != NULL && --h->held == 0) {
		msc_map_del(sh->keys, key);
		free(h);
	}
	pthread_mutex_unlock(&sh->mu);
	free(w);
	return next;
}

static void
take_waiting(void *arg, const char *key, void *value)
{
	struct msc_queue *drained = arg;
	struct holder *h = value;

	(void)key;
	msc_queue_take_all(drained, &h->waiting);
}

void
msc_share_drain(struct msc_share *sh, void (*fn)(void *item))
{
	struct msc_queue drained = MSC_QUEUE_INIT;
	struct msc_qnode *n;

	pthread_mutex_lock(&sh->mu);
	msc_map_each(sh->keys, take_waiting, &drained);
	sh->waiting = 0;
	pthread_mutex_unlock(&sh->mu);
	while ((n = msc_queue_pop(&drained)) != NULL) {
		struct waiting *w = msc_queue_item(n, struct waiting, qn);

		fn(w->item);
		free(w);
	}
}

void
msc_share_free(struct msc_share *sh)
{
	if (sh == NULL)
		return;
	msc_map_free_owned(sh->keys);
	pthread_mutex_destroy(&sh->mu);
	free(sh);
}
