/*
 * test_session_computers.c - the session service over the real
 * inventory over a fake driver, all over inproc://, through the Session
 * wire interface: sessions open and close, a session's default computer
 * made once for concurrent first calls, temporary computers shared by
 * sessions and stopped with the last of them, permanent ones kept,
 * lifecycle modes, per-session quotas (computers, commands in flight).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sess_harness.h"

#define D1 (sh.d[0])
#define NFIRST 8

static int
setup(void **state)
{
	(void)state;
	return sh_start(1, NULL);
}

static int
setup2(void **state)
{
	(void)state;
	return sh_start(2, NULL);
}

static int
setup_quota(void **state)
{
	static const char *const flags[] = { "--max-session-computers", "2",
		"--max-session-commands", "2", NULL };

	(void)state;
	return sh_start(1, flags);
}

static int
setup_pending(void **state)
{
	static const char *const flags[] = { "--max-pending-calls", "3",
		NULL };

	(void)state;
	return sh_start(1, flags);
}

/* Open gives a session that Touch knows until Close ends it. */
static void
open_touch_close(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE];

	(void)state;
	sh_open(a, 0);
	sh_open(b, 0);
	assert_string_not_equal(a, b);
	assert_int_equal(sh_ref_call("Touch", a), MSC__V1__CODE__OK);
	assert_int_equal(sh_ref_call("Close", a), MSC__V1__CODE__OK);
	assert_int_equal(sh_ref_call("Touch", a), MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(sh_ref_call("Close", a), MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(sh_ref_call("Touch", b), MSC__V1__CODE__OK);
}

/* Commands and lifecycle calls of an unknown session: NOT_FOUND. */
static void
unknown_session_not_found(void **state)
{
	(void)state;
	assert_int_equal(sh_exec("no-such-session", NULL, -1, NULL),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(sh_create("no-such-session", "x", -1, NULL),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 0);
	assert_int_equal(fake_driver_calls(D1, FD_EXEC), 0);
}

/* A command that fails validation reaches neither inventory nor driver. */
static void
invalid_command_refused_before_any_computer(void **state)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	char sid[SH_ID_SIZE];

	(void)state;
	sh_open(sid, 0);
	r.session_id = sid;             /* neither command nor args */
	assert_int_equal(sh_call("TerminalExec", &r.base, NULL),
	    MSC__V1__CODE__INVALID_ARGUMENT);
	r.command = "true";
	r.has_timeout = true;
	r.timeout = 0;
	assert_int_equal(sh_call("TerminalExec", &r.base, NULL),
	    MSC__V1__CODE__INVALID_ARGUMENT);
	assert_int_equal(fake_driver_calls(D1, FD_ATTACH), 0);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 0);
}

/*
 * The first commands of a session, sent at once while its default
 * computer is being made: one computer, made once, every command run
 * on it.
 */
static void
concurrent_first_calls_share_one_default(void **state)
{
	static struct cu_answers ans;
	char sid[SH_ID_SIZE];
	const char *first;

	(void)state;
	cu_answers_init(&ans);
	sh_open(sid, 0);
	fake_driver_hold(D1, FD_CREATE);
	for (int i = 0; i < NFIRST; i++)
		sh_exec_async(sid, NULL, &ans);
	assert_true(fake_driver_wait_held(D1, FD_CREATE, 1, CU_WAIT_MS));
	fake_driver_let_go(D1, FD_CREATE);
	assert_true(cu_wait_answers(&ans, NFIRST));
	assert_int_equal(cu_count_code(&ans, MSC__V1__CODE__OK), NFIRST);
	first = ((Msc__V1__TerminalExecReply *)ans.resps[0])->computer_id;
	for (int i = 1; i < NFIRST; i++)
		assert_string_equal(
		    ((Msc__V1__TerminalExecReply *)ans.resps[i])->computer_id,
		    first);
	assert_true(((Msc__V1__TerminalExecReply *)ans.resps[0])->temporary);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 1);
	assert_int_equal(fake_driver_calls_for(D1, FD_EXEC, first), NFIRST);
	cu_answers_fini(&ans);
}

