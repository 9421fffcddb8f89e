/*
 * test_session_principals.c - principals (issue 27) in the session
 * service, through its wire interface over the real inventory and a fake
 * driver: another principal's session, handle, call or task is answered
 * as unknown whatever it presents; each named principal holds at most
 * its share of sessions, handles, calls and tasks, and one under its
 * share is served while another is at its own; a full table first ends
 * the least recently used session that costs nothing (never a handle,
 * never one with a computer or a call), the server's 100,000 as a
 * principal's share; a task's state names its handle only to whoever
 * holds it or had it minted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <unistd.h>

#include <cmocka.h>

#include "sess_harness.h"

#define D1 (sh.d[0])
#define ALICE "alice"
#define BOB "bob"
#define SESSIONS_SHARE 4
#define SANDBOXES_SHARE 2
#define CALLS_SHARE 3
#define TASKS_SHARE 2
#define SERVER_SESSIONS 100000  /* SESS_MAX_SESSIONS */

static int
setup(void **state)
{
	static const char *const flags[] = { "--max-principal-sessions", "4",
		"--max-principal-sandboxes", "2", "--max-principal-calls", "3",
		"--max-principal-tasks", "2", "--max-sandboxes", "100000", NULL };

	(void)state;
	return sh_start(1, flags);
}

/* Session/Open for `principal`: its code; the id or the message. */
static Msc__V1__Code
open_as(const char *principal, bool sandbox, char *id, char *msg,
    size_t msglen)
{
	Msc__V1__OpenRequest o = MSC__V1__OPEN_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	Msc__V1__Code code;
	char buf[512];

	o.client_name = "unit";
	o.idle_timeout_s = 300;
	o.sandbox = sandbox;
	o.principal = (char *)principal;
	code = msc_client_call_sync(sh.cli, &msc__v1__session__descriptor,
	    "Open", &o.base, SH_CALL_MS, &resp, msg != NULL ? msg : buf,
	    msg != NULL ? msglen : sizeof(buf));
	if (resp != NULL) {
		snprintf(id, SH_ID_SIZE, "%s",
		    ((Msc__V1__SessionRef *)resp)->session_id);
		protobuf_c_message_free_unpacked(resp, NULL);
	}
	return code;
}

static void
must_open(const char *principal, bool sandbox, char *id)
{
	assert_int_equal(open_as(principal, sandbox, id, NULL, 0),
	    MSC__V1__CODE__OK);
}

static Msc__V1__Code
ref_as(const char *method, const char *principal, const char *sid)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;

	ref.session_id = (char *)sid;
	ref.principal = (char *)principal;
	return sh_call(method, &ref.base, NULL);
}

/* TerminalExec "echo hi" of `principal` in sid; the message into msg. */
static Msc__V1__Code
exec_as(const char *principal, const char *sid, char *msg, size_t msglen)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	Msc__V1__Code code;
	char buf[512];

	r.session_id = (char *)sid;
	r.principal = (char *)principal;
	r.command = "echo hi";
	code = msc_client_call_sync(sh.cli, &msc__v1__session__descriptor,
	    "TerminalExec", &r.base, SH_CALL_MS, &resp,
	    msg != NULL ? msg : buf, msg != NULL ? msglen : sizeof(buf));
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	return code;
}

/* The same, answered later into ans; a task after 100 ms when `task`. */
static void
exec_async_as(const char *principal, const char *sid, bool mint, bool task,
    struct cu_answers *ans)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;

	r.session_id = (char *)sid;
	r.principal = (char *)principal;
	r.new_sandbox = mint;
	r.command = "sleep 30";
	r.call_key = "k";
	if (task)
		r.task_after_ms = 100;
	assert_int_equal(msc_client_call(sh.cli, &msc__v1__session__descriptor,
			     "TerminalExec", &r.base, SH_CALL_MS, cu_answered,
			     ans),
	    0);
}

static Msc__V1__Code
task_as(const char *method, const char *principal, const char *sid,
    const char *task_id, Msc__V1__Task **tp)
{
	Msc__V1__TaskRef ref = MSC__V1__TASK_REF__INIT;

	ref.session_id = (char *)sid;
	ref.principal = (char *)principal;
	ref.task_id = (char *)task_id;
	return sh_call(method, &ref.base, (ProtobufCMessage **)tp);
}

