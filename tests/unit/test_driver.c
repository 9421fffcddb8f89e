/* test_driver.c - the Driver service skeleton (lib/msc_driver) over
 * inproc:// with a fake backend: the creation gate bounds creations at
 * once, commands pass creations that wait, a creation that waited
 * until its deadline fails without reaching the backend, and one owner's
 * commands take only their share of the workers; an Exec without a
 * timeout or output limit reaches the backend with the defaults; the
 * died-during-execution text. A backend with exec_start: commands that
 * only wait hold no worker, their number is bounded per principal (past
 * it they run on a worker), they are cancelled, a stop ends them, and
 * their deferred ends take their principal's turns at the workers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <poll.h>
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
	/* A backend that stops (the wasm one refusing a create) is
	 * unavailable, as the other 'is stopping' paths say. */
	assert_int_equal(msc_driver_code(-ESHUTDOWN),
	    MSC__V1__CODE__UNAVAILABLE);
	assert_int_equal(msc_driver_died(small, sizeof(small), "box-1",
			     "its folder is gone."), -ECONNABORTED);
	assert_string_equal(small, "Computer 'box-1' di");
}

/*
 * A backend whose commands wait without a thread each: exec_start holds
 * "sleep" commands, and one thread ends each after its due time or at
 * once when its cancel fd is readable; "sync" goes to exec.
 */
#define HELD_MAX 256

struct held {
	struct msc_exec *x;
	uint64_t due;
	bool check;     /* its end is deferred (afake_check) */
};

static struct {
	pthread_mutex_t mu;
	struct held h[HELD_MAX];
	int n, max_n, started, syncs;
	int hold_ms;
	int checking, max_checking, checked, unchecked; /* deferred ends */
	bool stop;
	pthread_t thread;
} afake = { .mu = PTHREAD_MUTEX_INITIALIZER };

static int
afake_start(void *be, const Msc__V1__ExecRequest *req, struct msc_exec *x,
    char *err, size_t errlen)
{
	(void)be;
	if (strcmp(req->command, "sync") == 0)
		return MSC_EXEC_SYNC;
	pthread_mutex_lock(&afake.mu);
	if (afake.n == HELD_MAX) {
		pthread_mutex_unlock(&afake.mu);
		snprintf(err, errlen, "too many");
		return -EAGAIN;
	}
	afake.h[afake.n].x = x;
	afake.h[afake.n].check = strcmp(req->command, "check") == 0;
	afake.h[afake.n].due = now_ms() + (uint64_t)afake.hold_ms;
	if (++afake.n > afake.max_n)
		afake.max_n = afake.n;
	afake.started++;
	pthread_mutex_unlock(&afake.mu);
	return 0;
}

static int
afake_exec(void *be, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen)
{
	(void)be;
	(void)err;
	(void)errlen;
	pthread_mutex_lock(&afake.mu);
	afake.syncs++;
	pthread_mutex_unlock(&afake.mu);
	if (strcmp(req->command, "sleep") == 0)
		usleep(100 * 1000);
	out->stdout.data = (uint8_t *)strdup("sync");
	out->stdout.len = 4;
	return 0;
}

/* A "check" command's deferred end: blocks 400 ms (an engine asked
 * whether its computer still runs) in its principal's turn. */
static void
afake_check(struct msc_exec *x, void *arg, bool run)
{
	Msc__V1__ExecResult r = MSC__V1__EXEC_RESULT__INIT;

	(void)arg;
	pthread_mutex_lock(&afake.mu);
	if (run && ++afake.checking > afake.max_checking)
		afake.max_checking = afake.checking;
	pthread_mutex_unlock(&afake.mu);
	if (run)
		usleep(400 * 1000);
	pthread_mutex_lock(&afake.mu);
	if (run) {
		afake.checking--;
		afake.checked++;
	} else
		afake.unchecked++;
	pthread_mutex_unlock(&afake.mu);
	msc_exec_done(x, 0, &r, NULL);
}

