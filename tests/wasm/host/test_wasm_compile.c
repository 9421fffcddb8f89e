/*
 * test_wasm_compile.c - wasm_compile_module (first compile, cache hit,
 * the reference's error texts, modules the host refuses) and the cost of
 * one exec: p50/p90 spawn-to-reap time and peak RSS over 100 runs of a
 * tiny module, of the probe's hello, and of msc-wasm-busybox when built.
 *
 * usage: test_wasm_compile RUNNER PROBE.wasm TINY.wasm BAD_IMPORT.wasm
 *	BAD_SIG.wasm REACTOR.wasm START.wasm BIGMEM.wasm [BUSYBOX_RUNNER]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wasm_compile.h"
#include "wasm_harness.h"

#define RUNS 100

static struct wh w;
static char cache[400];

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Runs argv RUNS times; prints p50/p90 of spawn to reap. */
static void
bench(const char *label, const char *const argv[], const char *want)
{
	double ms[RUNS];
	struct wh_run r;

	for (int i = 0; i < RUNS; i++) {
		wh_spawn(&r, argv, NULL, 0);
		if (i == 0)
			WH_CHECK(strcmp(r.status, want) == 0);
		ms[i] = r.ms;
		wh_run_free(&r);
	}
	qsort(ms, RUNS, sizeof(ms[0]), cmp_double);
	printf("  exec %-28s p50 %.2f ms  p90 %.2f ms\n", label,
	    ms[RUNS / 2], ms[RUNS * 9 / 10]);
	WH_CHECK(ms[RUNS / 2] < 100.0);
}

/* The same through a spare given ready_ms to get ready; times its command
 * line's send to its reap. */
static void
bench_spare(const char *label, const char *const argv[], const char *want,
    int ready_ms)
{
	double ms[RUNS];
	struct wh_run r;

	for (int i = 0; i < RUNS; i++) {
		wh_spawn_spare(&r, argv, NULL, 0, ready_ms);
		if (i == 0)
			WH_CHECK(strcmp(r.status, want) == 0);
		ms[i] = r.ms;
		wh_run_free(&r);
	}
	qsort(ms, RUNS, sizeof(ms[0]), cmp_double);
	printf("  spare %-27s p50 %.2f ms  p90 %.2f ms\n", label,
	    ms[RUNS / 2], ms[RUNS * 9 / 10]);
	WH_CHECK(ms[RUNS / 2] < 100.0);
}

/*
 * The peak RSS of a runner whose guest sleeps: VmHWM of its own address
 * space, sampled while it lives (ru_maxrss would include the spawning
 * parent's pages).
 */
static void
peak_rss(const char *label, const char *const argv[])
{
	double start = 0;
	long hwm = 0;
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		char p[64], line[256];
		FILE *f;
		long v;

		usleep(5000);
		if ((start += 5) < 50)  /* surely past exec */
			continue;
		snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
		if ((f = fopen(p, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "VmHWM: %ld kB", &v) == 1 && v > hwm)
				hwm = v;
		fclose(f);
	}
	printf("  peak RSS %-24s %.1f MB\n", label, (double)hwm / 1024.0);
	WH_CHECK(hwm > 0 && hwm < 64 * 1024);
}

static void
compile_and_cache(const char *wasm)
{
	char *so1, *so2;
	double first, hit;
	const char *base;
	struct stat st;

	so1 = wh_compile(wasm, cache, &first);
	so2 = wh_compile(wasm, cache, &hit);
	printf("  compile %s: first %.0f ms, cache hit %.2f ms\n", wasm,
	    first, hit);
	WH_CHECK(strcmp(so1, so2) == 0);
	WH_CHECK(stat(so1, &st) == 0 && S_ISREG(st.st_mode));
	base = strrchr(so1, '/') + 1;
	WH_CHECK(strlen(base) == 64 + 5 && strcmp(base + 64, "-3.so") == 0);
	WH_CHECK(hit < first && hit < 200);
	free(so1);
	free(so2);
}

/* wasm_compile_module must fail with err starting with want. */
static void
refused(const char *wasm, int want_rv, const char *want)
{
	char err[1024], prefix[600], *so = NULL;
	int rv = wasm_compile_module(wasm, cache, &so, err, sizeof(err));

	snprintf(prefix, sizeof(prefix), want, wasm);
	WH_CHECK(rv == want_rv && so == NULL);
	WH_CHECK(strncmp(err, prefix, strlen(prefix)) == 0);
	if (strncmp(err, prefix, strlen(prefix)) != 0)
		fprintf(stderr, "  got: %s\n  want: %s\n", err, prefix);
	else
		printf("  refused: %s\n", err);
}

