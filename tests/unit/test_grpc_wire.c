/* test_grpc_wire.c - gRPC framing, trailers and status codes (no I/O). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grpc_wire.h"

struct got {
	char text[256];
	size_t n;
	int stop_at;            /* return 1 at this message (0: never) */
};

static int
collect(const uint8_t *m, size_t len, void *arg)
{
	struct got *g = arg;

	g->n++;
	strncat(g->text, (const char *)m, len);
	strcat(g->text, ";");
	return g->stop_at != 0 && (size_t)g->stop_at == g->n ? 1 : 0;
}

static void
test_frame_layout(void **state)
{
	uint8_t *f;
	size_t n;

	(void)state;
	assert_int_equal(grpc_frame((const uint8_t *)"abc", 3, &f, &n), 0);
	assert_int_equal(n, 8);
	assert_memory_equal(f, "\0\0\0\0\3abc", 8);
	free(f);
	assert_int_equal(grpc_frame(NULL, 0, &f, &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(f, "\0\0\0\0\0", 5);
	free(f);
}

static void
test_reader_split_and_joined(void **state)
{
	struct grpc_reader r = { 0 };
	struct got g = { 0 };
	uint8_t buf[64];
	size_t len = 0;
	const char *msgs[] = { "one", "", "three" };

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		uint8_t *f;
		size_t n;

		assert_int_equal(grpc_frame((const uint8_t *)msgs[i],
		    strlen(msgs[i]), &f, &n), 0);
		memcpy(buf + len, f, n);
		len += n;
		free(f);
	}
	/* One byte at a time: the header and the body split anywhere. */
	for (size_t i = 0; i < len; i++) {
		assert_int_equal(grpc_reader_feed(&r, (const char *)buf + i, 1,
		    collect, &g), 0);
		assert_true(grpc_reader_partial(&r) == (i + 1 != len &&
		    i + 1 != 8 && i + 1 != 13));
	}
	assert_string_equal(g.text, "one;;three;");
	/* All at once. */
	memset(&g, 0, sizeof(g));
	assert_int_equal(grpc_reader_feed(&r, (const char *)buf, len, collect,
	    &g), 0);
	assert_string_equal(g.text, "one;;three;");
	assert_false(grpc_reader_partial(&r));
	/* A callback that stops: its result, the rest not read. */
	memset(&g, 0, sizeof(g));
	g.stop_at = 2;
	assert_int_equal(grpc_reader_feed(&r, (const char *)buf, len, collect,
	    &g), 1);
	assert_int_equal(g.n, 2);
	grpc_reader_fini(&r);
}

static void
test_reader_refuses(void **state)
{
	struct grpc_reader r = { 0 };
	struct got g = { 0 };

	(void)state;
	/* Compressed: we never asked for it. */
	assert_int_equal(grpc_reader_feed(&r, "\1\0\0\0\1x", 6, collect, &g),
	    -EPROTO);
	grpc_reader_fini(&r);
	/* Over the receive limit, before any allocation. */
	r.max = 16;
	assert_int_equal(grpc_reader_feed(&r, "\0\0\0\0\21", 5, collect, &g),
	    -EMSGSIZE);
	grpc_reader_fini(&r);
	r.max = 0;
	assert_int_equal(grpc_reader_feed(&r, "\0\x7f\xff\xff\xff", 5, collect,
	    &g), -EMSGSIZE);
	grpc_reader_fini(&r);
	assert_int_equal(g.n, 0);
}

static void
line(struct grpc_status *s, const char *l)
{
	grpc_status_line(s, l, strlen(l));
}

static void
test_status_trailers(void **state)
{
	struct grpc_status s;

	(void)state;
	grpc_status_init(&s);
	assert_int_equal(s.code, -1);
	line(&s, "HTTP/2 200 \r\n");
	line(&s, "content-type: application/grpc\r\n");
	line(&s, "grpc-accept-encoding: identity\r\n");
	line(&s, "\r\n");
	assert_int_equal(s.http, 200);
	assert_true(s.grpc_type);
	assert_int_equal(s.code, -1);
	/* Trailers come after the body through the same callback. */
	line(&s, "grpc-status: 16\r\n");
	line(&s, "grpc-message: Token%20ID%20or%20secret%20is%20invalid%2E%25\r\n");
	assert_int_equal(s.code, 16);
	assert_string_equal(s.message, "Token ID or secret is invalid.%");
	/* Trailers-Only (an error in the headers), any case. */
	line(&s, "HTTP/2 200\r\n");
	assert_int_equal(s.code, -1);
	line(&s, "Content-Type: application/grpc+proto\r\n");
	line(&s, "Grpc-Status: 5\r\n");
	assert_true(s.grpc_type);
	assert_int_equal(s.code, 5);
	assert_string_equal(s.message, "");
	/* Not gRPC; a bad status value. */
	line(&s, "HTTP/1.1 502 Bad Gateway\r\n");
	line(&s, "content-type: text/html\r\n");
	assert_int_equal(s.http, 502);
	assert_false(s.grpc_type);
	line(&s, "content-type: application/grpcweb\r\n");
	assert_false(s.grpc_type);
	line(&s, "grpc-status: nope\r\n");
	assert_int_equal(s.code, GRPC_UNKNOWN);
	line(&s, "grpc-status-details-bin: AAAA\r\n");
	assert_int_equal(s.code, GRPC_UNKNOWN);
}

static void
test_message_decode(void **state)
{
	char buf[8];

	(void)state;
	grpc_message_decode("a%2", 3, buf, sizeof(buf));
	assert_string_equal(buf, "a%2");          /* truncated escape kept */
	grpc_message_decode("%zz%41", 6, buf, sizeof(buf));
	assert_string_equal(buf, "%zzA");
	grpc_message_decode("0123456789", 10, buf, sizeof(buf));
	assert_string_equal(buf, "0123456");      /* bounded */
}

static void
test_codes(void **state)
{
	char tv[24];

	(void)state;
	assert_string_equal(grpc_code_name(14), "UNAVAILABLE");
	assert_string_equal(grpc_code_name(16), "UNAUTHENTICATED");
	assert_string_equal(grpc_code_name(99), "UNKNOWN_CODE");
	assert_true(grpc_code_retryable(GRPC_UNAVAILABLE));
	assert_true(grpc_code_retryable(GRPC_DEADLINE_EXCEEDED));
	assert_true(grpc_code_retryable(GRPC_INTERNAL));
	assert_false(grpc_code_retryable(GRPC_INVALID_ARGUMENT));
	assert_false(grpc_code_retryable(GRPC_UNAUTHENTICATED));
	assert_false(grpc_code_retryable(GRPC_RESOURCE_EXHAUSTED));
	assert_int_equal(grpc_code_errno(GRPC_OK), 0);
	assert_int_equal(grpc_code_errno(GRPC_UNAUTHENTICATED), -EACCES);
	assert_int_equal(grpc_code_errno(GRPC_NOT_FOUND), -ENOENT);
	assert_int_equal(grpc_code_errno(GRPC_ALREADY_EXISTS), -EEXIST);
	assert_int_equal(grpc_code_errno(GRPC_DEADLINE_EXCEEDED), -ETIMEDOUT);
	assert_int_equal(grpc_code_errno(GRPC_UNAVAILABLE), -EIO);
	assert_int_equal(grpc_code_from_http(401), GRPC_UNAUTHENTICATED);
	assert_int_equal(grpc_code_from_http(404), GRPC_UNIMPLEMENTED);
	assert_int_equal(grpc_code_from_http(503), GRPC_UNAVAILABLE);
	assert_int_equal(grpc_code_from_http(418), GRPC_UNKNOWN);
	grpc_timeout_value(1500, tv, sizeof(tv));
	assert_string_equal(tv, "1500m");
	grpc_timeout_value(99999999, tv, sizeof(tv));
	assert_string_equal(tv, "99999999m");
	grpc_timeout_value(100000000, tv, sizeof(tv));
	assert_string_equal(tv, "100000S");
	grpc_timeout_value(UINT64_MAX, tv, sizeof(tv));
	assert_string_equal(tv, "99999999S");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_layout),
		cmocka_unit_test(test_reader_split_and_joined),
		cmocka_unit_test(test_reader_refuses),
		cmocka_unit_test(test_status_trailers),
		cmocka_unit_test(test_message_decode),
		cmocka_unit_test(test_codes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