static void *
afake_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct msc_exec *end[HELD_MAX];
		int cancelled[HELD_MAX], k = 0;
		bool check[HELD_MAX];
		uint64_t now = now_ms();

		pthread_mutex_lock(&afake.mu);
		if (afake.stop) {
			pthread_mutex_unlock(&afake.mu);
			return NULL;
		}
		for (int i = 0; i < afake.n;) {
			struct pollfd p = { .fd = msc_exec_cancel_fd(
						afake.h[i].x), .events = POLLIN };
			bool c = p.fd >= 0 && poll(&p, 1, 0) == 1;

			if (c || afake.h[i].due <= now) {
				cancelled[k] = c;
				check[k] = afake.h[i].check;
				end[k++] = afake.h[i].x;
				afake.h[i] = afake.h[--afake.n];
			} else
				i++;
		}
		pthread_mutex_unlock(&afake.mu);
		for (int i = 0; i < k; i++) {
			Msc__V1__ExecResult r = MSC__V1__EXEC_RESULT__INIT;

			if (cancelled[i]) {
				msc_exec_done(end[i], -ECANCELED, NULL,
				    "cancelled and killed");
				continue;
			}
			if (check[i]) {
				if (msc_exec_defer(end[i], afake_check, NULL)
				    != 0)
					afake_check(end[i], NULL, false);
				continue;
			}
			r.stdout.data = (uint8_t *)strdup("slept");
			r.stdout.len = 5;
			msc_exec_done(end[i], 0, &r, NULL);
		}
		usleep(5 * 1000);
	}
}

static const struct msc_driver_ops afake_ops = {
	.name = "async-driver",
	.create = fake_create,
	.attach = fake_ref,
	.restart = fake_ref,
	.reset = fake_ref,
	.stop = fake_stop,
	.list = fake_list,
	.exec = afake_exec,
	.exec_start = afake_start,
	.code = msc_driver_code,
};

static int
asetup(void **state)
{
	(void)state;
	memset(&ans.n, 0, sizeof(ans) - offsetof(struct answers, n));
	afake.n = afake.max_n = afake.started = afake.syncs = 0;
	afake.checking = afake.max_checking = 0;
	afake.checked = afake.unchecked = 0;
	afake.hold_ms = 500;
	afake.stop = false;
	if (pthread_create(&afake.thread, NULL, afake_main, NULL) != 0 ||
	    msc_driver_start(URL, &afake_ops, &fake, 4, &drv) != 0 ||
	    msc_client_open(URL, NULL, &cli) != 0)
		return -1;
	return 0;
}

static int
ateardown(void **state)
{
	int n;

	(void)state;
	msc_client_close(cli);
	assert_true(msc_driver_stop(drv));
	pthread_mutex_lock(&afake.mu);
	afake.stop = true;
	n = afake.n;
	pthread_mutex_unlock(&afake.mu);
	pthread_join(afake.thread, NULL);
	assert_int_equal(n, 0);         /* the stop ended every one */
	return 0;
}

/* Sends Exec `command` on computer `id` for owner and principal. */
static void
aexec(const char *id, const char *command, const char *owner,
    const char *principal, const char *key, void *arg)
{
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;

	er.computer_id = (char *)id;
	er.command = (char *)command;
	er.owner = (char *)owner;
	er.principal = (char *)principal;
	er.cancel_key = (char *)key;
	assert_int_equal(msc_client_call(cli, &msc__v1__driver__descriptor,
			     "Exec", &er.base, 30000, answered, arg), 0);
}

/*
 * 4 workers, 40 owners each waiting on its computer: all 40 wait at
 * once, none on a worker, and another command answers at once; they all
 * end with their result.
 */
static void
waiting_holds_no_worker(void **state)
{
	char id[32], owner[32];
	uint64_t t0;
	int n, syncs;

	(void)state;
	for (int i = 0; i < 40; i++) {
		snprintf(id, sizeof(id), "wait-%d", i);
		snprintf(owner, sizeof(owner), "owner-%d", i);
		aexec(id, "sleep", owner, "", "", NULL);
	}
	usleep(150 * 1000);
	t0 = now_ms();
	aexec("other", "sync", "someone", "", "", &ans);
	wait_answers(41);
	assert_int_equal(ans.ok, 41);
	assert_true(ans.exec_ms - t0 < 300);
	pthread_mutex_lock(&afake.mu);
	n = afake.max_n;
	syncs = afake.syncs;
	pthread_mutex_unlock(&afake.mu);
	assert_int_equal(n, 40);
	assert_int_equal(syncs, 1);
}

/*
 * A principal waits on at most three quarters of 16 per worker (48 of
 * 64): its further commands run on a worker, as exec; another principal
 * still waits on its own.
 */
static void
waiting_is_bounded_per_principal(void **state)
{
	char id[32], owner[32];
	int started, syncs;

	(void)state;
	pthread_mutex_lock(&afake.mu);
	afake.hold_ms = 2000;           /* all still wait at the 53rd */
	pthread_mutex_unlock(&afake.mu);
	for (int i = 0; i < 52; i++) {
		snprintf(id, sizeof(id), "p-%d", i);
		snprintf(owner, sizeof(owner), "o-%d", i);
		aexec(id, "sleep", owner, "alice", "", NULL);
		/* In turns: at once, past her 2 workers and 8 waiting for
		 * one, she would be told the driver is busy for her. */
		if (i % 4 == 3)
			usleep(40 * 1000);
	}
	usleep(250 * 1000);
	aexec("bob-1", "sleep", "bob", "bob", "", NULL);
	wait_answers(53);
	assert_int_equal(ans.ok, 53);
	pthread_mutex_lock(&afake.mu);
	started = afake.started;
	syncs = afake.syncs;
	pthread_mutex_unlock(&afake.mu);
	assert_int_equal(started, 49);
	assert_int_equal(syncs, 4);
}

