/*
 * wasm_runner.c - starting a command's runner process, and the spare
 * started ahead of it (wasm_runner.h).
 *
 * The spare's fds 0-3 are pipes as a runner's always are; fd 4 is one
 * end of a socket pair whose other end the driver keeps (d->spare_req).
 * Taking the spare sends it the command line and closes our end: from
 * then on it is the command's runner. The spare is d->spare, under d->mu;
 * at most one is being started at a time (d->spare_starting). A runner
 * whose outcome is read but whose exit is not over is reaped by the
 * reaper thread (d->ending, wasm_runner_reap).
 */
#include "wasm_driver_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* The host's bound on one runner's command line (host/runner.c). */
#define SPARE_REQ_MAX (8u << 20)

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Moves fd (owned) to 10 or above, close-on-exec; -1 on failure. */
static int
high_fd(int fd)
{
	int h;

	if (fd < 0)
		return -1;
	h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	return h;
}

/* A pipe whose ends sit at fd 10 or above, close-on-exec. */
static int
high_pipe(int p[2])
{
	int raw[2];

	if (pipe2(raw, O_CLOEXEC) != 0)
		return -errno;
	p[0] = high_fd(raw[0]);
	p[1] = high_fd(raw[1]);
	if (p[0] < 0 || p[1] < 0) {
		close_fd(&p[0]);
		close_fd(&p[1]);
		return -EMFILE;
	}
	return 0;
}

static void
runner_close(struct wasm_runner *r)
{
	close_fd(&r->in);
	close_fd(&r->out);
	close_fd(&r->err);
	close_fd(&r->status);
}

/*
 * posix_spawn of d->runner with argv, its fds 0-3 our new pipes (r) and,
 * when req_fd >= 0, fd 4 that descriptor (borrowed). 0 or -errno.
 */
static int
spawn(struct wasm_driver *d, char *const argv[], int req_fd,
    struct wasm_runner *r)
{
	static char *const envp[] = { "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
		NULL };
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
	int pst[2] = { -1, -1 }, rv;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;

