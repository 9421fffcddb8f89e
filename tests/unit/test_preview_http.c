/*
 * test_preview_http.c - how the preview listener reads request heads
 * (services/docker-driver/docker_preview_http.c, issue 30): the strict
 * rules (bare CR or LF, NUL, folded lines, a space before a colon,
 * nameless headers) and the Host that names a capability, against names
 * that must never route (the MCP endpoint's, another domain, a suffix).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "docker_preview_http.h"

static int
split(const char *h, size_t len, struct dock_http_hdr *hs, size_t *nh)
{
	size_t first;

	return dock_http_split(h, len, &first, hs, nh);
}

static void
strict_heads(void **state)
{
	struct dock_http_hdr hs[DOCK_HTTP_HEADERS_MAX];
	static const char nul[] = "GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n";
	static const char *const bad[] = {
		"GET / HTTP/1.1\nHost: a\r\n\r\n",              /* bare LF */
		"GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n",      /* bare CR */
		"GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n",      /* folded */
		"GET / HTTP/1.1\r\nHost : a\r\n\r\n",           /* space, colon */
		"GET / HTTP/1.1\r\n: a\r\n\r\n",                /* no name */
		"GET / HTTP/1.1\r\nHost a\r\n\r\n",             /* no colon */
	};
	const char *ok = "GET / HTTP/1.1\r\nHost:  a.b:1 \r\nX-Y: \r\n\r\n";
	size_t nh;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(split(bad[i], strlen(bad[i]), hs, &nh),
		    -EPROTO);
	assert_int_equal(split(nul, sizeof(nul) - 1, hs, &nh), -EPROTO);
	assert_int_equal(split(ok, strlen(ok), hs, &nh), 0);
	assert_int_equal(nh, 2);
	assert_true(dock_http_is(&hs[0], "HOST"));
	assert_int_equal(hs[0].vl, 5);
	assert_memory_equal(hs[0].v, "a.b:1", 5);
	assert_int_equal(hs[1].vl, 0);
	assert_false(dock_http_tchar('\0'));
	assert_false(dock_http_tchar(' '));
	assert_true(dock_http_tchar('~'));
}

static void
too_many_headers(void **state)
{
	struct dock_http_hdr hs[DOCK_HTTP_HEADERS_MAX];
	char h[4096] = "GET / HTTP/1.1\r\n";
	size_t nh;

	(void)state;
	for (int i = 0; i <= DOCK_HTTP_HEADERS_MAX; i++)
		strcat(h, "A: b\r\n");
	strcat(h, "\r\n");
	assert_int_equal(split(h, strlen(h), hs, &nh), -EPROTO);
}

static void
tokens(void **state)
{
	struct dock_http_hdr hs[DOCK_HTTP_HEADERS_MAX];
	const char *h = "GET / HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n"
	    "Upgrade: websocket\r\nX: notupgrade\r\n\r\n";
	size_t nh;

	(void)state;
	assert_int_equal(split(h, strlen(h), hs, &nh), 0);
	assert_true(dock_http_has(&hs[0], "upgrade"));
	assert_false(dock_http_has(&hs[2], "upgrade"));
	assert_true(dock_http_hop_by_hop(&hs[0]));
	assert_true(dock_http_hop_by_hop(&hs[1]));
	assert_false(dock_http_hop_by_hop(&hs[2]));
}

static void
host_names(void **state)
{
	const char *cap = "0123456789abcdef0123456789ABCDEF";
	char got[DOCK_PREVIEW_CAP_LEN + 1], v[256];
	static const char *const refused[] = {
		"localhost:8790", "127.0.0.1:8790", "localhost",
		"0123456789abcdef0123456789abcdef.localhost.evil:1",
		"0123456789abcdef0123456789abcdef.evil.localhost:1",
		"x0123456789abcdef0123456789abcdef.localhost",
		"0123456789abcdef0123456789abcdeg.localhost",
		"0123456789abcdef0123456789abcdef.localhost:80x",
		"0123456789abcdef0123456789abcdef.localhost:80:80",
		"0123456789abcdef0123456789abcdef_localhost",
		"",
	};

	(void)state;
	snprintf(v, sizeof(v), "%s.LocalHost:8790", cap);
	assert_true(dock_http_host_cap("localhost", v, strlen(v), got));
	assert_string_equal(got, "0123456789abcdef0123456789abcdef");
	snprintf(v, sizeof(v), "%s.localhost", cap);
	assert_true(dock_http_host_cap("localhost", v, strlen(v), got));
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		assert_false(dock_http_host_cap("localhost", refused[i],
		    strlen(refused[i]), got));
	snprintf(v, sizeof(v), "%s.preview.example.org:443", cap);
	assert_true(dock_http_host_cap("preview.example.org", v, strlen(v),
	    got));
	assert_false(dock_http_host_cap("localhost", v, strlen(v), got));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strict_heads),
		cmocka_unit_test(too_many_headers),
		cmocka_unit_test(tokens),
		cmocka_unit_test(host_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
