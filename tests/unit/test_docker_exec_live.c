/*
 * test_docker_exec_live.c - dock_exec_run() against the live engine:
 * streams, exit codes, stdin, binary output, timeout and output limit
 * (with the processes really gone), the restart fallback, parallel execs.
 */
#include "docker_live.h"

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
	};

	return cmocka_run_group_tests(tests, group_setup,
	    group_teardown);
}