/* Answer i of ans: a task; its id into id[33], its handle into handle. */
static void
task_of(struct cu_answers *ans, int i, char id[33], char *handle)
{
	Msc__V1__TerminalExecReply *rep;

	assert_true(cu_wait_answers(ans, i + 1));
	assert_int_equal(ans->codes[i], MSC__V1__CODE__OK);
	rep = (Msc__V1__TerminalExecReply *)ans->resps[i];
	assert_non_null(rep->task);
	snprintf(id, 33, "%s", rep->task->task_id);
	if (handle != NULL)
		snprintf(handle, SH_ID_SIZE, "%s", rep->task->sandbox_handle);
}

/* Nothing of alice's session is bob's, nor the unnamed principal's. */
static void
another_principal_sees_nothing(void **state)
{
	Msc__V1__ComputerRequest cr = MSC__V1__COMPUTER_REQUEST__INIT;
	char a[SH_ID_SIZE], h[SH_ID_SIZE];

	(void)state;
	must_open(ALICE, false, a);
	must_open(ALICE, true, h);
	assert_int_equal(exec_as(ALICE, a, NULL, 0), MSC__V1__CODE__OK);
	for (int i = 0; i < 2; i++) {
		const char *who = i == 0 ? BOB : "";

		assert_int_equal(ref_as("Touch", who, a),
		    MSC__V1__CODE__NOT_FOUND);
		assert_int_equal(exec_as(who, a, NULL, 0),
		    MSC__V1__CODE__NOT_FOUND);
		assert_int_equal(exec_as(who, h, NULL, 0),
		    MSC__V1__CODE__NOT_FOUND);
		assert_int_equal(ref_as("ListComputers", who, a),
		    MSC__V1__CODE__NOT_FOUND);
		cr.session_id = h;
		cr.principal = (char *)who;
		cr.computer_id = "";
		assert_int_equal(sh_call("CreateComputer", &cr.base, NULL),
		    MSC__V1__CODE__NOT_FOUND);
		assert_int_equal(ref_as("Close", who, h),
		    MSC__V1__CODE__NOT_FOUND);
		assert_int_equal(ref_as("Close", who, a),
		    MSC__V1__CODE__NOT_FOUND);
	}
	/* Still alice's, whole. */
	assert_int_equal(ref_as("Touch", ALICE, a), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("ListComputers", ALICE, a), MSC__V1__CODE__OK);
	assert_int_equal(exec_as(ALICE, h, NULL, 0), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Close", ALICE, a), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Close", ALICE, h), MSC__V1__CODE__OK);
}

/*
 * Alice at her shares of handles, sessions and calls: each refusal names
 * its flag, an unused session makes room, a handle or a busy session
 * never does; bob is served all along.
 */
