/* test_cfg.c - the shared command line: defaults, argparse rules, the
 * reference's validation messages and exit paths, and secrets (flags
 * blanked in argv and warned about, --*-file, the environment). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker_cfg.h"
#include "drivers.h"
#include "e2b_cfg.h"
#include "fly_cfg.h"
#include "modal_cfg.h"
#include "msc_cfg.h"
#include "wasm_cfg.h"

/* Writable copies of every argv given to msc_cfg_parse, as a real argv. */
static char *arena[1024];
static size_t n_arena;
static char **last_argv;

static int
parse(struct msc_cfg *cfg, const char *const *args)
{
	char **argv = calloc(34, sizeof(*argv));
	int argc = 1;

	assert_non_null(argv);
	argv[0] = strdup("kilntainers");
	while (*args != NULL && argc < 33)
		argv[argc++] = strdup(*args++);
	assert_true(n_arena + (size_t)argc + 1 <= sizeof(arena) /
	    sizeof(*arena));
	for (int i = 0; i < argc; i++)
		arena[n_arena++] = argv[i];
	arena[n_arena++] = (char *)argv;
	last_argv = argv;
	return msc_cfg_parse(cfg, &drivers_program, argc, argv);
}

static int
free_arena(void **state)
{
	(void)state;
	for (size_t i = 0; i < n_arena; i++)
		free(arena[i]);
	n_arena = 0;
	return 0;
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
	assert_string_equal(dock_cfg(&cfg)->engine, "docker");
	assert_string_equal(dock_cfg(&cfg)->image, "debian:bookworm-slim");
	assert_string_equal(cfg.shell, "/bin/bash");
	assert_true(cfg.network);
	assert_null(dock_cfg(&cfg)->cpu);
	assert_int_equal(dock_cfg(&cfg)->n_run_flags, 0);
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
	assert_string_equal(dock_cfg(&cfg)->image, "alpine");
	assert_int_equal(dock_cfg(&cfg)->n_run_flags, 2);
	assert_string_equal(dock_cfg(&cfg)->run_flags[0], "--pids-limit=256");
	assert_string_equal(dock_cfg(&cfg)->run_flags[1], "--read-only");
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

/* Runs parse with stderr captured into err (NUL-terminated). */
static int
parse_capture(struct msc_cfg *cfg, const char *const *args, char *err,
    size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(2), rv;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	rv = parse(cfg, args);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(err, 1, len - 1, tmp);
	err[n] = '\0';
	fclose(tmp);
	return rv;
}

/* --tools: groups from the flag or KILNTAINERS_TOOLS; lifecycle is also
 * ENABLE_LIFECYCLE_TOOLS; an unknown group fails the start, naming it. */
static void
tool_groups(void **state)
{
	struct msc_cfg cfg;
	const char *none[] = { NULL };
	const char *both[] = { "--tools", "lifecycle, processes", NULL };
	const char *all[] = { "--tools", "files,processes", NULL };
	const char *bad[] = { "--tools", "processes,nope", NULL };
	const char *quota[] = { "--tools", "processes",
		"--max-background-processes", "0", NULL };
	char err[4096];

	(void)state;
	unsetenv("ENABLE_LIFECYCLE_TOOLS");
	unsetenv("KILNTAINERS_TOOLS");
	assert_int_equal(parse(&cfg, none), 0);
	assert_int_equal(cfg.tool_groups, MSC_TOOLS_TERMINAL);
	assert_false(cfg.lifecycle_tools);
	msc_cfg_fini(&cfg);
	assert_int_equal(parse(&cfg, both), 0);
	assert_int_equal(cfg.tool_groups, MSC_TOOLS_TERMINAL |
	    MSC_TOOLS_LIFECYCLE | MSC_TOOLS_PROCESSES);
	assert_true(cfg.lifecycle_tools);
	msc_cfg_fini(&cfg);
	setenv("KILNTAINERS_TOOLS", "processes", 1);
	setenv("ENABLE_LIFECYCLE_TOOLS", "true", 1);
	assert_int_equal(parse(&cfg, none), 0);
	assert_int_equal(cfg.tool_groups, MSC_TOOLS_TERMINAL |
	    MSC_TOOLS_LIFECYCLE | MSC_TOOLS_PROCESSES);
	msc_cfg_fini(&cfg);
	unsetenv("KILNTAINERS_TOOLS");
	unsetenv("ENABLE_LIFECYCLE_TOOLS");
	assert_int_not_equal(parse_capture(&cfg, bad, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "unknown tool group 'nope' (the groups: "
	    "terminal, lifecycle, processes, files, snapshots, ports)"));
	msc_cfg_fini(&cfg);
	assert_int_equal(parse(&cfg, all), 0);
	assert_int_equal(cfg.tool_groups, MSC_TOOLS_TERMINAL |
	    MSC_TOOLS_PROCESSES | MSC_TOOLS_FILES);
	msc_cfg_fini(&cfg);
	assert_int_not_equal(parse_capture(&cfg, quota, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "--max-background-processes"));
	msc_cfg_fini(&cfg);
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* Each secret flag: the value arrives, argv shows "*", a warning. */
static void
secret_flags(void **state)
{
	const char *args[] = { "--auth-token", "tok-123", "--fly-token=fly-456",
		"--e2b-api-key", "e2b-789", "--modal-token-secret", "ms-000",
		"--image", "alpine", NULL };
	struct msc_cfg cfg;
	char err[4096];

	(void)state;
	unsetenv("KILNTAINERS_AUTH_TOKEN");
	assert_int_equal(parse_capture(&cfg, args, err, sizeof(err)), 0);
	assert_string_equal(cfg.auth_token, "tok-123");
	assert_string_equal(fly_cfg(&cfg)->fly_token, "fly-456");
	assert_string_equal(e2b_cfg(&cfg)->e2b_api_key, "e2b-789");
	assert_string_equal(modal_cfg(&cfg)->modal_token_secret, "ms-000");
	assert_string_equal(dock_cfg(&cfg)->image, "alpine");
	/* What ps reads: the flags' bytes, blanked in place. */
	assert_string_equal(last_argv[2], "*");
	assert_string_equal(last_argv[3], "--fly-token=*");
	assert_string_equal(last_argv[5], "*");
	assert_string_equal(last_argv[7], "*");
	assert_memory_equal(last_argv[2], "*\0\0\0\0\0\0", 8);
	assert_non_null(strstr(err, "kilntainers: warning: --auth-token is "
	    "visible to other users in ps; use KILNTAINERS_AUTH_TOKEN or "
	    "--auth-token-file\n"));
	assert_non_null(strstr(err, "--fly-token is visible to other users "
	    "in ps; use FLY_API_TOKEN or --fly-token-file"));
	assert_non_null(strstr(err, "--e2b-api-key is visible to other users "
	    "in ps; use E2B_API_KEY or --e2b-api-key-file"));
	assert_non_null(strstr(err, "--modal-token-secret is visible to other "
	    "users in ps; use MODAL_TOKEN_SECRET or --modal-token-secret-file"));
	assert_null(strstr(err, "tok-123"));
	assert_null(strstr(err, "fly-456"));
	assert_null(strstr(err, "e2b-789"));
	assert_null(strstr(err, "ms-000"));
	msc_cfg_fini(&cfg);
}

static void
secret_files(void **state)
{
	char dir[] = "/tmp/test-cfg-XXXXXX", a[64], b[64], open_f[64];
	char ww[64], empty[64], none[64], err[4096];
	struct msc_cfg cfg;

	(void)state;
	unsetenv("KILNTAINERS_AUTH_TOKEN");
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(open_f, sizeof(open_f), "%s/open", dir);
	snprintf(ww, sizeof(ww), "%s/ww", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(none, sizeof(none), "%s/none", dir);
	write_file(a, "file-tok\nsecond line\n", 0600);
	write_file(b, "crlf-tok\r\n", 0400);
	write_file(open_f, "open-tok", 0644);
	write_file(ww, "leak-me\n", 0666);
	write_file(empty, "\nx\n", 0600);
	{
		const char *args[] = { "--auth-token-file", a,
			"--fly-token-file=", "--e2b-api-key-file", b,
			"--modal-token-secret-file", open_f, NULL };
		char fly[100];

		snprintf(fly, sizeof(fly), "--fly-token-file=%s", a);
		args[2] = fly;
		assert_int_equal(parse_capture(&cfg, args, err, sizeof(err)), 0);
		assert_string_equal(cfg.auth_token, "file-tok");
		assert_string_equal(fly_cfg(&cfg)->fly_token, "file-tok");
		assert_string_equal(e2b_cfg(&cfg)->e2b_api_key, "crlf-tok");
		assert_string_equal(modal_cfg(&cfg)->modal_token_secret, "open-tok");
		assert_null(strstr(err, "visible to other users"));
		/* 0644: used, with a warning that names the file only. */
		assert_non_null(strstr(err, "kilntainers: warning: "
		    "--modal-token-secret-file: "));
		assert_non_null(strstr(err, "is readable by group or others "
		    "(mode 0644)"));
		assert_null(strstr(err, "open-tok"));
		assert_null(strstr(err, "file-tok"));
		msc_cfg_fini(&cfg);
	}
	/* A file others may write, an empty first line, no file: exit 2. */
	{
		const char *bad[][3] = { { "--auth-token-file", ww, NULL },
			{ "--auth-token-file", empty, NULL },
			{ "--auth-token-file", none, NULL } };
		const char *why[] = { "is writable by group or others",
			"is empty", "No such file or directory" };

		for (size_t i = 0; i < 3; i++) {
			assert_int_equal(parse_capture(&cfg, bad[i], err,
			    sizeof(err)), -22);
			assert_non_null(strstr(err, "kilntainers: error: "
			    "argument --auth-token-file: "));
			assert_non_null(strstr(err, why[i]));
			assert_null(strstr(err, "leak-me"));
			msc_cfg_fini(&cfg);
		}
	}
	unlink(a);
	unlink(b);
	unlink(open_f);
	unlink(ww);
	unlink(empty);
	rmdir(dir);
}

/* The environment forms: no warning; a flag or a file overrides them. */
static void
secret_environment(void **state)
{
	const char *none[] = { NULL };
	const char *flag[] = { "--auth-token=flag-tok", NULL };
	const char *cluster[3] = { "--cluster", NULL, NULL };
	char path[] = "/tmp/test-cfg-cluster-XXXXXX", err[4096];
	struct msc_cfg cfg;
	int fd;

	(void)state;
	setenv("KILNTAINERS_AUTH_TOKEN", "env-tok", 1);
	setenv("FLY_API_TOKEN", "env-fly", 1);
	assert_int_equal(parse_capture(&cfg, none, err, sizeof(err)), 0);
	assert_string_equal(cfg.auth_token, "env-tok");
	assert_string_equal(fly_cfg(&cfg)->fly_token, "env-fly");
	assert_string_equal(err, "");
	msc_cfg_fini(&cfg);
	assert_int_equal(parse_capture(&cfg, flag, err, sizeof(err)), 0);
	assert_string_equal(cfg.auth_token, "flag-tok");
	msc_cfg_fini(&cfg);
	unsetenv("FLY_API_TOKEN");
	/* A cluster file is not in ps: taken as it is, no warning. */
	assert_true((fd = mkstemp(path)) >= 0);
	assert_true(write(fd, "auth-token = clu-tok\n", 21) == 21);
	close(fd);
	cluster[1] = path;
	assert_int_equal(parse_capture(&cfg, cluster, err, sizeof(err)), 0);
	assert_string_equal(cfg.auth_token, "clu-tok");
	assert_null(strstr(err, "visible to other users"));
	msc_cfg_fini(&cfg);
	unlink(path);
	unsetenv("KILNTAINERS_AUTH_TOKEN");
}

/* --disk-quota's sizes: as docker reads them, binary units, and refusals. */
static void
sizes(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} ok[] = {
		{ "0", 0 }, { "1048576", 1048576 }, { "500M", 500ull << 20 },
		{ "500m", 500ull << 20 }, { "1G", 1ull << 30 },
		{ "1GiB", 1ull << 30 }, { "1gb", 1ull << 30 },
		{ "1.5G", 3ull << 29 }, { "2T", 2ull << 40 }, { "4k", 4096 },
		{ "10B", 10 },
	};
	static const char *const bad[] = { "", "G", "-1G", "1X", "1GiBs",
		"1 G", "lots", "1e30", "nan", "0x10", NULL };
	struct msc_cfg cfg;
	const char *args[] = { "--disk-quota", "2g", NULL }, *none[] = { NULL };
	char text[32];
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(msc_cfg_size(ok[i].text, &v), 0);
		assert_true(v == ok[i].bytes);
	}
	for (int i = 0; bad[i] != NULL; i++)
		assert_int_not_equal(msc_cfg_size(bad[i], &v), 0);
	msc_cfg_size_text(1ull << 30, text, sizeof(text));
	assert_string_equal(text, "1 GiB");
	msc_cfg_size_text(3ull << 29, text, sizeof(text));
	assert_string_equal(text, "1536 MiB");
	msc_cfg_size_text(1000, text, sizeof(text));
	assert_string_equal(text, "1000 bytes");
	/* The default, the environment, the flag over the environment. */
	unsetenv("KILNTAINERS_DISK_QUOTA");
	assert_int_equal(parse(&cfg, none), 0);
	assert_string_equal(dock_cfg(&cfg)->disk_quota, "1G");
	msc_cfg_fini(&cfg);
	setenv("KILNTAINERS_DISK_QUOTA", "300M", 1);
	assert_int_equal(parse(&cfg, none), 0);
	assert_string_equal(dock_cfg(&cfg)->disk_quota, "300M");
	msc_cfg_fini(&cfg);
	assert_int_equal(parse(&cfg, args), 0);
	assert_string_equal(dock_cfg(&cfg)->disk_quota, "2g");
	msc_cfg_fini(&cfg);
	unsetenv("KILNTAINERS_DISK_QUOTA");
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
		cmocka_unit_test(tool_groups),
		cmocka_unit_test(secret_flags),
		cmocka_unit_test(secret_files),
		cmocka_unit_test(secret_environment),
		cmocka_unit_test(sizes),
	};
	return cmocka_run_group_tests(tests, NULL, free_arena);
}
