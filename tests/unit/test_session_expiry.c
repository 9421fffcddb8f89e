/*
 * test_session_expiry.c - the session service over the real inventory
 * over a fake driver, all over inproc://: sessions idle past their
 * timeout end and release their computers, a command in flight keeps a
 * session alive, and a release the driver fails or is slow to confirm
 * is sent again until it is confirmed, without holding up the Close.
 * The session service sweeps once a second: these tests take seconds.
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
 * A session with a 1 s idle timeout ends on its own and its temporary
 * computer is removed; one without a timeout, as idle, stays.
 */
static void
idle_session_expires_and_releases(void **state)
{
	char brief[SH_ID_SIZE], forever[SH_ID_SIZE], id_brief[64], id_forever[64];

	(void)state;
	sh_open(forever, 0);
	sh_open(brief, 1);
	sh_default_id(forever, id_forever, sizeof(id_forever));
	sh_default_id(brief, id_brief, sizeof(id_brief));
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, id_brief), 1);
	assert_false(fake_driver_has(D1, id_brief));
	assert_int_equal(sh_ref_call("Touch", brief),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(sh_exec(brief, NULL, -1, NULL),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(sh_ref_call("Touch", forever), MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, id_forever), 0);
}

/*
 * A session whose command is still running does not expire: another
 * session, idle for less time, expires first (the clock of the test).
 */
static void
running_command_keeps_session(void **state)
{
	static struct cu_answers ans;
	char busy[SH_ID_SIZE], idle[SH_ID_SIZE], id[64];

	(void)state;
	cu_answers_init(&ans);
	sh_open(busy, 1);
	sh_default_id(busy, id, sizeof(id));
	fake_driver_hold(D1, FD_EXEC);
	sh_exec_async(busy, NULL, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 1, CU_WAIT_MS));
	sh_open(idle, 1);
	assert_int_equal(sh_create(idle, "idle-one", -1, NULL),
	    MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "idle-one"), 1);
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, id), 0);
	assert_int_equal(sh_ref_call("Touch", busy), MSC__V1__CODE__OK);
	fake_driver_let_go(D1, FD_EXEC);
	assert_true(cu_wait_answers(&ans, 1));
	assert_int_equal(ans.codes[0], MSC__V1__CODE__OK);
	cu_answers_fini(&ans);
}

/*
 * The driver fails the Stop of a session's last release twice: the
 * session sends the release again (1 s, then 2 s later) until the
 * computer is removed; Close does not wait for that.
 */
static void
release_retried_until_confirmed(void **state)
{
	char sid[SH_ID_SIZE], id[64];

	(void)state;
	sh_open(sid, 0);
	sh_default_id(sid, id, sizeof(id));
	fake_driver_fail_next(D1, FD_STOP, 2, MSC__V1__CODE__UNAVAILABLE);
	assert_int_equal(sh_ref_call("Close", sid), MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 3, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, id), 3);
	assert_false(fake_driver_has(D1, id));
}

/*
 * A slow removal: Close is answered (after its few seconds' wait) while
 * the Stop is still out; the release is not sent twice, and the
 * computer goes once the driver answers.
 */
static void
slow_release_does_not_hold_close(void **state)
{
	char sid[SH_ID_SIZE], id[64];

	(void)state;
	sh_open(sid, 0);
	sh_default_id(sid, id, sizeof(id));
	fake_driver_hold(D1, FD_STOP);
	assert_int_equal(sh_ref_call("Close", sid), MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_held(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_true(fake_driver_has(D1, id));
	fake_driver_let_go(D1, FD_STOP);
	assert_false(fake_driver_has(D1, id));
	assert_int_equal(fake_driver_calls(D1, FD_STOP), 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, sh_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(idle_session_expires_and_releases),
		T(running_command_keeps_session),
		T(release_retried_until_confirmed),
		T(slow_release_does_not_hold_close),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
