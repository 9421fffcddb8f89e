/*
 * test_helper_file.c - the pure parts of the exec helper's file commands
 * (services/docker-driver/helper/helper_file_text.c, helper_sha256.c):
 * SHA-256 against the FIPS 180-4 vectors, UTF-8 sequences, the binary
 * test, mime types, the text window within its budget, base64.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helper_file.h"
#include "helper_sha256.h"

static void
sha_of(const void *p, size_t n, size_t piece, char out[65])
{
	struct hx_sha256 s;

	hx_sha256_init(&s);
	for (size_t i = 0; i < n; i += piece)
		hx_sha256_add(&s, (const uint8_t *)p + i, n - i < piece ? n - i :
		    piece);
	hx_sha256_hex(&s, out);
}

static void
test_sha256(void **state)
{
	char hex[65], *a = malloc(1000000);
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	(void)state;
	sha_of("", 0, 1, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb924"
	    "27ae41e4649b934ca495991b7852b855");
	sha_of("abc", 3, 1, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
	for (size_t piece = 1; piece < 70; piece += 13) {
		sha_of(two, strlen(two), piece, hex);
		assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039"
		    "a33ce45964ff2167f6ecedd419db06c1");
	}
	memset(a, 'a', 1000000);
	sha_of(a, 1000000, 65536, hex);
	assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
	    "f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

static void
test_utf8(void **state)
{
	(void)state;
	assert_int_equal(hxf_utf8_len((const uint8_t *)"a", 1, false), 1);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xc3\xa9", 2, false), 2);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xe4\xb8\x96", 3,
	    false), 3);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xf0\x9f\x98\x80", 4,
	    false), 4);
	/* overlong, surrogate, past U+10FFFF, lone continuation, cut */
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xc0\x80", 2, false), 0);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xe0\x80\x80", 3,
	    false), 0);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xed\xa0\x80", 3,
	    false), 0);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xf4\x90\x80\x80", 4,
	    false), 0);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\x80", 1, false), 0);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xe4\xb8", 2, false), 0);
	assert_int_equal(hxf_utf8_len((const uint8_t *)"\xe4\xb8", 2, true), 2);
}

static void
test_binary_and_mime(void **state)
{
	uint8_t buf[HXF_SNIFF + 100];

	(void)state;
	assert_false(hxf_looks_binary((const uint8_t *)"plain text\n", 11));
	assert_true(hxf_looks_binary((const uint8_t *)"a\0b", 3));
	/* a stray invalid byte in text is text; mostly invalid is binary */
	assert_false(hxf_looks_binary((const uint8_t *)"caf\xe9 au lait, "
	    "encore un caf\xe9\n", 29));
	assert_true(hxf_looks_binary((const uint8_t *)"\xff\xfe\xfd\x01", 4));
	/* a NUL past the first HXF_SNIFF bytes is not looked at */
	memset(buf, 'x', sizeof(buf));
	buf[HXF_SNIFF + 10] = 0;
	assert_false(hxf_looks_binary(buf, sizeof(buf)));
	assert_string_equal(hxf_mime((const uint8_t *)"\x89PNG\r\n\x1a\nxx",
	    10), "image/png");
	assert_string_equal(hxf_mime((const uint8_t *)"%PDF-1.7", 8),
	    "application/pdf");
	assert_string_equal(hxf_mime((const uint8_t *)"RIFF\0\0\0\0WEBPVP8",
	    15), "image/webp");
	assert_string_equal(hxf_mime((const uint8_t *)"\x89PN", 3),
	    "application/octet-stream");
}

static char *
emit(const char *raw, size_t n, long long first, bool numbers, size_t budget,
    struct hxf_text *r)
{
	struct out o = { 0 };

	hxf_emit_text(&o, (const uint8_t *)raw, n, first, numbers, budget, r);
	assert_true(o.len <= budget || r->cut);
	return o.p;
}

static void
test_text_window(void **state)
{
	struct hxf_text r;
	char *s;

	(void)state;
	s = emit("one\ntwo\nthree\n", 14, 1, false, 100, &r);
	assert_string_equal(s, "\"one\\ntwo\\nthree\\n\"");
	assert_int_equal(r.lines, 3);
	assert_int_equal(r.used, 14);
	assert_false(r.cut);
	free(s);
	/* whole lines only: "one\n" and "two\n" fit in 14 with the quotes */
	s = emit("one\ntwo\nthree\n", 14, 1, false, 14, &r);
	assert_string_equal(s, "\"one\\ntwo\\n\"");
	assert_int_equal(r.lines, 2);
	assert_int_equal(r.used, 8);
	free(s);
	/* numbers as cat -n */
	s = emit("a\nb", 3, 9, true, 100, &r);
	assert_string_equal(s, "\"     9\\ta\\n    10\\tb\"");
	assert_int_equal(r.lines, 2);
	free(s);
	/* a first line longer than the budget: its head, cut */
	s = emit("abcdefghij\nk\n", 13, 1, false, 7, &r);
	assert_string_equal(s, "\"abcde\"");
	assert_true(r.cut);
	assert_int_equal(r.lines, 0);
	free(s);
	/* invalid bytes as U+FFFD, controls and quotes escaped */
	s = emit("q\"\x01\xff\xe4\xb8\x96\n", 8, 1, false, 100, &r);
	assert_string_equal(s, "\"q\\\"\\u0001\xef\xbf\xbd\xe4\xb8\x96\\n\"");
	assert_true(r.invalid);
	free(s);
	/* a character is never split */
	s = emit("\xe4\xb8\x96\xe4\xb8\x96", 6, 1, false, 6, &r);
	assert_string_equal(s, "\"\xe4\xb8\x96\"");
	free(s);
}

static void
test_base64(void **state)
{
	struct out o = { 0 };

	(void)state;
	hxf_out_base64(&o, (const uint8_t *)"\0\xff\x10" "ab", 5);
	assert_string_equal(o.p, "\"AP8QYWI=\"");
	free(o.p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_binary_and_mime),
		cmocka_unit_test(test_text_window),
		cmocka_unit_test(test_base64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
