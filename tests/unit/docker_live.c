/* docker_live.c - the harness of the live-engine tests (docker_live.h). */
#include "docker_live.h"

int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
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

int
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

int
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
int
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

int
sh(struct live *l, const char *script, struct dock_exec_res *res)
{
	const char	*argv[] = { "sh", "-c", script, NULL };

	return run(l, NULL, argv, NULL, NULL, 0, false, TMO, 1 << 20, res);
}

/* Counts processes whose command line contains `needle` (no ps needed). */
int
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
char *
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

bool
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

