/* test_rpc.c - msc_rpc over inproc://: replies, errors, deadlines, and
 * many calls open at once answered out of order from another thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_rpc.h"
#include "msc_rpc_int.h"
#include "msc_reason.h"
#include "session.pb-c.h"

#define URL "inproc://test-rpc"
#define NCALLS 200

static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static struct msc_call *held[NCALLS];
static int nheld;

static void
h_open(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__OpenRequest *r = (const void *)req;
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;

	(void)state;
	ref.session_id = r->client_name;     /* echo */
	msc_call_reply(call, &ref.base);
}

static void
h_close(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	(void)state;
	(void)req;
	msc_call_fail(call, MSC__V1__CODE__NOT_FOUND, "no such %s", "session");
}

/*
 * Fails as a service does when one of its own calls to another broke on
 * the way (the status its client gave it, passed on).
 */
static void
h_describe(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	char msg[256];

	(void)state;
	(void)req;
	msc_call_fail_reason(call, MSC__V1__CODE__UNAVAILABLE,
	    MSC__V1__REASON__REASON_MAYBE_RAN, "%s",
	    msc_reason_call_failed_message(MSC__V1__REASON__REASON_MAYBE_RAN,
		"Connection reset", msg, sizeof(msg)));
}

/* Keeps the call open; a test thread answers it later. */
static void
h_exec(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	(void)state;
	(void)req;
	pthread_mutex_lock(&held_mu);
	held[nheld++] = call;
	pthread_mutex_unlock(&held_mu);
}

static const struct msc_method methods[] = {
	{ "Open", h_open },
	{ "Close", h_close },
	{ "Touch", h_close },
	{ "TerminalExec", h_exec },
	{ "Describe", h_describe },
	{ NULL, NULL },
};

struct fixture {
	struct msc_server *srv;
	struct msc_client *cli;
};

static int
setup(void **state)
{
	static struct fixture f;

	nheld = 0;
	assert_int_equal(msc_server_start(URL, &msc__v1__session__descriptor,
			     methods, NULL, 512, &f.srv), 0);
	assert_int_equal(msc_client_open(URL, NULL, &f.cli), 0);
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;

	msc_client_close(f->cli);
	msc_server_stop(f->srv);
	return 0;
}

static void
reply_roundtrip(void **state)
{
	struct fixture *f = *state;
	Msc__V1__OpenRequest req = MSC__V1__OPEN_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	char msg[128];

	req.client_name = "hello";
	assert_int_equal(msc_client_call_sync(f->cli,
			     &msc__v1__session__descriptor, "Open", &req.base,
			     2000, &resp, msg, sizeof(msg)),
	    MSC__V1__CODE__OK);
	assert_string_equal(((Msc__V1__SessionRef *)resp)->session_id, "hello");
	protobuf_c_message_free_unpacked(resp, NULL);
}

static void
error_status(void **state)
{
	struct fixture *f = *state;
	Msc__V1__SessionRef req = MSC__V1__SESSION_REF__INIT;
	ProtobufCMessage *resp = NULL;
	char msg[128];

	assert_int_equal(msc_client_call_sync(f->cli,
			     &msc__v1__session__descriptor, "Close", &req.base,
			     2000, &resp, msg, sizeof(msg)),
	    MSC__V1__CODE__NOT_FOUND);
	assert_null(resp);
	assert_string_equal(msg, "no such session");
}

static void
deadline_exceeded(void **state)
{
	struct fixture *f = *state;
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	char msg[128];

	assert_int_equal(msc_client_call_sync(f->cli,
			     &msc__v1__session__descriptor, "TerminalExec",
			     &req.base, 200, NULL, msg, sizeof(msg)),
	    MSC__V1__CODE__DEADLINE_EXCEEDED);
	/* Answer the held call late: the server must cope. */
	pthread_mutex_lock(&held_mu);
	assert_int_equal(nheld, 1);
	msc_call_fail(held[0], MSC__V1__CODE__INTERNAL, "late");
	nheld = 0;
	pthread_mutex_unlock(&held_mu);
}

static void
unimplemented_method(void **state)
{
	struct fixture *f = *state;
	Msc__V1__SessionRef req = MSC__V1__SESSION_REF__INIT;
	char msg[128];

	assert_int_equal(msc_client_call_sync(f->cli,
			     &msc__v1__session__descriptor, "ListComputers",
			     &req.base, 2000, NULL, msg, sizeof(msg)),
	    MSC__V1__CODE__UNIMPLEMENTED);
}

static void
unknown_method(void **state)
{
	struct fixture *f = *state;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	assert_int_equal(msc_client_call(f->cli, &msc__v1__session__descriptor,
			     "Nope", &e.base, 100, NULL, NULL),
	    -2);
}

static pthread_mutex_t done_mu = PTHREAD_MUTEX_INITIALIZER;
static int done_ok;

static void
count_reply(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	pthread_mutex_lock(&done_mu);
	if (st->code == MSC__V1__CODE__OK)
		done_ok++;
	pthread_mutex_unlock(&done_mu);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
}

