/*
 * test_docker_api_live.c - docker_api.h against the live engine.
 *
 * Skips every test when no engine answers. Containers carry the label
 * kilntainers.test=1 and are all removed in the group teardown.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "docker_api.h"

#define IMAGE		"debian:bookworm-slim"
#define TMO		30000
#define MAX_MADE	16

struct live {
	struct dock_engine	*e;
	bool			 up;
	char			 main_id[65];
	char			 made[MAX_MADE][65];
	int			 nmade;
};

#define NEED_ENGINE(l) do {			\
	if (!(l)->up)				\
		skip();				\
} while (0)

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
make_container(struct live *l, const char *tag, char id[65])
{
	json_t	*body;
	char	 name[128], err[512];
	int	 rc;

	snprintf(name, sizeof(name), "kilntainers-test-%ld-%s", (long)getpid(),
	    tag);
	body = json_pack("{s:s,s:[s,s],s:{s:s},s:{s:b,s:s}}", "Image", IMAGE,
	    "Cmd", "sleep", "infinity", "Labels", "kilntainers.test", "1",
	    "HostConfig", "Init", 1, "NetworkMode", "none");
	assert_non_null(body);
	rc = dock_container_create(l->e, name, body, TMO, id, err, sizeof(err));
	json_decref(body);
	if (rc == 0 && l->nmade < MAX_MADE)
		memcpy(l->made[l->nmade++], id, 65);
	if (rc != 0)
		fprintf(stderr, "create %s: %d %s\n", name, rc, err);
	return rc;
}

static int
group_setup(void **state)
{
	struct live	*l;
	char		 err[512];

	l = calloc(1, sizeof(*l));
	if (l == NULL || dock_engine_new(NULL, "docker", &l->e) != 0)
		return -1;
	*state = l;
	if (dock_engine_ping(l->e, 5000, err, sizeof(err)) != 0) {
		fprintf(stderr, "no engine, skipping: %s\n", err);
		return 0;
	}
	if (dock_image_ensure(l->e, IMAGE, 60000, err, sizeof(err)) != 0) {
		fprintf(stderr, "no image %s, skipping: %s\n", IMAGE, err);
		return 0;
	}
	/* The engine and image are there: failing now is a real failure. */
	if (make_container(l, "main", l->main_id) != 0)
		return -1;
	l->up = true;
	return 0;
}

static int
group_teardown(void **state)
{
	struct live	*l = *state;
	char		 err[512];
	int		 i;

	for (i = 0; i < l->nmade; i++)
		if (dock_container_remove(l->e, l->made[i], TMO, err,
		    sizeof(err)) != 0)
			fprintf(stderr, "remove %s: %s\n", l->made[i], err);
	dock_engine_free(l->e);
	free(l);
	return 0;
}

/* Runs argv in the main container; returns dock_exec_run()'s result. */
static int
run(struct live *l, const char *id, const char *const *argv,
    const char *workdir, const void *in, size_t inlen, bool has_stdin,
    int timeout_ms, size_t limit, struct dock_exec_res *res)
{
	struct dock_exec_req	req;
	char			err[512];
	int			rc;

	memset(&req, 0, sizeof(req));
	req.container = id != NULL ? id : l->main_id;
	req.argv = argv;
	req.workdir = workdir;
	req.stdin_data = in;
	req.stdin_len = inlen;
	req.has_stdin = has_stdin;
	req.timeout_ms = timeout_ms;
	req.output_limit = limit;
	rc = dock_exec_run(l->e, &req, res, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "exec %s: %d %s\n", argv[0], rc, err);
	return rc;
}

static int
sh(struct live *l, const char *script, struct dock_exec_res *res)
{
	const char	*argv[] = { "sh", "-c", script, NULL };

	return run(l, NULL, argv, NULL, NULL, 0, false, TMO, 1 << 20, res);
}

