/*
 * test_session_tasks.c - MCP tasks in the session service, over the real
 * inventory and a fake driver that holds its Exec calls: a TerminalExec
 * with task_after_ms still running then answers with a task; GetTask is
 * bound to the task's owner (another session's id: NOT_FOUND, as an
 * unknown one) and gives the result once the command ends; a call that
 * ends first is a plain reply and leaves no task behind; CancelTask of a
 * command makes the task CANCELLED; past --max-session-tasks a call is plain.
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
	static const char *const flags[] = { "--max-session-tasks", "1", NULL };

	(void)state;
	return sh_start(1, flags);
}

static void
exec_as_task(const char *sid, const char *owner, struct cu_answers *ans)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;

	r.session_id = (char *)sid;
	r.command = "sleep 30";
	r.task_after_ms = 100;
	r.task_owner = (char *)owner;
	r.call_key = "7";
	assert_int_equal(msc_client_call(sh.cli, &msc__v1__session__descriptor,
			     "TerminalExec", &r.base, SH_CALL_MS, cu_answered,
			     ans),
	    0);
}

static Msc__V1__Code
task_call(const char *method, const char *sid, const char *task_id,
    Msc__V1__Task **tp)
{
	Msc__V1__TaskRef ref = MSC__V1__TASK_REF__INIT;

	ref.session_id = (char *)sid;
	ref.task_id = (char *)task_id;
	return sh_call(method, &ref.base, (ProtobufCMessage **)tp);
}

/* The task of the only answer in `ans`, its id copied into id[33]. */
static void
task_of(struct cu_answers *ans, char id[33])
{
	Msc__V1__TerminalExecReply *rep;

	assert_true(cu_wait_answers(ans, 1));
	assert_int_equal(ans->codes[0], MSC__V1__CODE__OK);
	rep = (Msc__V1__TerminalExecReply *)ans->resps[0];
	assert_non_null(rep->task);
	assert_int_equal(strlen(rep->task->task_id), 32);
	assert_int_equal(rep->task->status, MSC__V1__TASK_STATUS__TASK_WORKING);
	assert_true(rep->task->created_at_ms > 0);
	assert_true(rep->task->ttl_ms > 0);
	snprintf(id, 33, "%s", rep->task->task_id);
}

static Msc__V1__TaskStatus
wait_status(const char *sid, const char *id, Msc__V1__TaskStatus want)
{
	Msc__V1__Task *t = NULL;
	Msc__V1__TaskStatus st = MSC__V1__TASK_STATUS__TASK_WORKING;

	for (int i = 0; i < 100; i++) {
		assert_int_equal(task_call("GetTask", sid, id, &t),
		    MSC__V1__CODE__OK);
		st = t->status;
		protobuf_c_message_free_unpacked(&t->base, NULL);
		if (st == want)
			break;
		sh_pause_ms(50);
	}
	return st;
}

