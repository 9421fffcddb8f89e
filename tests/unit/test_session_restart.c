/*
 * test_session_restart.c - restarts, with the real session and
 * inventory services over a fake driver on inproc://: a session service
 * that starts while an earlier run's sessions still own computers makes
 * the inventory stop their temporary ones (keeping permanent ones); a
 * session service that stops releases what its sessions hold; after an
 * inventory restart the session service claims its computers again
 * (Inventory/Claim), so a computer two sessions share survives the first
 * one's Close; a release sent while the inventory is down lands once it
 * is back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sess_harness.h"

#define D1 (sh.d[0])

static int
setup(void **state)
{
	(void)state;
	return sh_start(1, NULL);
}

/*
 * A second run of the session service starts (the first one is as good
 * as dead: its sessions will never be closed): its start tells the
 * inventory, which stops the earlier run's temporary computers and keeps
 * its permanent ones.
 */
static void
new_run_stops_earlier_runs_temporaries(void **state)
{
	struct sess_service *second = NULL;
	char sid[SH_ID_SIZE], tmp[64];

	(void)state;
	sh_open(sid, 0);
	sh_default_id(sid, tmp, sizeof(tmp));
	assert_int_equal(sh_create(sid, "perm", 0, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sess_start(&sh.cfg, SH_SESS2_URL, SH_INV_URL, sh.fleet,
			     &second),
	    0);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, tmp), 1);
	assert_false(fake_driver_has(D1, tmp));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "perm"), 0);
	assert_true(fake_driver_has(D1, "perm"));
	sess_stop(second);
}

/* A session service that stops ends its sessions: temporaries go. */
static void
stop_releases_every_session(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE], ida[64], idb[64];

	(void)state;
	sh_open(a, 0);
	sh_open(b, 0);
	sh_default_id(a, ida, sizeof(ida));
	sh_default_id(b, idb, sizeof(idb));
	assert_int_equal(sh_create(a, "perm", 0, NULL), MSC__V1__CODE__OK);
	sess_stop(sh.sess);
	sh.sess = NULL;
	assert_false(fake_driver_has(D1, ida));
	assert_false(fake_driver_has(D1, idb));
	assert_true(fake_driver_has(D1, "perm"));
	assert_int_equal(fake_driver_calls(D1, FD_DELETE), 0);
}

/*
 * Whether the (restarted) inventory has a record of temporary computer
 * id: an Acquire of it as permanent is refused either way, but without
 * a record the inventory first asks the driver.
 */
static bool
inventory_knows(const char *id)
{
	Msc__V1__AcquireRequest a = MSC__V1__ACQUIRE_REQUEST__INIT;
	int before = fake_driver_calls(D1, FD_ATTACH);
	Msc__V1__Code code;

	a.computer_id = (char *)id;
	a.temporary = false;
	a.owner = "probe";
	code = sh_call_on(sh.inv_cli, &msc__v1__inventory__descriptor,
	    "Acquire", &a.base, NULL);
	return code == MSC__V1__CODE__FAILED_PRECONDITION &&
	    fake_driver_calls(D1, FD_ATTACH) == before;
}

/*
 * The inventory restarts and loses its records; the session service
 * sees a new connection and claims what its sessions hold: a temporary
 * computer stays its session's alone (another is refused), and its Close
 * removes it.
 */
static void
claims_after_inventory_restart_keep_exclusive_computer(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE];
	bool known = false;

	(void)state;
	sh_open(a, 0);
	sh_open(b, 0);
	assert_int_equal(sh_exec(a, "shared", 1, NULL), MSC__V1__CODE__OK);
	inv_stop(sh.inv);
	sh.inv = NULL;
	assert_int_equal(inv_start(SH_INV_URL, sh.fleet, &sh.inv), 0);
	/* The session service claims within a few sweeps (1 s each). */
	for (int i = 0; i < 100 && !known; i++) {
		known = inventory_knows("shared");
		if (!known)
			sh_pause_ms(100);
	}
	assert_true(known);
	assert_int_equal(sh_exec(b, "shared", 1, NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_int_equal(sh_exec(a, "shared", 1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_ref_call("Close", a), MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "shared"), 1);
	assert_false(fake_driver_has(D1, "shared"));
}

/*
 * The inventory is down when a session closes: the release fails, is
 * sent again while the inventory is away, and lands once it is back
 * (a restarted inventory with no record trusts the owner: temporary, on
 * d1); nothing is stopped before.
 */
static void
release_retried_across_inventory_outage(void **state)
{
	char sid[SH_ID_SIZE], id[64];

	(void)state;
	sh_open(sid, 0);
	sh_default_id(sid, id, sizeof(id));
	inv_stop(sh.inv);
	sh.inv = NULL;
	assert_int_equal(sh_ref_call("Close", sid), MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_STOP), 0);
	assert_true(fake_driver_has(D1, id));
	assert_int_equal(inv_start(SH_INV_URL, sh.fleet, &sh.inv), 0);
	/* Tries 1 s, 2 s, 4 s ... apart; each may wait 3 s for a link. */
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, 2 * CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, id), 1);
	assert_false(fake_driver_has(D1, id));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, sh_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(new_run_stops_earlier_runs_temporaries),
		T(stop_releases_every_session),
		T(claims_after_inventory_restart_keep_exclusive_computer),
		T(release_retried_across_inventory_outage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
