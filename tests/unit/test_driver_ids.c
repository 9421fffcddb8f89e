/* test_driver_ids.c - the Driver skeleton (lib/msc_driver) refuses a
 * computer_id that is not a slug on every method, over the RPC, before a
 * backend operation runs: a docker driver builds host paths from it
 * (`a/../../../../dev`). A fake backend counts the calls that reach it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "driver.pb-c.h"
#include "envelope.pb-c.h"
#include "msc_driver.h"
#include "msc_rpc.h"

#define URL "inproc://test-driver-ids"

static int backend_calls;       /* operations that reached the backend */

static int
fake_computer(const char *id, Msc__V1__Computer *out)
{
	__atomic_add_fetch(&backend_calls, 1, __ATOMIC_SEQ_CST);
	out->computer_id = strdup(id);
	return out->computer_id != NULL ? 0 : -ENOMEM;
}

static int
fake_create(void *be, const char *id, bool temporary, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	(void)be;
	(void)temporary;
	(void)err;
	(void)errlen;
	return fake_computer(id, out);
}

static int
fake_ref(void *be, const char *id, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	(void)be;
	(void)err;
	(void)errlen;
	return fake_computer(id, out);
}

static int
fake_stop(void *be, const char *id, bool remove, char *err, size_t errlen)
{
	(void)be;
	(void)id;
	(void)remove;
	(void)err;
	(void)errlen;
	__atomic_add_fetch(&backend_calls, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int
fake_list(void *be, Msc__V1__ComputerList *out, char *err, size_t errlen)
{
	(void)be;
	(void)out;
	(void)err;
	(void)errlen;
	__atomic_add_fetch(&backend_calls, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int
fake_exec(void *be, const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *out,
    char *err, size_t errlen)
{
	(void)be;
	(void)req;
	(void)out;
	(void)err;
	(void)errlen;
	__atomic_add_fetch(&backend_calls, 1, __ATOMIC_SEQ_CST);
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

static const char *const methods[] = { "Create", "Attach", "Exec", "Stop",
	"Delete", "Restart", "Reset" };
#define NMETHODS (sizeof(methods) / sizeof(*methods))

static struct msc_driver *drv;
static struct msc_client *cli;

static int
setup(void **state)
{
	(void)state;
	backend_calls = 0;
	if (msc_driver_start(URL, &fake_ops, NULL, 4, &drv) != 0 ||
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

/* Calls `method` naming computer `id`; returns the status code. */
static Msc__V1__Code
call_with_id(const char *method, const char *id, char *msg, size_t msglen)
{
	Msc__V1__CreateRequest cr = MSC__V1__CREATE_REQUEST__INIT;
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;
	Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;
	const ProtobufCMessage *req = &ref.base;

	cr.computer_id = er.computer_id = ref.computer_id = (char *)id;
	er.command = "true";
	if (strcmp(method, "Create") == 0)
		req = &cr.base;
	else if (strcmp(method, "Exec") == 0)
		req = &er.base;
	return msc_client_call_sync(cli, &msc__v1__driver__descriptor, method,
	    req, 5000, NULL, msg, msglen);
}

/* The ids an attacker sends: paths, empty, too long, uppercase. */
static void
every_method_refuses_bad_ids(void **state)
{
	char long_id[80], msg[512];
	const char *bad[] = { "a/../../../../dev", "../x", "", long_id,
		"Uppercase", "a b", "-lead", "trail-", "a.b" };

	(void)state;
	memset(long_id, 'a', 64);
	long_id[64] = '\0';
	for (size_t m = 0; m < NMETHODS; m++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
			Msc__V1__Code code = call_with_id(methods[m], bad[i],
			    msg, sizeof(msg));

			if (code != MSC__V1__CODE__INVALID_ARGUMENT)
				fail_msg("Driver/%s with id '%s' answered %d "
				    "(%s), not INVALID_ARGUMENT", methods[m],
				    bad[i], code, msg);
			assert_non_null(strstr(msg, "computer_id must be"));
		}
	assert_int_equal(backend_calls, 0);
}

/* The same methods with a good id do reach the backend (the counter
 * above would see a call that got through). */
static void
good_ids_reach_the_backend(void **state)
{
	char max_id[64], msg[512];

	(void)state;
	memset(max_id, 'z', 63);
	max_id[63] = '\0';
	for (size_t m = 0; m < NMETHODS; m++) {
		assert_int_equal(call_with_id(methods[m], "ok-1", msg,
				     sizeof(msg)), MSC__V1__CODE__OK);
		assert_int_equal(call_with_id(methods[m], max_id, msg,
				     sizeof(msg)), MSC__V1__CODE__OK);
	}
	assert_int_equal(backend_calls, 2 * (int)NMETHODS);
}

/*
 * An id with a NUL inside ("ok\0/../../dev"): protobuf-c would cut it to
 * the valid "ok", a computer the caller did not name. The request is
 * packed by hand, as a client in another language could send it.
 */
static void
nul_inside_an_id_is_refused(void **state)
{
	static const uint8_t payload[] = { 0x0a, 13, 'o', 'k', 0, '/', '.',
		'.', '/', '.', '.', '/', 'd', 'e', 'v' };
	Msc__V1__Envelope env = MSC__V1__ENVELOPE__INIT, *reply;
	char method[64];
	nng_socket s;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(nng_req0_open(&s), 0);
	assert_int_equal(nng_dial(s, URL, NULL, 0), 0);
	assert_int_equal(nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 5000), 0);
	for (size_t m = 0; m < NMETHODS; m++) {
		snprintf(method, sizeof(method), "msc.v1.Driver/%s",
		    methods[m]);
		env.request_id = m + 1;
		env.method = method;
		env.payload.data = (uint8_t *)payload;
		env.payload.len = sizeof(payload);
		len = msc__v1__envelope__get_packed_size(&env);
		assert_non_null(buf = malloc(len));
		msc__v1__envelope__pack(&env, buf);
		assert_int_equal(nng_send(s, buf, len, 0), 0);
		free(buf);
		assert_int_equal(nng_recv(s, &buf, &len, NNG_FLAG_ALLOC), 0);
		reply = msc__v1__envelope__unpack(NULL, len, buf);
		nng_free(buf, len);
		assert_non_null(reply);
		assert_non_null(reply->status);
		if (reply->status->code != MSC__V1__CODE__INVALID_ARGUMENT)
			fail_msg("Driver/%s with a NUL in its id answered %d",
			    methods[m], reply->status->code);
		msc__v1__envelope__free_unpacked(reply, NULL);
	}
	nng_close(s);
	assert_int_equal(backend_calls, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(every_method_refuses_bad_ids,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(good_ids_reach_the_backend,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(nul_inside_an_id_is_refused,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
