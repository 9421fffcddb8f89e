/* test_e2b_conv.c - the E2B backend's pure conversions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "e2b_conv.h"

static int
collect(uint8_t flags, const char *msg, size_t len, void *arg)
{
	char *buf = arg;

	(void)len;
	strcat(buf, flags & 2 ? "E:" : "M:");
	strcat(buf, msg);
	strcat(buf, ";");
	return 0;
}

static void
test_frames_split(void **state)
{
	struct e2b_frames f = { 0 };
	char *a, *b, all[256], got[256] = "";
	size_t al, bl;

	(void)state;
	assert_int_equal(e2b_conv_envelope(0, "{\"x\":1}", 7, &a, &al), 0);
	assert_int_equal(e2b_conv_envelope(2, "{}", 2, &b, &bl), 0);
	memcpy(all, a, al);
	memcpy(all + al, b, bl);
	for (size_t i = 0; i < al + bl; i++)   /* one byte at a time */
		assert_int_equal(e2b_frames_feed(&f, all + i, 1, collect, got), 0);
	assert_string_equal(got, "M:{\"x\":1};E:{};");
	e2b_frames_fini(&f);
	free(a);
	free(b);
	assert_int_equal(e2b_frames_feed(&f, "\0\xff\xff\xff\xff", 5, collect,
	    got), -EPROTO);
	e2b_frames_fini(&f);
}

static void
test_events(void **state)
{
	struct e2b_event ev;
	const char *m;

	(void)state;
	m = "{\"event\":{\"start\":{\"pid\":42}}}";
	assert_int_equal(e2b_conv_event(m, strlen(m), &ev), 0);
	assert_int_equal(ev.kind, E2B_EV_START);
	assert_int_equal(ev.pid, 42);
	m = "{\"event\":{\"data\":{\"stderr\":\"aGk=\"}}}";
	assert_int_equal(e2b_conv_event(m, strlen(m), &ev), 0);
	assert_int_equal(ev.kind, E2B_EV_STDERR);
	assert_int_equal(ev.len, 2);
	assert_memory_equal(ev.data, "hi", 2);
	free(ev.data);
	m = "{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}";
	assert_int_equal(e2b_conv_event(m, strlen(m), &ev), 0);
	assert_int_equal(ev.kind, E2B_EV_END);
	assert_int_equal(ev.exit_code, 0);
	m = "{\"event\":{\"end\":{\"exitCode\":-1,\"status\":\"signal: killed\"}}}";
	assert_int_equal(e2b_conv_event(m, strlen(m), &ev), 0);
	assert_int_equal(ev.exit_code, 137);
	m = "{\"event\":{\"end\":{\"exitCode\":3,\"exited\":true}}}";
	assert_int_equal(e2b_conv_event(m, strlen(m), &ev), 0);
	assert_int_equal(ev.exit_code, 3);
	m = "{\"nope\":1}";
	assert_int_equal(e2b_conv_event(m, strlen(m), &ev), -EPROTO);
}

static void
test_eos_meta_b64(void **state)
{
	char code[64], text[64], q[256], *o, *d;
	size_t n;
	const char *m = "{\"error\":{\"code\":\"deadline_exceeded\","
			"\"message\":\"late\"}}";
	json_t *pairs;
	const char *items[] = { "a=b=c", "noeq", "k=" };

	(void)state;
	assert_int_equal(e2b_conv_eos("{}", 2, code, sizeof(code), text,
	    sizeof(text)), 0);
	assert_int_equal(e2b_conv_eos(m, strlen(m), code, sizeof(code), text,
	    sizeof(text)), 1);
	assert_string_equal(code, "deadline_exceeded");
	assert_int_equal(e2b_conv_meta_query("kilntainers-computer-id", "a b",
	    q, sizeof(q)), 0);
	assert_string_equal(q, "kilntainers-computer-id%3Da%2520b");
	assert_int_equal(e2b_conv_b64encode("\0\xffxy", 4, &o), 0);
	assert_string_equal(o, "AP94eQ==");
	assert_int_equal(e2b_conv_b64decode(o, strlen(o), &d, &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(d, "\0\xffxy", 4);
	free(o);
	free(d);
	pairs = e2b_conv_pairs(items, 3);
	assert_string_equal(json_string_value(json_object_get(pairs, "a")),
	    "b=c");
	assert_null(json_object_get(pairs, "noeq"));
	assert_string_equal(json_string_value(json_object_get(pairs, "k")), "");
	json_decref(pairs);
}

/* --network-allow: only the allow domains, everything else denied. */
static void
test_network_allowlist(void **state)
{
	char *allow[] = { (char *)"api.example", (char *)"*.pypi.example" };
	json_t *body = e2b_conv_create_body("base", 60, NULL, NULL, true, "c1",
	    true), *net;
	char *text;

	(void)state;
	assert_non_null(body);
	assert_int_equal(e2b_conv_network(body, allow, 2), 0);
	net = json_object_get(body, "network");
	text = json_dumps(net, JSON_SORT_KEYS | JSON_COMPACT);
	assert_string_equal(text, "{\"allowOut\":[\"api.example\","
	    "\"*.pypi.example\"],\"denyOut\":[\"0.0.0.0/0\"]}");
	free(text);
	assert_true(json_is_true(json_object_get(body, "allow_internet_access")));
	json_decref(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_split),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_eos_meta_b64),
		cmocka_unit_test(test_network_allowlist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
