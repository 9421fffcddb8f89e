/*
 * test_fastexec_wire.c - the fast exec wire format (fastexec_wire.h):
 * headers, the REQ payload, EXIT, and the incremental parser, with
 * malformed and hostile input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "fastexec_wire.h"

static void
test_header_roundtrip(void **state)
{
	uint8_t h[FX_HDR_LEN];
	uint32_t len;
	int type;

	(void)state;
	assert_int_equal(fx_hdr_encode(h, FX_STDOUT, 5), 0);
	assert_int_equal(h[0], FX_STDOUT);
	assert_int_equal(h[7], 5);
	assert_int_equal(fx_hdr_decode(h, true, &type, &len), 0);
	assert_int_equal(type, FX_STDOUT);
	assert_int_equal(len, 5);
	/* Wrong direction. */
	assert_int_equal(fx_hdr_decode(h, false, &type, &len), -EPROTO);
	assert_int_equal(fx_hdr_encode(h, FX_STDIN, FX_DATA_MAX), 0);
	assert_int_equal(fx_hdr_decode(h, false, &type, &len), 0);
	assert_int_equal(fx_hdr_decode(h, true, &type, &len), -EPROTO);
	/* Too long for the type. */
	assert_int_equal(fx_hdr_encode(h, FX_STDOUT, FX_DATA_MAX + 1), -EINVAL);
	assert_int_equal(fx_hdr_encode(h, FX_KILL, 1), -EINVAL);
	assert_int_equal(fx_hdr_encode(h, 99, 0), -EINVAL);
}

static void
test_header_hostile(void **state)
{
	uint8_t h[FX_HDR_LEN];
	uint32_t len;
	int type;

	(void)state;
	/* Reserved bytes must be zero. */
	fx_hdr_encode(h, FX_STDERR, 1);
	h[2] = 1;
	assert_int_equal(fx_hdr_decode(h, true, &type, &len), -EPROTO);
	/* Unknown types. */
	for (int t = 0; t < 256; t++) {
		memset(h, 0, sizeof(h));
		h[0] = (uint8_t)t;
		int rc = fx_hdr_decode(h, true, &type, &len);

		if (t == FX_STDOUT || t == FX_STDERR || t == FX_ERROR)
			assert_int_equal(rc, 0);
		else
			assert_int_equal(rc, -EPROTO);
	}
	/* A 4 GiB payload claim. */
	memset(h, 0xff, sizeof(h));
	h[0] = FX_STDOUT;
	h[1] = h[2] = h[3] = 0;
	assert_int_equal(fx_hdr_decode(h, true, &type, &len), -EPROTO);
	/* EXIT must be exactly 8 bytes; ERROR bounded. */
	fx_hdr_encode(h, FX_EXIT, FX_EXIT_LEN);
	h[7] = 7;
	assert_int_equal(fx_hdr_decode(h, true, &type, &len), -EPROTO);
	fx_hdr_encode(h, FX_ERROR, FX_ERR_MAX);
	h[6] = 0x20;
	assert_int_equal(fx_hdr_decode(h, true, &type, &len), -EPROTO);
}

static void
test_req_roundtrip(void **state)
{
	const char *argv[] = { "/bin/sh", "-c", "echo hi", "", NULL };
	const char *env[] = { "A=1", "B=", "C==x", NULL };
	struct fx_req r = { .flags = FX_F_STDIN, .timeout_ms = 1234,
		.output_limit = (1ull << 40) + 7, .workdir = "/tmp",
		.argv = argv, .env = env };
	struct fx_req_dec d;
	uint8_t *b;
	size_t n;
	uint32_t len;
	int type;

	(void)state;
	assert_int_equal(fx_req_encode(&r, &b, &n), 0);
	assert_int_equal(fx_hdr_decode(b, false, &type, &len), 0);
	assert_int_equal(type, FX_REQ);
	assert_int_equal(len, n - FX_HDR_LEN);
	assert_int_equal(fx_req_decode(b + FX_HDR_LEN, len, &d), 0);
	assert_int_equal(d.req.flags, FX_F_STDIN);
	assert_int_equal(d.req.timeout_ms, 1234);
	assert_true(d.req.output_limit == (1ull << 40) + 7);
	assert_string_equal(d.req.workdir, "/tmp");
	for (int i = 0; i < 4; i++)
		assert_string_equal(d.req.argv[i], argv[i]);
	assert_null(d.req.argv[4]);
	for (int i = 0; i < 3; i++)
		assert_string_equal(d.req.env[i], env[i]);
	assert_null(d.req.env[3]);
	fx_req_dec_fini(&d);
	/* Every truncation is refused, none crashes. */
	for (size_t k = 0; k < len; k++)
		assert_int_equal(fx_req_decode(b + FX_HDR_LEN, k, &d), -EPROTO);
	/* Trailing garbage too. */
	{
		uint8_t *big = malloc(len + 1);

		memcpy(big, b + FX_HDR_LEN, len);
		big[len] = 0;
		assert_int_equal(fx_req_decode(big, len + 1, &d), -EPROTO);
		free(big);
	}
	free(b);
}

