/*
 * test_reason.c - failure reasons: the one reason -> text table, the
 * messages of calls that failed on the way, a service's reason reaching
 * its caller over inproc://, and a call's own bound when its caller set
 * no deadline.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_reason.h"
#include "msc_rpc.h"
#include "session.pb-c.h"

#define URL "inproc://test-reason"

/* Every reason has a text; none but UNSPECIFIED is empty. */
static void
table_texts(void **state)
{
	(void)state;
	assert_string_equal(msc_reason_text(
	    MSC__V1__REASON__REASON_SESSION_NOT_FOUND), "Session not found");
	assert_string_equal(msc_reason_text(
	    MSC__V1__REASON__REASON_UNSPECIFIED), "");
	assert_string_equal(msc_reason_text((Msc__V1__Reason)9999), "");
	for (unsigned i = 0; i < msc__v1__reason__descriptor.n_values; i++) {
		Msc__V1__Reason r = (Msc__V1__Reason)
		    msc__v1__reason__descriptor.values[i].value;

		if (r != MSC__V1__REASON__REASON_UNSPECIFIED)
			assert_true(msc_reason_text(r)[0] != '\0');
	}
}

/* Failed on the way: not sent, maybe ran, deadline; nothing else. */
static void
call_failed_reasons(void **state)
{
	(void)state;
	assert_true(msc_reason_call_failed(MSC__V1__REASON__REASON_NOT_SENT));
	assert_true(msc_reason_call_failed(MSC__V1__REASON__REASON_MAYBE_RAN));
	assert_true(msc_reason_call_failed(MSC__V1__REASON__REASON_DEADLINE));
	assert_false(msc_reason_call_failed(
	    MSC__V1__REASON__REASON_SESSION_NOT_FOUND));
	assert_false(msc_reason_call_failed(
	    MSC__V1__REASON__REASON_COMPUTER_DIED));
	assert_false(msc_reason_call_failed(
	    MSC__V1__REASON__REASON_UNSPECIFIED));
}

/* The message of a failed call, and its detail back out of it. */
static void
failed_messages(void **state)
{
	char buf[256], out[256];
	const char *m;

	(void)state;
	m = msc_reason_call_failed_message(MSC__V1__REASON__REASON_NOT_SENT,
	    NULL, buf, sizeof(buf));
	assert_string_equal(m, "service call failed: the service cannot be "
	    "reached");
	assert_string_equal(msc_reason_detail(MSC__V1__REASON__REASON_NOT_SENT,
	    m), "the service cannot be reached");
	m = msc_reason_call_failed_message(MSC__V1__REASON__REASON_MAYBE_RAN,
	    "Connection shutdown", buf, sizeof(buf));
	assert_string_equal(m, "service call failed: the connection to the "
	    "service was lost during the call (Connection shutdown); it may "
	    "or may not have happened");
	m = msc_reason_call_failed_message(MSC__V1__REASON__REASON_DEADLINE,
	    NULL, buf, sizeof(buf));
	assert_string_equal(m, "service call failed: deadline exceeded");
	assert_string_equal(msc_reason_session_unreachable(msc_reason_detail(
	    MSC__V1__REASON__REASON_DEADLINE, m), out, sizeof(out)),
	    "The session service is unavailable (deadline exceeded); retry "
	    "in a few seconds.");
	/* Another reason's message is its own detail, whatever it says. */
	assert_string_equal(msc_reason_detail(
	    MSC__V1__REASON__REASON_SESSION_NOT_FOUND,
	    "service call failed: x"), "service call failed: x");
	/* Too small a buffer truncates, still terminated. */
	m = msc_reason_call_failed_message(MSC__V1__REASON__REASON_NOT_SENT,
	    NULL, buf, 8);
	assert_string_equal(m, "service");
	assert_string_equal(msc_reason_computer_unavailable("c1", "docker",
	    "boom", out, sizeof(out)), "Computer 'c1' is unavailable (driver "
	    "'docker'): boom. Retry later.");
}

/* --- over inproc:// ------------------------------------------------------ */

static int bound_left_ms;