static int
locked_read(pthread_mutex_t *mu, const int *v)
{
	int n;

	pthread_mutex_lock(mu);
	n = *v;
	pthread_mutex_unlock(mu);
	return n;
}

static void
many_open_calls(void **state)
{
	struct fixture *f = *state;
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	Msc__V1__TerminalExecReply rep = MSC__V1__TERMINAL_EXEC_REPLY__INIT;

	pthread_mutex_lock(&done_mu);
	done_ok = 0;
	pthread_mutex_unlock(&done_mu);
	for (int i = 0; i < NCALLS; i++)
		assert_int_equal(msc_client_call(f->cli,
				     &msc__v1__session__descriptor,
				     "TerminalExec", &req.base, 10000,
				     count_reply, NULL),
		    0);
	/* Every call reaches the handler while none has been answered. */
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&held_mu);
		int n = nheld;
		pthread_mutex_unlock(&held_mu);
		if (n == NCALLS)
			break;
		usleep(10000);
	}
	assert_int_equal(locked_read(&held_mu, &nheld), NCALLS);
	for (int i = NCALLS - 1; i >= 0; i--)
		msc_call_reply(held[i], &rep.base);
	for (int i = 0; i < 500 && locked_read(&done_mu, &done_ok) < NCALLS;
	     i++)
		usleep(10000);
	assert_int_equal(locked_read(&done_mu, &done_ok), NCALLS);
}

struct got_status {
	pthread_mutex_t mu;
	int done;
	struct msc_status st;
	char msg[256];
};

static void
got_status(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct got_status *g = arg;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&g->mu);
	g->st = *st;
	snprintf(g->msg, sizeof(g->msg), "%s", st->message);
	g->st.message = g->msg;
	g->done = 1;
	pthread_mutex_unlock(&g->mu);
}

/*
 * A service passing on the failure of its own call to another does not
 * say "the call to me failed on its way": its caller would blame the
 * link to it (the edge said "the session service is unavailable" when a
 * driver's link broke). The reason goes as unspecified, the words stay.
 */
static void
passed_on_failure_is_not_the_callers_link(void **state)
{
	struct fixture *f = *state;
	Msc__V1__Empty req = MSC__V1__EMPTY__INIT;
	struct got_status g = { .mu = PTHREAD_MUTEX_INITIALIZER };

	assert_int_equal(msc_client_call(f->cli, &msc__v1__session__descriptor,
			     "Describe", &req.base, 2000, got_status, &g),
	    0);
	for (int i = 0; i < 500 && locked_read(&g.mu, &g.done) == 0; i++)
		usleep(10000);
	assert_int_equal(locked_read(&g.mu, &g.done), 1);
	assert_int_equal(g.st.code, MSC__V1__CODE__UNAVAILABLE);
	assert_false(msc_reason_call_failed(g.st.reason));
	assert_int_equal(g.st.reason, MSC__V1__REASON__REASON_UNSPECIFIED);
	assert_non_null(strstr(g.msg, "Connection reset"));
	/* and its detail is the message whole, not cut at a guessed prefix */
	assert_string_equal(msc_reason_detail(MSC__V1__REASON__REASON_MAYBE_RAN,
				"Computer 'x' is unavailable"),
	    "Computer 'x' is unavailable");
}

/*
 * A client's count of its connections follows NNG's pipe events in
 * either order: NNG 1.5 can report a pipe's removal (reaper thread)
 * before its addition (dialer thread) when the connection closes as it
 * is set up. Counted late, that pipe kept the client "up" with no
 * connection: its calls waited for their deadline and it never redialed.
 */
static void
pipe_events_in_either_order(void **state)
{
	struct msc_rpc_pipes t = { 0 };

	(void)state;
	/* in order: up, then down */
	assert_true(msc_rpc_pipes_added(&t, 7));
	assert_true(msc_rpc_pipes_removed(&t, 7));
	/* removed first (closed as it was added): the addition is not up */
	assert_false(msc_rpc_pipes_removed(&t, 8));
	assert_false(msc_rpc_pipes_added(&t, 8));
	assert_false(msc_rpc_pipes_removed(&t, 8));
	/* removed and never added: nothing counted, later pipes count */
	for (uint32_t id = 100; id < 100 + 3 * MSC_RPC_PIPES_MAX; id++)
		assert_false(msc_rpc_pipes_removed(&t, id));
	assert_true(msc_rpc_pipes_added(&t, 9));
	assert_true(msc_rpc_pipes_added(&t, 10));
	assert_true(msc_rpc_pipes_removed(&t, 9));
	assert_true(msc_rpc_pipes_removed(&t, 10));
	/* id 0 (no pipe) is never counted */
	assert_false(msc_rpc_pipes_added(&t, 0));
	assert_false(msc_rpc_pipes_removed(&t, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(reply_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(error_status, setup, teardown),
		cmocka_unit_test_setup_teardown(deadline_exceeded, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(unknown_method, setup, teardown),
		cmocka_unit_test_setup_teardown(unimplemented_method, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(many_open_calls, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(
		    passed_on_failure_is_not_the_callers_link, setup, teardown),
		cmocka_unit_test(pipe_events_in_either_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
