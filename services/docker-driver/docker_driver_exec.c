/*
 * docker_driver_exec.c - the driver's Exec op: a command on a computer
 * through its helper (docker_fxsetup.c) or, for a computer without one,
 * the Engine API exec (docker_exec.c); a container that stopped under the
 * command is reported as a computer that died. Handed off (exec_start),
 * either way the command waits on the exec loop (docker_fxloop.h), not
 * on a worker.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker_fastexec.h"
#include "docker_fxloop.h"
#include "docker_pool.h"
#include "msc_log.h"
#include "msc_pool.h"
#include "msc_time.h"

/* How long a count of background processes may take (a restart waits). */
#define DOCK_PROC_COUNT_MS	3000

/*
 * Whether the container of `id` still runs after a command failed (an
 * error counts as no). A command killed by a signal may have died with
 * its container, whose state lags the exec's end: look a few times.
 */
static bool
still_running(struct dock_driver *d, const char *id, int exit_code)
{
	char err[DOCK_ERRLEN];
	int tries = exit_code >= 128 ? 6 : 1;

	for (int i = 0; i < tries; i++) {
		json_t *ctr = NULL;
		bool running;

		if (i > 0)
			usleep(100 * 1000);
		if (dock_find(d, id, &ctr, err, sizeof(err)) != 0)
			return false;
		running = json_is_true(json_object_get(
		    json_object_get(ctr, "State"), "Running"));
		json_decref(ctr);
		if (!running)
			return false;
	}
	return true;
}

/*
 * The helper's request for Exec r: *argvp (malloc'd, the caller frees)
 * holds the argv, the rest borrows from r. -ENOMEM.
 */
static int
exec_req(struct dock_driver *d, const Msc__V1__ExecRequest *r,
    const char *name, struct dock_exec_req *req, const char ***argvp)
{
	const char **argv;
	size_t n = 0;

	if ((argv = calloc(r->n_args + 4, sizeof(*argv))) == NULL)
		return -ENOMEM;
	if (r->n_args > 0)
		for (; n < r->n_args; n++)
			argv[n] = r->args[n];
	else {
		argv[n++] = d->cfg->shell;
		argv[n++] = "-c";
		argv[n++] = r->command;
	}
	memset(req, 0, sizeof(*req));
	req->container = name;
	req->argv = argv;
	req->env = dock_pol_exec_env(d, r->computer_id);
	req->workdir = r->working_directory[0] ? r->working_directory : NULL;
	req->has_stdin = r->has_stdin;
	req->stdin_data = r->stdin.data;
	req->stdin_len = r->stdin.len;
	req->timeout_ms = (int)r->timeout_s * 1000;
	req->output_limit = r->output_limit;
	*argvp = argv;
	return 0;
}

/*
 * Whether the end of a run (rv, res; `fast`: through the helper) asks
 * the engine whether the container still runs (exec_result blocks).
 * The Engine path checks the container after any failure (an exec
 * killed with its container ends with an exit code); a helper that
 * answered was alive, so the fast path checks signal deaths only, and a
 * helper lost mid-command.
 */
static bool
asks_engine(int rv, const struct dock_exec_res *res, bool fast)
{
	/* Podman refuses an exec in a stopped container with a 500 (-EIO). */
	return rv == -ECONNRESET || rv == -EPROTO || rv == -EIO ||
	    (rv == 0 && res->outcome == DOCK_EXEC_EXITED &&
		res->exit_code != 0 && (!fast || res->exit_code >= 128));
}

/*
 * Exec r's result from a run's end (rv and err as dock_run gives them,
 * res taken: its output moves to out or is freed). With ask, an end that
 * may be the container's asks the engine (blocking); without, the
 * command's own end is the answer.
 */