static void
test_req_encode_refuses(void **state)
{
	const char *noargv[] = { NULL };
	const char *argv[] = { "x", NULL };
	const char *badenv[] = { "NOEQUALS", NULL };
	const char *badenv2[] = { "=v", NULL };
	struct fx_req r = { .argv = noargv };
	uint8_t *b;
	size_t n;

	(void)state;
	assert_int_equal(fx_req_encode(&r, &b, &n), -EINVAL);
	r.argv = NULL;
	assert_int_equal(fx_req_encode(&r, &b, &n), -EINVAL);
	r.argv = argv;
	r.env = badenv;
	assert_int_equal(fx_req_encode(&r, &b, &n), -EINVAL);
	r.env = badenv2;
	assert_int_equal(fx_req_encode(&r, &b, &n), -EINVAL);
	/* Over FX_REQ_MAX. */
	{
		char *huge = malloc(FX_REQ_MAX + 1);
		const char *hv[] = { huge, NULL };

		memset(huge, 'a', FX_REQ_MAX);
		huge[FX_REQ_MAX] = '\0';
		r.env = NULL;
		r.argv = hv;
		assert_int_equal(fx_req_encode(&r, &b, &n), -EINVAL);
		free(huge);
	}
}

/* A REQ payload built by hand, then mangled. */
static size_t
hand_req(uint8_t *p, uint32_t magic, uint32_t ver, uint32_t flags,
    uint32_t argc, uint32_t envc)
{
	uint32_t v[] = { magic, ver, flags, 0, 0, 0, argc, envc, 0 };
	size_t off = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++, off += 4) {
		p[off] = (uint8_t)(v[i] >> 24);
		p[off + 1] = (uint8_t)(v[i] >> 16);
		p[off + 2] = (uint8_t)(v[i] >> 8);
		p[off + 3] = (uint8_t)v[i];
	}
	/* argv[0] = "ab" */
	memcpy(p + off, "\0\0\0\2ab", 6);
	return off + 6;
}

static void
test_req_decode_hostile(void **state)
{
	uint8_t p[256];
	struct fx_req_dec d;
	size_t n;

	(void)state;
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 1, 0);
	assert_int_equal(fx_req_decode(p, n, &d), 0);
	assert_string_equal(d.req.argv[0], "ab");
	assert_null(d.req.workdir);
	fx_req_dec_fini(&d);
	n = hand_req(p, FX_MAGIC ^ 1, FX_VERSION, 0, 1, 0);
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	n = hand_req(p, FX_MAGIC, FX_VERSION + 1, 0, 1, 0);
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0x80, 1, 0);
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	/* No argv, or more strings than bytes could hold. */
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 0, 0);
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 0xffffffffu, 0);
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 1, 0xffffffffu);
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	/* A string length past the end. */
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 1, 0);
	p[n - 3] = 0x7f;
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	/* A NUL inside a string. */
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 1, 0);
	p[n - 1] = '\0';
	assert_int_equal(fx_req_decode(p, n, &d), -EPROTO);
	/* A relative working directory. */
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 1, 0);
	memmove(p + 36 + 3, p + 36, n - 36);
	p[35] = 3;
	memcpy(p + 36, "tmp", 3);
	assert_int_equal(fx_req_decode(p, n + 3, &d), -EPROTO);
	p[36] = '/';
	assert_int_equal(fx_req_decode(p, n + 3, &d), 0);
	assert_string_equal(d.req.workdir, "/mp");
	fx_req_dec_fini(&d);
	/* An env entry without '='. */
	n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 1, 1);
	memcpy(p + n, "\0\0\0\1x", 5);
	assert_int_equal(fx_req_decode(p, n + 5, &d), -EPROTO);
	memcpy(p + n, "\0\0\0\3x=y", 7);
	assert_int_equal(fx_req_decode(p, n + 7, &d), 0);
	assert_string_equal(d.req.env[0], "x=y");
	fx_req_dec_fini(&d);
	fx_req_dec_fini(NULL);
}

