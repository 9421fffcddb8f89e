/* test_session_race.c - the session service over inproc:// with a fake
 * inventory and a fake driver: a session that ends (Session/Close, an
 * HTTP DELETE) while its first command or a computer_create is being
 * placed. The fake inventory holds each Acquire until the test lets it
 * go, so the Close lands exactly between the Acquire and its answer.
 * Before the reference rule in session_int.h, the answer freed the
 * session and then read it (ASan: heap-use-after-free in drain), and a
 * computer_create answered after the Close was never released. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "driver.pb-c.h"
#include "inventory.pb-c.h"
#include "msc_cfg.h"
#include "msc_fleet.h"
#include "msc_rpc.h"
#include "session.h"
#include "session.pb-c.h"

/* Every role of lib, no backend: the services these tests run. */
static const struct msc_program core_services = { "mcp-sandbox-computer",
	NULL, MSC_PROG_ALL, NULL, 0 };

#define SESSION_URL "inproc://race-session"
#define INVENTORY_URL "inproc://race-inventory"
#define DRIVER_URL "inproc://race-driver"
#define ROUNDS 40
#define WAIT_MS 5000

/* What the fake services saw, and the Acquire they hold. */
struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct msc_call *held;          /* an Acquire not answered yet */
	char held_id[64];
	int acquires, releases, execs;
	char released_id[64];
	int answers;                    /* client calls answered */
	int ended;                      /* of them: "the session ended" */
	int not_found;                  /* "Session not found" */
	int unavailable;                /* the fake's Acquire error */
};

static struct fake fake = { .mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER };

static void
f_acquire(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__AcquireRequest *a = (const void *)req;

	(void)state;
	pthread_mutex_lock(&fake.mu);
	fake.acquires++;
	fake.held = call;
	snprintf(fake.held_id, sizeof(fake.held_id), "%s",
	    a->computer_id[0] != '\0' ? a->computer_id : "fresh-one");
	pthread_cond_broadcast(&fake.cv);
	pthread_mutex_unlock(&fake.mu);
}

static void
f_release(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__ReleaseRequest *r = (const void *)req;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	(void)state;
	pthread_mutex_lock(&fake.mu);
	fake.releases++;
	snprintf(fake.released_id, sizeof(fake.released_id), "%s",
	    r->computer_id);
	pthread_cond_broadcast(&fake.cv);
	pthread_mutex_unlock(&fake.mu);
	msc_call_reply(call, &e.base);
}

static void
f_empty(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	(void)state;
	(void)req;
	msc_call_reply(call, &e.base);
}

static const struct msc_method inventory_methods[] = {
	{ "Acquire", f_acquire },
	{ "Release", f_release },
	{ "ForgetOwners", f_empty },
	{ "Claim", f_empty },
	{ NULL, NULL },
};

static void
f_exec(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	Msc__V1__ExecResult res = MSC__V1__EXEC_RESULT__INIT;

	(void)state;
	(void)req;
	pthread_mutex_lock(&fake.mu);
	fake.execs++;
	pthread_mutex_unlock(&fake.mu);
	msc_call_reply(call, &res.base);
}

static const struct msc_method driver_methods[] = {
	{ "Exec", f_exec },
	{ NULL, NULL },
};

static struct msc_cfg cfg;
static struct msc_fleet *fleet;
static struct msc_server *inventory, *driver;
static struct sess_service *sess;
static struct msc_client *cli;

static int
setup(void **state)
{
	char *argv[] = { "test_session_race", NULL };

	(void)state;
	if (msc_cfg_parse(&cfg, &core_services, 1, argv) != 0 ||
	    msc_server_start(INVENTORY_URL, &msc__v1__inventory__descriptor,
		inventory_methods, NULL, 64, &inventory) != 0 ||
	    msc_server_start(DRIVER_URL, &msc__v1__driver__descriptor,
		driver_methods, NULL, 64, &driver) != 0 ||
	    msc_fleet_open(&cfg, DRIVER_URL, &fleet) != 0 ||
	    sess_start(&cfg, SESSION_URL, INVENTORY_URL, fleet, &sess) != 0 ||
	    msc_client_open(SESSION_URL, NULL, &cli) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	msc_client_close(cli);
	sess_stop(sess);
	msc_fleet_close(fleet);
	msc_server_stop(driver);
	msc_server_stop(inventory);
	msc_cfg_fini(&cfg);
	return 0;
}

static void
answered(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&fake.mu);
	fake.answers++;
	if (st->code == MSC__V1__CODE__FAILED_PRECONDITION &&
	    strcmp(st->message, "the session ended") == 0)
		fake.ended++;
	else if (st->code == MSC__V1__CODE__NOT_FOUND &&
	    strcmp(st->message, "Session not found") == 0)
		fake.not_found++;
	else if (st->code == MSC__V1__CODE__UNAVAILABLE &&
	    strcmp(st->message, "no driver") == 0)
		fake.unavailable++;
	pthread_cond_broadcast(&fake.cv);
	pthread_mutex_unlock(&fake.mu);
}

/* Waits (lock held) until *counter reaches n; false after WAIT_MS. */
static bool
wait_count(const int *counter, int n)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += WAIT_MS / 1000;
	while (*counter < n)
		if (pthread_cond_timedwait(&fake.cv, &fake.mu, &until) != 0)
			return *counter >= n;
	return true;
}

