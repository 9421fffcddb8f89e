/*
 * test_docker_exec_live.c - dock_exec_run() against the live engine:
 * streams, exit codes, stdin, binary output, timeout and output limit
 * (with the processes really gone), the restart fallback, parallel execs;
 * and execs in steps waited for by the exec loop (docker_fxloop.h).
 */
#include "docker_live.h"
#include "docker_fastexec.h"
#include "docker_fxloop.h"

#include <sys/eventfd.h>

static void
test_exec_basic(void **state)
{
	struct live		*l = *state;
	const char		*echo[] = { "echo", "hi", NULL };
	const char		*pwd[] = { "pwd", NULL };
	struct dock_exec_res	 res;
	char			 err[256];
	struct dock_exec_req	 req;

	NEED_ENGINE(l);
	assert_int_equal(run(l, NULL, echo, NULL, NULL, 0, false, TMO,
	    1000,
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(res.exit_code, 0);
	assert_string_equal(res.out, "hi\n");
	assert_int_equal(res.out_len, 3);
	assert_string_equal(res.err, "");
	dock_exec_res_fini(&res);

	assert_int_equal(run(l, NULL, pwd, "/tmp", NULL, 0, false, TMO,
	    1000,
	    &res), 0);
	assert_string_equal(res.out, "/tmp\n");
	dock_exec_res_fini(&res);

	memset(&req, 0, sizeof(req));
	req.container = l->main_id;
	req.argv = pwd;
	req.workdir = "tmp";
	assert_int_equal(dock_exec_run(l->e, &req, &res, err, sizeof(err)),
	    -EINVAL);
}

static void
test_exec_codes_streams(void **state)
{
	struct live		*l = *state;
	const char		*nobin[] = { "/no/such/binary", NULL };
	struct dock_exec_res	 res;

	NEED_ENGINE(l);
	assert_int_equal(sh(l,
	    "echo out1; echo err1 >&2; echo out2; exit 3",
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(res.exit_code, 3);
	assert_string_equal(res.out, "out1\nout2\n");
	assert_string_equal(res.err, "err1\n");
	dock_exec_res_fini(&res);

	assert_int_equal(sh(l, "false", &res), 0);
	assert_int_equal(res.exit_code, 1);
	dock_exec_res_fini(&res);

	assert_int_equal(sh(l, "kill -9 $$", &res), 0);
	assert_int_equal(res.exit_code, 137);
	dock_exec_res_fini(&res);

	assert_int_equal(run(l, NULL, nobin, NULL, NULL, 0, false, TMO,
	    65536,
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	assert_true(res.exit_code == 126 || res.exit_code == 127);
	dock_exec_res_fini(&res);
}

static void
test_exec_stdin(void **state)
{
	struct live		*l = *state;
	const char		*cat[] = { "cat", NULL };
	const char		*wc[] = { "wc", "-c", NULL };
	struct dock_exec_res	 res;
	char			*big;
	size_t			 i, n = 100000;

	NEED_ENGINE(l);
	assert_int_equal(run(l, NULL, cat, NULL, "hello\n", 6, true, TMO,
	    1000, &res), 0);
	assert_string_equal(res.out, "hello\n");
	assert_int_equal(res.exit_code, 0);
	dock_exec_res_fini(&res);

	/* Without stdin the process sees EOF at once. */
	assert_int_equal(run(l, NULL, cat, NULL, NULL, 0, false, 5000,
	    1000,
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(res.out_len, 0);
	dock_exec_res_fini(&res);

	/* Empty stdin. */
	assert_int_equal(run(l, NULL, cat, NULL, "", 0, true, 5000, 1000,
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(res.out_len, 0);
	dock_exec_res_fini(&res);

	big = malloc(n);
	assert_non_null(big);
	for (i = 0; i < n; i++)
		big[i] = (char)(i * 7 + i / 256);
	assert_int_equal(run(l, NULL, wc, NULL, big, n, true, TMO, 1000,
	    &res), 0);
	assert_string_equal(res.out, "100000\n");
	dock_exec_res_fini(&res);

	/* Binary both ways, byte-exact, with stdin and stdout in flight. */
	assert_int_equal(run(l, NULL, cat, NULL, big, n, true, TMO,
	    1 << 20,
	    &res), 0);
	assert_int_equal(res.out_len, n);
	assert_memory_equal(res.out, big, n);
	dock_exec_res_fini(&res);
	free(big);
}

static void
test_exec_binary_large(void **state)
{
	struct live		*l = *state;
	struct dock_exec_res	 res;
	const char		*argv[] = { "sh", "-c", NULL, NULL };
	char			 line[32];
	size_t			 off = 0;
	int			 i, n;

	NEED_ENGINE(l);
	assert_int_equal(sh(l, "printf '\\000\\001\\377\\n\\200x'", &res),
	    0);
	assert_int_equal(res.out_len, 6);
	assert_memory_equal(res.out, "\0\1\377\n\200x", 6);
	dock_exec_res_fini(&res);

	/* Many frames split across reads: 1.2 MB of seq, checked in full. */
	argv[2] = "seq 1 200000; seq 1 1000 >&2";
	assert_int_equal(run(l, NULL, argv, NULL, NULL, 0, false, TMO,
	    4 << 20, &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	for (i = 1; i <= 200000; i++) {
		n = snprintf(line, sizeof(line), "%d\n", i);
		assert_true(off + (size_t)n <= res.out_len);
		assert_memory_equal(res.out + off, line, n);
		off += (size_t)n;
	}
	assert_int_equal(off, res.out_len);
	assert_int_equal(res.err_len, 3893);
	dock_exec_res_fini(&res);
}

static void
test_exec_timeout(void **state)
{
	struct live		*l = *state;
	struct dock_exec_res	 res;
	const char		*argv[] = { "sh", "-c",
				    "sleep 301 & echo started; exec sleep 31",
				    NULL };
	int64_t			 t0;
	char			*st;

	NEED_ENGINE(l);
	st = started_at(l, l->main_id);
	t0 = now_ms();
	assert_int_equal(run(l, NULL, argv, NULL, NULL, 0, false, 1000,
	    65536, &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_TIMEOUT);
	fprintf(stderr, "timeout 1000 ms returned after %lld ms\n",
	    (long long)(now_ms() - t0));
	assert_true(now_ms() - t0 < 8000);
	assert_string_equal(res.out, "started\n");
	dock_exec_res_fini(&res);
	assert_int_equal(count_procs(l, NULL, "sleep 31"), 0);
	assert_int_equal(count_procs(l, NULL, "sleep 301"), 0);

	/* A child that scrubbed its environment dies with its group. */
	argv[2] = "env -i sleep 302 & exec sleep 32";
	assert_int_equal(run(l, NULL, argv, NULL, NULL, 0, false, 500,
	    65536,
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_TIMEOUT);
	dock_exec_res_fini(&res);
	assert_int_equal(count_procs(l, NULL, "sleep 302"), 0);
	assert_int_equal(count_procs(l, NULL, "sleep 32"), 0);
	/* The marker kill did it: no restart was needed. */
	{
		char	*st2 = started_at(l, l->main_id);

		assert_string_equal(st, st2);
		free(st2);
	}
	free(st);
}

static void
test_exec_limit(void **state)
{
	struct live		*l = *state;
	struct dock_exec_res	 res;
	char			*st, *st2;

	NEED_ENGINE(l);
	st = started_at(l, l->main_id);
	assert_int_equal(sh(l, "yes | head -c 20000", &res), 0);
	assert_int_equal(res.out_len, 20000);
	dock_exec_res_fini(&res);

	{
		const char *argv[] = { "sh", "-c", "yes | head -c 20000",
		    NULL };

		assert_int_equal(run(l, NULL, argv, NULL, NULL, 0, false,
		    TMO,
		    1000, &res), 0);
		assert_int_equal(res.outcome, DOCK_EXEC_LIMIT);
		assert_true(res.out_len + res.err_len > 1000);
		assert_true(res.out_len + res.err_len <= 1000 + 65536);
		dock_exec_res_fini(&res);
	}
	{
		/* Endless output on stderr: stopped and killed. */
		const char *argv[] = { "sh", "-c", "exec yes kiltest >&2",
		    NULL };

		assert_int_equal(run(l, NULL, argv, NULL, NULL, 0, false,
		    TMO,
		    1000, &res), 0);
		assert_int_equal(res.outcome, DOCK_EXEC_LIMIT);
		assert_true(res.err_len > 1000);
		assert_true(res.err_len <= 1000 + 65536);
		dock_exec_res_fini(&res);
		assert_int_equal(count_procs(l, NULL, "yes kiltest"), 0);
	}
	st2 = started_at(l, l->main_id);
	assert_string_equal(st, st2);
	free(st);
	free(st2);
}

/* Without sh in the container the kill falls back to a restart. */
static void
test_exec_kill_fallback(void **state)
{
	struct live		*l = *state;
	struct dock_exec_res	 res;
	const char		*rmsh[] = { "rm", "-f", "/bin/sh", "/bin/dash",
				    "/usr/bin/dash", NULL };
	const char		*slp[] = { "sleep", "333", NULL };
	const char		*find[] = { "find", "/proc", "-mindepth", "2",
				    "-maxdepth", "2", "-name", "cmdline",
				    "-exec", "grep", "-a", "-l", "-e",
				    "3\\{3\\}", "{}", "+", NULL };
	const char		*ls[] = { "ls", "/bin/sh", NULL };
	char			 id[65];

	char			*st, *st2;

	NEED_ENGINE(l);
	assert_int_equal(make_container(l, "nosh", id), 0);
	assert_int_equal(run(l, id, rmsh, NULL, NULL, 0, false, TMO, 1000,
	    &res), 0);
	assert_int_equal(res.exit_code, 0);
	dock_exec_res_fini(&res);
	st = started_at(l, id);
	assert_int_equal(run(l, id, slp, NULL, NULL, 0, false, 500, 1000,
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_TIMEOUT);
	dock_exec_res_fini(&res);
	st2 = started_at(l, id);
	assert_string_not_equal(st, st2);
	free(st);
	free(st2);
	assert_int_equal(run(l, id, find, NULL, NULL, 0, false, TMO, 65536,
	    &res), 0);
	assert_string_equal(res.out, "");
	dock_exec_res_fini(&res);
	/* The restart kept the filesystem: sh is still gone. */
	assert_int_equal(run(l, id, ls, NULL, NULL, 0, false, TMO, 65536,
	    &res), 0);
	assert_int_not_equal(res.exit_code, 0);
	dock_exec_res_fini(&res);
}

struct par {
	struct live	*l;
	int		 n;
	int		 ok;
};

static void *
par_thread(void *arg)
{
	struct par		*p = arg;
	struct dock_exec_res	 res;
	char			 want[48], arg1[32];
	const char		*argv[] = { "echo", arg1, NULL };
	int			 i;

	for (i = 0; i < 5; i++) {
		snprintf(arg1, sizeof(arg1), "t%d-%d", p->n, i);
		snprintf(want, sizeof(want), "%s\n", arg1);
		if (run(p->l, NULL, argv, NULL, NULL, 0, false, TMO, 1000,
		    &res) == 0 && strcmp(res.out, want) == 0)
			p->ok++;
		dock_exec_res_fini(&res);
	}
	return NULL;
}

static int
cmp64(const void *a, const void *b)
{
	int64_t	x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_exec_parallel_latency(void **state)
{
	struct live		*l = *state;
	struct par		 p[8];
	pthread_t		 t[8];
	struct dock_exec_res	 res;
	const char		*echo[] = { "echo", "hi", NULL };
	int64_t			 lat[20], t0;
	int			 i;

	NEED_ENGINE(l);
	for (i = 0; i < 8; i++) {
		p[i].l = l;
		p[i].n = i;
		p[i].ok = 0;
		assert_int_equal(pthread_create(&t[i], NULL, par_thread, &p[i]),
		    0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(p[i].ok, 5);
	}
	for (i = 0; i < 20; i++) {
		t0 = now_ms();
		assert_int_equal(run(l, NULL, echo, NULL, NULL, 0, false,
		    TMO,
		    1000, &res), 0);
		lat[i] = now_ms() - t0;
		assert_string_equal(res.out, "hi\n");
		dock_exec_res_fini(&res);
	}
	qsort(lat, 20, sizeof(lat[0]), cmp64);
	fprintf(stderr, "echo hi latency: median %lld ms, min %lld, max %lld\n",
	    (long long)lat[10], (long long)lat[0], (long long)lat[19]);
}

/* An exec the loop watches: its stream's end, then its finish here. */
struct looped {
	pthread_mutex_t		*mu;
	struct dock_xexec	*x;
	bool			 ended;
	int			 rv;
	enum dock_exec_outcome	 outcome;
	char			 err[512];
	int64_t			 at;	/* when the stream ended */
};

/* The loop's end of the stream: recorded only (the finish blocks). */
static void
looped_done(void *arg, int rv, struct dock_exec_res *res, const char *err)
{
	struct looped *w = arg;

	pthread_mutex_lock(w->mu);
	w->ended = true;
	w->rv = rv;
	w->outcome = res->outcome;
	w->at = now_ms();
	snprintf(w->err, sizeof(w->err), "%s", err);
	pthread_mutex_unlock(w->mu);
}

/* Begins `script` (principal's) and hands it to loop l. */
static void
looped_start(struct live *l, struct dock_fxloop *lp, const char *principal,
    const char *script, int timeout_ms, const char *in, int cancel_fd,
    struct looped *w, pthread_mutex_t *mu)
{
	const char		*argv[] = { "sh", "-c", script, NULL };
	struct dock_exec_req	 req;
	char			 err[512];

	memset(&req, 0, sizeof(req));
	req.container = l->main_id;
	req.argv = argv;
	req.timeout_ms = timeout_ms;
	req.output_limit = 4 << 20;
	req.has_stdin = in != NULL;
	req.stdin_data = in;
	req.stdin_len = in != NULL ? strlen(in) : 0;
	memset(w, 0, sizeof(*w));
	w->mu = mu;
	assert_int_equal(dock_exec_begin(l->e, &req, &w->x, err, sizeof(err)),
	    0);
	assert_int_not_equal(dock_exec_fd(w->x), -1);
	dock_exec_for_principal(w->x, principal);
	dock_fxloop_add_exec(lp, w->x, cancel_fd, looped_done, w);
}

/* Waits up to ms for w's stream to end. */
static bool
looped_wait(struct looped *w, int ms)
{
	for (int i = 0; i < ms / 10; i++) {
		bool ended;

		pthread_mutex_lock(w->mu);
		ended = w->ended;
		pthread_mutex_unlock(w->mu);
		if (ended)
			return true;
		usleep(10000);
	}
	return false;
}

/*
 * Engine API execs wait on the exec loop's one thread, not on a thread
 * each: 8 execs sleeping 2 s, begun one after another, all end within
 * the same few seconds, with their output, stdin and exit codes as
 * dock_exec_run gives them; a deadline ends one as a timeout, and its
 * finish kills it.
 */
static void
test_loop_engine_execs(void **state)
{
	struct live		*l = *state;
	struct dock_fxloop	*lp;
	struct looped		 w[9];
	struct dock_exec_res	 res;
	pthread_mutex_t		 mu = PTHREAD_MUTEX_INITIALIZER;
	char			 script[128], err[512];
	int64_t			 t0;

	NEED_ENGINE(l);
	assert_int_equal(dock_fxloop_start(0, &lp), 0);
	t0 = now_ms();
	for (int i = 0; i < 8; i++) {
		snprintf(script, sizeof(script), "sleep 2; cat; echo e%d >&2; "
		    "exit %d", i, i);
		looped_start(l, lp, "", script, TMO, "in\n", -1, &w[i], &mu);
	}
	/* 3 s: its "started" must be out before the timeout, on a machine
	 * loaded by a sanitizer build (1 s was not always enough). */
	looped_start(l, lp, "", "echo started; exec sleep 33", 3000, NULL, -1,
	    &w[8], &mu);
	for (int i = 0; i < 9; i++)
		assert_true(looped_wait(&w[i], 20000));
	fprintf(stderr, "8 execs of 2 s on the loop took %lld ms\n",
	    (long long)(now_ms() - t0));
	/* Together: one after another they would take 16 s. */
	assert_true(now_ms() - t0 < 9000);
	for (int i = 0; i < 8; i++) {
		char want[8];

		assert_int_equal(w[i].rv, 0);
		assert_int_equal(w[i].outcome, DOCK_EXEC_EXITED);
		assert_int_equal(dock_exec_finish(w[i].x, &res, err,
		    sizeof(err)), 0);
		assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
		assert_int_equal(res.exit_code, i);
		assert_string_equal(res.out, "in\n");
		snprintf(want, sizeof(want), "e%d\n", i);
		assert_string_equal(res.err, want);
		dock_exec_res_fini(&res);
	}
	assert_int_equal(w[8].outcome, DOCK_EXEC_TIMEOUT);
	assert_int_equal(dock_exec_finish(w[8].x, &res, err, sizeof(err)), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_TIMEOUT);
	assert_int_equal(res.exit_code, -1);
	assert_string_equal(res.out, "started\n");
	dock_exec_res_fini(&res);
	assert_int_equal(count_procs(l, NULL, "sleep 33"), 0);
	dock_fxloop_stop(lp);
}

/*
 * The output bound applies to Engine API execs on the loop as to the
 * helpers' commands: with 1 MiB, principal A holds 500 KB; A's next
 * 200 KB passes its share and ends with -ENOBUFS naming the flag (its
 * finish kills it); B's 150 KB runs on. A cancelled exec ends so, and
 * its finish kills it.
 */
static void
test_loop_engine_bound(void **state)
{
	struct live		*l = *state;
	struct dock_fxloop	*lp;
	struct looped		 w[3];
	struct dock_exec_res	 res;
	pthread_mutex_t		 mu = PTHREAD_MUTEX_INITIALIZER;
	char			 err[512];
	uint64_t		 one = 1;
	int			 cfd[3];

	NEED_ENGINE(l);
	for (int i = 0; i < 3; i++)
		assert_true((cfd[i] = eventfd(0, EFD_CLOEXEC)) >= 0);
	assert_int_equal(dock_fxloop_start(1 << 20, &lp), 0);
	looped_start(l, lp, "aaaa", "head -c 500000 /dev/zero; exec sleep 34",
	    TMO, NULL, cfd[0], &w[0], &mu);
	usleep(1500000);
	looped_start(l, lp, "aaaa", "head -c 200000 /dev/zero; exec sleep 35",
	    TMO, NULL, cfd[1], &w[1], &mu);
	assert_true(looped_wait(&w[1], 10000));
	assert_int_equal(w[1].rv, -ENOBUFS);
	assert_non_null(strstr(w[1].err, "your share"));
	assert_non_null(strstr(w[1].err, "--driver-output-buffer"));
	assert_int_equal(dock_exec_finish(w[1].x, &res, err, sizeof(err)),
	    -ENOBUFS);
	assert_non_null(strstr(err, "--driver-output-buffer"));
	assert_int_equal(count_procs(l, NULL, "sleep 35"), 0);
	looped_start(l, lp, "bbbb", "head -c 150000 /dev/zero; exec sleep 36",
	    TMO, NULL, cfd[2], &w[2], &mu);
	usleep(1500000);
	pthread_mutex_lock(&mu);
	assert_false(w[0].ended);
	assert_false(w[2].ended);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 3; i += 2) {
		assert_int_equal(write(cfd[i], &one, sizeof(one)), sizeof(one));
		assert_true(looped_wait(&w[i], 5000));
		assert_int_equal(w[i].rv, 0);
		assert_int_equal(w[i].outcome, DOCK_EXEC_CANCELLED);
		assert_int_equal(dock_exec_finish(w[i].x, &res, err,
		    sizeof(err)), 0);
		assert_int_equal(res.outcome, DOCK_EXEC_CANCELLED);
		dock_exec_res_fini(&res);
	}
	assert_int_equal(count_procs(l, NULL, "sleep 34"), 0);
	assert_int_equal(count_procs(l, NULL, "sleep 36"), 0);
	dock_fxloop_stop(lp);   /* every charge given back */
	for (int i = 0; i < 3; i++)
		close(cfd[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_basic),
		cmocka_unit_test(test_exec_codes_streams),
		cmocka_unit_test(test_exec_stdin),
		cmocka_unit_test(test_exec_binary_large),
		cmocka_unit_test(test_exec_timeout),
		cmocka_unit_test(test_exec_limit),
		cmocka_unit_test(test_exec_kill_fallback),
		cmocka_unit_test(test_exec_parallel_latency),
		cmocka_unit_test(test_loop_engine_execs),
		cmocka_unit_test(test_loop_engine_bound),
	};

	return cmocka_run_group_tests(tests, group_setup,
	    group_teardown);
}
