/*
 * msc_driver_known.h - what a driver remembers of the computers it has
 * seen: computer id -> one fixed-size record of the backend's (a machine
 * id, a sandbox's token). Thread-safe. Records are copied in and out, so
 * no caller holds a pointer into the cache; a record is wiped
 * (explicit_bzero) when it goes, as it may hold a secret.
 */
#ifndef MSC_DRIVER_KNOWN_H
#define MSC_DRIVER_KNOWN_H

#include <stdbool.h>
#include <stddef.h>

struct msc_known;

/* A cache of records of `size` bytes. 0 or -ENOMEM; *kp on success. */
int msc_known_new(size_t size, struct msc_known **kp);

/* Wipes and frees every record, then the cache. Accepts NULL. */
void msc_known_free(struct msc_known *k);

/* Copies rec (borrowed) as id's record, replacing any. 0 or -ENOMEM. */
int msc_known_put(struct msc_known *k, const char *id, const void *rec);

/* Copies id's record into rec; false (rec untouched) when unknown. */
bool msc_known_get(struct msc_known *k, const char *id, void *rec);

/*
 * Calls fn(rec, arg) on id's record under the cache's lock, so several
 * fields change at once; with `create`, an unknown id first gets a
 * zeroed record. fn must not call into the cache. 0, -ENOENT (unknown,
 * without create) or -ENOMEM.
 */
int msc_known_update(struct msc_known *k, const char *id, bool create,
    void (*fn)(void *rec, void *arg), void *arg);

/* Wipes and drops id's record, if any. */
void msc_known_forget(struct msc_known *k, const char *id);

#endif /* MSC_DRIVER_KNOWN_H */
