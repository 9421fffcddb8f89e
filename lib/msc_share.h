/*
 * msc_share.h - fair shares of a bounded resource by key: at most `n`
 * items of one key hold a slot at once; the key's others wait in order
 * (FIFO), not holding anything, until one of its slots is given back.
 * The driver uses it so that one session's long commands cannot take
 * every worker from the other sessions. Thread-safe.
 */
#ifndef MSC_SHARE_H
#define MSC_SHARE_H

#include <stddef.h>

struct msc_share;

/* n slots per key, at most max_waiting items waiting over all keys. */
int msc_share_new(int n, size_t max_waiting, struct msc_share **sp);

/* Sets the slots per key (n >= 1); items waiting keep waiting. */
void msc_share_set(struct msc_share *sh, int n);

/*
 * Asks a slot of `key` for `item` (borrowed until it is handed back by
 * msc_share_leave or msc_share_drain). Returns 1 when item holds a slot
 * now, 0 when it waits, -EAGAIN when too many wait, -ENOMEM.
 */
int msc_share_enter(struct msc_share *sh, const char *key, void *item);

/*
 * One slot of `key` is given back. Returns the next item of the key,
 * which now holds that slot (the caller starts it), or NULL.
 */
void *msc_share_leave(struct msc_share *sh, const char *key);

/* Takes every waiting item out and calls fn on each (at stop). */
void msc_share_drain(struct msc_share *sh, void (*fn)(void *item));

/* Frees the share (nothing may wait any more). Accepts NULL. */
void msc_share_free(struct msc_share *sh);

#endif /* MSC_SHARE_H */
