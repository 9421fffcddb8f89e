/* test_rpc_expire.c - calls whose deadline runs out just as their reply
 * comes. NNG 1.5's expiry thread takes an aio's cancel function, drops
 * its lock and then calls it; a reply completing the aio in that window
 * ends the call, and a client that closed the call's context right then
 * had the expiry thread cancel on a freed context (a SIGSEGV seen in the
 * cluster test). Run under ASan, that use shows as a heap-use-after-free. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <nng/nng.h>
#include <nng/supplemental/util/platform.h>

#include "msc_rpc.h"
#include "session.pb-c.h"

#define URL "inproc://test-rpc-expire"
#define NCALLS 10000
#define INFLIGHT 48
#define DEADLINE_MS 4

/* Calls held by the server, each answered once its deadline is due. */
struct held {
	struct msc_call *call;
	uint64_t due_ms;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct held queue[NCALLS];
static size_t head, tail;
static bool stopping;
static atomic_int done, ok, late, unsent, other, inflight;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
h_exec(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	(void)state;
	(void)req;
	pthread_mutex_lock(&mu);
	queue[tail].call = call;
	queue[tail].due_ms = now_ms() + DEADLINE_MS;
	tail++;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

static const struct msc_method methods[] = {
	{ "TerminalExec", h_exec },
	{ NULL, NULL },
};

/* Answers each held call at about the moment its caller gives up. */
static void *
responder(void *arg)
{
	Msc__V1__TerminalExecReply rep = MSC__V1__TERMINAL_EXEC_REPLY__INIT;

	(void)arg;
	rep.computer_id = "x";
	pthread_mutex_lock(&mu);
	for (;;) {
		while (head == tail && !stopping)
			pthread_cond_wait(&cv, &mu);
		if (head == tail && stopping)
			break;
		struct held h = queue[head++];

		pthread_mutex_unlock(&mu);
		while (now_ms() < h.due_ms)
			nng_msleep(0);
		msc_call_reply(h.call, &rep.base);
		pthread_mutex_lock(&mu);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void
answered(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code == MSC__V1__CODE__OK)
		atomic_fetch_add(&ok, 1);
	else if (st->code == MSC__V1__CODE__DEADLINE_EXCEEDED)
		atomic_fetch_add(&late, 1);
	else if (st->code == MSC__V1__CODE__UNAVAILABLE &&
	    st->reason == MSC__V1__REASON__REASON_NOT_SENT)
		atomic_fetch_add(&unsent, 1);   /* its send timed out */
	else
		atomic_fetch_add(&other, 1);
	atomic_fetch_sub(&inflight, 1);
	atomic_fetch_add(&done, 1);
}

static void
deadlines_racing_replies(void **state)
{
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	struct msc_server *srv;
	struct msc_client *cli;
	pthread_t thr;

	(void)state;
	assert_int_equal(msc_server_start(URL, &msc__v1__session__descriptor,
			     methods, NULL, 512, &srv), 0);
	assert_int_equal(msc_client_open(URL, NULL, &cli), 0);
	assert_int_equal(pthread_create(&thr, NULL, responder, NULL), 0);
	for (int i = 0; i < NCALLS; i++) {
		while (atomic_load(&inflight) >= INFLIGHT)
			nng_msleep(0);
		atomic_fetch_add(&inflight, 1);
		assert_int_equal(msc_client_call(cli,
				     &msc__v1__session__descriptor,
				     "TerminalExec", &req.base, DEADLINE_MS,
				     answered, NULL), 0);
	}
	for (int i = 0; i < 2000 && atomic_load(&done) < NCALLS; i++)
		nng_msleep(5);
	assert_int_equal(atomic_load(&done), NCALLS);
	print_message("%d answered, %d past their deadline, %d not sent\n",
	    atomic_load(&ok), atomic_load(&late), atomic_load(&unsent));
	assert_int_equal(atomic_load(&other), 0);
	pthread_mutex_lock(&mu);
	stopping = true;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(thr, NULL);
	msc_client_close(cli);
	msc_server_stop(srv);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deadlines_racing_replies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