static int
exec_result(struct dock_driver *d, const Msc__V1__ExecRequest *r, int rv,
    struct dock_exec_res *res, bool fast, bool ask, uint64_t start,
    Msc__V1__ExecResult *out, char *err, size_t errlen)
{
	char name[128];

	/* A taken computer's first command: the pool's refill may go. */
	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", r->computer_id);
	dock_pool_ran(d, name);
	if (rv == -EBUSY || rv == -ENOENT || (ask &&
	    (((rv == -ECONNRESET || rv == -EPROTO || rv == -EIO) &&
		!still_running(d, r->computer_id, 255)) ||
	    (rv == 0 && asks_engine(rv, res, fast) &&
		!still_running(d, r->computer_id, res->exit_code))))) {
		dock_exec_res_fini(res);
		return msc_driver_died(err, errlen, r->computer_id, "its "
		    "container stopped or was removed. The next call starts it "
		    "again.");
	}
	if (rv == -ECONNRESET || rv == -EPROTO) {
		char why[DOCK_ERRLEN];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Computer '%s': %s. The command may have "
		    "been cut short; the next call runs normally.",
		    r->computer_id, why);
		msc_log_warn("%s", err);
		return -EIO;
	}
	if (rv == -ENOBUFS) {   /* --driver-output-buffer */
		char why[DOCK_ERRLEN];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Computer '%s': %s", r->computer_id, why);
	}
	if (rv != 0)
		return rv;
	if (res->outcome == DOCK_EXEC_CANCELLED) {
		dock_exec_res_fini(res);
		snprintf(err, errlen, "Computer '%s': the command was cancelled "
		    "and killed.", r->computer_id);
		return -ECANCELED;
	}
	out->stdout.data = (uint8_t *)res->out;
	out->stdout.len = res->out_len;
	out->stderr.data = (uint8_t *)res->err;
	out->stderr.len = res->err_len;
	res->out = res->err = NULL;
	out->exit_code = res->exit_code;
	out->duration_ms = msc_now_ms() - start;
	out->outcome = res->outcome == DOCK_EXEC_TIMEOUT
	    ? MSC__V1__EXEC_OUTCOME__TIMED_OUT
	    : res->outcome == DOCK_EXEC_LIMIT ? MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT
					      : MSC__V1__EXEC_OUTCOME__EXITED;
	return 0;
}

int
dock_exec(struct dock_driver *d, const Msc__V1__ExecRequest *r,
    Msc__V1__ExecResult *out, char *err, size_t errlen)
{
	char name[128];
	const char **argv;
	struct dock_exec_req req;
	struct dock_exec_res res = { 0 };
	uint64_t start = msc_now_ms();
	bool fast;
	int rv;

	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", r->computer_id);
	if (exec_req(d, r, name, &req, &argv) != 0)
		return -ENOMEM;
	req.live = true;
	rv = dock_run(d, name, &req, &res, &fast, err, errlen);
	free(argv);
	return exec_result(d, r, rv, &res, fast, true, start, out, err,
	    errlen);
}

/* A command handed to the exec loop (dock_exec_start), until its end. */
struct started {
	struct dock_driver *d;
	const Msc__V1__ExecRequest *r;  /* the skeleton's, until done */
	struct msc_exec *x;
	uint64_t start;
	bool fast;                      /* through the helper, else: */
	struct dock_xexec *xe;          /* the Engine API exec, unfinished */
	int rv;
	struct dock_exec_res res;
	char err[DOCK_ERRLEN];
};

/* Ends a started command: its result, answered (ask: as exec_result). */
static void
started_end(struct started *st, bool ask)
{
	Msc__V1__ExecResult out = MSC__V1__EXEC_RESULT__INIT;
	int rv = exec_result(st->d, st->r, st->rv, &st->res, st->fast, ask,
	    st->start, &out, st->err, sizeof(st->err));

	/* The reply takes the output: the bound counts it no more. Before
	 * the answer, which may let the driver's stop free the bound. */
	dock_fx_charge_release(&st->res.charge);
	msc_exec_done(st->x, rv, rv == 0 ? &out : NULL, st->err);
	free(st);
}

/* msc_exec_defer's end of a started command: on a worker in its
 * principal's turn (run), may block; else without asking the engine. */