	if ((rv = high_pipe(pin)) != 0 || (rv = high_pipe(pout)) != 0 ||
	    (rv = high_pipe(perr)) != 0 || (rv = high_pipe(pst)) != 0)
		goto out;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
	posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
	posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
	posix_spawn_file_actions_adddup2(&fa, pst[1], 3);
	if (req_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, req_fd, 4);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&dfl);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	rv = -posix_spawn(&r->pid, d->runner, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
out:
	close_fd(&pin[0]);
	close_fd(&pout[1]);
	close_fd(&perr[1]);
	close_fd(&pst[1]);
	r->in = pin[1];
	r->out = pout[0];
	r->err = perr[0];
	r->status = pst[0];
	if (rv != 0) {
		runner_close(r);
		return rv;
	}
	fcntl(r->in, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Ends a spare nobody will take (owned: its fds are closed, it is
 * reaped). */
static void
spare_end(struct wasm_runner *sp, int *req)
{
	close_fd(req);          /* EOF: it ends by itself */
	kill(sp->pid, SIGKILL);
	while (waitpid(sp->pid, NULL, 0) < 0 && errno == EINTR)
		;
	runner_close(sp);
	sp->pid = 0;
}

/* Starts the next spare unless one is there, being started, or the driver
 * stops. Takes about as long as one posix_spawn; called while a command
 * runs in the spare just taken. */
static void
spare_refill(struct wasm_driver *d)
{
	char fdarg[] = "4", *argv[] = { d->runner, "--spare-fd", fdarg, NULL };
	struct wasm_runner sp = { 0, -1, -1, -1, -1 };
	int sv[2], req = -1;
	bool keep;

	pthread_mutex_lock(&d->mu);
	keep = !d->stopping && d->spare.pid == 0 && !d->spare_starting;
	if (keep)
		d->spare_starting = true;
	pthread_mutex_unlock(&d->mu);
	if (!keep)
		return;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		req = high_fd(sv[0]);
		sv[1] = high_fd(sv[1]);
		if (req < 0 || sv[1] < 0 || spawn(d, argv, sv[1], &sp) != 0)
			sp.pid = 0;
		close_fd(&sv[1]);
	}
	pthread_mutex_lock(&d->mu);
	d->spare_starting = false;
	keep = sp.pid != 0 && !d->stopping;
	if (keep) {
		d->spare = sp;
		d->spare_req = req;
		req = -1;       /* d's now */
	}
	pthread_mutex_unlock(&d->mu);
	if (!keep && sp.pid != 0)
		spare_end(&sp, &req);
	close_fd(&req);         /* no spare: a failed start */
}

/* Sends the spare (its request socket req, owned, closed here) argv.
 * 0, or -errno when it could not take it (it died, or argv is too big). */
static int
spare_send(int req, char *const argv[])
{
	uint32_t len = 0;
	char *buf, *p;
	size_t left;
	int rv = 0;

	for (size_t i = 0; argv[i] != NULL; i++) {
		size_t n = strlen(argv[i]) + 1;

		if (n > SPARE_REQ_MAX - len) {
			close(req);
			return -E2BIG;
		}
		len += (uint32_t)n;
	}
	if ((buf = malloc(sizeof(len) + len)) == NULL) {
		close(req);
		return -ENOMEM;
	}
	memcpy(buf, &len, sizeof(len));
	p = buf + sizeof(len);
	for (size_t i = 0; argv[i] != NULL; i++) {
		size_t n = strlen(argv[i]) + 1;

		memcpy(p, argv[i], n);
		p += n;
	}
	p = buf;
	for (left = sizeof(len) + len; left > 0;) {
		ssize_t w = send(req, p, left, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rv = -errno;
			break;
		}
		p += w;
		left -= (size_t)w;
	}
	free(buf);
	close(req);
	return rv;
}

static void
wait_for(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/*
 * The reaper thread: waits for the runners of d->ending, one after the
 * other. Each has told its outcome and closed its pipes, so each wait
 * lasts no longer than the exit's teardown. Ends at wasm_runner_fini,
 * once none is left.
 */
static void *
reaper(void *arg)
{
	struct wasm_driver *d = arg;

	pthread_mutex_lock(&d->mu);
	for (;;) {
		pid_t pid;

		while (d->n_ending == 0 && !d->reaper_stop)
			pthread_cond_wait(&d->ending_cv, &d->mu);
		if (d->n_ending == 0)
			break;
		pid = d->ending[--d->n_ending];
		pthread_mutex_unlock(&d->mu);
		wait_for(pid);
		pthread_mutex_lock(&d->mu);
	}
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

#define ENDING_MAX 64   /* runners left to the reaper at once */

/* Queues pid for the reaper (under d->mu): false when it cannot be. */
static bool
ending_add(struct wasm_driver *d, pid_t pid)
{
	/* Beyond the bound the command's own thread waits (a stalled exit
	 * slows its callers, never piles up zombies). */
	if (d->stopping || d->n_ending >= ENDING_MAX)
		return false;
	if (!d->reaper_on) {
		if (pthread_create(&d->reaper, NULL, reaper, d) != 0)
			return false;
		d->reaper_on = true;
	}
	if (d->n_ending == d->cap_ending) {
		size_t cap = d->cap_ending ? 2 * d->cap_ending : 8;
		pid_t *n = realloc(d->ending, cap * sizeof(*n));

		if (n == NULL)
			return false;
		d->ending = n;
		d->cap_ending = cap;
	}
	d->ending[d->n_ending++] = pid;
	pthread_cond_signal(&d->ending_cv);
	return true;
}

void
wasm_runner_reap(struct wasm_driver *d, pid_t pid)
{
	bool queued;
	pid_t rv;

	while ((rv = waitpid(pid, NULL, WNOHANG)) < 0 && errno == EINTR)
		;
	if (rv != 0)
		return;         /* reaped (or not ours: nothing to wait for) */
	pthread_mutex_lock(&d->mu);
	queued = ending_add(d, pid);
	pthread_mutex_unlock(&d->mu);
	if (!queued)
		wait_for(pid);
}

int
wasm_runner_start(struct wasm_driver *d, char *const argv[],
    struct wasm_runner *r, char *err, size_t errlen)
{
	struct wasm_runner sp;
	int req = -1, rv;

	pthread_mutex_lock(&d->mu);
	sp = d->spare;
	if (sp.pid != 0) {
		req = d->spare_req;
		d->spare.pid = 0;
		d->spare_req = -1;
	}
	pthread_mutex_unlock(&d->mu);
	if (sp.pid != 0) {
		if (spare_send(req, argv) == 0) {
			*r = sp;
			spare_refill(d);
			return 0;
		}
		spare_end(&sp, &req);   /* it died: start one as before */
	}
	if ((rv = spawn(d, argv, -1, r)) != 0) {
		snprintf(err, errlen, "cannot start the wasm runner %s: %s",
		    d->runner, strerror(-rv));
		return rv;
	}
	spare_refill(d);
	return 0;
}

void
wasm_runner_fini(struct wasm_driver *d)
{
	struct wasm_runner sp;
	int req = -1;
	bool join;

	pthread_mutex_lock(&d->mu);
	sp = d->spare;
	if (sp.pid != 0)
		req = d->spare_req;
	d->spare.pid = 0;
	d->spare_req = -1;
	d->reaper_stop = true;
	pthread_cond_signal(&d->ending_cv);
	join = d->reaper_on;
	d->reaper_on = false;
	pthread_mutex_unlock(&d->mu);
	if (sp.pid != 0)
		spare_end(&sp, &req);
	if (join)
		pthread_join(d->reaper, NULL);  /* it reaped all before */
	free(d->ending);
	d->ending = NULL;
	d->n_ending = d->cap_ending = 0;
}
