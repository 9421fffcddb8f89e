/* test_modal_conv.c - the Modal backend's pure conversions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "modal_conv.h"
#include "msc_driver.h"

static void
test_computer_from_sandbox(void **state)
{
	Modal__Client__SandboxInfo s = MODAL__CLIENT__SANDBOX_INFO__INIT;
	Modal__Client__SandboxTag t[3], *tags[3];
	Modal__Client__TaskInfo task = MODAL__CLIENT__TASK_INFO__INIT;
	Modal__Client__GenericResult done = MODAL__CLIENT__GENERIC_RESULT__INIT;
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	const char *kv[3][2] = { { MODAL_TAG_OWNED, "true" },
		{ MODAL_TAG_ID, "dev-box" }, { MODAL_TAG_TEMPORARY, "false" } };

	(void)state;
	for (int i = 0; i < 3; i++) {
		modal__client__sandbox_tag__init(&t[i]);
		t[i].tag_name = (char *)kv[i][0];
		t[i].tag_value = (char *)kv[i][1];
		tags[i] = &t[i];
	}
	s.id = "sb-123";
	s.created_at = 1700000000.75;
	s.n_tags = 3;
	s.tags = tags;
	assert_string_equal(modal_conv_tag(&s, MODAL_TAG_ID), "dev-box");
	assert_null(modal_conv_tag(&s, MODAL_TAG_IMAGE));
	assert_int_equal(modal_conv_computer(&s, "debian:bookworm-slim", &c), 0);
	assert_string_equal(c.computer_id, "dev-box");
	assert_string_equal(c.sandbox_id, "sb-123");
	assert_false(c.temporary);
	assert_string_equal(c.image, "debian:bookworm-slim");
	assert_string_equal(c.state, "running");
	assert_string_equal(c.created_at, "2023-11-14T22:13:20Z");
	assert_string_equal(c.backend, "modal");
	msc_computer_fini(&c);
	/* An ended task; no temporary tag means temporary. */
	s.n_tags = 2;
	done.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TERMINATED;
	task.result = &done;
	s.task_info = &task;
	assert_int_equal(modal_conv_computer(&s, "x", &c), 0);
	assert_true(c.temporary);
	assert_string_equal(c.state, "exited");
	msc_computer_fini(&c);
}

static void
test_ended_words(void **state)
{
	Modal__Client__GenericResult r = MODAL__CLIENT__GENERIC_RESULT__INIT;
	char buf[128];

	(void)state;
	modal_conv_ended(NULL, buf, sizeof(buf));
	assert_string_equal(buf, "is gone");
	assert_false(modal_conv_finished(NULL));
	assert_false(modal_conv_finished(&r));
	r.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TERMINATED;
	assert_true(modal_conv_finished(&r));
	modal_conv_ended(&r, buf, sizeof(buf));
	assert_string_equal(buf, "was terminated");
	r.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TIMEOUT;
	modal_conv_ended(&r, buf, sizeof(buf));
	assert_non_null(strstr(buf, "lifetime timeout"));
	r.status = MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_FAILURE;
	r.exception = "boom";
	modal_conv_ended(&r, buf, sizeof(buf));
	assert_string_equal(buf, "failed: boom");
}