static void
shares_hold_one_principal_not_another(void **state)
{
	char h1[SH_ID_SIZE], h2[SH_ID_SIZE], s1[SH_ID_SIZE], s2[SH_ID_SIZE];
	char s3[SH_ID_SIZE], b[SH_ID_SIZE], x[SH_ID_SIZE], msg[512];
	struct cu_answers ans;

	(void)state;
	cu_answers_init(&ans);
	must_open(ALICE, true, h1);
	must_open(ALICE, true, h2);
	assert_int_equal(open_as(ALICE, true, x, msg, sizeof(msg)),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_non_null(strstr(msg, "--max-principal-sandboxes"));
	must_open(BOB, true, b);                /* bob's share is his own */
	assert_int_equal(ref_as("Close", BOB, b), MSC__V1__CODE__OK);

	/* 2 handles + 2 sessions = the share of 4; s1 used least lately. */
	must_open(ALICE, false, s1);
	must_open(ALICE, false, s2);
	assert_int_equal(ref_as("Touch", ALICE, s2), MSC__V1__CODE__OK);
	must_open(ALICE, false, s3);            /* s1 made room */
	assert_int_equal(ref_as("Touch", ALICE, s1), MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(ref_as("Touch", ALICE, s2), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Touch", ALICE, h1), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Touch", ALICE, h2), MSC__V1__CODE__OK);

	/* s2, s3 and h2 busy (calls in flight): nothing may be dropped. */
	fake_driver_hold(D1, FD_EXEC);
	exec_async_as(ALICE, s2, false, false, &ans);
	exec_async_as(ALICE, s3, false, false, &ans);
	exec_async_as(ALICE, h2, false, false, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 3, 10000));
	assert_int_equal(open_as(ALICE, false, x, msg, sizeof(msg)),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_non_null(strstr(msg, "--max-principal-sessions"));
	assert_int_equal(exec_as(ALICE, h1, msg, sizeof(msg)),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_non_null(strstr(msg, "--max-principal-calls"));
	/* Bob: a session, a handle, a call, while alice is at all three. */
	must_open(BOB, false, b);
	must_open(BOB, true, x);
	exec_async_as(BOB, b, false, false, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 4, 10000));
	fake_driver_let_go(D1, FD_EXEC);
	assert_true(cu_wait_answers(&ans, 4));
	for (int i = 0; i < 4; i++)
		assert_int_equal(ans.codes[i], MSC__V1__CODE__OK);
	cu_answers_fini(&ans);
	/* Room again: the calls ended. */
	assert_int_equal(exec_as(ALICE, h1, NULL, 0), MSC__V1__CODE__OK);
	for (int i = 0; i < 4; i++)
		(void)ref_as("Close", ALICE, (const char *[]){ h1, h2, s2,
		    s3 }[i]);
	assert_int_equal(ref_as("Close", BOB, b), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Close", BOB, x), MSC__V1__CODE__OK);
}

/*
 * A task id alone: another principal gets NOT_FOUND; its own principal
 * learns the handle only when the call minted it or it presents it.
 * Past alice's task share her call runs plain; bob still gets a task.
 */
static void
tasks_are_the_principals(void **state)
{
	Msc__V1__Task *t = NULL;
	struct cu_answers ans;
	char minted_id[33], held_id[33], bob_id[33], h[SH_ID_SIZE];
	char minted[SH_ID_SIZE];
	Msc__V1__TerminalExecReply *rep;

	(void)state;
	cu_answers_init(&ans);
	must_open(ALICE, true, h);
	fake_driver_hold(D1, FD_EXEC);
	exec_async_as(ALICE, "", true, true, &ans);     /* mints a handle */
	task_of(&ans, 0, minted_id, minted);
	assert_true(minted[0] != '\0');
	exec_async_as(ALICE, h, false, true, &ans);     /* in h, held */
	task_of(&ans, 1, held_id, NULL);

	assert_int_equal(task_as("GetTask", BOB, "", minted_id, NULL),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(task_as("CancelTask", BOB, "", held_id, NULL),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(task_as("GetTask", "", "", held_id, NULL),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(task_as("GetTask", ALICE, "", minted_id, &t),
	    MSC__V1__CODE__OK);
	assert_string_equal(t->sandbox_handle, minted);   /* made for her */
	protobuf_c_message_free_unpacked(&t->base, NULL);
	assert_int_equal(task_as("GetTask", ALICE, "", held_id, &t),
	    MSC__V1__CODE__OK);
	assert_string_equal(t->sandbox_handle, "");      /* the id alone */
	protobuf_c_message_free_unpacked(&t->base, NULL);
	assert_int_equal(task_as("GetTask", ALICE, h, held_id, &t),
	    MSC__V1__CODE__OK);
	assert_string_equal(t->sandbox_handle, h);       /* she holds it */
	protobuf_c_message_free_unpacked(&t->base, NULL);

	/* Alice at her share of 2: her next call is plain; bob's a task. */
	exec_async_as(ALICE, h, false, true, &ans);
	exec_async_as(BOB, "", true, true, &ans);
	assert_true(fake_driver_wait_held(D1, FD_EXEC, 4, 10000));
	sh_pause_ms(400);       /* past task_after_ms */
	assert_true(cu_wait_answers(&ans, 3));
	task_of(&ans, 2, bob_id, NULL);
	assert_int_equal(task_as("GetTask", BOB, "", bob_id, NULL),
	    MSC__V1__CODE__OK);
	fake_driver_let_go(D1, FD_EXEC);
	assert_true(cu_wait_answers(&ans, 4));
	rep = (Msc__V1__TerminalExecReply *)ans.resps[3];
	assert_int_equal(ans.codes[3], MSC__V1__CODE__OK);
	assert_null(rep->task);                 /* alice's, answered plain */
	/* Finished: the result names no handle to the id alone either. */
	for (int i = 0; i < 100; i++) {
		assert_int_equal(task_as("GetTask", ALICE, "", held_id, &t),
		    MSC__V1__CODE__OK);
		if (t->status == MSC__V1__TASK_STATUS__TASK_COMPLETED)
			break;
		protobuf_c_message_free_unpacked(&t->base, NULL);
		t = NULL;
		sh_pause_ms(50);
	}
	assert_non_null(t);
	assert_non_null(t->result);
	assert_string_equal(t->sandbox_handle, "");
	assert_string_equal(t->result->sandbox_handle, "");
	protobuf_c_message_free_unpacked(&t->base, NULL);
	cu_answers_fini(&ans);
	assert_int_equal(ref_as("Close", ALICE, h), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Close", ALICE, minted), MSC__V1__CODE__OK);
}

/* Opens an unnamed session, answered into `filling` (batches of 1000). */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int waiting, failed;
} filling = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

static void
filled(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&filling.mu);
	filling.failed += st->code != MSC__V1__CODE__OK;
	if (--filling.waiting == 0)
		pthread_cond_signal(&filling.cv);
	pthread_mutex_unlock(&filling.mu);
}

static void
open_many(int n)
{
	Msc__V1__OpenRequest o = MSC__V1__OPEN_REQUEST__INIT;

	o.client_name = "unit";
	o.idle_timeout_s = 300;
	while (n > 0) {
		int batch = n < 1000 ? n : 1000;

		filling.waiting = batch;
		for (int i = 0; i < batch; i++)
			assert_int_equal(msc_client_call(sh.cli,
					     &msc__v1__session__descriptor,
					     "Open", &o.base, SH_CALL_MS, filled,
					     NULL),
			    0);
		pthread_mutex_lock(&filling.mu);
		while (filling.waiting > 0)
			pthread_cond_wait(&filling.cv, &filling.mu);
		pthread_mutex_unlock(&filling.mu);
		assert_int_equal(filling.failed, 0);
		n -= batch;
	}
}

/*
 * The server's table of 100,000 full of sessions never used, with one
 * that holds a computer among the oldest: a new client is served, the
 * least recently used unused session made room, the one with a computer
 * stayed.
 */
static void
full_table_makes_room(void **state)
{
	char first[SH_ID_SIZE], used[SH_ID_SIZE], second[SH_ID_SIZE];
	char x[SH_ID_SIZE], msg[512];

	(void)state;
	must_open("", false, used);
	assert_int_equal(exec_as("", used, NULL, 0), MSC__V1__CODE__OK);
	must_open("", false, first);
	must_open("", false, second);
	open_many(SERVER_SESSIONS - 3);
	assert_int_equal(open_as(BOB, false, x, msg, sizeof(msg)),
	    MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Touch", "", first), MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(ref_as("Touch", "", used), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Touch", "", second), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Touch", BOB, x), MSC__V1__CODE__OK);
}

static int
setup_share_of_one(void **state)
{
	static const char *const flags[] = { "--max-principal-sessions", "1",
		"--max-sandboxes", "1", NULL };

	(void)state;
	return sh_start(1, flags);
}

/* TerminalExec "echo hi" of `principal` minting its handle: its code. */
static Msc__V1__Code
exec_minting_as(const char *principal)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	Msc__V1__Code code;
	char msg[512];

	r.session_id = "";
	r.principal = (char *)principal;
	r.new_sandbox = true;
	r.command = "echo hi";
	code = msc_client_call_sync(sh.cli, &msc__v1__session__descriptor,
	    "TerminalExec", &r.base, SH_CALL_MS, &resp, msg, sizeof(msg));
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	return code;
}

/*
 * A principal whose only session is ended to make room for its next one
 * (a share of one): its record outlives that end (it was freed there and
 * written after, then freed twice: ASan). And a principal with nothing
 * yet whose handle cannot be minted (the server's one handle is bob's)
 * is released once, not twice.
 */
static void
own_last_session_makes_room(void **state)
{
	char a1[SH_ID_SIZE], a2[SH_ID_SIZE], b[SH_ID_SIZE];

	(void)state;
	must_open(ALICE, false, a1);
	must_open(ALICE, false, a2);
	assert_int_equal(ref_as("Touch", ALICE, a1), MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(ref_as("Touch", ALICE, a2), MSC__V1__CODE__OK);
	assert_int_equal(exec_as(ALICE, a2, NULL, 0), MSC__V1__CODE__OK);
	assert_int_equal(ref_as("Close", ALICE, a2), MSC__V1__CODE__OK);
	must_open(ALICE, false, a1);
	assert_int_equal(ref_as("Close", ALICE, a1), MSC__V1__CODE__OK);

	must_open(BOB, true, b);
	for (int i = 0; i < 3; i++)
		assert_int_equal(exec_minting_as("carol"),
		    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_int_equal(ref_as("Close", BOB, b), MSC__V1__CODE__OK);
	/* Bob's handle ends, its release may take a moment: then carol's. */
	for (int i = 0; exec_minting_as("carol") != MSC__V1__CODE__OK; i++) {
		assert_true(i < 50);
		usleep(100 * 1000);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, sh_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(another_principal_sees_nothing),
		T(shares_hold_one_principal_not_another),
		T(tasks_are_the_principals),
		T(full_table_makes_room),
		cmocka_unit_test_setup_teardown(own_last_session_makes_room,
		    setup_share_of_one, sh_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
