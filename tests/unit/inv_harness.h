/*
 * inv_harness.h - the real inventory service over inproc:// with one to
 * three fake drivers (d1, d2, d3), and a client calling it over the wire.
 * Shared by the test_inventory_*.c files; header-only (static).
 */
#ifndef INV_HARNESS_H
#define INV_HARNESS_H

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core_util.h"
#include "driver.pb-c.h"
#include "fake_driver.h"
#include "inventory.h"
#include "inventory.pb-c.h"
#include "msc_fleet.h"

#define IH_INV_URL "inproc://ih-inventory"
#define IH_MAX_DRIVERS 3
#define IH_CALL_MS 15000

static const char *const ih_urls[IH_MAX_DRIVERS] = { "inproc://ih-d1",
	"inproc://ih-d2", "inproc://ih-d3" };
static const char *const ih_ids[IH_MAX_DRIVERS] = { "d1", "d2", "d3" };

static struct {
	struct msc_cfg cfg;
	struct msc_fleet *fleet;
	struct fake_driver *d[IH_MAX_DRIVERS];  /* NULL: never served */
	int nd;
	struct inv_service *inv;
	struct msc_client *cli;
} ih;

/* Starts nd drivers (those in `absent`, a bit mask, never listen). */
static inline int
ih_start(int nd, unsigned absent)
{
	char specs[IH_MAX_DRIVERS][64];
	const char *argv[2 * IH_MAX_DRIVERS + 1];
	int n = 0;

	memset(&ih, 0, sizeof(ih));
	ih.nd = nd;
	for (int i = 0; i < nd; i++) {
		snprintf(specs[i], sizeof(specs[i]), "%s=%s", ih_ids[i],
		    ih_urls[i]);
		argv[n++] = "--driver-url";
		argv[n++] = specs[i];
		if ((absent & (1u << i)) == 0 &&
		    fake_driver_start(ih_urls[i], ih_ids[i], &ih.d[i]) != 0)
			return -1;
	}
	argv[n] = NULL;
	if (cu_cfg(&ih.cfg, argv) != 0 ||
	    msc_fleet_open(&ih.cfg, NULL, &ih.fleet) != 0 ||
	    inv_start(IH_INV_URL, ih.fleet, &ih.inv) != 0 ||
	    msc_client_open(IH_INV_URL, NULL, &ih.cli) != 0)
		return -1;
	return 0;
}

static inline int
ih_stop(void **state)
{
	(void)state;
	/* After a failed assertion: let the services finish their calls. */
	for (int i = 0; i < ih.nd; i++)
		if (ih.d[i] != NULL)
			fake_driver_let_go_all(ih.d[i]);
	msc_client_close(ih.cli);
	inv_stop(ih.inv);
	msc_fleet_close(ih.fleet);
	for (int i = 0; i < ih.nd; i++)
		fake_driver_free(ih.d[i]);
	msc_cfg_fini(&ih.cfg);
	return 0;
}

/* A crash and a restart of the inventory: a new one, no records. */
static inline void
ih_restart_inventory(void)
{
	uint64_t conns = msc_client_connections(ih.cli);
	struct timespec pause = { 0, 10000000L };

	inv_stop(ih.inv);
	ih.inv = NULL;
	assert_int_equal(inv_start(IH_INV_URL, ih.fleet, &ih.inv), 0);
	/* The test's client dials the new one (in the background). */
	for (int i = 0; i < 1000 && msc_client_connections(ih.cli) == conns;
	     i++) {
		(void)msc_client_up(ih.cli);
		nanosleep(&pause, NULL);
	}
	assert_true(msc_client_connections(ih.cli) > conns);
}

static inline Msc__V1__Code
ih_call(const char *method, const ProtobufCMessage *req,
    ProtobufCMessage **respp)
{
	ProtobufCMessage *resp = NULL;
	char msg[512];
	Msc__V1__Code code;

	code = msc_client_call_sync(ih.cli, &msc__v1__inventory__descriptor,
	    method, req, IH_CALL_MS, &resp, msg, sizeof(msg));
	if (respp != NULL)
		*respp = resp;
	else if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	return code;
}

/* Acquire; *cp (may be NULL) the computer (caller frees). */
static inline Msc__V1__Code
ih_acquire(const char *id, bool temporary, const char *owner,
    Msc__V1__Computer **cp)
{
	Msc__V1__AcquireRequest a = MSC__V1__ACQUIRE_REQUEST__INIT;

	a.computer_id = (char *)id;
	a.temporary = temporary;
	a.owner = (char *)owner;
	return ih_call("Acquire", &a.base, (ProtobufCMessage **)cp);
}

static inline void
ih_acquire_async(const char *id, bool temporary, const char *owner,
    struct cu_answers *ans)
{
	Msc__V1__AcquireRequest a = MSC__V1__ACQUIRE_REQUEST__INIT;

	a.computer_id = (char *)id;
	a.temporary = temporary;
	a.owner = (char *)owner;
	assert_int_equal(msc_client_call(ih.cli,
			     &msc__v1__inventory__descriptor, "Acquire",
			     &a.base, IH_CALL_MS, cu_answered, ans),
	    0);
}

/* Release as the session sends it (temporary, driver: what it knows). */
static inline Msc__V1__Code
ih_release(const char *id, const char *owner, bool temporary,
    const char *driver)
{
	Msc__V1__ReleaseRequest r = MSC__V1__RELEASE_REQUEST__INIT;

	r.computer_id = (char *)id;
	r.owner = (char *)owner;
	r.temporary = temporary;
	r.driver = (char *)(driver != NULL ? driver : "");
	return ih_call("Release", &r.base, NULL);
}

static inline void
ih_free_computer(Msc__V1__Computer *c)
{
	if (c != NULL)
		protobuf_c_message_free_unpacked(&c->base, NULL);
}

#endif /* INV_HARNESS_H */