static void
started_finish(struct msc_exec *x, void *arg, bool run)
{
	(void)x;
	started_end(arg, run);
}

/* The loop's end of a started command (its thread: must not block). */
static void
started_done(void *arg, int rv, struct dock_exec_res *res, const char *err)
{
	struct started *st = arg;

	st->rv = rv;
	st->res = *res;
	snprintf(st->err, sizeof(st->err), "%s", err);
	/* Asking the engine blocks: on a worker, never this loop's thread
	 * (when the pool takes no more, the command's own end answers). */
	if (!asks_engine(rv, &st->res, true) ||
	    msc_exec_defer(st->x, started_finish, st) != 0)
		started_end(st, false);
}

static void
started_output(void *arg, const void *p, size_t n)
{
	msc_exec_output(arg, p, n);
}

/*
 * The end of an Engine API exec whose stream ended (blocking): its exit
 * code asked, a command that did not exit killed, the answer as
 * dock_exec gives it.
 */
static void
engine_end(struct started *st)
{
	st->rv = dock_exec_finish(st->xe, &st->res, st->err, sizeof(st->err));
	st->xe = NULL;
	started_end(st, true);
}

static void
engine_job(void *arg)
{
	engine_end(arg);
}

/*
 * An exec's end that no worker takes (its principal has no turn left to
 * wait for, or the driver stops) runs on the driver's threads for them
 * (d->finisher), still off the loop: without it, nothing would read the
 * exit code or kill the command. Their queue holds every waiting
 * command; past it (never, short of the process's end) it runs here,
 * on the exec loop's thread or the stopping one.
 */
static void
engine_spare(struct started *st)
{
	if (msc_pool_submit(st->d->finisher, engine_job, st) == 0)
		return;
	msc_log_warn("exec: no thread takes the end of a command on %s; "
	    "ending it on this thread", st->r->computer_id);
	engine_end(st);
}

/* msc_exec_defer's end of an Engine API exec. */
static void
engine_finish(struct msc_exec *x, void *arg, bool run)
{
	(void)x;
	if (run)
		engine_end(arg);
	else
		engine_spare(arg);
}

/* The loop's end of an Engine API exec's stream (its thread). */
static void
engine_done(void *arg, int rv, struct dock_exec_res *res, const char *err)
{
	struct started *st = arg;

	st->rv = rv;            /* st->xe holds the rest of the outcome */
	snprintf(st->err, sizeof(st->err), "%s", err);
	/* A command to kill (timed out, cancelled, over its limit) is
	 * killed at once, as the blocking path did; only an exit code to
	 * ask waits for its principal's turn. */
	if (rv != 0 || res->outcome != DOCK_EXEC_EXITED ||
	    msc_exec_defer(st->x, engine_finish, st) != 0)
		engine_spare(st);
}

/*
 * Starts r (on computer `name`) through the Engine API exec, taking st:
 * the create and the stream's start on this worker, the wait on the
 * exec loop, the end on a worker again (engine_done). 0, or a negative
 * errno with err as dock_exec gives it.
 */
static int
engine_start(struct started *st, const char *name, char *err,
    size_t errlen)
{
	struct dock_driver *d = st->d;
	struct dock_exec_req req;
	const char **argv;
	int rv;

	/* The engine knows the container by its name: a taken pool
	 * container's rename must be done (the fast path needs no name). */
	dock_pool_wait_named(d, name);
	if (exec_req(d, st->r, name, &req, &argv) != 0) {
		free(st);
		return -ENOMEM;
	}
	req.live = true;        /* until handed off: this worker's command */
	rv = dock_exec_begin(d->engine, &req, &st->xe, err, errlen);
	free(argv);
	if (rv != 0) {
		Msc__V1__ExecResult out = MSC__V1__EXEC_RESULT__INIT;
		struct dock_exec_res res = { .exit_code = -1 };

		rv = exec_result(d, st->r, rv, &res, false, true, st->start,
		    &out, err, errlen);
		free(st);
		return rv;
	}
	dock_exec_on_output(st->xe, started_output, st->x);
	dock_exec_for_principal(st->xe, st->r->principal);
	if (dock_exec_fd(st->xe) < 0)
		engine_end(st);         /* it ended as it started */
	else
		dock_fxloop_add_exec(d->fxloop, st->xe,
		    msc_exec_cancel_fd(st->x), engine_done, st);
	return 0;
}