static void
errors(char **argv)
{
	char p[600], notwasm[600];

	refused("/nonexistent/m.wasm", -ENOENT,
	    "WASM file not found: '%s'");
	snprintf(notwasm, sizeof(notwasm), "%s/notwasm.wasm", w.base);
	wh_write(notwasm, "this is not wasm\n");
	refused(notwasm, -EINVAL, "Failed to compile WASM module '%s': "
				  "msc-wasm-fuel failed: msc-wasm-fuel: not a "
				  "WebAssembly binary");
	/* A cut-off module: binaryen's own parse error is the detail. */
	snprintf(p, sizeof(p), "%s/cut.wasm", w.base);
	{
		char *full = wh_read(argv[3]);
		FILE *f = fopen(p, "w");

		WH_CHECK(full != NULL && f != NULL);
		if (full != NULL && f != NULL)
			fwrite(full, 1, 30, f);
		if (f != NULL)
			fclose(f);
		free(full);
	}
	refused(p, -EINVAL, "Failed to compile WASM module '%s': "
			    "msc-wasm-fuel failed: ");
	refused(argv[4], -EINVAL, "Failed to compile WASM module '%s': "
				  "msc-wasm-fuel failed: msc-wasm-fuel: the "
				  "module imports from 'env'");
	refused(argv[5], -EINVAL, "Failed to compile WASM module '%s': "
				  "msc-wasm-fuel failed: msc-wasm-fuel: the "
				  "module imports WASI function 'fd_write' "
				  "with a wrong signature");
	refused(argv[6], -EINVAL, "Failed to compile WASM module '%s': "
				  "msc-wasm-fuel failed: msc-wasm-fuel: the "
				  "module exports no _start");
	refused(argv[7], -EINVAL, "Failed to compile WASM module '%s': "
				  "msc-wasm-fuel failed: msc-wasm-fuel: the "
				  "module has a start function");
	refused(w.base, -EINVAL, "Failed to compile WASM module '%s': "
				 "not a regular file");
	/* A tool that hangs is killed with its process group at the step
	 * deadline. */
	{
		char bin[600], tool[700], err[1024], *so = NULL;
		double t0 = now();
		int rv;

		snprintf(bin, sizeof(bin), "%s/fakebin", w.base);
		mkdir(bin, 0755);
		snprintf(tool, sizeof(tool), "%s/wasm2c", bin);
		wh_write(tool, "#!/bin/sh\nsleep 29.7531 & wait\n");
		chmod(tool, 0755);
		setenv("MSC_WASM_WASM2C", tool, 1);
		setenv("MSC_WASM_COMPILE_STEP_S", "1", 1);
		snprintf(p, sizeof(p), "%s/cache2", w.base);
		rv = wasm_compile_module(argv[3], p, &so, err, sizeof(err));
		unsetenv("MSC_WASM_WASM2C");
		unsetenv("MSC_WASM_COMPILE_STEP_S");
		WH_CHECK(rv == -ETIMEDOUT && so == NULL);
		WH_CHECK(strstr(err, "wasm2c took longer than 1 s") != NULL);
		WH_CHECK(now() - t0 < 10000);
		printf("  refused: %s (%.0f ms)\n", err, now() - t0);
		snprintf(p, sizeof(p), "pgrep -f '^sleep 29.7531$' >/dev/null");
		WH_CHECK(system(p) != 0);       /* the sleep died too */
	}
	/* No temporary directories are left in the cache. */
	snprintf(p, sizeof(p), "ls -A %s | grep -c '^\\.tmp' >/dev/null",
	    cache);
	WH_CHECK(system(p) != 0);
}

/* The toolbox runner: output, and the working directory through PWD. */
static void
busybox(const char *runner)
{
	const char *echo[] = { runner, "--root", w.root, "--status-fd", "3",
		"--", "busybox", "echo", "hi", NULL };
	const char *pwd[] = { runner, "--root", w.root, "--cwd", "/bb/x/..",
		"--status-fd", "3", "--", "busybox", "pwd", NULL };
	struct wh_run r;

	wh_spawn(&r, echo, NULL, 0);
	WH_CHECK(strcmp(r.out, "hi\n") == 0 && strcmp(r.status, "exit 0") == 0);
	wh_run_free(&r);
	wh_spawn(&r, pwd, NULL, 0);
	WH_CHECK(strcmp(r.out, "/bb\n") == 0 && strcmp(r.status, "exit 0") == 0);
	wh_run_free(&r);
}

/*
 * The toolbox runner as the driver's spare (wasm_runner.c), its module
 * instantiated before its command line comes: the command's working
 * directory, memory cap and fuel still apply, and a cap below what the
 * instantiated module has gives the same trap as a runner started for
 * the command.
 */
