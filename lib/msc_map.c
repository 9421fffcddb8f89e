#include "msc_map.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

struct entry {
	SLIST_ENTRY(entry) link;        /* in its bucket */
	void *value;
	char key[];
};

SLIST_HEAD(bucket, entry);

struct msc_map {
	struct bucket *buckets;         /* nbuckets, a power of two */
	size_t nbuckets;
	size_t len;
};

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

int
msc_map_new(struct msc_map **mp)
{
	struct msc_map *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	m->nbuckets = 8;         /* grows with its entries; a session's few */
	if ((m->buckets = calloc(m->nbuckets, sizeof(*m->buckets))) == NULL) {
		free(m);
		return -ENOMEM;
	}
	*mp = m;
	return 0;
}

void
msc_map_free(struct msc_map *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct entry *e;

		while ((e = SLIST_FIRST(&m->buckets[i])) != NULL) {
			SLIST_REMOVE_HEAD(&m->buckets[i], link);
			free(e);
		}
	}
	free(m->buckets);
	free(m);
}

void
msc_map_free_owned(struct msc_map *m)
{
	struct entry *e;

	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nbuckets; i++)
		SLIST_FOREACH(e, &m->buckets[i], link)
			free(e->value);
	msc_map_free(m);
}

static struct bucket *
bucket_of(const struct msc_map *m, const char *key)
{
	return &m->buckets[hash(key) & (m->nbuckets - 1)];
}

/* The entry of key in its bucket, or NULL; *lastp: the bucket's last
 * entry (NULL when empty), where a new one goes. */
static struct entry *
find(const struct msc_map *m, const char *key, struct entry **lastp)
{
	struct entry *e, *last = NULL;

	SLIST_FOREACH(e, bucket_of(m, key), link) {
		if (strcmp(e->key, key) == 0)
			return e;
		last = e;
	}
	if (lastp != NULL)
		*lastp = last;
	return NULL;
}

void *
msc_map_get(const struct msc_map *m, const char *key)
{
	struct entry *e = find(m, key, NULL);

	return e != NULL ? e->value : NULL;
}

static void
grow(struct msc_map *m)
{
	size_t n = m->nbuckets * 2;
	struct bucket *b = calloc(n, sizeof(*b));
	struct entry *e;

	if (b == NULL)
		return;     /* keep the longer chains */
	for (size_t i = 0; i < m->nbuckets; i++)
		while ((e = SLIST_FIRST(&m->buckets[i])) != NULL) {
			SLIST_REMOVE_HEAD(&m->buckets[i], link);
			SLIST_INSERT_HEAD(&b[hash(e->key) & (n - 1)], e, link);
		}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
}

int
msc_map_put(struct msc_map *m, const char *key, void *value)
{
	struct entry *last, *e = find(m, key, &last);
	size_t klen;

	if (e != NULL) {
		e->value = value;
		return 0;
	}
	klen = strlen(key);
	if ((e = malloc(sizeof(*e) + klen + 1)) == NULL)
		return -ENOMEM;
	memcpy(e->key, key, klen + 1);
	e->value = value;
	if (last != NULL)
		SLIST_INSERT_AFTER(last, e, link);
	else
		SLIST_INSERT_HEAD(bucket_of(m, key), e, link);
	if (++m->len > m->nbuckets)
		grow(m);
	return 0;
}

void *
msc_map_del(struct msc_map *m, const char *key)
{
	struct entry *e = find(m, key, NULL);
	void *v;

	if (e == NULL)
		return NULL;
	SLIST_REMOVE(bucket_of(m, key), e, entry, link);
	v = e->value;
	free(e);
	m->len--;
	return v;
}

size_t
msc_map_len(const struct msc_map *m)
{
	return m->len;
}

void
msc_map_each(const struct msc_map *m,
    void (*fn)(void *arg, const char *key, void *value), void *arg)
{
	struct entry *e;

	for (size_t i = 0; i < m->nbuckets; i++)
		SLIST_FOREACH(e, &m->buckets[i], link)
			fn(arg, e->key, e->value);
}
