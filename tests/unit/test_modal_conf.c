/*
 * test_modal_conf.c - the Modal config file (~/.modal.toml) and where
 * credentials come from: flags, then the environment, then the profile.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "modal_conf.h"

static const char two[] =
    "# Modal's config file\n"
    "[first]\n"
    "token_id = \"ak-first\"\n"
    "token_secret = \"as-first\"\n"
    "\n"
    "[\"work\"]   # quoted table name\n"
    "token_id = 'ak-work'          # literal string\n"
    "token_secret = \"as-\\u00e9\\\"x\\\\\"\n"
    "server_url = \"http://127.0.0.1:1\"\n"
    "environment = \"dev\"\n"
    "image_builder_version = \"2024.10\"\n"
    "loglevel = \"DEBUG\"\n"
    "active = true\n"
    "timeout = 3\r\n";

static void
test_active_profile(void **state)
{
	struct modal_profile p;
	char err[128];

	(void)state;
	assert_int_equal(modal_conf_parse(two, NULL, &p, err, sizeof(err)), 0);
	assert_string_equal(p.name, "work");
	assert_string_equal(p.token_id, "ak-work");
	assert_string_equal(p.token_secret, "as-\xc3\xa9\"x\\");
	assert_string_equal(p.server_url, "http://127.0.0.1:1");
	assert_string_equal(p.environment, "dev");
	assert_string_equal(p.image_builder_version, "2024.10");
	assert_true(p.active);
}

static void
test_first_or_named_profile(void **state)
{
	struct modal_profile p;
	char err[128];
	const char none_active[] = "[a]\ntoken_id=\"ak-a\"\nactive = false\n"
				   "[b]\ntoken_id=\"ak-b\"\n";

	(void)state;
	assert_int_equal(modal_conf_parse(none_active, NULL, &p, err,
	    sizeof(err)), 0);
	assert_string_equal(p.token_id, "ak-a");
	assert_int_equal(modal_conf_parse(none_active, "b", &p, err,
	    sizeof(err)), 0);
	assert_string_equal(p.token_id, "ak-b");
	assert_int_equal(modal_conf_parse(two, "first", &p, err, sizeof(err)),
	    0);
	assert_string_equal(p.token_secret, "as-first");
	assert_int_equal(modal_conf_parse(two, "nope", &p, err, sizeof(err)),
	    -ENOENT);
	assert_non_null(strstr(err, "nope"));
	assert_int_equal(modal_conf_parse("# nothing\n\n", NULL, &p, err,
	    sizeof(err)), -ENOENT);
	assert_int_equal(modal_conf_parse("", NULL, &p, err, sizeof(err)),
	    -ENOENT);
	/* Keys before any table are not a profile. */
	assert_int_equal(modal_conf_parse("token_id = \"x\"\n", NULL, &p, err,
	    sizeof(err)), -ENOENT);
}

static void
test_bad_toml(void **state)
{
	struct modal_profile p;
	char err[128];
	const char *bad[] = {
		"[a\ntoken_id = \"x\"\n",
		"[a]\ntoken_id = \"unterminated\n",
		"[a]\ntoken_id \"x\"\n",
		"[a]\ntoken_id = \"x\" trailing\n",
		"[a]\ntoken_id = \"\\q\"\n",
		"[a]\ntoken_id = \"\"\"multi\nline\"\"\"\n",
		"[[arr]]\n",
		"[a]\n= \"x\"\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		assert_int_equal(modal_conf_parse(bad[i], NULL, &p, err,
		    sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "line "));
		assert_string_equal(p.token_id, "");
	}
	assert_int_equal(modal_conf_parse("[a]\nx = 1\n[b]\ny = \"\\ud\"\n",
	    NULL, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 4"));
}

static void
test_long_values_are_bounded(void **state)
{
	struct modal_profile p;
	char err[128], text[4096];

	(void)state;
	snprintf(text, sizeof(text), "[a]\ntoken_id = \"%0900d\"\n", 7);
	assert_int_equal(modal_conf_parse(text, NULL, &p, err, sizeof(err)), 0);
	assert_int_equal(strlen(p.token_id), sizeof(p.token_id) - 1);
}

static char path[256];

static void
write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void
clear_env(void)
{
	unsetenv("MODAL_TOKEN_ID");
	unsetenv("MODAL_TOKEN_SECRET");
	unsetenv("MODAL_SERVER_URL");
	unsetenv("MODAL_ENVIRONMENT");
	unsetenv("MODAL_PROFILE");
	unsetenv("MODAL_IMAGE_BUILDER_VERSION");
}

static void
test_resolve_precedence(void **state)
{
	struct modal_creds c;
	char err[256];

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_modal_conf.%d.toml",
	    (int)getpid());
	clear_env();
	setenv("MODAL_CONFIG_PATH", path, 1);
	/* No file: the public server and no token. */
	unlink(path);
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    0);
	assert_string_equal(c.server_url, MODAL_DEFAULT_SERVER_URL);
	assert_string_equal(c.token_id, "");
	assert_string_equal(c.config_path, "");
	/* The file's active profile. */
	write_file(two);
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    0);
	assert_string_equal(c.token_id, "ak-work");
	assert_string_equal(c.server_url, "http://127.0.0.1:1");
	assert_string_equal(c.environment, "dev");
	assert_string_equal(c.config_path, path);
	/* The environment wins over the file, flags over both. */
	setenv("MODAL_TOKEN_ID", "ak-env", 1);
	setenv("MODAL_TOKEN_SECRET", "as-env", 1);
	setenv("MODAL_SERVER_URL", "https://example.invalid", 1);
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    0);
	assert_string_equal(c.token_id, "ak-env");
	assert_string_equal(c.token_secret, "as-env");
	assert_string_equal(c.server_url, "https://example.invalid");
	assert_int_equal(modal_conf_resolve("ak-flag", "as-flag", &c, err,
	    sizeof(err)), 0);
	assert_string_equal(c.token_id, "ak-flag");
	assert_string_equal(c.token_secret, "as-flag");
	/* An empty variable counts as unset. */
	setenv("MODAL_TOKEN_ID", "", 1);
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    0);
	assert_string_equal(c.token_id, "ak-work");
	/* MODAL_PROFILE picks one; a missing one is an error. */
	clear_env();
	setenv("MODAL_PROFILE", "first", 1);
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    0);
	assert_string_equal(c.token_id, "ak-first");
	setenv("MODAL_PROFILE", "gone", 1);
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, "gone"));
	assert_non_null(strstr(err, path));
	/* A malformed file is an error that names it. */
	clear_env();
	write_file("[a]\ntoken_id = \"x\n");
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    -EINVAL);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "line 2"));
	/* A folder is not a config file. */
	setenv("MODAL_CONFIG_PATH", "/tmp", 1);
	assert_int_equal(modal_conf_resolve(NULL, NULL, &c, err, sizeof(err)),
	    -EINVAL);
	unlink(path);
	modal_creds_clear(&c);
	assert_string_equal(c.token_id, "");
	unsetenv("MODAL_CONFIG_PATH");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_active_profile),
		cmocka_unit_test(test_first_or_named_profile),
		cmocka_unit_test(test_bad_toml),
		cmocka_unit_test(test_long_values_are_bounded),
		cmocka_unit_test(test_resolve_precedence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