static void
test_option_values(void **state)
{
	uint32_t v, n;
	char type[16];

	(void)state;
	assert_int_equal(modal_conv_cpu("1.0", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(modal_conv_cpu("0.25", &v), 0);
	assert_int_equal(v, 250);
	assert_int_equal(modal_conv_cpu("2", &v), 0);
	assert_int_equal(v, 2000);
	assert_int_equal(modal_conv_cpu("0", &v), -EINVAL);
	assert_int_equal(modal_conv_cpu("-1", &v), -EINVAL);
	assert_int_equal(modal_conv_cpu("1.5x", &v), -EINVAL);
	assert_int_equal(modal_conv_cpu("nan", &v), -EINVAL);
	assert_int_equal(modal_conv_cpu("0.0001", &v), -EINVAL);
	assert_int_equal(modal_conv_uint("512", 1, 4096, &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(modal_conv_uint("0", 1, 86400, &v), -EINVAL);
	assert_int_equal(modal_conv_uint("86401", 1, 86400, &v), -EINVAL);
	assert_int_equal(modal_conv_uint("-5", 1, 86400, &v), -EINVAL);
	assert_int_equal(modal_conv_uint("12m", 1, 86400, &v), -EINVAL);
	assert_int_equal(modal_conv_uint("99999999999999999999", 1, 86400, &v),
	    -EINVAL);
	assert_int_equal(modal_conv_gpu("a10g", type, sizeof(type), &n), 0);
	assert_string_equal(type, "A10G");
	{
		uint32_t ports[MODAL_PORTS_MAX];
		size_t np = 99;

		assert_int_equal(modal_conv_ports(NULL, ports, &np), 0);
		assert_int_equal(np, 0);
		assert_int_equal(modal_conv_ports(" ", ports, &np), 0);
		assert_int_equal(np, 0);
		assert_int_equal(modal_conv_ports("8080", ports, &np), 0);
		assert_int_equal(np, 1);
		assert_int_equal(ports[0], 8080);
		assert_int_equal(modal_conv_ports("3000, 8080 ,1", ports, &np),
		    0);
		assert_int_equal(np, 3);
		assert_int_equal(ports[2], 1);
		assert_int_equal(modal_conv_ports("0", ports, &np), -EINVAL);
		assert_int_equal(modal_conv_ports("65536", ports, &np),
		    -EINVAL);
		assert_int_equal(modal_conv_ports("80,80", ports, &np),
		    -EINVAL);
		assert_int_equal(modal_conv_ports("80,", ports, &np), -EINVAL);
		assert_int_equal(modal_conv_ports("80;81", ports, &np),
		    -EINVAL);
		assert_int_equal(modal_conv_ports("-1", ports, &np), -EINVAL);
		assert_int_equal(modal_conv_ports("1,2,3,4,5,6,7,8,9,10,11,12,"
		    "13,14,15,16,17", ports, &np), -EINVAL);
	}
	assert_int_equal(n, 1);
	assert_int_equal(modal_conv_gpu("H100:8", type, sizeof(type), &n), 0);
	assert_string_equal(type, "H100");
	assert_int_equal(n, 8);
	assert_int_equal(modal_conv_gpu("H100:0", type, sizeof(type), &n),
	    -EINVAL);
	assert_int_equal(modal_conv_gpu(":2", type, sizeof(type), &n), -EINVAL);
	assert_int_equal(modal_conv_gpu("a b", type, sizeof(type), &n), -EINVAL);
	assert_int_equal(modal_conv_gpu("averyveryverylongname", type,
	    sizeof(type), &n), -EINVAL);
}

static void
test_jwt_exp(void **state)
{
	(void)state;
	/* {"alg":"none"} . {"exp":1700000000,"sub":"x"} . sig */
	assert_int_equal(modal_conv_jwt_exp("eyJhbGciOiJub25lIn0."
	    "eyJleHAiOjE3MDAwMDAwMDAsInN1YiI6IngifQ.c2ln"), 1700000000);
	/* Padding and the standard alphabet are accepted too. */
	assert_int_equal(modal_conv_jwt_exp("x.eyJleHAiOjQyfQ==.y"), 42);
	assert_int_equal(modal_conv_jwt_exp("x.eyJzdWIiOiJ4In0.y"), 0);  /* no exp */
	assert_int_equal(modal_conv_jwt_exp("not-a-jwt"), 0);
	assert_int_equal(modal_conv_jwt_exp("a.!!!.b"), 0);
	assert_int_equal(modal_conv_jwt_exp("a.bm90IGpzb24.b"), 0);   /* not json */
	assert_int_equal(modal_conv_jwt_exp(NULL), 0);
}

static void
test_uuid_and_time(void **state)
{
	char a[37], b[37], t[32];

	(void)state;
	assert_int_equal(modal_conv_uuid(a), 0);
	assert_int_equal(modal_conv_uuid(b), 0);
	assert_int_equal(strlen(a), 36);
	assert_string_not_equal(a, b);
	assert_int_equal(a[8], '-');
	assert_int_equal(a[14], '4');
	assert_non_null(strchr("89ab", a[19]));
	modal_conv_time(0, t, sizeof(t));
	assert_string_equal(t, "");
	modal_conv_time(86400, t, sizeof(t));
	assert_string_equal(t, "1970-01-02T00:00:00Z");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_computer_from_sandbox),
		cmocka_unit_test(test_ended_words),
		cmocka_unit_test(test_option_values),
		cmocka_unit_test(test_jwt_exp),
		cmocka_unit_test(test_uuid_and_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
