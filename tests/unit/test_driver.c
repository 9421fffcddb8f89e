/* test_driver.c - the Driver service skeleton (lib/msc_driver) over
 * inproc:// with a fake backend: the creation gate bounds creations at
 * once, commands pass creations that wait, a creation that waited
 * until its deadline fails without reaching the backend, and one owner's
 * commands take only their share of the workers; an Exec without a
 * timeout or output limit reaches the backend with the defaults; the
 * died-during-execution text. */
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
#include <unistd.h>

#include <cmocka.h>

#include "driver.pb-c.h"
#include "msc_driver.h"
#include "msc_rpc.h"

#define URL "inproc://test-driver"
#define NCREATE 12

struct fake {
	pthread_mutex_t mu;
	int creating, max_creating, creates;
	int create_ms;
	int hog_running, max_hog_running;   /* execs of owner "hog" */
	uint32_t last_timeout_s;            /* of the last exec */
	uint64_t last_output_limit;
	int removes;                        /* Stops with remove */
	char last_removed[32];
};

static struct fake fake = { .mu = PTHREAD_MUTEX_INITIALIZER };

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int
fake_create(void *be, const char *id, bool temporary, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	struct fake *f = be;

	(void)err;
	(void)errlen;
	pthread_mutex_lock(&f->mu);
	f->creates++;
	if (++f->creating > f->max_creating)
		f->max_creating = f->creating;
	pthread_mutex_unlock(&f->mu);
	usleep((useconds_t)f->create_ms * 1000);
	pthread_mutex_lock(&f->mu);
	f->creating--;
	pthread_mutex_unlock(&f->mu);
	out->computer_id = strdup(id);
	out->temporary = temporary;
	return out->computer_id != NULL ? 0 : -ENOMEM;
}

static int
fake_ref(void *be, const char *id, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	(void)be;
	(void)id;
	(void)out;
	snprintf(err, errlen, "not here");
	return -ENOENT;
}

static int
fake_stop(void *be, const char *id, bool remove, char *err, size_t errlen)
{
	struct fake *f = be;

	(void)err;
	(void)errlen;
	if (remove) {
		pthread_mutex_lock(&f->mu);
		f->removes++;
		snprintf(f->last_removed, sizeof(f->last_removed), "%s", id);
		pthread_mutex_unlock(&f->mu);
	}
	return 0;
}

static int
fake_list(void *be, Msc__V1__ComputerList *out, char *err, size_t errlen)
{
	(void)be;
	(void)out;
	(void)err;
	(void)errlen;
	return 0;
}

static int
fake_exec(void *be, const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *out,
    char *err, size_t errlen)
{
	struct fake *f = be;
	bool hog = strcmp(req->owner, "hog") == 0;

	(void)err;
	(void)errlen;
	pthread_mutex_lock(&f->mu);
	f->last_timeout_s = req->timeout_s;
	f->last_output_limit = req->output_limit;
	pthread_mutex_unlock(&f->mu);
	if (hog) {
		pthread_mutex_lock(&f->mu);
		if (++f->hog_running > f->max_hog_running)
			f->max_hog_running = f->hog_running;
		pthread_mutex_unlock(&f->mu);
		usleep(300 * 1000);
		pthread_mutex_lock(&f->mu);
		f->hog_running--;
		pthread_mutex_unlock(&f->mu);
	}
	out->stdout.data = (uint8_t *)strdup("ok");
	out->stdout.len = 2;
	return 0;
}

static const struct msc_driver_ops fake_ops = {
	.name = "fake-driver",
	.create = fake_create,
	.attach = fake_ref,
	.restart = fake_ref,
	.reset = fake_ref,
	.stop = fake_stop,
	.list = fake_list,
	.exec = fake_exec,
	.code = msc_driver_code,
};

/* The answers of calls made at once. */
struct answers {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int n, ok;
	Msc__V1__Code last_code;
	char last_msg[512];
	uint64_t exec_ms;       /* when the exec answered, 0 before */
	uint64_t fail_ms;       /* when the last failure came */
};

static struct answers ans = { .mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER };

static void
answered(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	bool is_exec = arg != NULL;

	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&ans.mu);
	ans.n++;
	if (st->code == MSC__V1__CODE__OK)
		ans.ok++;
	else {
		ans.last_code = st->code;
		snprintf(ans.last_msg, sizeof(ans.last_msg), "%s", st->message);
		ans.fail_ms = now_ms();
	}
	if (is_exec)
		ans.exec_ms = now_ms();
	pthread_cond_broadcast(&ans.cv);
	pthread_mutex_unlock(&ans.mu);
}

