/*
 * inventory.c - the service: its methods' table, Release (the last
 * owner's stops a temporary computer), and its start and stop. Acquire
 * is inventory_acquire.c, the lifecycle calls inventory_ops.c, the claims
 * after a restart inventory_owners.c; all of them call down into the
 * records (inventory_records.c).
 */
#include "inventory_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"
#include "inventory.pb-c.h"
#include "msc_log.h"
#include "msc_map.h"
#include "msc_rpc.h"

static void
stopped(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct msc_call *call = arg;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code != MSC__V1__CODE__OK) {
		msc_log_warn("inventory: stopping a computer failed: %s",
		    st->message);
		msc_call_fail_reason(call, st->code, st->reason, "%s",
		    st->message);
		return;
	}
	msc_call_reply(call, &e.base);
}

static void
h_release(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__ReleaseRequest *rr = (const void *)req;
	struct inv_service *s = state;
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	struct msc_client *driver = NULL;
	struct record *r;
	bool stop = false;

	(void)msc_call_bound_ms(call, INV_STEP_MS);
	pthread_mutex_lock(&s->mu);
	r = msc_map_get(s->records, rr->computer_id);
	if (r != NULL && r->ready) {
		inv_owner_del(r, rr->owner);
		if (r->n_owners == 0 || rr->dead) {
			/*
			 * The last owner left: temporary computers go; the
			 * driver may idle a permanent one (Fly stops the
			 * Machine, E2B pauses the sandbox, Docker keeps it).
			 */
			stop = r->n_owners == 0;
			driver = inv_driver_of(s, r);
			if (stop && r->temporary)
				inv_counts_removed_locked(s, r->driver);
			if (r->n_owners == 0) {
				msc_map_del(s->records, r->id);
				inv_record_free(r);
			}
		}
	}
	if (r == NULL && rr->temporary) {
		/* No record (this inventory restarted): trust the owner. */
		int i = msc_fleet_index(s->fleet, rr->driver);

		if (i >= 0) {
			driver = msc_fleet_client(s->fleet, (size_t)i);
			stop = true;
			inv_counts_removed_locked(s, i);
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (!stop) {
		msc_call_reply(call, &e.base);
		return;
	}
	ref.computer_id = rr->computer_id;
	if (msc_client_call(driver, &msc__v1__driver__descriptor, "Stop",
		&ref.base, msc_call_hop_ms(call, 0), stopped, call) != 0)
		msc_call_fail(call, MSC__V1__CODE__UNAVAILABLE,
		    "cannot reach the driver");
}

static const struct msc_method inventory_methods[] = {
	{ "Acquire", inv_h_acquire },
	{ "Release", h_release },
	{ "ForgetOwners", inv_h_forget_owners },
	{ "Claim", inv_h_claim },
	{ "List", inv_h_list },
	{ "Restart", inv_h_restart },
	{ "Reset", inv_h_reset },
	{ "Delete", inv_h_delete },
	{ "Snapshot", inv_h_snapshot },
	{ "Restore", inv_h_restore },
	{ "ListSnapshots", inv_h_snapshots },
	{ "DeleteSnapshot", inv_h_snapshot_delete },
	{ "ExposePort", inv_h_expose },
	{ NULL, NULL },
};

int
inv_start(const char *url, struct msc_fleet *fleet, struct inv_service **sp)
{
	struct inv_service *s = calloc(1, sizeof(*s));
	int rv;

	if (s == NULL)
		return -ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	inv_counts_init(s);
	if ((rv = msc_fleet_reopen(fleet, &s->fleet)) != 0 ||
	    (rv = msc_map_new(&s->records)) != 0 ||
	    (rv = msc_server_start(url, &msc__v1__inventory__descriptor,
		 inventory_methods, s, 4096, &s->srv)) != 0) {
		inv_stop(s);
		return rv;
	}
	*sp = s;
	return 0;
}

static void
free_record(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	inv_record_free(value);
}

/*
 * The driver calls end first (cut short: we are going), their callbacks
 * answering our open calls with the state still there; then no handler
 * runs once the server stops, and the clients close.
 */
void
inv_stop(struct inv_service *s)
{
	if (s == NULL)
		return;
	if (s->fleet != NULL)
		msc_fleet_shutdown(s->fleet);
	msc_server_stop(s->srv);
	inv_counts_stop(s);
	msc_fleet_close(s->fleet);
	if (s->records != NULL) {
		msc_map_each(s->records, free_record, NULL);
		msc_map_free(s->records);
	}
	pthread_mutex_destroy(&s->mu);
	free(s);
}
