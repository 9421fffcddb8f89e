/*
 * test_netpolicy.c - network policy names and lists (lib/msc_netpolicy):
 * what counts as a host name, wildcard and deny matching, the verdicts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "msc_netpolicy.h"

static void
host_names(void **state)
{
	static const char *const good[] = { "pypi.example", "a.b.c.example",
	    "XN--bcher-kva.example", "x-1.example", "a.b2c" };
	static const char *const bad[] = { "", "example", "198.51.100.1",
	    "pypi.example.", ".pypi.example", "a..example", "-a.example",
	    "a-.example", "0x7f.1", "2130706433", "a.0x7f", "b\xc3\xbc.example",
	    "a b.example", "a_b.example", "[::1]", "::1", "host:80",
	    "a.example/x", NULL };
	char long_label[80];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		assert_true(msc_net_host_valid(good[i]));
	for (size_t i = 0; bad[i] != NULL; i++)
		assert_false(msc_net_host_valid(bad[i]));
	assert_false(msc_net_host_valid(NULL));
	memset(long_label, 'a', 64);
	memcpy(long_label + 64, ".example", 9);
	assert_false(msc_net_host_valid(long_label));
}

static void
entries(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(msc_net_entry_check("*.pypi.example", err,
	    sizeof(err)), 0);
	assert_int_equal(msc_net_entry_check("api.example", err, sizeof(err)),
	    0);
	assert_int_not_equal(msc_net_entry_check("*", err, sizeof(err)), 0);
	assert_non_null(strstr(err, "not a domain name"));
	assert_int_not_equal(msc_net_entry_check("*.example.", err,
	    sizeof(err)), 0);
	assert_int_not_equal(msc_net_entry_check("a.*.example", err,
	    sizeof(err)), 0);
	assert_int_not_equal(msc_net_entry_check("10.0.0.1", err,
	    sizeof(err)), 0);
	assert_true(msc_net_entry_match("*.pypi.example", "files.pypi.example"));
	assert_true(msc_net_entry_match("*.pypi.example", "A.B.PYPI.example"));
	assert_false(msc_net_entry_match("*.pypi.example", "pypi.example"));
	assert_false(msc_net_entry_match("*.pypi.example", "evilpypi.example"));
	assert_true(msc_net_entry_match("pypi.example", "PyPI.example"));
	assert_false(msc_net_entry_match("pypi.example", "x.pypi.example"));
}

static void
verdicts(void **state)
{
	const char *allow[] = { "*.pypi.example", "api.example" };
	const char *deny[] = { "evil.pypi.example" };
	const char *which;

	(void)state;
	assert_int_equal(msc_net_decide(allow, 2, deny, 1, "files.pypi.example",
	    &which), MSC_NET_ALLOWED);
	assert_string_equal(which, "*.pypi.example");
	assert_int_equal(msc_net_decide(allow, 2, deny, 1, "evil.pypi.example",
	    &which), MSC_NET_DENIED);
	assert_string_equal(which, "evil.pypi.example");
	assert_int_equal(msc_net_decide(allow, 2, deny, 1, "other.example",
	    &which), MSC_NET_UNLISTED);
	assert_null(which);
	assert_int_equal(msc_net_decide(allow, 2, deny, 1, "169.254.169.254",
	    &which), MSC_NET_BAD_NAME);
	assert_int_equal(msc_net_decide(NULL, 0, NULL, 0, "api.example",
	    &which), MSC_NET_UNLISTED);
}

static void
modes(void **state)
{
	enum msc_net_mode m;

	(void)state;
	assert_int_equal(msc_net_mode_parse("allowlist", &m), 0);
	assert_int_equal(m, MSC_NET_ALLOWLIST);
	assert_int_equal(msc_net_mode_parse("open", &m), 0);
	assert_int_equal(m, MSC_NET_OPEN);
	assert_int_equal(msc_net_mode_parse("none", &m), 0);
	assert_int_equal(m, MSC_NET_NONE);
	assert_int_not_equal(msc_net_mode_parse("Open", &m), 0);
	assert_int_not_equal(msc_net_mode_parse(NULL, &m), 0);
	assert_string_equal(msc_net_mode_name(MSC_NET_ALLOWLIST), "allowlist");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_names),
		cmocka_unit_test(entries),
		cmocka_unit_test(verdicts),
		cmocka_unit_test(modes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
