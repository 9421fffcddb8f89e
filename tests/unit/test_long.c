/*
 * test_long.c - the pieces of issue 16 that need no engine: a reply's
 * head-and-tail cut (session_output.c), a progress message
 * (edge/mcp_live.c) and the driver's registry of keyed commands
 * (lib/msc_driver_live.c), each on hostile input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mcp_live.h"
#include "msc_driver_live.h"
#include "session_output.h"

static const char *
marker_end(const char *s)
{
	const char *m = strstr(s, "\n[kilntainers: ");

	assert_non_null(m);
	m = strstr(m, "]\n");
	assert_non_null(m);
	return m + 2;
}

/* Lines: the head ends and the tail starts at a line end. */
static void
cut_lines(void **state)
{
	char in[20000], *out;
	size_t n = 0, len;

	(void)state;
	for (int i = 0; n < sizeof(in) - 16; i++)
		n += (size_t)snprintf(in + n, sizeof(in) - n, "line %d\n", i);
	assert_int_equal(sess_output_cut((uint8_t *)in, n, 4096, "stdout",
	    "/tmp/kilntainers-output/x.stdout", NULL, &out, &len), 0);
	assert_true(strstr(out, "saved inside the computer at "
	    "/tmp/kilntainers-output/x.stdout") != NULL);
	assert_memory_equal(out, "line 0\n", 7);
	{
		const char *m = strstr(out, "\n[kilntainers: ");
		const char *tail = marker_end(out);

		assert_true(m[-1] == '\n');     /* whole head lines */
		assert_true((size_t)(m - out) <= 2048);
		assert_true(strlen(tail) <= 2048);
		assert_true(strncmp(tail, "line ", 5) == 0);
		assert_memory_equal(tail, in + n - strlen(tail), strlen(tail));
	}
	free(out);
}

/* Multibyte text with no newline: never cut inside a character. */
static void
cut_utf8(void **state)
{
	char in[9000], *out;
	size_t len;

	(void)state;
	for (size_t i = 0; i + 3 <= sizeof(in); i += 3)
		memcpy(in + i, "\xe2\x82\xac", 3);      /* U+20AC */
	for (size_t share = 1000; share < 1010; share++) {
		assert_int_equal(sess_output_cut((uint8_t *)in, sizeof(in),
		    share, "stderr", NULL, "it is over 32 MiB", &out, &len), 0);
		assert_null(strstr(out, "\xef\xbf\xbd"));
		assert_non_null(strstr(out, "could not be saved in the "
		    "computer (it is over 32 MiB)"));
		free(out);
	}
}

/* Binary bytes and NULs: the result is valid UTF-8 of bounded size. */
static void
cut_binary(void **state)
{
	uint8_t in[65536];
	char *out;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 2654435761u >> 13);
	assert_int_equal(sess_output_cut(in, sizeof(in), 2048, "stdout", "",
	    "x", &out, &len), 0);
	assert_true(len < 3 * 2048 + 512);
	free(out);
}

static void
progress_message(void **state)
{
	const char *t = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
	char *m;
	char longline[700];

	(void)state;
	m = mcp_progress_message((const uint8_t *)t, strlen(t));
	assert_string_equal(m, "three\nfour\nfive\nsix\nseven");
	free(m);
	m = mcp_progress_message((const uint8_t *)"a\x1b[31mred\r\x07z", 13);
	assert_string_equal(m, "a[31mredz");
	free(m);
	memset(longline, 'x', sizeof(longline));
	memcpy(longline + 199, "\xc3\xa9", 2);  /* é across the cut */
	m = mcp_progress_message((const uint8_t *)longline, sizeof(longline));
	/* 200 characters: 199 x and the é, whole. */
	assert_int_equal(strlen(m), 201);
	assert_string_equal(m + 199, "\xc3\xa9");
	free(m);
	m = mcp_progress_message((const uint8_t *)"\xff\xfe", 2);
	assert_string_equal(m, "\xef\xbf\xbd\xef\xbf\xbd");
	free(m);
	m = mcp_progress_message((const uint8_t *)"", 0);
	assert_string_equal(m, "");
	free(m);
}

static void
call_keys(void **state)
{
	char k[MCP_LIVE_KEY_MAX];
	json_t *v;

	(void)state;
	assert_true(mcp_live_call_key(v = json_integer(-7), k));
	assert_string_equal(k, "n:-7");
	json_decref(v);
	assert_true(mcp_live_call_key(v = json_string("7"), k));
	assert_string_equal(k, "s:7");          /* not the integer 7 */
	json_decref(v);
	assert_false(mcp_live_call_key(v = json_stringn("a\0b", 3), k));
	json_decref(v);
	assert_false(mcp_live_call_key(v = json_null(), k));
	char big[400];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_false(mcp_live_call_key(v = json_string(big), k));
	json_decref(v);
}

/* Register, cancel before and while running, peek the ring. */
static void
live_registry(void **state)
{
	struct msc_live_table *t;
	struct msc_live *a, *b, *dup;
	uint64_t bytes;
	bool running;
	char tail[MSC_LIVE_TAIL], big[3000];
	size_t n;

	(void)state;
	assert_int_equal(msc_live_table_new(&t), 0);
	assert_int_equal(msc_live_add(t, "c1", "", &a), 0);
	assert_null(a);                         /* no key: not registered */
	assert_int_equal(msc_live_add(t, "c1", "k1", &a), 0);
	assert_int_equal(msc_live_add(t, "c1", "k1", &dup), -EEXIST);
	assert_int_equal(msc_live_add(t, "c2", "k1", &b), 0);
	assert_int_equal(msc_live_cancel(t, "c3", "k1"), -ENOENT);
	/* b is cancelled before it starts: it never runs. */
	assert_int_equal(msc_live_cancel(t, "c2", "k1"), 0);
	assert_false(msc_live_begin(b));
	msc_live_end(t, b);
	assert_int_equal(msc_live_cancel(t, "c2", "k1"), -ENOENT);
	/* a runs: output goes to its ring, a cancel makes its fd readable. */
	assert_true(msc_live_begin(a));
	assert_true(msc_driver_cancel_fd() >= 0);
	memset(big, 'q', sizeof(big));
	big[sizeof(big) - 1] = 'Z';
	msc_driver_output("hello ", 6);
	msc_driver_output(big, sizeof(big));
	assert_int_equal(msc_live_peek(t, "c1", "k1", &bytes, &running, tail,
	    &n), 0);
	assert_int_equal(bytes, 6 + sizeof(big));
	assert_true(running);
	assert_int_equal(n, MSC_LIVE_TAIL);
	assert_int_equal(tail[n - 1], 'Z');
	assert_false(msc_driver_cancelled());
	assert_int_equal(msc_live_cancel(t, "c1", "k1"), 0);
	{
		struct pollfd p = { .fd = msc_driver_cancel_fd(),
			.events = POLLIN };

		assert_int_equal(poll(&p, 1, 0), 1);
	}
	assert_true(msc_driver_cancelled());
	msc_live_finish(a);
	assert_int_equal(msc_driver_cancel_fd(), -1);
	msc_driver_output("x", 1);              /* no current: ignored */
	msc_live_end(t, a);
	assert_int_equal(msc_live_peek(t, "c1", "k1", &bytes, &running, tail,
	    &n), -ENOENT);
	msc_live_table_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cut_lines),
		cmocka_unit_test(cut_utf8),
		cmocka_unit_test(cut_binary),
		cmocka_unit_test(progress_message),
		cmocka_unit_test(call_keys),
		cmocka_unit_test(live_registry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