/* Promoted, owner-bound, and completed with the command's reply. */
static void
task_bound_to_owner_then_completed(void **state)
{
	struct cu_answers ans;
	char a[SH_ID_SIZE], b[SH_ID_SIZE], id[33];
	Msc__V1__Task *t = NULL;

	(void)state;
	cu_answers_init(&ans);
	sh_open(a, 0);
	sh_open(b, 0);
	fake_driver_hold(D1, FD_EXEC);
	exec_as_task(a, a, &ans);
	task_of(&ans, id);
	assert_int_equal(task_call("GetTask", b, id, NULL),
	    MSC__V1__CODE__NOT_FOUND);        /* another session's */
	assert_int_equal(task_call("GetTask", a, "0123456789abcdef0123456789"
	    "abcdef", NULL), MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(task_call("CancelTask", b, id, NULL),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(wait_status(a, id, MSC__V1__TASK_STATUS__TASK_WORKING),
	    MSC__V1__TASK_STATUS__TASK_WORKING);
	assert_int_equal(wait_status("", id, MSC__V1__TASK_STATUS__TASK_WORKING),
	    MSC__V1__TASK_STATUS__TASK_WORKING);     /* by the id alone */
	fake_driver_let_go(D1, FD_EXEC);
	assert_int_equal(wait_status(a, id,
	    MSC__V1__TASK_STATUS__TASK_COMPLETED),
	    MSC__V1__TASK_STATUS__TASK_COMPLETED);
	assert_int_equal(task_call("GetTask", a, id, &t), MSC__V1__CODE__OK);
	assert_non_null(t->result);
	assert_null(t->error);
	assert_string_equal(t->result->sandbox_handle, a);
	assert_true(t->updated_at_ms >= t->created_at_ms);
	protobuf_c_message_free_unpacked(&t->base, NULL);
	cu_answers_fini(&ans);
}

/* Ended before task_after_ms: a plain reply; the quota of 1 stays free. */
static void
fast_call_is_plain_and_leaves_no_task(void **state)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	Msc__V1__TerminalExecReply *rep = NULL;
	char a[SH_ID_SIZE];

	(void)state;
	sh_open(a, 0);
	r.session_id = a;
	r.command = "echo hi";
	r.task_after_ms = 5000;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sh_call("TerminalExec", &r.base,
				     (ProtobufCMessage **)&rep),
		    MSC__V1__CODE__OK);
		assert_null(rep->task);
		protobuf_c_message_free_unpacked(&rep->base, NULL);
	}
}

/*
 * Past --max-session-tasks 1, a call that may become a task runs as a
 * plain one: the session's tasks never block its commands.
 */
static void
quota_makes_a_second_call_plain(void **state)
{
	struct cu_answers ans;
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	Msc__V1__TerminalExecReply *rep = NULL;
	char a[SH_ID_SIZE], id[33];
	int execs;

	(void)state;
	cu_answers_init(&ans);
	sh_open(a, 0);
	fake_driver_hold(D1, FD_EXEC);
	exec_as_task(a, NULL, &ans);
	task_of(&ans, id);
	execs = fake_driver_calls(D1, FD_EXEC);
	fake_driver_let_go(D1, FD_EXEC);
	r.session_id = a;
	r.command = "echo hi";
	r.task_after_ms = 100;
	assert_int_equal(sh_call("TerminalExec", &r.base,
			     (ProtobufCMessage **)&rep),
	    MSC__V1__CODE__OK);
	assert_null(rep->task);
	protobuf_c_message_free_unpacked(&rep->base, NULL);
	assert_int_equal(fake_driver_calls(D1, FD_EXEC), execs + 1);
	cu_answers_fini(&ans);
}

/* CancelTask: the command is killed and the task ends CANCELLED. */
static void
cancel_makes_task_cancelled(void **state)
{
	struct cu_answers ans;
	char a[SH_ID_SIZE], id[33];
	Msc__V1__Task *t = NULL;

	(void)state;
	cu_answers_init(&ans);
	sh_open(a, 0);
	fake_driver_hold(D1, FD_EXEC);
	exec_as_task(a, NULL, &ans);
	task_of(&ans, id);
	assert_int_equal(task_call("CancelTask", "", id, NULL),
	    MSC__V1__CODE__OK);
	fake_driver_let_go(D1, FD_EXEC);   /* the fake has no Driver/Cancel */
	assert_int_equal(wait_status(a, id,
	    MSC__V1__TASK_STATUS__TASK_CANCELLED),
	    MSC__V1__TASK_STATUS__TASK_CANCELLED);
	assert_int_equal(task_call("CancelTask", a, id, &t), MSC__V1__CODE__OK);
	assert_int_equal(t->status, MSC__V1__TASK_STATUS__TASK_CANCELLED);
	assert_null(t->result);
	protobuf_c_message_free_unpacked(&t->base, NULL);
	cu_answers_fini(&ans);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, sh_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(task_bound_to_owner_then_completed),
		T(fast_call_is_plain_and_leaves_no_task),
		T(quota_makes_a_second_call_plain),
		T(cancel_makes_task_cancelled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
