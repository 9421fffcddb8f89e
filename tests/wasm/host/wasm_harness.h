/*
 * wasm_harness.h - drives the wasm runners the way the driver does: a
 * child process with pipes on fds 0-2 and the status line on fd 3.
 */
#ifndef WASM_HARNESS_H
#define WASM_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

/* One finished runner process. */
struct wh_run {
	char *out, *err;        /* NUL-terminated captures (owned) */
	size_t olen, elen;
	char status[512];       /* the status line without '\n', or "" */
	int code;               /* exit status; -signal when killed */
	double ms;              /* spawn to reap */
	long maxrss_kb;
};

/* What every guest run shares. */
struct wh {
	const char *runner;     /* msc-wasm-exec (borrowed) */
	const char *module;     /* the probe's .so (borrowed) */
	char base[256];         /* a private temporary directory */
	char root[300];         /* base/root: the guest's "/" */
};

extern int wh_failures;

#define WH_CHECK(cond)                                                      \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n",        \
			    __FILE__, __LINE__, #cond);                     \
			wh_failures++;                                      \
		}                                                           \
	} while (0)

/*
 * Runs argv (argv[0] a path) with stdin fed from in (may be NULL), for at
 * most 60 s. Returns 0, or -1 when it could not start.
 */
int wh_spawn(struct wh_run *r, const char *const argv[], const char *in,
    size_t inlen);

/*
 * The same through a spare (the driver's, wasm_runner.c): starts argv[0]
 * --spare-fd 4, lets it get ready for ready_ms, then sends it argv as its
 * command line. r->ms counts from the send to the reap.
 */
int wh_spawn_spare(struct wh_run *r, const char *const argv[],
    const char *in, size_t inlen, int ready_ms);

/*
 * Runs the probe: runner --root w->root --module w->module --status-fd 3
 * [opts...] -- probe [args...]. opts and args are NULL-terminated.
 */
int wh_guest(struct wh *w, struct wh_run *r, const char *const opts[],
    const char *const args[], const char *in);

void wh_run_free(struct wh_run *r);

/* Makes w->base and w->root; cleans up at exit. */
int wh_setup(struct wh *w, const char *runner, const char *module);

/* Compiles probe.wasm into cache (wasm_compile_module); returns the .so. */
char *wh_compile(const char *wasm, const char *cache, double *ms);

/* Writes text to path (host side). */
void wh_write(const char *path, const char *text);

/* The content of path, or NULL (malloc'd). */
char *wh_read(const char *path);

bool wh_exists(const char *path);

#endif /* WASM_HARNESS_H */
