/*
 * wasm_runner.h - starting the runner process of one command, with a spare
 * started ahead of it.
 *
 * Starting a runner (fork, exec, a static-pie's relocation) is most of a
 * short command's time. So the driver keeps one runner started ahead,
 * waiting on a socket for its command line (the runner's --spare-fd,
 * host/runner.c). A command takes it and starts the next spare while its
 * own runs; a command that finds none (another took it, or it died)
 * starts its runner as before. Runners started either way are the same
 * program with the same descriptors, environment, signals and process
 * group, so nothing after the start can tell them apart.
 */
#ifndef WASM_RUNNER_H
#define WASM_RUNNER_H

#include <stddef.h>
#include <sys/types.h>

struct wasm_driver;

/* A started runner: its pid, and our ends of its stdin (non-blocking),
 * stdout, stderr and status pipes, all owned by the caller. */
struct wasm_runner {
	pid_t pid;
	int in, out, err, status;
};

/*
 * Starts the runner d->runner with argv (argv[0] the runner, NULL-ended;
 * borrowed), taking the spare when there is one. 0, or -errno with a
 * message in err. Does not wait for the command.
 */
int wasm_runner_start(struct wasm_driver *d, char *const argv[],
    struct wasm_runner *r, char *err, size_t errlen);

/*
 * Reaps runner pid, whose outcome is read (its status line and the EOF of
 * its pipes, which it closes before it exits): now if it has ended, else
 * on the driver's reaper thread (one, started at the first such runner),
 * so that the exit's teardown does not delay the reply. Blocks only when
 * the driver stops or the thread cannot be had.
 */
void wasm_runner_reap(struct wasm_driver *d, pid_t pid);

/* At the driver's stop, once d->stopping is set: ends the spare, if any,
 * and waits for it, and for the reaper once it has reaped every runner
 * queued. No spare starts after; later runners are reaped at once. */
void wasm_runner_fini(struct wasm_driver *d);

#endif
