#include "msc_driver_known.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "msc_map.h"

struct msc_known {
	pthread_mutex_t mu;     /* guards map and every record */
	struct msc_map *map;    /* id -> malloc'd record of `size` bytes */
	size_t size;
};

static void
wipe(size_t size, void *rec)
{
	if (rec != NULL) {
		explicit_bzero(rec, size);
		free(rec);
	}
}

int
msc_known_new(size_t size, struct msc_known **kp)
{
	struct msc_known *k = calloc(1, sizeof(*k));
	int rv;

	if (k == NULL)
		return -ENOMEM;
	if ((rv = msc_map_new(&k->map)) != 0) {
		free(k);
		return rv;
	}
	k->size = size;
	pthread_mutex_init(&k->mu, NULL);
	*kp = k;
	return 0;
}

static void
wipe_entry(void *arg, const char *key, void *value)
{
	const struct msc_known *k = arg;

	(void)key;
	wipe(k->size, value);
}

void
msc_known_free(struct msc_known *k)
{
	if (k == NULL)
		return;
	msc_map_each(k->map, wipe_entry, k);
	msc_map_free(k->map);
	pthread_mutex_destroy(&k->mu);
	free(k);
}

/* id's record, made (zeroed) when missing and `create`. Under k->mu. */
static void *
record_locked(struct msc_known *k, const char *id, bool create)
{
	void *rec = msc_map_get(k->map, id);

	if (rec != NULL || !create)
		return rec;
	if ((rec = calloc(1, k->size)) == NULL)
		return NULL;
	if (msc_map_put(k->map, id, rec) != 0) {
		free(rec);
		return NULL;
	}
	return rec;
}

int
msc_known_put(struct msc_known *k, const char *id, const void *rec)
{
	void *hit;

	pthread_mutex_lock(&k->mu);
	if ((hit = record_locked(k, id, true)) != NULL)
		memcpy(hit, rec, k->size);
	pthread_mutex_unlock(&k->mu);
	return hit != NULL ? 0 : -ENOMEM;
}

bool
msc_known_get(struct msc_known *k, const char *id, void *rec)
{
	void *hit;

	pthread_mutex_lock(&k->mu);
	if ((hit = msc_map_get(k->map, id)) != NULL)
		memcpy(rec, hit, k->size);
	pthread_mutex_unlock(&k->mu);
	return hit != NULL;
}

int
msc_known_update(struct msc_known *k, const char *id, bool create,
    void (*fn)(void *rec, void *arg), void *arg)
{
	void *hit;

	pthread_mutex_lock(&k->mu);
	if ((hit = record_locked(k, id, create)) != NULL)
		fn(hit, arg);
	pthread_mutex_unlock(&k->mu);
	if (hit != NULL)
		return 0;
	return create ? -ENOMEM : -ENOENT;
}

void
msc_known_forget(struct msc_known *k, const char *id)
{
	pthread_mutex_lock(&k->mu);
	wipe(k->size, msc_map_del(k->map, id));
	pthread_mutex_unlock(&k->mu);
}