/* Driver/Cancel ends a waiting command at once, CANCELLED; its lane
 * runs the next. */
static void
waiting_is_cancelled(void **state)
{
	Msc__V1__ExecRef ref = MSC__V1__EXEC_REF__INIT;
	uint64_t t0;

	(void)state;
	aexec("c-1", "sleep", "o", "", "k1", &ans);
	usleep(100 * 1000);
	ref.computer_id = "c-1";
	ref.cancel_key = "k1";
	t0 = now_ms();
	assert_int_equal(msc_client_call(cli, &msc__v1__driver__descriptor,
			     "Cancel", &ref.base, 5000, answered, NULL), 0);
	wait_answers(2);
	assert_int_equal(ans.ok, 1);
	assert_int_equal(ans.last_code, MSC__V1__CODE__CANCELLED);
	assert_true(ans.exec_ms - t0 < 200);
	aexec("c-1", "sync", "o", "", "", NULL);
	wait_answers(3);
	assert_int_equal(ans.ok, 2);
}

/*
 * A waiting command's deferred end (an engine asked whether its
 * computer died, which blocks) takes a turn of its principal at the
 * workers: 8 of alice's at once run 2 at a time (her share of the 3
 * command slots of 4 workers), and bob's command answers meanwhile.
 * (They ran on the shared pool: all 4 workers were alice's, bob
 * waited.)
 */
static void
deferred_ends_take_principal_turns(void **state)
{
	char id[32], owner[32];
	uint64_t t0;
	int max_checking, checked;

	(void)state;
	pthread_mutex_lock(&afake.mu);
	afake.hold_ms = 50;
	pthread_mutex_unlock(&afake.mu);
	for (int i = 0; i < 8; i++) {
		snprintf(id, sizeof(id), "ch-%d", i);
		snprintf(owner, sizeof(owner), "o-%d", i);
		aexec(id, "check", owner, "alice", "", NULL);
	}
	/* Until the first checks run: all 8 ended, their ends deferred. */
	for (int tries = 0; tries < 400; tries++) {
		pthread_mutex_lock(&afake.mu);
		max_checking = afake.max_checking;
		pthread_mutex_unlock(&afake.mu);
		if (max_checking > 0)
			break;
		usleep(5 * 1000);
	}
	usleep(50 * 1000);
	t0 = now_ms();
	aexec("bob-1", "sync", "bob", "bob", "", &ans);
	wait_answers(9);
	assert_int_equal(ans.ok, 9);
	assert_true(ans.exec_ms - t0 < 300);
	pthread_mutex_lock(&afake.mu);
	max_checking = afake.max_checking;
	checked = afake.checked;
	pthread_mutex_unlock(&afake.mu);
	assert_int_equal(max_checking, 2);
	assert_int_equal(checked, 8);
}

/* A stop with commands waiting (with and without a key) ends them. */
static void
waiting_ends_at_stop(void **state)
{
	int n = 0;

	(void)state;
	for (int i = 0; i < 4; i++) {
		char id[32];

		snprintf(id, sizeof(id), "s-%d", i);
		aexec(id, "sleep", id, "", i % 2 ? "key" : "", NULL);
	}
	/* Each held far longer than the test: the stop must end them. */
	for (int tries = 0; tries < 400; tries++) {
		pthread_mutex_lock(&afake.mu);
		n = afake.n;
		for (int i = 0; i < afake.n; i++)
			afake.h[i].due = now_ms() + 60000;
		pthread_mutex_unlock(&afake.mu);
		if (n == 4)
			break;
		usleep(5 * 1000);
	}
	assert_int_equal(n, 4);
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
		cmocka_unit_test_setup_teardown(waiting_holds_no_worker,
		    asetup, ateardown),
		cmocka_unit_test_setup_teardown(waiting_is_bounded_per_principal,
		    asetup, ateardown),
		cmocka_unit_test_setup_teardown(waiting_is_cancelled, asetup,
		    ateardown),
		cmocka_unit_test_setup_teardown(
		    deferred_ends_take_principal_turns, asetup, ateardown),
		cmocka_unit_test_setup_teardown(waiting_ends_at_stop, asetup,
		    ateardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
