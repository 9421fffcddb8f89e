/* inventory_int.h - state shared by the inventory service's files. */
#ifndef INV_INVENTORY_INT_H
#define INV_INVENTORY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "driver.pb-c.h"
#include "inventory.h"
#include "msc_map.h"
#include "msc_rpc.h"
#include "msc_slug.h"

#define INV_DRIVER_TIMEOUT_MS 660000   /* an image pull may be slow */
#define INV_OP_TIMEOUT_MS 120000
#define INV_MAX_WAITERS 4096

struct waiter {
	struct msc_call *call;
	bool temporary;
	char owner[64];
	struct waiter *next;
};

struct record {
	char id[MSC_SLUG_MAX + 1];
	bool ready;              /* false while the driver works on it */
	bool temporary;
	Msc__V1__Computer *computer;   /* the driver's answer (owned) */
	char **owners;
	size_t n_owners;
	struct waiter *waiters;  /* Acquire calls waiting for the driver */
	size_t n_waiters;
};

struct inv_service {
	pthread_mutex_t mu;
	struct msc_map *records;  /* id -> struct record */
	struct msc_client *driver;
	struct msc_server *srv;
};

/* Frees a record (not in the map any more). */
void inv_record_free(struct record *r);

/* inventory_ops.c: the lifecycle operations and the merged list. */
void inv_h_list(void *state, struct msc_call *call, const ProtobufCMessage *req);
void inv_h_restart(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_reset(void *state, struct msc_call *call,
    const ProtobufCMessage *req);
void inv_h_delete(void *state, struct msc_call *call,
    const ProtobufCMessage *req);

#endif /* INV_INVENTORY_INT_H */
