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

#include "cloud_cfg.h"
#include "docker_cfg.h"
#include "drivers.h"
#include "e2b_cfg.h"
#include "fly_cfg.h"
#include "modal_cfg.h"
#include "msc_cfg.h"
#include "msc_cfg_int.h"
#include "wasm_cfg.h"

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
parse_for(const struct msc_program *prog, const char *const *args, struct msc_cfg *cfg,
    struct argv_copy *a)
{
	argv_make(a, args);
	return msc_cfg_parse(cfg, prog, a->c, a->v);
}

/* What fn(prog) printed on stdout. */
static char *
stdout_of(void (*fn)(const struct msc_program *),
    const struct msc_program *prog)
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
		const struct msc_cfg_opt *o = &msc_cfg_opts[i];

		if (o->progs == 0 || (o->progs & ~(unsigned)MSC_PROG_ALL) != 0)
			fail_msg("--%s: no programs, or unknown ones", o->name);
	}
	/* A backend's table is its drivers' alone. */
	for (size_t b = 0; b < drivers_program.nbackends; b++) {
		const struct msc_cfg_table *t =
		    drivers_program.backends[b]->options;

		for (size_t i = 0; i < t->nopts; i++)
			assert_int_equal(t->opts[i].progs, 0);
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
	assert_int_equal(parse_for(&msc_prog_edge, image, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&msc_prog_session, transport, &cfg, &a),
	    -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	/* The all-in-one takes both. */
	assert_int_equal(parse_for(&drivers_program, image, &cfg, &a), 0);
	assert_string_equal(dock_cfg(&cfg)->image, "x");
	assert_string_equal(modal_cfg(&cfg)->image, "x");     /* both own it */
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&msc_prog_session, timeout, &cfg, &a), 0);
	assert_int_equal(cfg.timeout, 5);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	/* The session service keeps handles for --session-timeout and
	 * knows no transport: that is the edge's check. */
	assert_int_equal(parse_for(&msc_prog_session, idle, &cfg, &a), 0);
	assert_int_equal(msc_cfg_validate(&cfg), 0);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&msc_prog_edge, idle, &cfg, &a), 0);
	assert_int_equal(msc_cfg_validate(&cfg), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&msc_prog_session, timeout, &cfg, &a), 0);
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
		if (strcmp(msc_cfg_opts[i].name, "transport") != 0)
			continue;
		msc_cfg_owners(&msc_cfg_opts[i], buf, sizeof(buf));
		assert_string_equal(buf, "msc-edge, mcp-sandbox-computer");
		return;
	}
	fail_msg("no --transport");
}

/* A driver takes its backends' options and none of another's. */
static void
drivers_take_their_own(void **state)
{
	struct msc_cfg cfg;
	struct argv_copy a;
	const char *cred[] = { "--proxy-credential", "a.example=X-K:HOME",
		NULL };
	const char *flyapp[] = { "--fly-app", "x", NULL };
	const char *docker[] = { "--backend", "docker", NULL };
	const char *modal[] = { "--backend", "modal", "--image", "i", NULL };
	const char *none[] = { NULL };

	(void)state;
	assert_int_equal(parse_for(&fly_program, cred, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&dock_program, flyapp, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&dock_program, cred, &cfg, &a), 0);
	assert_int_equal(dock_cfg(&cfg)->n_proxy_creds, 1);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	/* The cloud driver serves E2B or Modal, nothing else. */
	assert_int_equal(parse_for(&cloud_program, docker, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&cloud_program, none, &cfg, &a), 0);
	assert_string_equal(cfg.backend, "e2b");
	assert_ptr_equal(cfg.chosen, &e2b_backend);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&cloud_program, modal, &cfg, &a), 0);
	assert_ptr_equal(cfg.chosen, &modal_backend);
	assert_string_equal(modal_cfg(&cfg)->image, "i");
	assert_null(msc_cfg_own(&cfg, &dock_cfg_table));
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&wasm_program, docker, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
}

/* Prefixes are matched among the program's own options only. */
static void
prefixes_are_the_programs_own(void **state)
{
	struct msc_cfg cfg;
	struct argv_copy a;
	const char *prefix[] = { "--eng", "podman", NULL };

	(void)state;
	assert_int_equal(parse_for(&dock_program, prefix, &cfg, &a),
	    0);
	assert_string_equal(dock_cfg(&cfg)->engine, "podman");
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&msc_prog_edge, prefix, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
}