static void
wait_answers(int n)
{
	pthread_mutex_lock(&ans.mu);
	while (ans.n < n)
		pthread_cond_wait(&ans.cv, &ans.mu);
	pthread_mutex_unlock(&ans.mu);
}

static struct msc_driver *drv;
static struct msc_client *cli;

static int
setup(void **state)
{
	(void)state;
	memset(&ans.n, 0, sizeof(ans) - offsetof(struct answers, n));
	fake.creating = fake.max_creating = fake.creates = 0;
	fake.hog_running = fake.max_hog_running = 0;
	fake.removes = 0;
	fake.last_removed[0] = '\0';
	if (msc_driver_start(URL, &fake_ops, &fake, 16, &drv) != 0 ||
	    msc_client_open(URL, NULL, &cli) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	msc_client_close(cli);
	assert_true(msc_driver_stop(drv));
	return 0;
}

static void
create(const char *id, int timeout_ms)
{
	Msc__V1__CreateRequest cr = MSC__V1__CREATE_REQUEST__INIT;

	cr.computer_id = (char *)id;
	cr.temporary = true;
	assert_int_equal(msc_client_call(cli, &msc__v1__driver__descriptor,
			     "Create", &cr.base, timeout_ms, answered, NULL),
	    0);
}

/* 12 creations at once with a gate of 3: never more than 3 run; an
 * exec sent meanwhile answers long before the last creation. */
static void
gate_bounds_creations(void **state)
{
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;
	char id[32];
	uint64_t t0, done;

	(void)state;
	fake.create_ms = 100;
	msc_driver_limit_creations(drv, 3);
	t0 = now_ms();
	for (int i = 0; i < NCREATE; i++) {
		snprintf(id, sizeof(id), "gate-%d", i);
		create(id, 30000);
	}
	er.computer_id = "busy";
	er.command = "true";
	assert_int_equal(msc_client_call(cli, &msc__v1__driver__descriptor,
			     "Exec", &er.base, 30000, answered, &ans), 0);
	wait_answers(NCREATE + 1);
	done = now_ms();
	assert_int_equal(ans.ok, NCREATE + 1);
	assert_int_equal(fake.creates, NCREATE);
	assert_int_equal(fake.max_creating, 3);
	/* 4 rounds of 100 ms; the exec did not wait for them. */
	assert_true(done - t0 >= 350);
	assert_true(ans.exec_ms - t0 < 200);
}

/* Without a bound, the pool's workers are the only limit. */
static void
no_gate_runs_them_all(void **state)
{
	char id[32];

	(void)state;
	fake.create_ms = 200;
	for (int i = 0; i < NCREATE; i++) {
		snprintf(id, sizeof(id), "open-%d", i);
		create(id, 30000);
	}
	wait_answers(NCREATE);
	assert_int_equal(ans.ok, NCREATE);
	assert_true(fake.max_creating > 3);
}

/* A creation whose turn comes under a second before its deadline fails
 * with DEADLINE_EXCEEDED, before the caller's own deadline, and never
 * reaches the backend. */
static void
gate_respects_deadlines(void **state)
{
	uint64_t t0;

	(void)state;
	fake.create_ms = 1200;
	msc_driver_limit_creations(drv, 1);
	t0 = now_ms();
	create("slow", 30000);
	usleep(50 * 1000);
	create("late", 2000);
	wait_answers(2);
	assert_int_equal(ans.ok, 1);
	assert_int_equal(ans.last_code, MSC__V1__CODE__DEADLINE_EXCEEDED);
	assert_non_null(strstr(ans.last_msg, "Computer 'late' could not be "
					     "created"));
	assert_true(ans.fail_ms - t0 < 1900);
	assert_int_equal(fake.creates, 1);
}

/*
 * A temporary computer whose creation outlasted its caller's deadline is
 * removed when it is made: the caller gave up, so nobody would hold or
 * release it (it would run, its lease renewed, until the driver ends).
 * One made in time stays.
 */
static void
late_creation_removed(void **state)
{
	int removes;

	(void)state;
	fake.create_ms = 300;
	create("in-time", 5000);
	wait_answers(1);
	assert_int_equal(ans.ok, 1);
	fake.create_ms = 1000;
	create("orphan", 400);
	wait_answers(2);
	assert_int_equal(ans.last_code, MSC__V1__CODE__DEADLINE_EXCEEDED);
	/* The engine finishes after the caller gave up. */
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&fake.mu);
		removes = fake.removes;
		pthread_mutex_unlock(&fake.mu);
		if (removes > 0)
			break;
		usleep(10 * 1000);
	}
	assert_int_equal(removes, 1);
	assert_string_equal(fake.last_removed, "orphan");
	assert_int_equal(fake.creates, 2);
}

