/*
 * msc_fair.h - a bounded number of slots shared round-robin between keys
 * (the driver's command workers between principals). A key runs at most
 * its cap of the slots; past the cap, or when every slot is taken, its
 * items wait in order (FIFO), holding nothing, up to its queue bound.
 * When a slot frees, the waiting key that runs the fewest items gets it
 * (ties: the one served least recently), so one key with many items
 * cannot keep the others waiting behind them. Thread-safe.
 *
 * The empty key stands for the one principal of a server without
 * principals: it is alone, so it may take every slot and queue up to the
 * bound over all keys. Every other key takes at most `cap` slots, leaving
 * the rest to others, and queues at most `queue` items.
 */
#ifndef MSC_FAIR_H
#define MSC_FAIR_H

#include <stddef.h>

struct msc_fair;

/*
 * `slots` in all (>= 1); a named key runs at most `cap` of them and
 * queues at most `queue`; at most `max_queued` items wait over all keys.
 */
int msc_fair_new(int slots, int cap, size_t queue, size_t max_queued,
    struct msc_fair **fp);

/*
 * Asks a slot for `item` (borrowed until it runs or is drained) of `key`.
 * Returns 1 when item holds a slot now (the caller starts it), 0 when it
 * waits, -EBUSY when its key runs its cap and its queue is full, -EAGAIN
 * when too many items wait over all keys, -ENOMEM.
 */
int msc_fair_enter(struct msc_fair *f, const char *key, void *item);

/*
 * One slot of `key` is given back. Returns the item that now holds a
 * slot (of whichever key comes next; the caller starts it), or NULL.
 */
void *msc_fair_leave(struct msc_fair *f, const char *key);

/* What `key` holds and queues now (for messages and tests). */
void msc_fair_count(struct msc_fair *f, const char *key, int *running,
    size_t *queued);

/* Takes every waiting item out and calls fn on each (at stop). */
void msc_fair_drain(struct msc_fair *f, void (*fn)(void *item));

/* Frees it (nothing may wait any more). Accepts NULL. */
void msc_fair_free(struct msc_fair *f);

#endif /* MSC_FAIR_H */