/* Each session has a default computer of its own. */
static void
sessions_get_distinct_defaults(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE], ida[64], idb[64], again[64];

	(void)state;
	sh_open(a, 0);
	sh_open(b, 0);
	sh_default_id(a, ida, sizeof(ida));
	sh_default_id(b, idb, sizeof(idb));
	sh_default_id(a, again, sizeof(again));
	assert_string_not_equal(ida, idb);
	assert_string_equal(ida, again);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 2);
}

/* Close releases the session's temporary default: it is removed. */
static void
close_stops_temporary_default(void **state)
{
	char sid[SH_ID_SIZE], id[64];

	(void)state;
	sh_open(sid, 0);
	sh_default_id(sid, id, sizeof(id));
	assert_true(fake_driver_has(D1, id));
	assert_int_equal(sh_ref_call("Close", sid), MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, id), 1);
	assert_false(fake_driver_has(D1, id));
}

/*
 * A temporary computer is its session's alone: another session naming
 * its id is refused (the id is no capability), cannot restart, reset or
 * delete it either, and gets the id only once the first one let it go.
 */
static void
temporary_exclusive_to_its_session(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE];

	(void)state;
	sh_open(a, 0);
	sh_open(b, 0);
	assert_int_equal(sh_exec(a, "shared", 1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_exec(b, "shared", 1, NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_int_equal(sh_create(b, "shared", 1, NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_int_equal(sh_delete(b, "shared"),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_true(fake_driver_has(D1, "shared"));
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 1);
	assert_int_equal(sh_exec(a, "shared", 1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_ref_call("Close", a), MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_int_equal(fake_driver_calls_for(D1, FD_STOP, "shared"), 1);
	assert_false(fake_driver_has(D1, "shared"));
	assert_int_equal(sh_exec(b, "shared", 1, NULL), MSC__V1__CODE__OK);
}

/*
 * A permanent computer outlives the session: after Close it is still
 * there (never deleted), and a later session gets the same one back.
 */
static void
permanent_kept_after_close(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE];
	Msc__V1__Computer *c = NULL;

	(void)state;
	sh_open(a, 0);
	assert_int_equal(sh_create(a, "keeper", 0, &c), MSC__V1__CODE__OK);
	assert_false(c->temporary);
	protobuf_c_message_free_unpacked(&c->base, NULL);
	assert_int_equal(sh_exec(a, "keeper", 0, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_ref_call("Close", a), MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_DELETE), 0);
	assert_true(fake_driver_has(D1, "keeper"));
	sh_open(b, 0);
	assert_int_equal(sh_exec(b, "keeper", 0, NULL), MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 1);
}

/* One session asking for its own computer in the other mode. */
static void
mode_mismatch_in_session_refused(void **state)
{
	char sid[SH_ID_SIZE];

	(void)state;
	sh_open(sid, 0);
	assert_int_equal(sh_exec(sid, "moded", 1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_exec(sid, "moded", 0, NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_int_equal(sh_create(sid, "moded", 0, NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_int_equal(fake_driver_calls_for(D1, FD_EXEC, "moded"), 1);
}

/* Another session asking for a computer in use in the other mode. */
static void
mode_mismatch_across_sessions_refused(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE];

	(void)state;
	sh_open(a, 0);
	sh_open(b, 0);
	assert_int_equal(sh_exec(a, "moded", 1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_exec(b, "moded", 0, NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	/* b never became an owner: a's Close is the last release. */
	assert_int_equal(sh_ref_call("Close", a), MSC__V1__CODE__OK);
	assert_true(fake_driver_wait_calls(D1, FD_STOP, 1, CU_WAIT_MS));
	assert_false(fake_driver_has(D1, "moded"));
}

/*
 * A computer that died under a command (ABORTED) is forgotten: the next
 * command of the session asks the inventory (and so the driver) again.
 */
static void
aborted_computer_forgotten(void **state)
{
	char sid[SH_ID_SIZE], id[64];
	int asked;

	(void)state;
	sh_open(sid, 0);
	sh_default_id(sid, id, sizeof(id));
	asked = fake_driver_calls(D1, FD_ATTACH) +
	    fake_driver_calls(D1, FD_CREATE);
	assert_int_equal(sh_exec(sid, NULL, -1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls(D1, FD_ATTACH) +
		fake_driver_calls(D1, FD_CREATE),
	    asked);
	fake_driver_fail_next(D1, FD_EXEC, 1, MSC__V1__CODE__ABORTED);
	assert_int_equal(sh_exec(sid, NULL, -1, NULL), MSC__V1__CODE__ABORTED);
	assert_int_equal(sh_exec(sid, NULL, -1, NULL), MSC__V1__CODE__OK);
	assert_true(fake_driver_calls(D1, FD_ATTACH) +
		fake_driver_calls(D1, FD_CREATE) >
	    asked);
}

/*
 * The driver that has a session's computer goes down: its commands
 * answer unavailable, for this session and for another one naming it,
 * and no second computer is made on the driver that is up.
 */
static void
down_driver_commands_unavailable(void **state)
{
	Msc__V1__TerminalExecReply *rep = NULL;
	char a[SH_ID_SIZE], b[SH_ID_SIZE], id[64];

	(void)state;
	fake_driver_add(sh.d[0], "busy-1", true);
	sh_open(a, 0);
	sh_open(b, 0);
	assert_int_equal(sh_exec(a, NULL, -1, &rep), MSC__V1__CODE__OK);
	snprintf(id, sizeof(id), "%s", rep->computer_id);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	assert_true(fake_driver_has(sh.d[1], id));
	fake_driver_down(sh.d[1]);
	assert_int_equal(sh_exec(a, NULL, -1, NULL),
	    MSC__V1__CODE__UNAVAILABLE);
	/* a's temporary computer: refused to b, before any driver. */
	assert_int_equal(sh_exec(b, id, 1, NULL),
	    MSC__V1__CODE__FAILED_PRECONDITION);
	assert_int_equal(fake_driver_calls(sh.d[0], FD_CREATE), 0);
	assert_false(fake_driver_has(sh.d[0], id));
}

/* The driver sees a per-session tag as the owner, never the id. */
static void
exec_owner_is_a_tag_not_the_session_id(void **state)
{
	char a[SH_ID_SIZE], b[SH_ID_SIZE], tag_a[64], tag[64];

	(void)state;
	sh_open(a, 0);
	sh_open(b, 0);
	assert_int_equal(sh_exec(a, NULL, -1, NULL), MSC__V1__CODE__OK);
	fake_driver_last_owner(D1, tag_a, sizeof(tag_a));
	assert_true(tag_a[0] != '\0');
	assert_null(strstr(a, tag_a));
	assert_int_equal(sh_exec(b, NULL, -1, NULL), MSC__V1__CODE__OK);
	fake_driver_last_owner(D1, tag, sizeof(tag));
	assert_string_not_equal(tag, tag_a);
	assert_int_equal(sh_exec(a, NULL, -1, NULL), MSC__V1__CODE__OK);
	fake_driver_last_owner(D1, tag, sizeof(tag));
	assert_string_equal(tag, tag_a);
}

/*
 * --max-session-computers 2: a third computer is refused (create or
 * command) without reaching the driver; deleting one makes room.
 */
static void
computer_quota_enforced(void **state)
{
	char sid[SH_ID_SIZE], other[SH_ID_SIZE];

	(void)state;
	sh_open(sid, 0);
	assert_int_equal(sh_create(sid, "c1", -1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_create(sid, "c2", -1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_create(sid, "c3", -1, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_int_equal(sh_exec(sid, "c3", -1, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_int_equal(sh_exec(sid, NULL, -1, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 2);
	/* Computers it holds still run commands. */
	assert_int_equal(sh_exec(sid, "c1", -1, NULL), MSC__V1__CODE__OK);
	/* The quota is per session. */
	sh_open(other, 0);
	assert_int_equal(sh_exec(other, "c3", -1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_delete(sid, "c1"), MSC__V1__CODE__OK);
	assert_int_equal(sh_create(sid, "c4", -1, NULL), MSC__V1__CODE__OK);
}

/*
 * --max-session-commands 2: with two commands running, a third one of
 * the same session is refused at once; another session's is not.
 */
static void
command_quota_enforced(void **state)
{
	static struct cu_answers ans;
	char sid[SH_ID_SIZE], other[SH_ID_SIZE], id[64];

	(void)state;
	cu_answers_init(&ans);
	sh_open(sid, 0);
	sh_open(other, 0);
	sh_default_id(sid, id, sizeof(id));
	fake_driver_hold(D1, FD_EXEC);
	sh_exec_async(sid, NULL, &ans);
	sh_exec_async(sid, NULL, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 2, CU_WAIT_MS));
	assert_int_equal(sh_exec(sid, NULL, -1, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	sh_exec_async(other, NULL, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 3, CU_WAIT_MS));
	fake_driver_let_go(D1, FD_EXEC);
	assert_true(cu_wait_answers(&ans, 3));
	assert_int_equal(cu_count_code(&ans, MSC__V1__CODE__OK), 3);
	/* Finished commands free their slots. */
	assert_int_equal(sh_exec(sid, NULL, -1, NULL), MSC__V1__CODE__OK);
	/* A lifecycle call counts too: two commands, then no create. */
	fake_driver_hold(D1, FD_EXEC);
	sh_exec_async(sid, NULL, &ans);
	sh_exec_async(sid, NULL, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 2, CU_WAIT_MS));
	assert_int_equal(sh_create(sid, "c9", -1, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	fake_driver_let_go(D1, FD_EXEC);
	assert_true(cu_wait_answers(&ans, 5));
	assert_int_equal(sh_create(sid, "c9", -1, NULL), MSC__V1__CODE__OK);
	cu_answers_fini(&ans);
}

/*
 * --max-pending-calls 3: with three commands running over two sessions,
 * the server refuses a fourth call of any session (a new sandbox handle
 * is not even minted for it), and takes calls again once they finish.
 */
static void
server_pending_cap_enforced(void **state)
{
	static struct cu_answers ans;
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	char a[SH_ID_SIZE], b[SH_ID_SIZE], id[64];

	(void)state;
	cu_answers_init(&ans);
	sh_open(a, 0);
	sh_open(b, 0);
	sh_default_id(a, id, sizeof(id));
	sh_default_id(b, id, sizeof(id));
	fake_driver_hold(D1, FD_EXEC);
	sh_exec_async(a, NULL, &ans);
	sh_exec_async(a, NULL, &ans);
	sh_exec_async(b, NULL, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 3, CU_WAIT_MS));
	assert_int_equal(sh_exec(b, NULL, -1, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_int_equal(sh_create(a, "c9", -1, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	r.command = "true";
	r.new_sandbox = true;
	r.session_id = "";
	assert_int_equal(sh_call("TerminalExec", &r.base, NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	fake_driver_let_go(D1, FD_EXEC);
	assert_true(cu_wait_answers(&ans, 3));
	assert_int_equal(cu_count_code(&ans, MSC__V1__CODE__OK), 3);
	assert_int_equal(sh_exec(b, NULL, -1, NULL), MSC__V1__CODE__OK);
	assert_int_equal(sh_create(a, "c9", -1, NULL), MSC__V1__CODE__OK);
	cu_answers_fini(&ans);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, sh_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(open_touch_close),
		T(unknown_session_not_found),
		T(invalid_command_refused_before_any_computer),
		T(concurrent_first_calls_share_one_default),
		T(sessions_get_distinct_defaults),
		T(close_stops_temporary_default),
		T(temporary_exclusive_to_its_session),
		T(permanent_kept_after_close),
		T(mode_mismatch_in_session_refused),
		T(mode_mismatch_across_sessions_refused),
		T(aborted_computer_forgotten),
		T(exec_owner_is_a_tag_not_the_session_id),
		cmocka_unit_test_setup_teardown(down_driver_commands_unavailable,
		    setup2, sh_stop),
		cmocka_unit_test_setup_teardown(computer_quota_enforced,
		    setup_quota, sh_stop),
		cmocka_unit_test_setup_teardown(command_quota_enforced,
		    setup_quota, sh_stop),
		cmocka_unit_test_setup_teardown(server_pending_cap_enforced,
		    setup_pending, sh_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
