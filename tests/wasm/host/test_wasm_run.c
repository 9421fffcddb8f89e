/*
 * test_wasm_run.c - the runner contract with the probe guest: output,
 * args, environment, exit codes, stdin, working directory, file calls,
 * traps, memory and fuel limits, big output, sleep and setup errors.
 *
 * usage: test_wasm_run RUNNER PROBE.wasm CACHE_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wasm_harness.h"

#define OPTS(...) (const char *const[]){ __VA_ARGS__, NULL }
#define ARGS(...) (const char *const[]){ __VA_ARGS__, NULL }

static struct wh w;

static void
basics(void)
{
	struct wh_run r;

	wh_guest(&w, &r, NULL, ARGS("hello"), NULL);
	WH_CHECK(strcmp(r.out, "hello from wasm\n") == 0);
	WH_CHECK(strcmp(r.err, "") == 0);
	WH_CHECK(strcmp(r.status, "exit 0") == 0 && r.code == 0);
	wh_run_free(&r);

	wh_guest(&w, &r, NULL, ARGS("args", "a b", "", "\xc3\xbc", "--x"),
	    NULL);
	WH_CHECK(strcmp(r.out, "[probe]\n[args]\n[a b]\n[]\n[\xc3\xbc]\n"
				"[--x]\n") == 0);
	wh_run_free(&r);

	wh_guest(&w, &r, OPTS("--env", "FOO=bar baz"), ARGS("env"), NULL);
	WH_CHECK(strstr(r.out, "FOO=bar baz\n") != NULL);
	WH_CHECK(strstr(r.out, "PWD=/\n") != NULL);
	WH_CHECK(strstr(r.out, "HOME=/\n") != NULL);
	WH_CHECK(strstr(r.out, "PATH=") == NULL);       /* nothing leaks */
	wh_run_free(&r);

	wh_guest(&w, &r, NULL, ARGS("exit", "7"), NULL);
	WH_CHECK(strcmp(r.status, "exit 7") == 0 && r.code == 7);
	wh_run_free(&r);
	wh_guest(&w, &r, NULL, ARGS("procexit", "300"), NULL);
	WH_CHECK(strcmp(r.status, "exit 255") == 0 && r.code == 255);
	wh_run_free(&r);
	wh_guest(&w, &r, NULL, ARGS("procexit", "0"), NULL);
	WH_CHECK(strcmp(r.status, "exit 0") == 0 && r.code == 0);
	wh_run_free(&r);

	wh_guest(&w, &r, NULL, ARGS("stderr"), NULL);
	WH_CHECK(strcmp(r.err, "to stderr\n") == 0 && r.olen == 0);
	wh_run_free(&r);
}

static void
stdin_to_stdout(void)
{
	size_t n = 300000;
	char *in = malloc(n + 1);
	struct wh_run r;

	for (size_t i = 0; i < n; i++)
		in[i] = (char)('a' + (i * 7 + i / 13) % 26);
	in[n] = '\0';
	wh_guest(&w, &r, NULL, ARGS("cat"), in);
	WH_CHECK(r.olen == n && memcmp(r.out, in, n) == 0);
	WH_CHECK(strcmp(r.status, "exit 0") == 0);
	wh_run_free(&r);
	free(in);

	wh_guest(&w, &r, NULL, ARGS("cat"), NULL);     /* empty stdin */
	WH_CHECK(r.olen == 0 && strcmp(r.status, "exit 0") == 0);
	wh_run_free(&r);
}

