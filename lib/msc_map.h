/*
 * msc_map.h - a string-keyed hash map (separate chaining, grows by
 * doubling). Not thread-safe: the owner locks. Keys are copied; values
 * are borrowed pointers the owner manages.
 */
#ifndef MSC_MAP_H
#define MSC_MAP_H

#include <stddef.h>

struct msc_map;

int msc_map_new(struct msc_map **mp);
/* Frees the map and its keys, not the values. Accepts NULL. */
void msc_map_free(struct msc_map *m);
/* Frees the map, its keys and every value (each one malloc'd, owned by
 * the map). Accepts NULL. */
void msc_map_free_owned(struct msc_map *m);
void *msc_map_get(const struct msc_map *m, const char *key);
/* Inserts or replaces. Returns 0 or -ENOMEM. */
int msc_map_put(struct msc_map *m, const char *key, void *value);
/* Removes the key; returns its value or NULL. */
void *msc_map_del(struct msc_map *m, const char *key);
size_t msc_map_len(const struct msc_map *m);

/*
 * Calls fn(arg, key, value) for every entry, in no order. fn must not
 * change the map.
 */
void msc_map_each(const struct msc_map *m,
    void (*fn)(void *arg, const char *key, void *value), void *arg);

#endif /* MSC_MAP_H */