static void
busybox_spare(const char *runner)
{
	const char *pwd[] = { runner, "--root", w.root, "--cwd", "/sp/a",
		"--status-fd", "3", "--", "busybox", "sh", "-c", "pwd; echo hi",
		NULL };
	const char *small[] = { runner, "--root", w.root, "--max-memory-mib",
		"1", "--status-fd", "3", "--", "busybox", "echo", "hi", NULL };
	const char *grow[] = { runner, "--root", w.root, "--max-memory-mib",
		"4", "--status-fd", "3", "--", "busybox", "awk", "BEGIN { s = "
		"\"x\"; while (length(s) < 3000000) s = s s; print length(s) }",
		NULL };
	const char *loop[] = { runner, "--root", w.root, "--fuel", "100000",
		"--status-fd", "3", "--", "busybox", "awk",
		"BEGIN { while (1) x++ }", NULL };
	struct wh_run r, d;

	wh_spawn_spare(&r, pwd, NULL, 0, 50);
	WH_CHECK(strcmp(r.out, "/sp/a\nhi\n") == 0 &&
	    strcmp(r.status, "exit 0") == 0 && r.code == 0);
	wh_run_free(&r);
	/* The toolbox starts with 18 pages (1.125 MiB). */
	wh_spawn(&d, small, NULL, 0);
	wh_spawn_spare(&r, small, NULL, 0, 50);
	WH_CHECK(d.code == 1 && strcmp(d.status, "trap the module needs 2 MiB "
	    "of memory, over the limit of 1 MiB") == 0);
	WH_CHECK(r.code == d.code && strcmp(r.status, d.status) == 0 &&
	    strcmp(r.err, d.err) == 0 && r.olen == 0);
	printf("  spare, 1 MiB cap: %s\n", r.status);
	wh_run_free(&r);
	wh_run_free(&d);
	/* 4 MiB is too little for a 4 MB string; 64 MiB is enough. */
	wh_spawn_spare(&r, grow, NULL, 0, 50);
	WH_CHECK(r.code != 0 && r.olen == 0);
	printf("  spare, 4 MiB cap, a 4 MB string: exit %d, %s\n", r.code,
	    r.status);
	wh_run_free(&r);
	grow[4] = "64";
	wh_spawn_spare(&r, grow, NULL, 0, 50);
	WH_CHECK(r.code == 0 && strcmp(r.out, "4194304\n") == 0);
	wh_run_free(&r);
	wh_spawn_spare(&r, loop, NULL, 0, 50);
	WH_CHECK(r.code == 124 && strcmp(r.status, "fuel") == 0);
	wh_run_free(&r);
}

/* A module without imports whose initial memory is over a small limit. */
static void
initial_memory(const char *wasm)
{
	char *so = wh_compile(wasm, cache, NULL);
	const char *small[] = { w.runner, "--root", w.root, "--module", so,
		"--max-memory-mib", "2", "--status-fd", "3", "--", "m", NULL };
	const char *enough[] = { w.runner, "--root", w.root, "--module", so,
		"--max-memory-mib", "7", "--status-fd", "3", "--", "m", NULL };
	struct wh_run r;

	wh_spawn(&r, small, NULL, 0);
	WH_CHECK(r.code == 1 && strcmp(r.status, "trap the module needs 7 MiB "
	    "of memory, over the limit of 2 MiB") == 0);
	wh_run_free(&r);
	wh_spawn(&r, enough, NULL, 0);
	WH_CHECK(r.code == 0 && strcmp(r.status, "exit 0") == 0);
	wh_run_free(&r);
	free(so);
}

int
main(int argc, char **argv)
{
	char *tiny, *probe;

	if (argc < 9) {
		fprintf(stderr, "usage: %s RUNNER PROBE TINY BAD_IMPORT BAD_SIG "
				"REACTOR START BIGMEM [BUSYBOX]\n", argv[0]);
		return 2;
	}
	if (wh_setup(&w, argv[1], NULL) != 0) {
		perror("setup");
		return 2;
	}
	snprintf(cache, sizeof(cache), "%s/cache", w.base);
	compile_and_cache(argv[3]);
	compile_and_cache(argv[2]);
	errors(argv);
	initial_memory(argv[8]);

	tiny = wh_compile(argv[3], cache, NULL);
	probe = wh_compile(argv[2], cache, NULL);
	{
		const char *t[] = { argv[1], "--root", w.root, "--module", tiny,
			"--status-fd", "3", "--", "tiny", NULL };
		const char *h[] = { argv[1], "--root", w.root, "--module",
			probe, "--status-fd", "3", "--", "probe", "hello",
			NULL };
		const char *b[] = { argc > 9 ? argv[9] : "", "--root", w.root,
			"--status-fd", "3", "--", "busybox", "true", NULL };

		const char *s[] = { argv[1], "--root", w.root, "--module",
			probe, "--", "probe", "sleep", "300", NULL };

		bench("tiny module (proc_exit 42)", t, "exit 42");
		peak_rss("probe sleeping", s);
		bench("probe hello (wasi-libc)", h, "exit 0");
		const char *bs[] = { argc > 9 ? argv[9] : "", "--root",
			w.root, "--", "busybox", "sleep", "1", NULL };

		if (argc > 9 && access(argv[9], X_OK) == 0) {
			bench("msc-wasm-busybox true", b, "exit 0");
			bench_spare("msc-wasm-busybox true", b, "exit 0", 20);
			peak_rss("busybox sleeping", bs);
			busybox(argv[9]);
			busybox_spare(argv[9]);
		}
	}
	free(tiny);
	free(probe);
	printf("%s: %d failed checks\n", argv[0], wh_failures);
	return wh_failures != 0;
}