static void
test_exit(void **state)
{
	uint8_t e[FX_EXIT_LEN];
	int o, c;

	(void)state;
	fx_exit_encode(e, FX_EXITED, 137);
	assert_int_equal(fx_exit_decode(e, sizeof(e), &o, &c), 0);
	assert_int_equal(o, FX_EXITED);
	assert_int_equal(c, 137);
	assert_int_equal(fx_exit_decode(e, 7, &o, &c), -EPROTO);
	fx_exit_encode(e, FX_EXITED, 256);
	assert_int_equal(fx_exit_decode(e, sizeof(e), &o, &c), -EPROTO);
	fx_exit_encode(e, FX_EXITED, -1);
	assert_int_equal(fx_exit_decode(e, sizeof(e), &o, &c), -EPROTO);
	fx_exit_encode(e, 3, 0);
	assert_int_equal(fx_exit_decode(e, sizeof(e), &o, &c), -EPROTO);
}

static void
test_parser_split(void **state)
{
	uint8_t s[64];
	struct fx_parser ps;
	struct fx_frame f;
	size_t used, off = 0, n = 0;
	int frames = 0;

	(void)state;
	fx_hdr_encode(s, FX_STDOUT, 3);
	memcpy(s + 8, "abc", 3);
	fx_hdr_encode(s + 11, FX_STDERR, 0);
	fx_hdr_encode(s + 19, FX_EXIT, 8);
	fx_exit_encode(s + 27, FX_TIMEOUT, 0);
	n = 35;
	fx_parser_init(&ps, true);
	/* One byte at a time. */
	while (off < n) {
		int rc = fx_parse(&ps, s + off, 1, &used, &f);

		assert_true(rc >= 0);
		assert_int_equal(used, 1);
		off += used;
		if (rc == 1) {
			frames++;
			if (frames == 1) {
				assert_int_equal(f.type, FX_STDOUT);
				assert_memory_equal(f.p, "abc", 3);
			} else if (frames == 2) {
				assert_int_equal(f.type, FX_STDERR);
				assert_int_equal(f.len, 0);
			} else
				assert_int_equal(f.type, FX_EXIT);
		}
	}
	assert_int_equal(frames, 3);
	/* All at once: one frame per call. */
	off = 0;
	frames = 0;
	while (off < n) {
		int rc = fx_parse(&ps, s + off, n - off, &used, &f);

		assert_int_equal(rc, 1);
		off += used;
		frames++;
	}
	assert_int_equal(frames, 3);
	fx_parser_fini(&ps);
}

static void
test_parser_hostile(void **state)
{
	uint8_t s[16];
	struct fx_parser ps;
	struct fx_frame f;
	size_t used;

	(void)state;
	fx_parser_init(&ps, true);
	/* A REQ from the helper's side is refused, no allocation. */
	fx_hdr_encode(s, FX_REQ, FX_REQ_MAX);
	assert_int_equal(fx_parse(&ps, s, 8, &used, &f), -EPROTO);
	assert_null(ps.buf);
	fx_parser_fini(&ps);
	/* Random bytes never crash and never allocate past the bound. */
	srand(42);
	for (int i = 0; i < 20000; i++) {
		uint8_t junk[64];
		size_t off = 0;

		fx_parser_init(&ps, i & 1);
		for (size_t k = 0; k < sizeof(junk); k++)
			junk[k] = (uint8_t)(k % 8 == 0 ? 17 + rand() % 4 :
			    k % 8 < 4 ? (rand() % 16 == 0) : rand());
		while (off < sizeof(junk)) {
			int rc = fx_parse(&ps, junk + off, sizeof(junk) - off,
			    &used, &f);

			off += used;
			if (rc < 0)
				break;
			if (rc == 1)
				assert_true(f.len <= fx_type_max(f.type));
		}
		assert_true(ps.cap <= FX_REQ_MAX);
		fx_parser_fini(&ps);
	}
	/* Random REQ payloads are refused or decoded, never crash. */
	for (int i = 0; i < 20000; i++) {
		uint8_t p[96];
		struct fx_req_dec d;
		size_t n = hand_req(p, FX_MAGIC, FX_VERSION, 0, 1, 0);

		for (size_t k = 0; k < 4; k++)
			p[8 + rand() % (n - 8)] = (uint8_t)rand();
		if (fx_req_decode(p, n, &d) == 0) {
			assert_non_null(d.req.argv[0]);
			fx_req_dec_fini(&d);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_roundtrip),
		cmocka_unit_test(test_header_hostile),
		cmocka_unit_test(test_req_roundtrip),
		cmocka_unit_test(test_req_encode_refuses),
		cmocka_unit_test(test_req_decode_hostile),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_parser_split),
		cmocka_unit_test(test_parser_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
