/* test_fly_conv.c - the fly-driver's pure functions: auth header, JSON
 * bodies, exec wrappers, replies, base64 and the small file formats. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fly_api.h"
#include "fly_conv.h"
#include "msc_driver.h"

static void
test_auth_header(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(fly_auth_header("abc123", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "Bearer abc123");
	assert_int_equal(fly_auth_header("Bearer abc123 ", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "Bearer abc123");
	assert_int_equal(fly_auth_header("fm2_xyz", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "FlyV1 fm2_xyz");
	assert_int_equal(fly_auth_header("FlyV1 fm1r_a,fm1a_b", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "FlyV1 fm1r_a,fm1a_b");
	assert_int_equal(fly_auth_header("plain,fm2_b", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "FlyV1 plain,fm2_b");
	assert_int_equal(fly_auth_header("Bearer ", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fly_auth_header("", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(fly_auth_header("abcdef", buf, 8), -ENOSPC);
}

static void
test_guest(void **state)
{
	struct fly_guest g;
	char err[256];

	(void)state;
	assert_int_equal(fly_conv_guest("debian:bookworm-slim", NULL, "shared",
	    "1", "512", NULL, &g, err, sizeof(err)), 0);
	assert_int_equal(g.cpus, 1);
	assert_int_equal(g.memory_mb, 512);
	assert_int_equal(fly_conv_guest("i", NULL, "shared", "0", "512", NULL,
	    &g, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--fly-cpus must be at least 1.");
	assert_int_equal(fly_conv_guest("i", NULL, "shared", "1", "128", NULL,
	    &g, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--fly-memory must be at least 256 MB.");
	assert_int_equal(fly_conv_guest("i", NULL, "shared", "1", "300", NULL,
	    &g, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "multiple of 256"));
	assert_int_equal(fly_conv_guest("i", "", "shared", "1", "256", "x",
	    &g, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--fly-rootfs-size"));
}

static void
test_machine_body(void **state)
{
	struct fly_guest g;
	char err[64];
	json_t *b, *c;

	(void)state;
	fly_conv_guest("debian:bookworm-slim", "ams", "shared", "1", "512", "3",
	    &g, err, sizeof(err));
	b = fly_conv_machine_body(&g, "dev-box", false);
	assert_non_null(b);
	c = json_object_get(b, "config");
	assert_string_equal(json_string_value(json_object_get(b, "name")),
	    "dev-box");
	assert_string_equal(json_string_value(json_object_get(b, "region")),
	    "ams");
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(c, "rootfs"), "persist")), "always");
	assert_int_equal(json_integer_value(json_object_get(
	    json_object_get(c, "rootfs"), "size_gb")), 3);
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(c, "restart"), "policy")), "always");
	assert_true(json_is_false(json_object_get(c, "auto_destroy")));
	assert_int_equal(json_integer_value(json_object_get(
	    json_object_get(c, "guest"), "memory_mb")), 512);
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(c, "metadata"), FLY_META_ID)), "dev-box");
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(c, "metadata"), FLY_META_TEMPORARY)), "false");
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(c, "metadata"), FLY_META_IMAGE)),
	    "debian:bookworm-slim");
	assert_int_equal(json_array_size(json_object_get(json_object_get(c,
	    "init"), "exec")), 2);
	json_decref(b);
	g.region = NULL;
	g.rootfs_size_gb = 0;
	b = fly_conv_machine_body(&g, "tmp", true);
	c = json_object_get(b, "config");
	assert_null(json_object_get(b, "region"));
	assert_true(json_is_true(json_object_get(c, "auto_destroy")));
	assert_string_equal(json_string_value(json_object_get(
	    json_object_get(c, "rootfs"), "persist")), "never");
	assert_null(json_object_get(json_object_get(c, "rootfs"), "size_gb"));
	json_decref(b);
}

static char *
joined(json_t *a)
{
	static char buf[1024];
	size_t i;
	json_t *v;

	buf[0] = '\0';
	json_array_foreach (a, i, v) {
		if (i > 0)
			strcat(buf, "|");
		strcat(buf, json_string_value(v));
	}
	return buf;
}

static void
test_exec_argv(void **state)
{
	char *args[] = { "cat", "file with spaces" };
	json_t *a;

	(void)state;
	a = fly_conv_exec_argv("/bin/bash", "echo 'hi' | tr a-z A-Z", NULL, 0,
	    NULL, NULL, 0);
	assert_string_equal(joined(a), "/bin/bash|-c|echo 'hi' | tr a-z A-Z");
	json_decref(a);
	a = fly_conv_exec_argv("/bin/bash", NULL, args, 2, "/workspace dir",
	    "ab12", 30);
	assert_string_equal(joined(a), "/usr/bin/env|KILNTAINERS_EXEC=ab12|"
	    "timeout|-s|KILL|30s|/bin/sh|-c|cd -- \"$1\" && shift && exec "
	    "\"$@\"|kt|/workspace dir|cat|file with spaces");
	json_decref(a);
}

static void
test_exec_reply(void **state)
{
	json_t *r;
	char *out, *err;
	size_t ol, el;
	int code = -1;

	(void)state;
	r = json_loads("{\"stdout\":\"out\\n\",\"stderr\":\"err\\n\","
		       "\"exit_code\":7}", 0, NULL);
	assert_int_equal(fly_conv_exec_reply(r, &out, &ol, &err, &el, &code), 0);
	assert_string_equal(out, "out\n");
	assert_string_equal(err, "err\n");
	assert_int_equal(code, 7);
	free(out);
	free(err);
	json_decref(r);
	r = json_loads("{\"stdout\":\"x\"}", 0, NULL);
	assert_int_equal(fly_conv_exec_reply(r, &out, &ol, &err, &el, &code), 0);
	assert_int_equal(code, 0);
	assert_int_equal(el, 0);
	free(out);
	free(err);
	json_decref(r);
	r = json_loads("{\"exit_signal\":9}", 0, NULL);
	assert_int_equal(fly_conv_exec_reply(r, &out, &ol, &err, &el, &code), 0);
	assert_int_equal(code, 137);
	free(out);
	free(err);
	json_decref(r);
	r = json_loads("{\"exit_code\":\"x\"}", 0, NULL);
	assert_int_equal(fly_conv_exec_reply(r, &out, &ol, &err, &el, &code),
	    -EPROTO);
	json_decref(r);
	r = json_loads("[1]", 0, NULL);
	assert_int_equal(fly_conv_exec_reply(r, &out, &ol, &err, &el, &code),
	    -EPROTO);
	json_decref(r);
}

static void
test_computer(void **state)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	json_t *m = json_loads("{\"id\":\"148e\",\"state\":\"stopped\","
			       "\"created_at\":\"2025-01-01T00:00:00Z\","
			       "\"config\":{\"metadata\":{\"kilntainers-"
			       "computer-id\":\"dev\",\"kilntainers-temporary\":"
			       "\"false\"}}}", 0, NULL);

	(void)state;
	assert_string_equal(fly_conv_meta(m, FLY_META_ID), "dev");
	assert_int_equal(fly_conv_computer(m, "img", &c), 0);
	assert_string_equal(c.computer_id, "dev");
	assert_string_equal(c.sandbox_id, "148e");
	assert_false(c.temporary);
	assert_string_equal(c.image, "img");
	assert_string_equal(c.state, "stopped");
	assert_string_equal(c.backend, "fly");
	msc_computer_fini(&c);
	json_decref(m);
	assert_true(fly_conv_state_gone("destroyed"));
	assert_false(fly_conv_state_gone("stopped"));
	assert_false(fly_conv_state_gone(NULL));
}

static void
test_b64(void **state)
{
	char *out;
	size_t n;

	(void)state;
	assert_int_equal(fly_conv_b64decode("aGVsbG8K", 8, &out, &n), 0);
	assert_int_equal(n, 6);
	assert_memory_equal(out, "hello\n", 6);
	free(out);
	assert_int_equal(fly_conv_b64decode("AP8=\n", 5, &out, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal((unsigned char)out[1], 0xff);
	free(out);
	assert_int_equal(fly_conv_b64decode("", 0, &out, &n), 0);
	assert_int_equal(n, 0);
	free(out);
	assert_int_equal(fly_conv_b64decode("a*b", 3, &out, &n), -EINVAL);
}

static void
test_files(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(fly_conv_yaml_token("x: 1\naccess_token: abc\n", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "abc");
	assert_int_equal(fly_conv_yaml_token("access_token: \"FlyV1 q\"\r\n",
	    buf, sizeof(buf)), 0);
	assert_string_equal(buf, "FlyV1 q");
	assert_int_equal(fly_conv_yaml_token("access_token:\n", buf,
	    sizeof(buf)), -ENOENT);
	assert_int_equal(fly_conv_yaml_token("  access_token: nested\n", buf,
	    sizeof(buf)), -ENOENT);
	assert_int_equal(fly_conv_state_app("{\"app_name\":\"kt-1\"}", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "kt-1");
	assert_int_equal(fly_conv_state_app("{\"app\":\"kt-2\"}", buf,
	    sizeof(buf)), 0);
	assert_string_equal(buf, "kt-2");
	assert_int_equal(fly_conv_state_app("not json", buf, sizeof(buf)),
	    -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_header),
		cmocka_unit_test(test_guest),
		cmocka_unit_test(test_machine_body),
		cmocka_unit_test(test_exec_argv),
		cmocka_unit_test(test_exec_reply),
		cmocka_unit_test(test_computer),
		cmocka_unit_test(test_b64),
		cmocka_unit_test(test_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
