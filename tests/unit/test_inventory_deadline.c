/*
 * test_inventory_deadline.c - the inventory passes each caller's remaining
 * time on (issue 34): every call it makes to a driver on a caller's behalf
 * (Attach, Create, Stop, the lifecycle calls, List) carries at most what
 * the caller has left, less a margin, and a call whose caller gave up is
 * not left waiting below it. A caller without a deadline gets the
 * inventory's own bound. The real inventory over inproc:// with one fake
 * driver, through its wire interface.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "inv_harness.h"
#include "msc_time.h"

#define D1 (ih.d[0])

static int
setup1(void **state)
{
	(void)state;
	return ih_start(1, 0);
}

/* One call to the inventory with the caller's own deadline (0: none). */
static Msc__V1__Code
call_within(const char *method, const ProtobufCMessage *req, int timeout_ms)
{
	ProtobufCMessage *resp = NULL;
	char msg[512];
	Msc__V1__Code code;

	code = msc_client_call_sync(ih.cli, &msc__v1__inventory__descriptor,
	    method, req, timeout_ms, &resp, msg, sizeof(msg));
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	return code;
}

static Msc__V1__Code
acquire_within(const char *id, bool temporary, int timeout_ms)
{
	Msc__V1__AcquireRequest a = MSC__V1__ACQUIRE_REQUEST__INIT;

	a.computer_id = (char *)id;
	a.temporary = temporary;
	a.owner = "s1";
	return call_within("Acquire", &a.base, timeout_ms);
}

/* The hop's share: what is left less the margin, within the step. */
static void
hop_share(void **state)
{
	(void)state;
	assert_int_equal(msc_hop_ms(61000, 0), 60000);
	assert_int_equal(msc_hop_ms(61000, 5000), 5000);
	/* Little left: a quarter is kept to answer in. */
	assert_int_equal(msc_hop_ms(2000, 0), 1500);
	/* Nothing left: the hop fails at once, never waits forever. */
	assert_int_equal(msc_hop_ms(0, 0), 1);
	assert_int_equal(msc_hop_ms(-5, 660000), 1);
}

/* Attach (a named computer) and Create carry the caller's time. */
static void
acquire_passes_time_on(void **state)
{
	int left;

	(void)state;
	assert_int_equal(acquire_within("named", false, 4000),
	    MSC__V1__CODE__OK);
	left = fake_driver_last_left_ms(D1, FD_ATTACH);
	assert_true(left > 0 && left <= 3000);
	left = fake_driver_last_left_ms(D1, FD_CREATE);
	assert_true(left > 0 && left <= 3000);
	/* A new temporary computer: placed, then created in that time. */
	assert_int_equal(acquire_within("", true, 5000), MSC__V1__CODE__OK);
	left = fake_driver_last_left_ms(D1, FD_CREATE);
	assert_true(left > 0 && left <= 4000);
}

/* A caller without a deadline: the inventory's own bound (an image pull
 * may take minutes), not the 30 s of a call that names none. */
static void
no_deadline_gets_the_bound(void **state)
{
	int left;

	(void)state;
	assert_int_equal(acquire_within("unbounded", false, 0),
	    MSC__V1__CODE__OK);
	left = fake_driver_last_left_ms(D1, FD_CREATE);
	assert_true(left > 600000 && left <= 660000);
}

/* The lifecycle calls, Release's Stop and List carry it too. */
static void
lifecycle_passes_time_on(void **state)
{
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	Msc__V1__ListRequest lr = MSC__V1__LIST_REQUEST__INIT;
	Msc__V1__ReleaseRequest rr = MSC__V1__RELEASE_REQUEST__INIT;
	int left;

	(void)state;
	assert_int_equal(ih_acquire("life", true, "s1", NULL),
	    MSC__V1__CODE__OK);
	ref.computer_id = "life";
	ref.owner = "s1";
	assert_int_equal(call_within("Restart", &ref.base, 3000),
	    MSC__V1__CODE__OK);
	left = fake_driver_last_left_ms(D1, FD_RESTART);
	assert_true(left > 0 && left <= 2250);
	assert_int_equal(call_within("Reset", &ref.base, 200000),
	    MSC__V1__CODE__OK);
	left = fake_driver_last_left_ms(D1, FD_RESET);
	/* Longer than the fixed 120 s of before: the caller's time rules. */
	assert_true(left > 120000 && left <= 199000);
	lr.owner = "s1";
	assert_int_equal(call_within("List", &lr.base, 2000),
	    MSC__V1__CODE__OK);
	left = fake_driver_last_left_ms(D1, FD_LIST);
	assert_true(left > 0 && left <= 1500);
	rr.computer_id = "life";
	rr.owner = "s1";
	rr.temporary = true;
	rr.driver = "d1";
	assert_int_equal(call_within("Release", &rr.base, 3000),
	    MSC__V1__CODE__OK);
	left = fake_driver_last_left_ms(D1, FD_STOP);
	assert_true(left > 0 && left <= 2250);
}

/*
 * A caller that gives up: the inventory's own call below it ends about
 * then too, so the computer is free for the next caller within seconds
 * (before, its Attach waited 660 s and every later Acquire of that id
 * joined it).
 */
static void
gave_up_is_not_left_running(void **state)
{
	uint64_t t0;

	(void)state;
	fake_driver_hold(D1, FD_ATTACH);
	t0 = msc_now_ms();
	assert_int_equal(acquire_within("slow", false, 1000),
	    MSC__V1__CODE__DEADLINE_EXCEEDED);
	assert_true(msc_now_ms() - t0 < 3000);
	assert_true(fake_driver_wait_held(D1, FD_ATTACH, 1, 2000));
	/* The driver answers late, after the inventory stopped waiting. */
	usleep(1000 * 1000);
	fake_driver_let_go(D1, FD_ATTACH);
	/* The next caller gets its own Attach and its computer at once. */
	t0 = msc_now_ms();
	assert_int_equal(acquire_within("slow", false, 5000),
	    MSC__V1__CODE__OK);
	assert_true(msc_now_ms() - t0 < 3000);
	assert_int_equal(fake_driver_calls_for(D1, FD_ATTACH, "slow"), 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup1, ih_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hop_share),
		T(acquire_passes_time_on),
		T(no_deadline_gets_the_bound),
		T(lifecycle_passes_time_on),
		T(gave_up_is_not_left_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
