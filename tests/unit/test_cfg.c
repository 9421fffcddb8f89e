/* test_cfg.c - the shared command line: defaults, argparse rules, the
 * reference's validation messages and exit paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "msc_cfg.h"

static int
parse(struct msc_cfg *cfg, const char *const *args)
{
	char *argv[32] = { "kilntainers" };
	int argc = 1;

	while (*args != NULL)
		argv[argc++] = (char *)*args++;
	return msc_cfg_parse(cfg, argc, argv);
}

static void
defaults(void **state)
{
	struct msc_cfg cfg;
	const char *none[] = { NULL };

	(void)state;
	unsetenv("KILNTAINERS_AUTH_TOKEN");
	assert_int_equal(parse(&cfg, none), 0);
	assert_string_equal(cfg.backend, "docker");
	assert_string_equal(cfg.transport, "stdio");
	assert_string_equal(cfg.host, "127.0.0.1");
	assert_int_equal(cfg.port, 8435);
	assert_int_equal(cfg.timeout, 120);
	assert_int_equal(cfg.output_limit, 2097152);
	assert_int_equal(cfg.session_timeout, 300);
	assert_string_equal(cfg.engine, "docker");
	assert_string_equal(cfg.image, "debian:bookworm-slim");
	assert_string_equal(cfg.shell, "/bin/bash");
	assert_true(cfg.network);
	assert_null(cfg.cpu);
	assert_int_equal(cfg.n_run_flags, 0);
	assert_int_equal(msc_cfg_validate(&cfg), 0);
	msc_cfg_fini(&cfg);
}

static void
argparse_forms(void **state)
{
	struct msc_cfg cfg;
	const char *args[] = { "--tim=7", "--no-network", "--image", "alpine",
		"--docker-run-flag", "--pids-limit=256", "--docker-run-flag=--read-only",
		"--timeout", "-5", NULL };

	(void)state;
	assert_int_equal(parse(&cfg, args), 0);
	assert_int_equal(cfg.timeout, -5);
	assert_false(cfg.network);
	assert_string_equal(cfg.image, "alpine");
	assert_int_equal(cfg.n_run_flags, 2);
	assert_string_equal(cfg.run_flags[0], "--pids-limit=256");
	assert_string_equal(cfg.run_flags[1], "--read-only");
	assert_int_equal(msc_cfg_validate(&cfg), -22);  /* timeout < 1 */
	msc_cfg_fini(&cfg);
}

static void
parse_errors(void **state)
{
	static const char *const bad[][3] = {
		{ "--backend", "unknown", NULL },
		{ "--transport", "websocket", NULL },
		{ "--port", "abc", NULL },
		{ "--nonsense", NULL, NULL },
		{ "--timeout", NULL, NULL },
		{ "positional", NULL, NULL },
	};
	struct msc_cfg cfg;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(parse(&cfg, bad[i]), -22);
		msc_cfg_fini(&cfg);
	}
}

static void
validation(void **state)
{
	static const char *const bad[][5] = {
		{ "--host", "0.0.0.0", NULL },
		{ "--port", "9090", NULL },
		{ "--session-timeout", "600", NULL },
		{ "--transport", "http", "--host", "0.0.0.0", NULL },
		{ "--tool-instruction-override", "a",
		    "--extended-tool-instruction", "b", NULL },
		{ "--timeout", "0", NULL },
		{ "--output-limit", "0", NULL },
	};
	static const char *const good[][6] = {
		{ "--transport", "http", "--host", "0.0.0.0",
		    "--allow-unauthenticated-http", NULL },
		{ "--transport", "http", "--host", "0.0.0.0", "--auth-token",
		    "test-secret" },
		{ "--tool-instruction-override", "x", NULL },
		{ "--extended-tool-instruction", "x", NULL },
		{ "--timeout", "1", NULL },
		{ "--output-limit", "1", NULL },
	};
	struct msc_cfg cfg;

	(void)state;
	unsetenv("KILNTAINERS_AUTH_TOKEN");
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(parse(&cfg, bad[i]), 0);
		assert_int_equal(msc_cfg_validate(&cfg), -22);
		msc_cfg_fini(&cfg);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
		const char *args[7] = { 0 };

		memcpy(args, good[i], sizeof(good[i]));
		assert_int_equal(parse(&cfg, args), 0);
		assert_int_equal(msc_cfg_validate(&cfg), 0);
		msc_cfg_fini(&cfg);
	}
}

static void
environment(void **state)
{
	struct msc_cfg cfg;
	const char *none[] = { NULL };

	(void)state;
	setenv("KILNTAINERS_AUTH_TOKEN", "env-secret", 1);
	setenv("ENABLE_LIFECYCLE_TOOLS", "Yes", 1);
	assert_int_equal(parse(&cfg, none), 0);
	assert_string_equal(cfg.auth_token, "env-secret");
	assert_true(cfg.lifecycle_tools);
	msc_cfg_fini(&cfg);
	unsetenv("KILNTAINERS_AUTH_TOKEN");
	setenv("ENABLE_LIFECYCLE_TOOLS", "nope", 1);
	assert_int_equal(parse(&cfg, none), 0);
	assert_false(cfg.lifecycle_tools);
	msc_cfg_fini(&cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(argparse_forms),
		cmocka_unit_test(parse_errors),
		cmocka_unit_test(validation),
		cmocka_unit_test(environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
