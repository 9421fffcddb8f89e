/*
 * test_docker_api_fake.c - docker_api.h against a tiny fake engine on a
 * unix socket, for what the live engine cannot show on demand: version
 * negotiation, frames split into single bytes, stream type 3, a bad frame
 * header, stdin sent only after the reply headers, mid-stream pull errors.
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
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "docker_api.h"

struct fake {
	char		 path[108];
	int		 lfd;
	pthread_t	 t;
	const char	*api;		/* Api-Version header */
	char		 last[256];	/* last request line */
	int		 nreq;
	size_t		 last_body_len;	/* its Content-Length */
};

static void
say(int fd, const char *s, size_t n)
{
	ssize_t	w;

	while (n > 0) {
		w = send(fd, s, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void
reply(int fd, int status, const char *body)
{
	char	hdr[256];

	snprintf(hdr, sizeof(hdr), "HTTP/1.1 %d X\r\nApi-Version: %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", status, "1.41", strlen(body));
	say(fd, hdr, strlen(hdr));
	say(fd, body, strlen(body));
}

/* One frame, written one byte at a time so reads split it anywhere. */
static void
frame(int fd, int type, const char *p, size_t n)
{
	unsigned char	h[8] = { (unsigned char)type, 0, 0, 0,
	    (unsigned char)(n >> 24), (unsigned char)(n >> 16),
	    (unsigned char)(n >> 8), (unsigned char)n };
	size_t		i;

	for (i = 0; i < 8; i++) {
		say(fd, (char *)h + i, 1);
		usleep(200);
	}
	for (i = 0; i < n; i++) {
		say(fd, p + i, 1);
		usleep(200);
	}
}

static void
serve_start(int fd, const char *id)
{
	static const char	up[] = "HTTP/1.1 101 UPGRADED\r\n"
	    "Content-Type: application/vnd.docker.multiplexed-stream\r\n"
	    "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n";
	char			buf[4096], out[8192];
	size_t			have = 0;
	ssize_t			n;

	/* Like the daemon, lose whatever came before our reply headers. */
	usleep(20000);
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	say(fd, up, sizeof(up) - 1);
	if (strcmp(id, "frames") == 0) {
		frame(fd, 1, "hello ", 6);
		frame(fd, 2, "oops\n", 5);
		frame(fd, 0, "in-as-out ", 10);
		frame(fd, 1, "", 0);
		frame(fd, 3, "daemon error", 12);
		frame(fd, 1, "world\n", 6);
	} else if (strcmp(id, "bad") == 0) {
		frame(fd, 7, "x", 1);
	} else if (strcmp(id, "cat") == 0) {
		/* Echo stdin until the client half-closes. */
		while ((n = read(fd, buf, sizeof(buf))) > 0 &&
		    have + (size_t)n <= sizeof(out)) {
			memcpy(out + have, buf, (size_t)n);
			have += (size_t)n;
		}
		frame(fd, 1, out, have);
	}
}

static void
serve(struct fake *f, int fd)
{
	char	 req[8192], *end, *cl, *sp;
	size_t	 have = 0, hlen, blen = 0;
	ssize_t	 n;

	for (;;) {
		n = read(fd, req + have, sizeof(req) - 1 - have);
		if (n <= 0)
			return;
		have += (size_t)n;
		req[have] = '\0';
		if ((end = strstr(req, "\r\n\r\n")) == NULL)
			continue;
		hlen = (size_t)(end - req) + 4;
		if ((cl = strcasestr(req, "Content-Length:")) != NULL)
			blen = strtoul(cl + 15, NULL, 10);
		if (have >= hlen + blen)
			break;
	}
	snprintf(f->last, sizeof(f->last), "%.*s", (int)strcspn(req, "\r"),
	    req);
	f->last_body_len = blen;
	f->nreq++;
	if (strncmp(req, "GET /_ping ", 11) == 0) {
		snprintf(req, sizeof(req), "HTTP/1.1 200 OK\r\nApi-Version: "
		    "%s\r\nContent-Length: 2\r\n\r\nOK", f->api);
		say(fd, req, strlen(req));
		return;
	}
	/* Everything else must use the negotiated version. */
	if (strstr(req, " /v1.41/") == NULL && strstr(req, " /v1.47/") ==
	    NULL) {
		reply(fd, 400, "{\"message\":\"wrong version\"}");
		return;
	}
	sp = strchr(req, ' ') + 7;	/* after " /v1.4N" */
	if (strncmp(req, "DELETE /", 8) == 0 &&
	    strncmp(sp, "/containers/", 12) == 0) {
		if (strncmp(sp + 12, "busy?", 5) == 0)
			reply(fd, 409, "{\"message\":\"removal of container "
			    "busy is already in progress\"}");
		else if (strncmp(sp + 12, "stuck?", 6) == 0)
			reply(fd, 500, "{\"message\":\"driver failed\"}");
		else if (strncmp(sp + 12, "needed?", 7) == 0)
			reply(fd, 409, "{\"message\":\"container has "
			    "dependent containers which must be removed "
			    "before it\"}");
		else
			reply(fd, 204, "");
	} else if (strncmp(sp, "/containers/", 12) == 0 && strstr(sp, "/exec ")) {
		/* The container name is the exec id. */
		char	id[64];

		snprintf(id, sizeof(id), "%.*s", (int)strcspn(sp + 12, "/"),
		    sp + 12);
		if (strcmp(id, "gone") == 0)
			reply(fd, 404, "{\"message\":\"No such container: "
			    "gone\"}");
		else if (strstr(end, "kiln-kill") != NULL)
			reply(fd, 409, "{\"message\":\"not running\"}");
		else {
			snprintf(req, sizeof(req), "{\"Id\":\"%s\"}", id);
			reply(fd, 201, req);
		}
	} else if (strncmp(sp, "/exec/", 6) == 0 && strstr(sp, "/start ")) {
		*strchr(sp + 6, '/') = '\0';
		serve_start(fd, sp + 6);
	} else if (strncmp(sp, "/exec/", 6) == 0) {
		reply(fd, 200, "{\"Running\":false,\"ExitCode\":5}");
	} else if (strncmp(sp, "/images/create?fromSrc=-&", 25) == 0) {
		reply(fd, 200, "{\"status\":\"sha256:0\"}\n");
	} else if (strncmp(sp, "/images/create?", 15) == 0) {
		reply(fd, 200, "{\"status\":\"Pulling from x\"}\n"
		    "{\"status\":\"Downloading\",\"id\":\"abc\","
		    "\"progressDetail\":{\"current\":1,\"total\":2}}\n"
		    "{\"errorDetail\":{\"message\":\"boom\"},"
		    "\"error\":\"boom\"}\n");
	} else if (strncmp(sp, "/info ", 6) == 0) {
		reply(fd, 200, "{\"SecurityOptions\":[\"name=seccomp,"
		    "profile=default\",\"name=rootless\"]}");
	} else if (strncmp(sp, "/images/", 8) == 0) {
		reply(fd, 404, "{\"message\":\"No such image\"}");
	} else {
		reply(fd, 500, "not json at all\nsecond line");
	}
}

static void *
fake_main(void *arg)
{
	struct fake	*f = arg;
	int		 fd;

	while ((fd = accept(f->lfd, NULL, NULL)) >= 0) {
		serve(f, fd);
		close(fd);
	}
	return NULL;
}

static int
fake_start(struct fake *f, const char *api)
{
	struct sockaddr_un	sa;

	memset(f, 0, sizeof(*f));
	f->api = api;
	snprintf(f->path, sizeof(f->path), "/tmp/kt-fake-%ld-%s.sock",
	    (long)getpid(), api);
	unlink(f->path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	if ((f->lfd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
	    bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(f->lfd, 16) < 0)
		return -1;
	return pthread_create(&f->t, NULL, fake_main, f);
}

static void
fake_stop(struct fake *f)
{
	shutdown(f->lfd, SHUT_RDWR);
	close(f->lfd);
	pthread_join(f->t, NULL);
	unlink(f->path);
}

static struct dock_engine *
engine_for(struct fake *f)
{
	struct dock_engine	*e;
	char			 host[160];

	snprintf(host, sizeof(host), "unix://%s", f->path);
	assert_int_equal(dock_engine_new(host, "docker", &e), 0);
	return e;
}

static int
exec1(struct dock_engine *e, const char *container, const char *in,
    struct dock_exec_res *res, char *err, size_t errlen)
{
	const char		*argv[] = { "x", NULL };
	struct dock_exec_req	 req;

	memset(&req, 0, sizeof(req));
	req.container = container;
	req.argv = argv;
	req.has_stdin = in != NULL;
	req.stdin_data = in;
	req.stdin_len = in != NULL ? strlen(in) : 0;
	req.timeout_ms = 10000;
	req.output_limit = 1 << 20;
	return dock_exec_run(e, &req, res, err, errlen);
}

static void
test_frames(void **state)
{
	struct fake		 f;
	struct dock_engine	*e;
	struct dock_exec_res	 res;
	char			 err[512];

	(void)state;
	assert_int_equal(fake_start(&f, "1.41"), 0);
	e = engine_for(&f);
	assert_int_equal(exec1(e, "frames", NULL, &res, err, sizeof(err)), 0);
	assert_int_equal(res.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(res.exit_code, 5);
	assert_string_equal(res.out, "hello in-as-out world\n");
	/* Stream type 3 shows up as error text after stderr. */
	assert_string_equal(res.err, "oops\ndaemon error");
	dock_exec_res_fini(&res);

	/* Stdin sent after the headers and ended by a half-close. */
	assert_int_equal(exec1(e, "cat", "piped input", &res, err,
	    sizeof(err)), 0);
	assert_string_equal(res.out, "piped input");
	dock_exec_res_fini(&res);

	assert_int_equal(exec1(e, "bad", NULL, &res, err, sizeof(err)),
	    -EPROTO);
	assert_non_null(strstr(err, "bad frame header"));
	assert_int_equal(exec1(e, "gone", NULL, &res, err, sizeof(err)),
	    -ENOENT);
	assert_non_null(strstr(err, "No such container: gone"));
	dock_engine_free(e);
	fake_stop(&f);
}

static void
test_versions(void **state)
{
	struct fake		 f;
	struct dock_engine	*e;
	struct dock_exec_res	 res;
	char			 err[512];
	json_t			*j;

	(void)state;
	/* Newer than we speak: we use 1.47 (the fake refuses others). */
	assert_int_equal(fake_start(&f, "1.52"), 0);
	e = engine_for(&f);
	assert_int_equal(exec1(e, "frames", NULL, &res, err, sizeof(err)), 0);
	dock_exec_res_fini(&res);
	assert_non_null(strstr(f.last, "/v1.47/exec/frames/json"));
	/* A non-JSON error body gives its first line. */
	assert_int_equal(dock_container_inspect(e, "x", 5000, &j, err,
	    sizeof(err)), -EIO);
	assert_non_null(strstr(err, "not json at all"));
	assert_null(strstr(err, "second line"));
	dock_engine_free(e);
	fake_stop(&f);

	assert_int_equal(fake_start(&f, "1.40"), 0);
	e = engine_for(&f);
	assert_int_equal(dock_engine_ping(e, 5000, err, sizeof(err)),
	    -ENOTSUP);
	assert_non_null(strstr(err, "Cannot connect to docker"));
	assert_non_null(strstr(err, "1.40 is too old"));
	dock_engine_free(e);
	fake_stop(&f);
}

static void
test_pull_midstream_error(void **state)
{
	struct fake		 f;
	struct dock_engine	*e;
	char			 err[512];

	(void)state;
	assert_int_equal(fake_start(&f, "1.41"), 0);
	e = engine_for(&f);
	assert_int_equal(dock_image_ensure(e, "localhost:5000/a/b:1",
	    5000, err, sizeof(err)), -EIO);
	assert_non_null(strstr(err, "Failed to pull image "
	    "'localhost:5000/a/b:1'"));
	assert_non_null(strstr(err, "boom"));
	assert_non_null(strstr(f.last, "fromImage=localhost%3A5000%2Fa%2Fb"
	    "&tag=1 "));
	assert_int_equal(dock_image_ensure(e, "localhost:5000/a/b", 5000,
	    err, sizeof(err)), -EIO);
	assert_non_null(strstr(f.last, "fromImage=localhost%3A5000%2Fa%2Fb"
	    "&tag=latest "));
	assert_int_equal(dock_image_ensure(e, "a/b@sha256:0123", 5000, err,
	    sizeof(err)), -EIO);
	assert_non_null(strstr(f.last, "fromImage=a%2Fb%40sha256%3A0123 "));
	dock_engine_free(e);
	fake_stop(&f);
}

/*
 * A forced removal that meets one already under way (409: an earlier try
 * outlasted its timeout, the engine goes on) is done, not an error that
 * makes the session retry the release for minutes; a real failure, or
 * another conflict, stays one.
 */
static void
test_remove_in_progress(void **state)
{
	struct fake		 f;
	struct dock_engine	*e;
	char			 err[512];

	(void)state;
	assert_int_equal(fake_start(&f, "1.41"), 0);
	e = engine_for(&f);
	assert_int_equal(dock_container_remove(e, "gone-now", 5000, err,
	    sizeof(err)), 0);
	assert_non_null(strstr(f.last, "DELETE /v1.41/containers/gone-now?"
	    "force=1&v=1 "));
	assert_int_equal(dock_container_remove(e, "busy", 5000, err,
	    sizeof(err)), 0);
	assert_true(dock_container_remove(e, "stuck", 5000, err,
	    sizeof(err)) < 0);
	/* Another conflict: the container is still there. */
	assert_true(dock_container_remove(e, "needed", 5000, err,
	    sizeof(err)) < 0);
	dock_engine_free(e);
	fake_stop(&f);
}

/* GET /info, and which engines are reached through a local socket. */
static void
test_info_socket(void **state)
{
	struct fake		 f;
	struct dock_engine	*e;
	json_t			*info = NULL;
	char			 err[512];

	(void)state;
	assert_int_equal(fake_start(&f, "1.47"), 0);
	e = engine_for(&f);
	assert_string_equal(dock_engine_socket(e), f.path);
	assert_int_equal(dock_engine_info(e, 5000, &info, err, sizeof(err)),
	    0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(
	    info, "SecurityOptions"), 1)), "name=rootless");
	json_decref(info);
	/* An empty image: inspect (404 here), then an import of an empty tar. */
	assert_int_equal(dock_image_empty(e, "kilntainers-netrules", "empty",
	    5000, err, sizeof(err)), 0);
	assert_non_null(strstr(f.last, "POST /v1.47/images/create?fromSrc=-&"
	    "repo=kilntainers-netrules%3Aempty "));
	assert_int_equal(f.last_body_len, 1024);
	assert_int_equal(dock_image_empty(e, "a:b", "c", 5000, err,
	    sizeof(err)), -EINVAL);
	dock_engine_free(e);
	fake_stop(&f);
	assert_int_equal(dock_engine_new("tcp://127.0.0.1:1", "docker", &e),
	    0);
	assert_null(dock_engine_socket(e));
	dock_engine_free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_pull_midstream_error),
		cmocka_unit_test(test_info_socket),
		cmocka_unit_test(test_remove_in_progress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
