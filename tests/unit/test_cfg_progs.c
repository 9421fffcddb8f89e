/* test_cfg_progs.c - each program's own options: what it parses, refuses
 * (naming whose an option is), lists in --help and skips in the shared
 * cluster file; and split-args' selection for scripts/run-split. */
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

#include "msc_cfg.h"
#include "msc_cfg_int.h"

#define MAXARGS 32

/* A writable argv ("prog", args...) whose strings outlive the cfg. */
struct argv_copy {
	char *v[MAXARGS + 2];
	int c;
};

static void
argv_make(struct argv_copy *a, const char *const *args)
{
	a->c = 0;
	a->v[a->c++] = strdup("prog");
	while (*args != NULL && a->c <= MAXARGS)
		a->v[a->c++] = strdup(*args++);
	a->v[a->c] = NULL;
}

static void
argv_free(struct argv_copy *a)
{
	for (int i = 0; i < a->c; i++)
		free(a->v[i]);
}

/* Parses args for prog; the exit-path code (0, or -EINVAL). */
static int
parse_for(unsigned prog, const char *const *args, struct msc_cfg *cfg,
    struct argv_copy *a)
{
	argv_make(a, args);
	return msc_cfg_parse(cfg, prog, a->c, a->v);
}

/* What fn(prog) printed on stdout. */
static char *
stdout_of(void (*fn)(unsigned), unsigned prog)
{
	char path[] = "/tmp/msc-cfg-progs.XXXXXX";
	int fd = mkstemp(path), saved;
	char *buf = calloc(1, 65536);
	FILE *f;

	assert_true(fd >= 0);
	assert_non_null(buf);
	fflush(stdout);
	saved = dup(1);
	assert_true(dup2(fd, 1) == 1);
	fn(prog);
	fflush(stdout);
	assert_true(dup2(saved, 1) == 1);
	close(saved);
	f = fdopen(fd, "r");
	rewind(f);
	(void)fread(buf, 1, 65535, f);
	fclose(f);
	unlink(path);
	return buf;
}

static void
every_option_names_its_programs(void **state)
{
	(void)state;
	for (size_t i = 0; i < msc_cfg_nopts; i++) {
		const struct opt *o = &msc_cfg_opts[i];

		if (o->progs == 0 || (o->progs & ~(unsigned)MSC_PROG_ALL) != 0)
			fail_msg("--%s: no programs, or unknown ones", o->name);
	}
}

static void
an_option_of_another_program_is_refused(void **state)
{
	struct msc_cfg cfg;
	struct argv_copy a;
	const char *image[] = { "--image", "x", NULL };
	const char *transport[] = { "--transport", "http", NULL };
	const char *timeout[] = { "--timeout", "5", NULL };
	const char *idle[] = { "--session-timeout", "2", NULL };

	(void)state;
	assert_int_equal(parse_for(MSC_PROG_EDGE, image, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(MSC_PROG_SESSION, transport, &cfg, &a),
	    -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	/* The all-in-one takes both. */
	assert_int_equal(parse_for(MSC_PROG_ALL, image, &cfg, &a), 0);
	assert_string_equal(cfg.image, "x");
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(MSC_PROG_SESSION, timeout, &cfg, &a), 0);
	assert_int_equal(cfg.timeout, 5);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	/* The session service keeps handles for --session-timeout and
	 * knows no transport: that is the edge's check. */
	assert_int_equal(parse_for(MSC_PROG_SESSION, idle, &cfg, &a), 0);
	assert_int_equal(msc_cfg_validate(&cfg), 0);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(MSC_PROG_EDGE, idle, &cfg, &a), 0);
	assert_int_equal(msc_cfg_validate(&cfg), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(MSC_PROG_SESSION, timeout, &cfg, &a), 0);
	assert_int_equal(cfg.prog, MSC_PROG_SESSION);
	msc_cfg_fini(&cfg);
	argv_free(&a);
}

static void
owners_are_named(void **state)
{
	char buf[256];

	(void)state;
	for (size_t i = 0; i < msc_cfg_nopts; i++) {
		if (strcmp(msc_cfg_opts[i].name, "image") != 0)
			continue;
		msc_cfg_owners(&msc_cfg_opts[i], buf, sizeof(buf));
		assert_string_equal(buf, "msc-docker-driver, msc-cloud-driver, "
					 "mcp-sandbox-computer");
		return;
	}
	fail_msg("no --image");
}