static void
help_lists_only_the_programs_options(void **state)
{
	char *edge = stdout_of(msc_cfg_help, &msc_prog_edge);
	char *all = stdout_of(msc_cfg_help, &drivers_program);
	char *fly = stdout_of(msc_cfg_help, &fly_program);
	char *cloud = stdout_of(msc_cfg_help, &cloud_program);

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
	assert_non_null(strstr(all, "usage: kilntainers [-h] [--version] "
	    "[--backend {docker,e2b,fly,go_busybox,modal,wasm}]"));
	assert_non_null(strstr(all, "Backend to use (default: docker)"));
	/* An option two tables define is listed once. */
	assert_ptr_equal(strstr(strstr(all, "--image") + 1, "  --image "),
	    NULL);
	/* ... and one that lib's table and a backend's both define. */
	assert_ptr_equal(strstr(strstr(all, "  --output-limit") + 1,
	    "  --output-limit"), NULL);
	assert_non_null(strstr(fly, "--fly-app"));
	assert_null(strstr(fly, "--proxy-credential"));
	assert_null(strstr(fly, "--engine"));
	assert_non_null(strstr(fly, "--backend {fly}"));
	assert_non_null(strstr(cloud, "--backend {e2b,modal}"));
	assert_non_null(strstr(cloud, "--modal-app-name"));
	assert_non_null(strstr(cloud, "--e2b-template"));
	assert_null(strstr(cloud, "--wasm-path"));
	free(edge);
	free(all);
	free(fly);
	free(cloud);
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
	assert_int_equal(parse_for(&msc_prog_edge, args, &cfg, &a), 0);
	assert_string_equal(cfg.session_url, "ipc:///s.sock");
	assert_null(cfg.inventory_url);
	assert_int_equal(cfg.n_driver_urls, 0);
	assert_null(msc_cfg_own(&cfg, &dock_cfg_table));
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&msc_prog_session, args, &cfg, &a), 0);
	assert_null(cfg.session_url);
	assert_string_equal(cfg.inventory_url, "ipc:///i.sock");
	assert_int_equal(cfg.n_driver_urls, 1);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	unlink(path);
}

/* Writes text into a new temporary file; its path in path[]. */
static void
write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/*
 * A cluster file names the backend of one of its drivers: the others
 * skip the line and its backend's options; the one that serves it takes
 * them. On the command line another backend stays refused, and the
 * all-in-one refuses a backend nobody serves.
 */
static void
cluster_file_backend_of_another_driver_is_skipped(void **state)
{
	char path[] = "/tmp/msc-cluster.XXXXXX", bogus[] = "/tmp/msc-cluster.XXXXXX";
	char arg[64], barg[64];
	const char *args[] = { arg, NULL };
	const char *with_flag[] = { arg, "--backend", "modal", NULL };
	const char *bad[] = { barg, NULL };
	struct msc_cfg cfg;
	struct argv_copy a;

	(void)state;
	write_temp(path, "backend = modal\n"
			 "modal-app-name = the-cluster-app\n"
			 "fly-app = not-ours\n"
			 "driver-workers = 7\n");
	write_temp(bogus, "backend = no-such-backend\n");
	snprintf(arg, sizeof(arg), "--cluster=%s", path);
	snprintf(barg, sizeof(barg), "--cluster=%s", bogus);
	assert_int_equal(parse_for(&dock_program, args, &cfg, &a), 0);
	assert_ptr_equal(cfg.chosen, &dock_backend);
	assert_string_equal(cfg.backend, "docker");
	assert_int_equal(cfg.driver_workers, 7);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&fly_program, args, &cfg, &a), 0);
	assert_ptr_equal(cfg.chosen, &fly_backend);
	assert_string_equal(fly_cfg(&cfg)->fly_app, "not-ours");
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&cloud_program, args, &cfg, &a), 0);
	assert_ptr_equal(cfg.chosen, &modal_backend);
	assert_string_equal(modal_cfg(&cfg)->modal_app_name, "the-cluster-app");
	msc_cfg_fini(&cfg);
	argv_free(&a);
	/* The same backend on the command line is this program's input. */
	assert_int_equal(parse_for(&dock_program, with_flag, &cfg, &a),
	    -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&drivers_program, args, &cfg, &a), 0);
	assert_ptr_equal(cfg.chosen, &modal_backend);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	assert_int_equal(parse_for(&drivers_program, bad, &cfg, &a), -EINVAL);
	msc_cfg_fini(&cfg);
	argv_free(&a);
	unlink(path);
	unlink(bogus);
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
	n = msc_cfg_select(&msc_prog_edge, drivers_split, drivers_nsplit, argc,
	    argv, out);
	assert_int_equal(n, 6);
	assert_string_equal(out[0], "--no-network");   /* its tool hints */
	assert_string_equal(out[1], "--transport");
	assert_string_equal(out[2], "http");
	assert_string_equal(out[3], "--bogus");        /* the edge refuses it */
	assert_string_equal(out[4], "--tls-ca");
	assert_string_equal(out[5], "ca.pem");
	assert_null(out[6]);
	n = msc_cfg_select(&dock_program, drivers_split, drivers_nsplit, argc,
	    argv, out);
	assert_int_equal(n, 7);
	assert_string_equal(out[0], "--image");
	assert_string_equal(out[1], "img");
	assert_string_equal(out[2], "--timeout=5");
	assert_string_equal(out[3], "--no-network");
	assert_string_equal(out[4], "--bogus");
	n = msc_cfg_select(&msc_prog_session, drivers_split, drivers_nsplit,
	    argc, argv, out);
	assert_int_equal(n, 6);
	assert_string_equal(out[0], "--timeout=5");
	assert_string_equal(out[1], "--driver-url");
	assert_string_equal(out[2], "d=ipc:///d");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_option_names_its_programs),
		cmocka_unit_test(an_option_of_another_program_is_refused),
		cmocka_unit_test(owners_are_named),
		cmocka_unit_test(drivers_take_their_own),
		cmocka_unit_test(prefixes_are_the_programs_own),
		cmocka_unit_test(help_lists_only_the_programs_options),
		cmocka_unit_test(cluster_file_lines_of_others_are_skipped),
		cmocka_unit_test(cluster_file_backend_of_another_driver_is_skipped),
		cmocka_unit_test(select_gives_each_program_its_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