/* Counts processes whose command line contains `needle` (no ps needed). */
static int
count_procs(struct live *l, const char *id, const char *needle)
{
	const char		*argv[] = { "sh", "-c",
	    "n=0; for p in /proc/[0-9]*; do "
	    "c=$(tr '\\0' ' ' < $p/cmdline 2>/dev/null); "
	    "case \"$c\" in *\"$1\"*) n=$((n+1));; esac; done; echo $n",
	    "count", needle, NULL };
	struct dock_exec_res	 res;
	int			 n;

	assert_int_equal(run(l, id, argv, NULL, NULL, 0, false, TMO, 65536,
	    &res), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	n = atoi(res.out);
	dock_exec_res_fini(&res);
	/* The counting shell's own argv holds the needle once. */
	return n - 1;
}

/* State.StartedAt: changes when the container is restarted. */
static char *
started_at(struct live *l, const char *id)
{
	json_t	*j;
	char	 err[256], *s;

	assert_int_equal(dock_container_inspect(l->e, id, TMO, &j, err,
	    sizeof(err)), 0);
	s = strdup(json_string_value(json_object_get(json_object_get(j,
	    "State"), "StartedAt")));
	json_decref(j);
	assert_non_null(s);
	return s;
}

static bool
is_running(struct live *l, const char *id)
{
	json_t	*j;
	char	 err[256];
	bool	 r;

	assert_int_equal(dock_container_inspect(l->e, id, TMO, &j, err,
	    sizeof(err)), 0);
	r = json_is_true(json_object_get(json_object_get(j, "State"),
	    "Running"));
	json_decref(j);
	return r;
}

static void
test_ping(void **state)
{
	struct live		*l = *state;
	struct dock_engine	*bad;
	char			 err[512];

	NEED_ENGINE(l);
	assert_int_equal(dock_engine_ping(l->e, 5000, err, sizeof(err)), 0);
	assert_string_equal(dock_engine_name(l->e), "docker");
	assert_int_equal(dock_engine_new("unix:///nonexistent/docker.sock",
	    "docker", &bad), 0);
	assert_int_equal(dock_engine_ping(bad, 2000, err, sizeof(err)),
	    -ECONNREFUSED);
	assert_non_null(strstr(err, "Cannot connect to docker. Is the docker "
	    "daemon running?"));
	dock_engine_free(bad);
	assert_int_equal(dock_engine_new("ssh://host", "docker", &bad),
	    -EINVAL);
}

static void
test_image(void **state)
{
	struct live	*l = *state;
	char		 err[1024];
	int		 rc;

	NEED_ENGINE(l);
	assert_int_equal(dock_image_ensure(l->e, IMAGE, TMO, err,
	    sizeof(err)), 0);
	rc = dock_image_ensure(l->e, "kilntainers-test/no-such-image:nope",
	    60000, err, sizeof(err));
	assert_true(rc < 0);
	fprintf(stderr, "pull error: %d %s\n", rc, err);
	assert_non_null(strstr(err, "Failed to pull image "
	    "'kilntainers-test/no-such-image:nope'. Check that the image name "
	    "is correct and the registry is reachable."));
	assert_int_equal(dock_image_ensure(l->e, "bad image?", TMO, err,
	    sizeof(err)), -EINVAL);
}

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

static void
test_list_inspect(void **state)
{
	struct live	*l = *state;
	json_t		*arr, *c, *j;
	size_t		 i;
	bool		 found = false;
	char		 err[512];

	NEED_ENGINE(l);
	assert_int_equal(dock_container_list(l->e, "kilntainers.test=1", TMO,
	    &arr, err, sizeof(err)), 0);
	assert_true(json_is_array(arr));
	json_array_foreach(arr, i, c) {
		assert_string_equal(json_string_value(json_object_get(
		    json_object_get(c, "Labels"), "kilntainers.test")), "1");
		if (strcmp(json_string_value(json_object_get(c, "Id")),
		    l->main_id) == 0)
			found = true;
	}
	assert_true(found);
	json_decref(arr);
	assert_int_equal(dock_container_list(l->e, "kilntainers.test=nomatch",
	    TMO, &arr, err, sizeof(err)), 0);
	assert_int_equal(json_array_size(arr), 0);
	json_decref(arr);

	assert_int_equal(dock_container_inspect(l->e, l->main_id, TMO, &j, err,
	    sizeof(err)), 0);
	assert_true(json_is_true(json_object_get(json_object_get(j, "State"),
	    "Running")));
	json_decref(j);
	assert_int_equal(dock_container_inspect(l->e, "kilntainers-no-such",
	    TMO, &j, err, sizeof(err)), -ENOENT);
}

struct waiter {
	struct live		*l;
	const char		*id;
	volatile bool		 cancel;
	int			 rc;
};

static void *
wait_thread(void *arg)
{
	struct waiter	*w = arg;
	char		 err[256];

	w->rc = dock_container_wait(w->l->e, w->id, &w->cancel, err,
	    sizeof(err));
	return NULL;
}

static void
test_lifecycle(void **state)
{
	struct live		*l = *state;
	struct dock_exec_res	 res;
	struct waiter		 w;
	pthread_t		 t;
	const char		*echo[] = { "echo", "x", NULL };
	char			 id[65], err[512];
	json_t			*body;
	int64_t			 t0;

	NEED_ENGINE(l);
	assert_int_equal(make_container(l, "life", id), 0);

	/* Name conflicts and missing images. */
	body = json_pack("{s:s,s:[s]}", "Image", IMAGE, "Cmd", "true");
	{
		char	name[128], id2[65];

		snprintf(name, sizeof(name), "kilntainers-test-%ld-life",
		    (long)getpid());
		assert_int_equal(dock_container_create(l->e, name, body, TMO,
		    id2, err, sizeof(err)), -EEXIST);
		json_object_set_new(body, "Image",
		    json_string("kilntainers-test/absent:1"));
		assert_int_equal(dock_container_create(l->e, NULL, body, TMO,
		    id2, err, sizeof(err)), -ENOENT);
	}
	json_decref(body);

	/* Cancelling a wait. */
	memset(&w, 0, sizeof(w));
	w.l = l;
	w.id = id;
	assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
	usleep(300000);
	t0 = now_ms();
	w.cancel = true;
	pthread_join(t, NULL);
	assert_int_equal(w.rc, -ECANCELED);
	assert_true(now_ms() - t0 < 500);

	/* A wait returns when the container stops. */
	memset(&w, 0, sizeof(w));
	w.l = l;
	w.id = id;
	assert_int_equal(pthread_create(&t, NULL, wait_thread, &w), 0);
	usleep(300000);
	assert_int_equal(dock_container_stop(l->e, id, 5, TMO, err,
	    sizeof(err)), 0);
	pthread_join(t, NULL);
	assert_int_equal(w.rc, 0);
	assert_false(is_running(l, id));
	assert_int_equal(dock_container_stop(l->e, id, 5, TMO, err,
	    sizeof(err)), 0);
	assert_int_equal(dock_container_wait(l->e, id, NULL, err,
	    sizeof(err)), 0);

	/* Exec on a stopped container. */
	assert_int_equal(run(l, id, echo, NULL, NULL, 0, false, TMO, 1000,
	    &res), -EBUSY);

	assert_int_equal(dock_container_start(l->e, id, TMO, err,
	    sizeof(err)), 0);
	assert_int_equal(dock_container_start(l->e, id, TMO, err,
	    sizeof(err)), 0);
	assert_true(is_running(l, id));
	assert_int_equal(dock_container_restart(l->e, id, 1, TMO, err,
	    sizeof(err)), 0);
	assert_true(is_running(l, id));
	assert_int_equal(run(l, id, echo, NULL, NULL, 0, false, TMO, 1000,
	    &res), 0);
	assert_string_equal(res.out, "x\n");
	dock_exec_res_fini(&res);

	assert_int_equal(dock_container_remove(l->e, id, TMO, err,
	    sizeof(err)), 0);
	assert_int_equal(dock_container_remove(l->e, id, TMO, err,
	    sizeof(err)), 0);
	assert_int_equal(run(l, id, echo, NULL, NULL, 0, false, TMO, 1000,
	    &res), -ENOENT);
	assert_int_equal(dock_container_stop(l->e, id, 1, TMO, err,
	    sizeof(err)), -ENOENT);
	assert_int_equal(dock_container_wait(l->e, id, NULL, err,
	    sizeof(err)), -ENOENT);
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
		cmocka_unit_test(test_ping),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_exec_basic),
		cmocka_unit_test(test_exec_codes_streams),
		cmocka_unit_test(test_exec_stdin),
		cmocka_unit_test(test_exec_binary_large),
		cmocka_unit_test(test_exec_timeout),
		cmocka_unit_test(test_exec_limit),
		cmocka_unit_test(test_exec_kill_fallback),
		cmocka_unit_test(test_list_inspect),
		cmocka_unit_test(test_lifecycle),
		cmocka_unit_test(test_exec_parallel_latency),
	};

	return cmocka_run_group_tests(tests, group_setup,
	    group_teardown);
}