static void
working_directory(void)
{
	char p[1024];
	struct wh_run r;

	wh_guest(&w, &r, OPTS("--cwd", "/a/b/c"), ARGS("pwd"), NULL);
	WH_CHECK(strcmp(r.out, "PWD /a/b/c\n") == 0);
	wh_run_free(&r);
	snprintf(p, sizeof(p), "%s/a/b/c", w.root);
	WH_CHECK(wh_exists(p));

	wh_guest(&w, &r, OPTS("--cwd", "/a/b/c"), ARGS("write", "rel.txt",
	    "x"), NULL);
	WH_CHECK(strcmp(r.out, "OK\n") == 0);
	wh_run_free(&r);
	snprintf(p, sizeof(p), "%s/a/b/c/rel.txt", w.root);
	WH_CHECK(wh_exists(p));

	/* A module that ignores PWD starts in "/" (wasi-libc's default). */
	wh_guest(&w, &r, OPTS("--cwd", "/a/b"), ARGS("nochdir"), NULL);
	WH_CHECK(strcmp(r.out, "PWD /\n") == 0);
	wh_run_free(&r);

	wh_guest(&w, &r, OPTS("--cwd", "/a/./b//../b/"), ARGS("pwd"), NULL);
	WH_CHECK(strcmp(r.out, "PWD /a/b\n") == 0);
	wh_run_free(&r);
}

static void
files(void)
{
	char p[1024];
	struct wh_run r;

	wh_guest(&w, &r, NULL, ARGS("fileops"), NULL);
	WH_CHECK(strcmp(r.out, "OK\n") == 0);
	wh_run_free(&r);

	/* 300 entries: fd_readdir refills its buffer from cookies. */
	snprintf(p, sizeof(p), "%s/many", w.root);
	mkdir(p, 0755);
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof(p), "%s/many/file-with-a-long-name-%04d",
		    w.root, i);
		wh_write(p, "");
	}
	wh_guest(&w, &r, NULL, ARGS("ls", "/many"), NULL);
	WH_CHECK(strcmp(r.out, "ENTRIES 300\n") == 0);
	wh_run_free(&r);

	wh_guest(&w, &r, NULL, ARGS("read", "/nonexistent"), NULL);
	WH_CHECK(strcmp(r.out, "ERR No such file or directory\n") == 0);
	wh_run_free(&r);
	wh_guest(&w, &r, NULL, ARGS("mkdir", "many"), NULL);
	WH_CHECK(strcmp(r.out, "ERR File exists\n") == 0);
	wh_run_free(&r);
	wh_guest(&w, &r, NULL, ARGS("rmdir", "many"), NULL);
	WH_CHECK(strcmp(r.out, "ERR Directory not empty\n") == 0);
	wh_run_free(&r);
}

static void
traps(void)
{
	static const struct {
		const char *cmd, *status;
	} cases[] = {
		{ "unreachable", "trap Unreachable instruction executed" },
		{ "oob", "trap Out-of-bounds access in linear memory or a "
			 "table" },
		{ "divzero", "trap Integer divide by zero" },
		{ "recurse", "trap Call stack exhausted" },
		{ "recurse-mem", "trap " },     /* shadow stack: any trap */
	};
	struct wh_run r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wh_guest(&w, &r, NULL, ARGS(cases[i].cmd), NULL);
		WH_CHECK(strncmp(r.status, cases[i].status,
		    strlen(cases[i].status)) == 0);
		WH_CHECK(r.code == 1);
		WH_CHECK(strstr(r.err, "[kilntainers: WASM trap: ") != NULL);
		if (strncmp(r.status, cases[i].status,
			strlen(cases[i].status)) != 0)
			fprintf(stderr, "  %s: status '%s' code %d\n",
			    cases[i].cmd, r.status, r.code);
		wh_run_free(&r);
	}
}