/* Prefixes are matched among the program's own options only. */
static void
prefixes_are_the_programs_own(void **state)
{
	struct msc_cfg cfg;
	struct argv_copy a;
	const char *prefix[] = { "--eng", "podman", NULL };

	(void)state;
	assert_int_equal(parse_for(MSC_PROG_DOCKER_DRIVER, prefix, &cfg, &a),
	    0);
	assert_string_equal(cfg.engine, "podman");
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(MSC_PROG_EDGE, prefix, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
}

static void
help_lists_only_the_programs_options(void **state)
{
	char *edge = stdout_of(msc_cfg_help, MSC_PROG_EDGE);
	char *all = stdout_of(msc_cfg_help, MSC_PROG_ALL);

	(void)state;
	assert_non_null(strstr(edge, "usage: msc-edge "));
	assert_non_null(strstr(edge, "--transport"));
	assert_non_null(strstr(edge, "--session-url"));
	assert_null(strstr(edge, "--image"));
	assert_null(strstr(edge, "--fly-app"));
	assert_null(strstr(edge, "docker backend options"));
	assert_non_null(strstr(all, "usage: kilntainers "));
	assert_non_null(strstr(all, "--image"));
	assert_non_null(strstr(all, "--fly-app"));
	free(edge);
	free(all);
}

/* The cluster file is every service's: lines of others are skipped. */
static void
cluster_file_lines_of_others_are_skipped(void **state)
{
	char path[] = "/tmp/msc-cluster.XXXXXX";
	int fd = mkstemp(path);
	const char text[] = "session-url = ipc:///s.sock\n"
			    "inventory-url = ipc:///i.sock\n"
			    "driver-url = d1=ipc:///d1.sock\n"
			    "image = not-for-the-edge\n";
	char arg[64];
	const char *args[] = { arg, NULL };
	struct msc_cfg cfg;
	struct argv_copy a;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1),
	    (ssize_t)sizeof(text) - 1);
	close(fd);
	snprintf(arg, sizeof(arg), "--cluster=%s", path);
	assert_int_equal(parse_for(MSC_PROG_EDGE, args, &cfg, &a), 0);
	assert_string_equal(cfg.session_url, "ipc:///s.sock");
	assert_null(cfg.inventory_url);
	assert_int_equal(cfg.n_driver_urls, 0);
	assert_string_equal(cfg.image, "debian:bookworm-slim");
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(MSC_PROG_SESSION, args, &cfg, &a), 0);
	assert_null(cfg.session_url);
	assert_string_equal(cfg.inventory_url, "ipc:///i.sock");
	assert_int_equal(cfg.n_driver_urls, 1);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	unlink(path);
}

/* One server command line, split the way scripts/run-split does. */
static void
select_gives_each_program_its_arguments(void **state)
{
	char *argv[] = { "prog", "--image", "img", "--timeout=5", "--no-network",
		"--transport", "http", "--driver-url", "d=ipc:///d", "--bogus",
		"--tls-ca", "ca.pem", NULL };
	int argc = (int)(sizeof(argv) / sizeof(*argv)) - 1;
	char *out[sizeof(argv) / sizeof(*argv)];
	int n;

	(void)state;
	n = msc_cfg_select(MSC_PROG_EDGE, argc, argv, out);
	assert_int_equal(n, 6);
	assert_string_equal(out[0], "--no-network");   /* its tool hints */
	assert_string_equal(out[1], "--transport");
	assert_string_equal(out[2], "http");
	assert_string_equal(out[3], "--bogus");        /* the edge refuses it */
	assert_string_equal(out[4], "--tls-ca");
	assert_string_equal(out[5], "ca.pem");
	assert_null(out[6]);
	n = msc_cfg_select(MSC_PROG_DOCKER_DRIVER, argc, argv, out);
	assert_int_equal(n, 7);
	assert_string_equal(out[0], "--image");
	assert_string_equal(out[1], "img");
	assert_string_equal(out[2], "--timeout=5");
	assert_string_equal(out[3], "--no-network");
	assert_string_equal(out[4], "--bogus");
	n = msc_cfg_select(MSC_PROG_SESSION, argc, argv, out);
	assert_int_equal(n, 6);
	assert_string_equal(out[0], "--timeout=5");
	assert_string_equal(out[1], "--driver-url");
	assert_string_equal(out[2], "d=ipc:///d");
}

static void
program_names(void **state)
{
	unsigned prog = 0;

	(void)state;
	assert_int_equal(msc_cfg_prog_by_name("msc-wasm-driver", &prog), 0);
	assert_int_equal(prog, MSC_PROG_WASM_DRIVER);
	assert_int_equal(msc_cfg_prog_by_name("msc-nothing", &prog), -ENOENT);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_option_names_its_programs),
		cmocka_unit_test(an_option_of_another_program_is_refused),
		cmocka_unit_test(owners_are_named),
		cmocka_unit_test(prefixes_are_the_programs_own),
		cmocka_unit_test(help_lists_only_the_programs_options),
		cmocka_unit_test(cluster_file_lines_of_others_are_skipped),
		cmocka_unit_test(select_gives_each_program_its_arguments),
		cmocka_unit_test(program_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