static void
open_session(char *id, size_t len)
{
	Msc__V1__OpenRequest o = MSC__V1__OPEN_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	char msg[256];

	assert_int_equal(msc_client_call_sync(cli, &msc__v1__session__descriptor,
			     "Open", &o.base, 5000, &resp, msg, sizeof(msg)),
	    MSC__V1__CODE__OK);
	snprintf(id, len, "%s", ((Msc__V1__SessionRef *)resp)->session_id);
	protobuf_c_message_free_unpacked(resp, NULL);
}

static void
close_session(char *id)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	ProtobufCMessage *resp = NULL;
	char msg[256];

	ref.session_id = id;
	assert_int_equal(msc_client_call_sync(cli, &msc__v1__session__descriptor,
			     "Close", &ref.base, 10000, &resp, msg, sizeof(msg)),
	    MSC__V1__CODE__OK);
	protobuf_c_message_free_unpacked(resp, NULL);
}

static void
exec_async(char *sid)
{
	Msc__V1__TerminalExecRequest r = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;

	r.session_id = sid;
	r.command = "echo hi";
	assert_int_equal(msc_client_call(cli, &msc__v1__session__descriptor,
			     "TerminalExec", &r.base, 10000, answered, NULL),
	    0);
}

/* Answers the held Acquire: a computer, or (ok false) an error. */
static void
let_acquire_go(bool ok)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	struct msc_call *call;

	pthread_mutex_lock(&fake.mu);
	call = fake.held;
	fake.held = NULL;
	c.computer_id = fake.held_id;
	c.temporary = true;
	c.driver = (char *)msc_fleet_id(fleet, 0);
	if (ok)
		msc_call_reply(call, &c.base);
	else
		msc_call_fail(call, MSC__V1__CODE__UNAVAILABLE, "no driver");
	pthread_mutex_unlock(&fake.mu);
}

static void
reset_counts(void)
{
	pthread_mutex_lock(&fake.mu);
	fake.acquires = fake.releases = fake.execs = fake.answers = 0;
	fake.ended = fake.not_found = fake.unavailable = 0;
	fake.released_id[0] = '\0';
	pthread_mutex_unlock(&fake.mu);
}

/*
 * The first command of a new session, a second one (queued behind the
 * first one's Acquire, or arriving after the Close), the Close while the
 * Acquire is out, then the answer: the first call fails with "the
 * session ended" (or the Acquire's error), the second with that or
 * "Session not found"; nothing runs, only one Acquire is made, and a
 * computer that was found is released again. ok: the inventory found
 * the computer; else it failed. Whether the second call was queued in
 * time varies: either way the old code failed (a use after free when
 * the first call held the last reference, a second Acquire for the
 * ended session when the second call was queued).
 */
static void
race_first_exec(bool ok)
{
	char sid[64];

	for (int round = 0; round < ROUNDS; round++) {
		reset_counts();
		open_session(sid, sizeof(sid));
		exec_async(sid);
		pthread_mutex_lock(&fake.mu);
		assert_true(wait_count(&fake.acquires, 1));
		pthread_mutex_unlock(&fake.mu);
		exec_async(sid);        /* waits behind the Acquire */
		close_session(sid);
		let_acquire_go(ok);
		pthread_mutex_lock(&fake.mu);
		assert_true(wait_count(&fake.answers, 2));
		/* A failed Acquire fails the first call with its error. */
		assert_int_equal(fake.unavailable, ok ? 0 : 1);
		assert_int_equal(fake.ended + fake.not_found, ok ? 2 : 1);
		assert_true(fake.ended >= (ok ? 1 : 0));
		if (ok) {
			assert_true(wait_count(&fake.releases, 1));
			assert_string_equal(fake.released_id, "fresh-one");
		}
		assert_int_equal(fake.acquires, 1);
		assert_int_equal(fake.execs, 0);
		pthread_mutex_unlock(&fake.mu);
	}
}

static void
close_races_first_exec(void **state)
{
	(void)state;
	race_first_exec(true);
}

static void
close_races_failed_acquire(void **state)
{
	(void)state;
	race_first_exec(false);
}

/*
 * computer_create answered after the Close: the computer the inventory
 * gave to the ended session is released (before, it was owned forever
 * by a session that no longer existed).
 */
static void
close_races_create(void **state)
{
	Msc__V1__ComputerRequest r = MSC__V1__COMPUTER_REQUEST__INIT;
	char sid[64];

	(void)state;
	for (int round = 0; round < ROUNDS; round++) {
		reset_counts();
		open_session(sid, sizeof(sid));
		r.session_id = sid;
		r.computer_id = "made-late";
		assert_int_equal(msc_client_call(cli,
				     &msc__v1__session__descriptor,
				     "CreateComputer", &r.base, 10000, answered,
				     NULL),
		    0);
		pthread_mutex_lock(&fake.mu);
		assert_true(wait_count(&fake.acquires, 1));
		pthread_mutex_unlock(&fake.mu);
		close_session(sid);
		let_acquire_go(true);
		pthread_mutex_lock(&fake.mu);
		assert_true(wait_count(&fake.answers, 1));
		assert_true(wait_count(&fake.releases, 1));
		assert_string_equal(fake.released_id, "made-late");
		pthread_mutex_unlock(&fake.mu);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(close_races_first_exec, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(close_races_failed_acquire,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(close_races_create, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