static void
limits(void)
{
	struct wh_run r;
	long got = -1, slept = -1;

	wh_guest(&w, &r, OPTS("--max-memory-mib", "32"),
	    ARGS("malloc", "1000"), NULL);
	WH_CHECK(sscanf(r.out, "GOT %ld MiB", &got) == 1);
	WH_CHECK(got >= 16 && got < 32);
	WH_CHECK(strcmp(r.status, "exit 0") == 0);
	printf("  malloc under 32 MiB: got %ld MiB, then NULL\n", got);
	wh_run_free(&r);

	wh_guest(&w, &r, OPTS("--max-memory-mib", "64"),
	    ARGS("malloc", "1000"), NULL);
	WH_CHECK(sscanf(r.out, "GOT %ld MiB", &got) == 1);
	WH_CHECK(got >= 32 && got < 64);
	wh_run_free(&r);

	wh_guest(&w, &r, OPTS("--fuel", "20000000"), ARGS("loop"), NULL);
	WH_CHECK(strcmp(r.status, "fuel") == 0 && r.code == 124);
	WH_CHECK(r.ms < 10000);
	printf("  infinite loop, fuel 2e7: %s after %.0f ms\n", r.status,
	    r.ms);
	wh_run_free(&r);

	wh_guest(&w, &r, OPTS("--fuel", "20000000"), ARGS("hello"), NULL);
	WH_CHECK(strcmp(r.status, "exit 0") == 0);
	wh_run_free(&r);

	wh_guest(&w, &r, NULL, ARGS("spam", "20000000"), NULL);
	WH_CHECK(r.olen == 20000000 && strcmp(r.status, "exit 0") == 0);
	printf("  20 MB of output in %.0f ms\n", r.ms);
	wh_run_free(&r);

	wh_guest(&w, &r, NULL, ARGS("sleep", "300"), NULL);
	WH_CHECK(sscanf(r.out, "SLEPT %ld", &slept) == 1);
	WH_CHECK(slept >= 300 && slept < 3000);
	WH_CHECK(r.ms >= 300 && r.ms < 5000);
	printf("  sleep 300 ms: slept %ld ms\n", slept);
	wh_run_free(&r);
}

static void
setup_errors(void)
{
	const char *bad_root[] = { w.runner, "--root", "/nonexistent/x",
		"--module", w.module, "--status-fd", "3", "--", "p", NULL };
	const char *bad_mod[] = { w.runner, "--root", w.root, "--module",
		"/nonexistent.so", "--status-fd", "3", "--", "p", NULL };
	const char *bad_flag[] = { w.runner, "--root", w.root, "--bogus",
		"--status-fd", "3", "--", "p", NULL };
	const char *no_argv[] = { w.runner, "--status-fd", "3", "--root",
		w.root, "--module", w.module, "--", NULL };
	char p[1024];
	struct wh_run r;

	wh_spawn(&r, bad_root, NULL, 0);
	WH_CHECK(r.code == 125 && strncmp(r.status, "error cannot open the "
						    "root", 26) == 0);
	wh_run_free(&r);
	wh_spawn(&r, bad_mod, NULL, 0);
	WH_CHECK(r.code == 125 && strncmp(r.status, "error cannot load the "
						    "module", 27) == 0);
	wh_run_free(&r);
	wh_spawn(&r, bad_flag, NULL, 0);
	WH_CHECK(r.code == 125 && strncmp(r.status, "error ", 6) == 0);
	wh_run_free(&r);
	wh_spawn(&r, no_argv, NULL, 0);
	WH_CHECK(r.code == 125 && strncmp(r.status, "error usage", 11) == 0);
	wh_run_free(&r);
	wh_guest(&w, &r, OPTS("--max-memory-mib", "0"), ARGS("hello"), NULL);
	WH_CHECK(r.code == 125 && strstr(r.err, "--max-memory-mib") != NULL);
	wh_run_free(&r);

	snprintf(p, sizeof(p), "%s/plainfile", w.root);
	wh_write(p, "x");
	wh_guest(&w, &r, OPTS("--cwd", "/plainfile/sub"), ARGS("pwd"), NULL);
	WH_CHECK(r.code == 125 && strstr(r.status, "not a directory"));
	wh_run_free(&r);
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s RUNNER PROBE.wasm CACHE\n", argv[0]);
		return 2;
	}
	if (wh_setup(&w, argv[1], wh_compile(argv[2], argv[3], NULL)) != 0) {
		perror("setup");
		return 2;
	}
	basics();
	stdin_to_stdout();
	working_directory();
	files();
	traps();
	limits();
	setup_errors();
	printf("%s: %d failed checks\n", argv[0], wh_failures);
	return wh_failures != 0;
}