int
dock_exec_start(void *be, const Msc__V1__ExecRequest *r, struct msc_exec *x,
    char *err, size_t errlen)
{
	struct dock_driver *d = be;
	char name[128], dir[64];
	const char **argv;
	struct dock_exec_req req;
	struct dock_fx *c;
	struct started *st;
	int pfd, rv;

	if (d->fxloop == NULL || d->finisher == NULL)
		return MSC_EXEC_SYNC;
	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", r->computer_id);
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -ENOMEM;
	st->d = d;
	st->r = r;
	st->x = x;
	st->start = msc_now_ms();
	/* No helper to reach: the Engine API exec. */
	if (!dock_fx_enabled(d) ||
	    (pfd = dock_fx_reach(d, name, true, dir, sizeof(dir))) < 0)
		return engine_start(st, name, err, errlen);
	if (exec_req(d, r, name, &req, &argv) != 0) {
		close(pfd);
		free(st);
		return -ENOMEM;
	}
	rv = dock_fx_begin(dir, &req, &c, err, errlen);
	close(pfd);
	free(argv);
	if (rv == -ENOTCONN)
		return engine_start(st, name, err, errlen);
	if (rv != 0) {
		free(st);
		return rv;
	}
	st->fast = true;
	dock_fx_on_output(c, started_output, x);
	dock_fx_for_principal(c, r->principal);
	dock_fxloop_add(d->fxloop, c, msc_exec_cancel_fd(x), started_done, st);
	return 0;
}

/*
 * The background processes running in computer `id` (issue 28): its
 * helper's `--process list`, whose "running" rows are counted. Only in a
 * running container that mounts the helper; -errno otherwise, or when the
 * list failed (say a helper older than background processes).
 */
int
dock_processes(void *be, const char *id)
{
	static const char *const argv[] = { DOCK_FX_MOUNT_HELPER, "--process",
		"list", NULL };
	struct dock_driver *d = be;
	struct dock_exec_req req = { 0 };
	struct dock_exec_res res = { 0 };
	char name[128], err[DOCK_ERRLEN];
	json_t *ctr = NULL, *root, *list, *row;
	bool fast, running;
	size_t i;
	int rv, n = 0;

	if (dock_find(d, id, &ctr, err, sizeof(err)) != 0)
		return -ENOENT;
	running = json_is_true(json_object_get(json_object_get(ctr, "State"),
	    "Running"));
	if (!running || !dock_fx_mounts_helper(ctr)) {
		json_decref(ctr);
		return -ENOENT;
	}
	json_decref(ctr);
	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
	req.container = name;
	req.argv = argv;
	req.timeout_ms = DOCK_PROC_COUNT_MS;
	req.output_limit = 4 << 20;
	rv = dock_run(d, name, &req, &res, &fast, err, sizeof(err));
	if (rv != 0 || res.outcome != DOCK_EXEC_EXITED || res.exit_code != 0) {
		dock_exec_res_fini(&res);
		return rv != 0 ? rv : -EIO;
	}
	root = json_loadb(res.out, res.out_len, 0, NULL);
	dock_exec_res_fini(&res);
	list = json_object_get(root, "processes");
	if (!json_is_array(list)) {
		json_decref(root);
		return -EPROTO;
	}
	json_array_foreach(list, i, row) {
		const char *state = json_string_value(json_object_get(row,
		    "state"));

		if (state != NULL && strcmp(state, "running") == 0)
			n++;
	}
	json_decref(root);
	return n;
}
