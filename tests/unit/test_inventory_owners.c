/*
 * test_inventory_owners.c - the inventory service over inproc:// with a
 * fake driver, through its wire interface: who owns a computer, the
 * reference count of temporary computers (the last release stops one, a
 * permanent one is kept), lifecycle modes, a failed Stop reported so the
 * session sends the release again, and what the inventory learns or
 * loses without an Acquire: ForgetOwners (a restarted session service)
 * and Claim (after an inventory restart).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inv_harness.h"

#define D1 (ih.d[0])

static int
setup1(void **state)
{
	(void)state;
	return ih_start(1, 0);
}

/* Two owners of a temporary computer: the first release stops nothing. */
static void
temporary_kept_while_owned(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("shared", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("shared", true, "sb", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_release("shared", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_STOP), 0);
	assert_true(fake_driver_has(D1, "shared"));
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 1);
}

/* The last owner's release stops (removes) the temporary computer. */
static void
temporary_stopped_by_last_release(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("shared", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("shared", true, "sb", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_release("shared", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_release("shared", "sb", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "shared"), 1);
	assert_false(fake_driver_has(D1, "shared"));
}

/* One owner acquiring twice is one owner: one release is the last. */
static void
same_owner_counted_once(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("twice", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("twice", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_release("twice", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "twice"), 1);
	assert_false(fake_driver_has(D1, "twice"));
}

/* A release by a session that does not own it leaves the owners be. */
static void
release_by_stranger_ignored(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("mine", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_release("mine", "intruder", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_STOP), 0);
	assert_true(fake_driver_has(D1, "mine"));
}

/*
 * The last release of a permanent computer lets the driver idle it
 * (Stop), never deletes it; the next Acquire finds the same computer.
 */
static void
permanent_kept_after_last_release(void **state)
{
	Msc__V1__Computer *c = NULL;

	(void)state;
	assert_int_equal(ih_acquire("keeper", false, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_release("keeper", "sa", false, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_DELETE), 0);
	assert_true(fake_driver_has(D1, "keeper"));
	assert_int_equal(ih_acquire("keeper", false, "sb", &c),
	    MSC__V1__CODE__OK);
	assert_string_equal(c->computer_id, "keeper");
	assert_false(c->temporary);
	assert_string_equal(c->driver, "d1");
	ih_free_computer(c);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 1);
}

/* An Acquire in the other mode of a computer in use is refused. */
static void
mode_mismatch_in_use_refused(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("moded", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("moded", false, "sb", NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	/* The refused caller did not become an owner. */
	assert_int_equal(ih_release("moded", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "moded"), 1);
}

/* A computer the driver has as permanent, asked for as temporary. */
static void
mode_mismatch_on_driver_refused(void **state)
{
	(void)state;
	fake_driver_add(D1, "old-perm", false);
	assert_int_equal(ih_acquire("old-perm", true, "sa", NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 0);
	assert_true(fake_driver_has(D1, "old-perm"));
}

/* An id that is not a slug never reaches a driver. */
static void
bad_id_refused(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("no/such id", true, "sa", NULL),
	    MSC__V1__CODE__INVALID_ARGUMENT);
	assert_int_equal(fake_driver_calls(D1, FD_ATTACH), 0);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 0);
}

/*
 * The driver fails the Stop of a last release: the Release fails, so the
 * session sends it again; the inventory no longer has the record and
 * trusts what the owner says (temporary, on d1): the second Stop lands.
 */
static void
failed_stop_reported_and_retry_stops(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("sticky", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	fake_driver_fail_next(D1, FD_STOP, 1, MSC__V1__CODE__UNAVAILABLE);
	assert_int_equal(ih_release("sticky", "sa", true, "d1"),
	    MSC__V1__CODE__UNAVAILABLE);
	assert_true(fake_driver_has(D1, "sticky"));
	assert_int_equal(ih_release("sticky", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "sticky"), 2);
	assert_false(fake_driver_has(D1, "sticky"));
}

/*
 * ForgetOwners (the session service restarted with a new run prefix):
 * a temporary computer owned only by the earlier run is stopped.
 */
static void
forget_owners_stops_orphaned_temporary(void **state)
{
	Msc__V1__ForgetOwnersRequest f = MSC__V1__FORGET_OWNERS_REQUEST__INIT;

	(void)state;
	assert_int_equal(ih_acquire("orphan", true, "oldrun-a", NULL),
	    MSC__V1__CODE__OK);
	f.keep_prefix = "newrun";
	assert_int_equal(ih_call("ForgetOwners", &f.base, NULL),
	    MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "orphan"), 1);
	assert_false(fake_driver_has(D1, "orphan"));
}

/*
 * ForgetOwners keeps a temporary computer an owner of the current run
 * still holds, and a permanent one; the current owner's release is then
 * the last one and stops it.
 */
static void
forget_owners_keeps_current_and_permanent(void **state)
{
	Msc__V1__ForgetOwnersRequest f = MSC__V1__FORGET_OWNERS_REQUEST__INIT;

	(void)state;
	assert_int_equal(ih_acquire("both", true, "oldrun-a", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("both", true, "newrun-b", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("perm", false, "oldrun-a", NULL),
	    MSC__V1__CODE__OK);
	f.keep_prefix = "newrun";
	assert_int_equal(ih_call("ForgetOwners", &f.base, NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_release("both", "newrun-b", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "both"), 1);
	assert_false(fake_driver_has(D1, "both"));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "perm"), 0);
	assert_true(fake_driver_has(D1, "perm"));
}

static Msc__V1__Code
claim(const char *id, const char *owner, bool temporary, const char *driver)
{
	Msc__V1__ClaimRequest cr = MSC__V1__CLAIM_REQUEST__INIT;
	Msc__V1__Claim cl = MSC__V1__CLAIM__INIT;
	Msc__V1__Claim *ptr = &cl;

	cl.computer_id = (char *)id;
	cl.owner = (char *)owner;
	cl.temporary = temporary;
	cl.driver = (char *)driver;
	cr.claims = &ptr;
	cr.n_claims = 1;
	return ih_call("Claim", &cr.base, NULL);
}

/*
 * After an inventory restart, claims rebuild the owners: the first of
 * two claimed owners' releases stops nothing (without the claims the
 * inventory would trust it and stop a computer another session holds).
 */
static void
claims_rebuild_owners_after_restart(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("held", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("held", true, "sb", NULL),
	    MSC__V1__CODE__OK);
	ih_restart_inventory();
	assert_int_equal(claim("held", "sa", true, "d1"), MSC__V1__CODE__OK);
	assert_int_equal(claim("held", "sb", true, "d1"), MSC__V1__CODE__OK);
	assert_int_equal(ih_release("held", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_STOP), 0);
	assert_true(fake_driver_has(D1, "held"));
	assert_int_equal(ih_release("held", "sb", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "held"), 1);
	assert_false(fake_driver_has(D1, "held"));
}

/* A claimed record serves an Acquire without asking the driver. */
static void
claimed_record_serves_acquire(void **state)
{
	Msc__V1__Computer *c = NULL;

	(void)state;
	fake_driver_add(D1, "known", true);
	assert_int_equal(claim("known", "sa", true, "d1"), MSC__V1__CODE__OK);
	assert_int_equal(ih_acquire("known", true, "sb", &c),
	    MSC__V1__CODE__OK);
	assert_string_equal(c->driver, "d1");
	assert_true(c->temporary);
	ih_free_computer(c);
	assert_int_equal(fake_driver_calls(D1, FD_ATTACH), 0);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 0);
}

/* A claim naming a driver the inventory does not know adds nothing. */
static void
claim_unknown_driver_ignored(void **state)
{
	(void)state;
	fake_driver_add(D1, "elsewhere", true);
	assert_int_equal(claim("elsewhere", "sa", true, "nosuch"),
	    MSC__V1__CODE__OK);
	/* No record: the Acquire asks the driver. */
	assert_int_equal(ih_acquire("elsewhere", true, "sb", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_ATTACH, "elsewhere"), 1);
}

/*
 * A claim for a computer the driver is still finding is not applied:
 * UNAVAILABLE, so the session sends it again.
 */
static void
claim_for_busy_record_unavailable(void **state)
{
	static struct cu_answers ans;

	(void)state;
	cu_answers_init(&ans);
	fake_driver_add(D1, "busy", true);
	fake_driver_hold(D1, FD_ATTACH);
	ih_acquire_async("busy", true, "sa", &ans);
	assert_true(fake_driver_wait_held(D1, FD_ATTACH, 1, CU_WAIT_MS));
	assert_int_equal(claim("busy", "sb", true, "d1"),
	    MSC__V1__CODE__UNAVAILABLE);
	fake_driver_let_go(D1, FD_ATTACH);
	assert_true(cu_wait_answers(&ans, 1));
	assert_int_equal(ans.codes[0], MSC__V1__CODE__OK);
	/* Now it applies, and sb is a second owner. */
	assert_int_equal(claim("busy", "sb", true, "d1"), MSC__V1__CODE__OK);
	assert_int_equal(ih_release("busy", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_STOP), 0);
	cu_answers_fini(&ans);
}

/*
 * After an inventory restart with no claim, a release still stops the
 * temporary computer: the owner says it was temporary and on d1.
 */
static void
release_without_record_trusts_owner(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("lost", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	ih_restart_inventory();
	assert_int_equal(ih_release("lost", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "lost"), 1);
	assert_false(fake_driver_has(D1, "lost"));
}

/* ... but a permanent one is never stopped on such a release. */
static void
release_without_record_keeps_permanent(void **state)
{
	(void)state;
	assert_int_equal(ih_acquire("stay", false, "sa", NULL),
	    MSC__V1__CODE__OK);
	ih_restart_inventory();
	assert_int_equal(ih_release("stay", "sa", false, "d1"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_STOP), 0);
	assert_true(fake_driver_has(D1, "stay"));
}

/* Delete removes the computer and forgets its owners. */
static void
delete_forgets_owners(void **state)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;

	(void)state;
	assert_int_equal(ih_acquire("doomed", true, "sa", NULL),
	    MSC__V1__CODE__OK);
	ref.computer_id = "doomed";
	assert_int_equal(ih_call("Delete", &ref.base, NULL),
	    MSC__V1__CODE__OK);
	assert_false(fake_driver_has(D1, "doomed"));
	/* A later Acquire makes a new one rather than reusing a record. */
	assert_int_equal(ih_acquire("doomed", true, "sb", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_CREATE, "doomed"), 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup1, ih_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(temporary_kept_while_owned),
		T(temporary_stopped_by_last_release),
		T(same_owner_counted_once),
		T(release_by_stranger_ignored),
		T(permanent_kept_after_last_release),
		T(mode_mismatch_in_use_refused),
		T(mode_mismatch_on_driver_refused),
		T(bad_id_refused),
		T(failed_stop_reported_and_retry_stops),
		T(forget_owners_stops_orphaned_temporary),
		T(forget_owners_keeps_current_and_permanent),
		T(claims_rebuild_owners_after_restart),
		T(claimed_record_serves_acquire),
		T(claim_unknown_driver_ignored),
		T(claim_for_busy_record_unavailable),
		T(release_without_record_trusts_owner),
		T(release_without_record_keeps_permanent),
		T(delete_forgets_owners),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
