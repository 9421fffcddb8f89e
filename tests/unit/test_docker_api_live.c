/*
 * test_docker_api_live.c - docker_api.h against the live engine: ping,
 * images, containers (list, inspect, start, stop, restart, remove, wait).
 * The exec tests are in test_docker_exec_live.c.
 */
#include "docker_live.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ping),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_list_inspect),
		cmocka_unit_test(test_lifecycle),
	};

	return cmocka_run_group_tests(tests, group_setup,
	    group_teardown);
}