/* Fails Close with a reason; Touch reports its bound; Open never answers. */
static void
h_close(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	(void)state;
	(void)req;
	msc_call_fail_as(call, MSC__V1__CODE__NOT_FOUND,
	    MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
}

static void
h_touch(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	(void)state;
	(void)req;
	bound_left_ms = msc_call_bound_ms(call, 900000);
	msc_call_reply(call, &e.base);
}

static struct msc_call *held;

static void
h_open(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	(void)state;
	(void)req;
	held = call;
}

static const struct msc_method methods[] = {
	{ "Open", h_open },
	{ "Close", h_close },
	{ "Touch", h_touch },
	{ NULL, NULL },
};

struct outcome {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
	Msc__V1__Code code;
	Msc__V1__Reason reason;
	char message[512];
};

static void
record(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct outcome *o = arg;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&o->mu);
	o->code = st->code;
	o->reason = st->reason;
	snprintf(o->message, sizeof(o->message), "%s", st->message);
	o->done = true;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

static void
call_and_wait(struct msc_client *cli, const char *method, int timeout_ms,
    struct outcome *o)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	Msc__V1__OpenRequest open = MSC__V1__OPEN_REQUEST__INIT;
	const ProtobufCMessage *req = strcmp(method, "Open") == 0
	    ? &open.base : &ref.base;

	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->cv, NULL);
	ref.session_id = "s";
	assert_int_equal(msc_client_call(cli, &msc__v1__session__descriptor,
	    method, req, timeout_ms, record, o), 0);
	pthread_mutex_lock(&o->mu);
	while (!o->done)
		pthread_cond_wait(&o->cv, &o->mu);
	pthread_mutex_unlock(&o->mu);
}

/* A service's reason crosses the wire; the edge need not read words. */
static void
reason_on_the_wire(void **state)
{
	struct msc_server *srv;
	struct msc_client *cli;
	struct outcome o;

	(void)state;
	assert_int_equal(msc_server_start(URL, &msc__v1__session__descriptor,
	    methods, NULL, 16, &srv), 0);
	assert_int_equal(msc_client_open(URL, NULL, &cli), 0);
	call_and_wait(cli, "Close", 5000, &o);
	assert_int_equal(o.code, MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(o.reason, MSC__V1__REASON__REASON_SESSION_NOT_FOUND);
	assert_string_equal(o.message, "Session not found");

	/* Sent, then no answer before the deadline. */
	call_and_wait(cli, "Open", 200, &o);
	assert_int_equal(o.code, MSC__V1__CODE__DEADLINE_EXCEEDED);
	assert_int_equal(o.reason, MSC__V1__REASON__REASON_DEADLINE);
	assert_string_equal(o.message, "service call failed: deadline "
	    "exceeded");
	msc_call_fail(held, MSC__V1__CODE__INTERNAL, "late");

	/* A caller's deadline stays; none gives the service's own bound. */
	call_and_wait(cli, "Touch", 5000, &o);
	assert_int_equal(o.code, MSC__V1__CODE__OK);
	assert_true(bound_left_ms > 0 && bound_left_ms <= 5000);
	call_and_wait(cli, "Touch", 0, &o);
	assert_int_equal(o.code, MSC__V1__CODE__OK);
	assert_true(bound_left_ms > 890000 && bound_left_ms <= 900000);
	msc_client_close(cli);
	msc_server_stop(srv);
}

/* The texts written here rather than where the failure is met. */
static void
written_in_one_place(void **state)
{
	char buf[512];
	int retry = 0;

	(void)state;
	assert_string_equal(msc_reason_driver_unreachable("c-1", "docker-2",
				buf, sizeof(buf)),
	    "Computer 'c-1' is unavailable: its driver 'docker-2' cannot be "
	    "reached. Retry later.");
	assert_string_equal(msc_reason_inventory_unreachable(),
	    "the inventory service cannot be reached");
	assert_non_null(strstr(msc_reason_session_unsent(-EAGAIN, &retry),
	    "overloaded"));
	assert_int_equal(retry, 1);
	assert_non_null(strstr(msc_reason_session_unsent(-ENOTCONN, &retry),
	    "cannot be reached"));
	assert_int_equal(retry, 5);
	assert_non_null(strstr(msc_reason_session_unsent(-EIO, NULL),
	    "could not be sent"));
	assert_string_equal(msc_reason_session_not_opened(true, "busy", buf,
				sizeof(buf)),
	    "The session service is overloaded: busy; retry in a few seconds.");
	assert_string_equal(msc_reason_session_not_opened(false, "down", buf,
				sizeof(buf)),
	    "The session service is not available: down; retry in a few "
	    "seconds.");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_texts),
		cmocka_unit_test(call_failed_reasons),
		cmocka_unit_test(failed_messages),
		cmocka_unit_test(reason_on_the_wire),
		cmocka_unit_test(written_in_one_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
