/*
 * msc_lease_renewer.h - the thread that renews the leases of the temporary
 * computers a driver holds (issue 17), one for every backend: a map of the
 * held computers, a round every third of the lease on a thread of its own
 * (never behind commands), on a fixed cadence (a slow round does not push
 * the next; after a stop it starts over instead of running the missed
 * rounds back to back), on the monotonic clock (a jump of the wall clock
 * changes nothing).
 *
 * Each round hands a snapshot of the held computers to the backend's
 * callback, which renews them (one by one or all at once) and sets each
 * item's outcome. A computer found gone is dropped, unless it was dropped
 * and held again while the round ran (its new hold is kept). A computer
 * released during a round is not held again by that round. Renewals that
 * keep failing for half a lease are logged once, until one succeeds.
 */
#ifndef MSC_LEASE_RENEWER_H
#define MSC_LEASE_RENEWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The sandbox's side where no helper of ours runs in it (a provider's): its
 * main process is `sh -c msc_lease_watch_sh msc-lease <lease in s>`, which
 * exits (ending the sandbox) once MSC_LEASE_FILE has not changed for the
 * lease; renewing touches the file. It counts its own 1 s sleeps, so a
 * jump of the sandbox's clock changes nothing, and it can only end late,
 * never early. An image without sh, stat or a writable /run gets
 * `sleep inf` instead (no lease: ending a computer by mistake is worse
 * than an orphan).
 */
#define MSC_LEASE_FILE "/run/msc-lease"
extern const char msc_lease_watch_sh[];

#define MSC_LEASE_MIN_PERIOD_MS 250
#define MSC_LEASE_MAX_ROUND 4096        /* computers renewed per round */

enum msc_lease_outcome {
	MSC_LEASE_RENEWED = 0,
	MSC_LEASE_FAILED,       /* tried again next round */
	MSC_LEASE_GONE,         /* nothing to hold any more: dropped */
};

/* One held computer in a round. */
struct msc_lease_item {
	char id[128];           /* the key it is held by */
	char ref[128];          /* the backend's name for it ("" if none) */
	uint64_t gen;           /* which hold of `id` (the renewer's) */
	enum msc_lease_outcome outcome; /* set by the callback */
	char err[160];          /* why, when FAILED (set by the callback) */
};

/*
 * Renews items[0..n): sets every item's outcome (and err when FAILED).
 * Runs on the renewer's thread; may block (bounded) and may call
 * msc_lease_renewer_drop/holds, not start or stop.
 */
typedef void (*msc_lease_renew_fn)(void *arg, struct msc_lease_item *items,
    size_t n);

struct msc_lease_renewer;

/*
 * Starts a renewer for leases of lease_ms: `who` (borrowed, static)
 * prefixes its log lines (the backend's name), renew(arg, ...) renews. 0 or a
 * negative errno.
 */
int msc_lease_renewer_start(struct msc_lease_renewer **rp, const char *who,
    uint32_t lease_ms, msc_lease_renew_fn renew, void *arg);
/* Stops the thread (waits for a round in flight) and frees. Accepts NULL. */
void msc_lease_renewer_stop(struct msc_lease_renewer *r);

/* The time between two rounds: a third of the lease, 250 ms at least. */
uint32_t msc_lease_renewer_period_ms(const struct msc_lease_renewer *r);

/*
 * Holds computer `id` (backend name `ref`, NULL for none) from now on;
 * held already under the same ref: nothing changes. 0 or -ENOMEM (then
 * logged). Accepts r NULL (0, nothing held).
 */
int msc_lease_renewer_hold(struct msc_lease_renewer *r, const char *id,
    const char *ref);
/* Not held any more (none of this id: nothing). Accepts r NULL. */
void msc_lease_renewer_drop(struct msc_lease_renewer *r, const char *id);
bool msc_lease_renewer_holds(struct msc_lease_renewer *r, const char *id);

#endif /* MSC_LEASE_RENEWER_H */
