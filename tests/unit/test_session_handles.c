/*
 * test_session_handles.c - sandbox handles at scale, through the Session
 * wire interface over the real inventory and a fake driver: 100,000
 * handles minted and never used make no computer, the next one is
 * refused with the reference's text, the service's memory stays bounded
 * (measured: the process's RSS growth per handle), and closing them all
 * gives the room back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "sess_harness.h"

#define D1 (sh.d[0])
#define N_HANDLES 100000
/* What 100,000 idle handles may cost at most (the record, its map, the
 * id's map entry); measured 42 MB (435 bytes each) in a release build. */
#define RSS_BOUND_KB (64 * 1024)
/* Under ASan (its redzones and quarantine) or TSan (its shadow memory),
 * the sanitizer's own memory is what RSS measures. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif
#define LIMIT_TEXT "Sandbox limit reached; release an existing handle"

static int
setup(void **state)
{
	static const char *const flags[] = { "--max-sandboxes", "100000",
		NULL };

	(void)state;
	return sh_start(1, flags);
}

static long
rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Session/Open as a sandbox handle: its code, the id or the message. */
static Msc__V1__Code
open_handle(char *id, char *msg, size_t msglen)
{
	Msc__V1__OpenRequest o = MSC__V1__OPEN_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	Msc__V1__Code code;

	o.client_name = "unit";
	o.sandbox = true;
	msg[0] = '\0';
	code = msc_client_call_sync(sh.cli, &msc__v1__session__descriptor,
	    "Open", &o.base, SH_CALL_MS, &resp, msg, msglen);
	if (resp != NULL) {
		snprintf(id, SH_ID_SIZE, "%s",
		    ((Msc__V1__SessionRef *)resp)->session_id);
		protobuf_c_message_free_unpacked(resp, NULL);
	}
	return code;
}

/*
 * Opens (or closes) handles ids[0..N_HANDLES) with WINDOW calls in flight,
 * as many clients at once would; each answer's code must be OK.
 */
#define WINDOW 128
struct batch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int inflight, failed;
	char (*ids)[SH_ID_SIZE];
};
struct slot {
	struct batch *b;
	int i;
};

static void
answered(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct slot *sl = arg;
	struct batch *b = sl->b;

	pthread_mutex_lock(&b->mu);
	if (st->code != MSC__V1__CODE__OK)
		b->failed++;
	else if (resp != NULL && sl->i >= 0)
		snprintf(b->ids[sl->i], SH_ID_SIZE, "%s",
		    ((Msc__V1__SessionRef *)resp)->session_id);
	b->inflight--;
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
}

/*
 * In static storage, as core_util.h asks: after a failed assertion the
 * test's frame is gone while the calls in flight still answer into it
 * (a crash on an NNG thread, which cmocka turns into exit status 255
 * with the assertion's message never printed).
 */
static struct batch b;
static struct slot *slots;

static void
run_batch(char (*ids)[SH_ID_SIZE], bool open)
{
	Msc__V1__OpenRequest o = MSC__V1__OPEN_REQUEST__INIT;
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;
	int rv, tries;

	slots = calloc(N_HANDLES, sizeof(*slots));
	assert_non_null(slots);
	b.ids = ids;
	b.inflight = b.failed = 0;
	pthread_mutex_init(&b.mu, NULL);
	pthread_cond_init(&b.cv, NULL);
	o.client_name = "unit";
	o.sandbox = true;
	for (int i = 0; i < N_HANDLES; i++) {
		pthread_mutex_lock(&b.mu);
		while (b.inflight >= WINDOW)
			pthread_cond_wait(&b.cv, &b.mu);
		b.inflight++;
		pthread_mutex_unlock(&b.mu);
		slots[i].b = &b;
		slots[i].i = open ? i : -1;
		ref.session_id = ids[i];
		/*
		 * -EAGAIN: the client's bound on calls not yet ended
		 * (CLIENT_MAX_OPEN). A call ends on an NNG thread after its
		 * answer, which lags on a loaded machine: wait for it, as a
		 * caller of this bulk does.
		 */
		tries = 0;
		while ((rv = msc_client_call(sh.cli,
			    &msc__v1__session__descriptor,
			    open ? "Open" : "Close", open ? &o.base : &ref.base,
			    SH_CALL_MS, answered, &slots[i])) == -EAGAIN &&
		    tries++ < 10000)
			usleep(1000);
		assert_int_equal(rv, 0);
	}
	pthread_mutex_lock(&b.mu);
	while (b.inflight > 0)
		pthread_cond_wait(&b.cv, &b.mu);
	pthread_mutex_unlock(&b.mu);
	assert_int_equal(b.failed, 0);
	free(slots);
	slots = NULL;
}

static void
hundred_thousand_unused_handles(void **state)
{
	char (*ids)[SH_ID_SIZE] = calloc(N_HANDLES, SH_ID_SIZE);
	char msg[256], extra[SH_ID_SIZE];
	long before, grown;
	struct timespec t0, t1;

	(void)state;
	assert_non_null(ids);
	before = rss_kb();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_batch(ids, true);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	grown = rss_kb() - before;
	fprintf(stderr, "100000 handles: opened in %.1f s, RSS +%ld kB "
	    "(%.0f bytes each)\n", (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, grown,
	    (double)grown * 1024.0 / N_HANDLES);
	if (RSS_CHECKED)
		assert_true(grown < RSS_BOUND_KB);

	/* The cap: a clear error, and nothing made for it. */
	assert_int_equal(open_handle(extra, msg, sizeof(msg)),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_string_equal(msg, LIMIT_TEXT);
	/* Unused handles hold no computer: none was created or sought. */
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 0);
	assert_int_equal(fake_driver_calls(D1, FD_ATTACH), 0);
	/* Each one still works, and a command in one makes one computer. */
	assert_int_equal(sh_exec(ids[N_HANDLES / 2], NULL, -1, NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_n_computers(D1), 1);

	/* Released, they give the room back and their computer goes. */
	run_batch(ids, false);
	assert_int_equal(sh_ref_call("Touch", ids[0]),
	    MSC__V1__CODE__NOT_FOUND);
	assert_int_equal(fake_driver_n_computers(D1), 0);
	assert_int_equal(open_handle(extra, msg, sizeof(msg)),
	    MSC__V1__CODE__OK);
	free(ids);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    hundred_thousand_unused_handles, setup, sh_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
