/* inventory_int.h - state shared by the inventory service's files. */
#ifndef INV_INVENTORY_INT_H
#define INV_INVENTORY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "driver.pb-c.h"
#include "inventory.h"
#include "msc_fleet.h"
#include "msc_map.h"
#include "msc_principal.h"
#include "msc_rpc.h"
#include "msc_slug.h"

/*
 * Deadlines flow down from the caller (the session service): each call to
 * a driver made on a caller's behalf gets the time the caller has left,
 * less a margin to answer in (msc_call_hop_ms), so that nothing runs on
 * for minutes below a caller that gave up. A caller that sets no deadline
 * gets these bounds: an Acquire or a lifecycle call may pull an image.
 */
#define INV_STEP_MS 660000
#define INV_LIST_MS 30000       /* a List or ListSnapshots of every driver */
#define INV_MAX_WAITERS 4096
/* A Stop made on nobody's behalf (waits behind the computer's lane). */
#define INV_STOP_TIMEOUT_MS 600000
#define INV_ID_DRAWS 8      /* random ids tried before giving up */

struct waiter {
	struct msc_call *call;
	bool temporary;
	bool exclusive;
	char owner[64];
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];      /* its tag */
	SLIST_ENTRY(waiter) link;       /* in its record's waiters */
};

/*
 * A record's lifetime (the rule every callback here follows): a record
 * that is not ready belongs to the one operation finding or making it;
 * nothing else frees it or changes its computer, and that operation ends
 * by settle(), after which it does not touch the record again. A ready
 * record may be freed by any holder of s->mu (the last Release, Delete,
 * ForgetOwners), so code that unlocked looks it up again by id.
 */
struct record {
	char id[MSC_SLUG_MAX + 1];
	bool ready;              /* false while the driver works on it */
	bool temporary;
	bool exclusive;          /* its owners acquired it exclusively */
	int driver;              /* fleet index of the driver that has it */
	Msc__V1__Computer *computer;   /* the driver's answer (owned) */
	char **owners;
	size_t n_owners;
	SLIST_HEAD(, waiter) waiters;   /* Acquire calls waiting for the driver */
	size_t n_waiters;
};

struct inv_service {
	pthread_mutex_t mu;
	struct msc_map *records;  /* id -> struct record */
	struct msc_fleet *fleet;  /* the drivers: clients of our own */
	int creating[MSC_FLEET_MAX];   /* creations under way per driver */
	struct msc_server *srv;
	/* inventory_counts.c: computers per driver, for placement. */
	long count[MSC_FLEET_MAX];
	bool count_known[MSC_FLEET_MAX];  /* reached by the last List */
	uint64_t counted_at_ms;         /* when the last List answered */
	uint64_t count_lists;           /* Lists made for counting */
	int count_refresh_ms;
	bool counting;                  /* a List for counting under way */
	int count_callbacks;            /* its answer being handed out */
	bool stopping;
	/* picks waiting for a List (inventory_counts.c) */
	SLIST_HEAD(inv_pick_waits, inv_pick_wait) pick_waits;
	pthread_cond_t counts_cv;
};

/*
 * inventory_counts.c: placement from counts kept here. fn(arg, i) runs
 * once (maybe before inv_counts_pick returns, never with s->mu held) with
 * the driver for a new computer, or -1 when none can be reached.
 */
typedef void (*inv_pick_fn)(void *arg, int driver);
void inv_counts_init(struct inv_service *s);
void inv_counts_pick(struct inv_service *s, inv_pick_fn fn, void *arg);
/* A Create on driver i answered `code`. Lock not held. */
void inv_counts_created(struct inv_service *s, int i, Msc__V1__Code code);
/* This inventory removes a computer from driver i (-1: none). Lock held. */
void inv_counts_removed_locked(struct inv_service *s, int i);
/* Waits for a List under way; no new one starts. */
void inv_counts_stop(struct inv_service *s);

/* inventory_fan.c: one call to every driver, one answer. */
struct inv_fan;
typedef void (*inv_fan_fn)(void *arg, struct inv_fan *f);

struct inv_fan_result {
	Msc__V1__Code code;
	Msc__V1__Reason reason;         /* REASON_PROVIDER: msg is the
	                                 * provider's, not for the agent */
	char msg[512];
	ProtobufCMessage *resp;         /* owned by the fan */
};

struct inv_fan {
	size_t n, left;
	pthread_mutex_t mu;
	inv_fan_fn done;
	void *arg;
	struct inv_fan_result r[MSC_FLEET_MAX];
};

/*
 * Calls `method` on every driver; done(arg, fan) runs once, on any
 * thread, when all have answered; it frees the fan with inv_fan_free().
 */
int inv_fan_out(struct inv_service *s, const char *method,
    const ProtobufCMessage *req, int timeout_ms, inv_fan_fn done, void *arg);
void inv_fan_free(struct inv_fan *f);
/* Index of the first OK answer, or -1. */
int inv_fan_first_ok(const struct inv_fan *f);
/* Index of the first answer that is neither OK nor NOT_FOUND, or -1. */
int inv_fan_first_error(const struct inv_fan *f);

/* inventory_acquire.c: the Acquire handler (the service's table). */
void inv_h_acquire(void *state, struct msc_call *call,
    const ProtobufCMessage *req);

/* inventory_records.c: a record and its owners (lock held for all). */
/* The client of the record's driver (borrowed from the fleet). */
struct msc_client *inv_driver_of(struct inv_service *s,
    const struct record *r);
/* Frees a record (not in the map any more). */
void inv_record_free(struct record *r);
/* Adds an owner to r unless it has it; 0 or -ENOMEM. */
int inv_owner_add(struct record *r, const char *owner);
/* Removes an owner from r (nothing when r has none of that name). */
void inv_owner_del(struct record *r, const char *owner);
/*
 * Whether r is a temporary computer that owners other than `owner` hold:
 * a sandbox handle's computer, which nobody else may attach, list or
 * operate on (naming its id is no capability).
 */
bool inv_held_by_other(const struct record *r, const char *owner);
bool inv_owner_has(const struct record *r, const char *owner);
#define INV_HELD_TEXT "Temporary computer already has an active sandbox_handle"
#define INV_NOT_OWNED_TEXT "Computer is not owned by this sandbox handle"

/* inventory_owners.c: owners lost with a session service, or claimed. */
void inv_h_forget_owners(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_claim(void *state, struct msc_call *call,
    const ProtobufCMessage *req);

/* inventory_ops.c: the lifecycle operations and the merged list. */
void inv_h_list(void *state, struct msc_call *call, const ProtobufCMessage *req);
void inv_h_restart(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_reset(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_delete(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
/* The snapshot calls (issue 31), passed on to the drivers. */
void inv_h_snapshot(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_restore(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_snapshots(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_expose(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_snapshot_delete(void *state, struct msc_call *call,
    const ProtobufCMessage *req);

#endif /* INV_INVENTORY_INT_H */