/*
 * One owner's long commands on many computers take only its share of
 * the workers (16 workers: a quarter, 4): another owner's command
 * answers at once, and all of the first owner's still run, in turns.
 */
static void
owner_share_leaves_workers(void **state)
{
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;
	char id[32];
	uint64_t t0;

	(void)state;
	er.command = "sleep";
	er.owner = "hog";
	for (int i = 0; i < 24; i++) {
		snprintf(id, sizeof(id), "hog-%d", i);
		er.computer_id = id;
		assert_int_equal(msc_client_call(cli,
				     &msc__v1__driver__descriptor, "Exec",
				     &er.base, 30000, answered, NULL),
		    0);
	}
	usleep(100 * 1000);
	t0 = now_ms();
	er.computer_id = "other";
	er.owner = "other";
	assert_int_equal(msc_client_call(cli, &msc__v1__driver__descriptor,
			     "Exec", &er.base, 30000, answered, &ans), 0);
	wait_answers(25);
	assert_int_equal(ans.ok, 25);
	assert_true(ans.exec_ms - t0 < 200);
	assert_int_equal(fake.max_hog_running, 4);
}

/* Sends one Exec with these bounds; waits for its answer. */
static void
exec_with(uint32_t timeout_s, uint64_t output_limit, int nth)
{
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;

	er.computer_id = "bounds";
	er.command = "true";
	er.timeout_s = timeout_s;
	er.output_limit = output_limit;
	assert_int_equal(msc_client_call(cli, &msc__v1__driver__descriptor,
			     "Exec", &er.base, 30000, answered, NULL), 0);
	wait_answers(nth);
	assert_int_equal(ans.ok, nth);
}

/* 0 means the driver's default; a backend never sees a 0. */
static void
exec_defaults_fill_zeroes(void **state)
{
	(void)state;
	exec_with(0, 0, 1);
	assert_int_equal(fake.last_timeout_s, MSC_DRIVER_EXEC_TIMEOUT_S);
	assert_int_equal(fake.last_output_limit, MSC_DRIVER_EXEC_OUTPUT_LIMIT);
	assert_int_equal(fake.last_timeout_s, 120);
	assert_int_equal(fake.last_output_limit, 2097152);
	exec_with(7, 99, 2);
	assert_int_equal(fake.last_timeout_s, 7);
	assert_int_equal(fake.last_output_limit, 99);
	msc_driver_exec_defaults(drv, 30, 1000);
	exec_with(0, 0, 3);
	assert_int_equal(fake.last_timeout_s, 30);
	assert_int_equal(fake.last_output_limit, 1000);
	exec_with(0, 5, 4);
	assert_int_equal(fake.last_timeout_s, 30);
	assert_int_equal(fake.last_output_limit, 5);
}

/* The text every backend gives, to the byte, and ABORTED. */
static void
died_text(void **state)
{
	char err[MSC_DRIVER_ERRLEN], small[20];

	(void)state;
	assert_int_equal(msc_driver_died(err, sizeof(err), "box-1",
			     "its Fly Machine %s restarted. The next call "
			     "starts it again.", "m42"),
	    -ECONNABORTED);
	assert_string_equal(err, "Computer 'box-1' died during command "
				 "execution: its Fly Machine m42 restarted. "
				 "The next call starts it again.");
	assert_int_equal(msc_driver_code(-ECONNABORTED),
	    MSC__V1__CODE__ABORTED);
	assert_int_equal(msc_driver_died(small, sizeof(small), "box-1",
			     "its folder is gone."), -ECONNABORTED);
	assert_string_equal(small, "Computer 'box-1' di");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(gate_bounds_creations, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(no_gate_runs_them_all, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(late_creation_removed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(gate_respects_deadlines, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(owner_share_leaves_workers,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(exec_defaults_fill_zeroes,
		    setup, teardown),
		cmocka_unit_test(died_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
