#include "msc_map.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *next;
	void *value;
	char key[];
};

struct msc_map {
	struct entry **buckets;
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
		struct entry *e = m->buckets[i], *next;

		for (; e != NULL; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(m->buckets);
	free(m);
}

static struct entry **
slot(const struct msc_map *m, const char *key)
{
	struct entry **ep = &m->buckets[hash(key) & (m->nbuckets - 1)];

	while (*ep != NULL && strcmp((*ep)->key, key) != 0)
		ep = &(*ep)->next;
	return ep;
}

void *
msc_map_get(const struct msc_map *m, const char *key)
{
	struct entry *e = *slot(m, key);

	return e != NULL ? e->value : NULL;
}

static void
grow(struct msc_map *m)
{
	size_t n = m->nbuckets * 2;
	struct entry **b = calloc(n, sizeof(*b));

	if (b == NULL)
		return;     /* keep the longer chains */
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct entry *e = m->buckets[i], *next;

		for (; e != NULL; e = next) {
			size_t j = hash(e->key) & (n - 1);

			next = e->next;
			e->next = b[j];
			b[j] = e;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
}

int
msc_map_put(struct msc_map *m, const char *key, void *value)
{
	struct entry **ep = slot(m, key), *e;
	size_t klen;

	if (*ep != NULL) {
		(*ep)->value = value;
		return 0;
	}
	klen = strlen(key);
	if ((e = malloc(sizeof(*e) + klen + 1)) == NULL)
		return -ENOMEM;
	memcpy(e->key, key, klen + 1);
	e->value = value;
	e->next = NULL;
	*ep = e;
	if (++m->len > m->nbuckets)
		grow(m);
	return 0;
}

void *
msc_map_del(struct msc_map *m, const char *key)
{
	struct entry **ep = slot(m, key), *e = *ep;
	void *v;

	if (e == NULL)
		return NULL;
	*ep = e->next;
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
	for (size_t i = 0; i < m->nbuckets; i++)
		for (struct entry *e = m->buckets[i]; e != NULL; e = e->next)
			fn(arg, e->key, e->value);
}
