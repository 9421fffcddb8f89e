/*
 * test_msc_http.c - lib/msc_http against a tiny HTTP server in a thread
 * that answers each connection with the next reply of a script: retries
 * on 503 and 429, Retry-After, the deadline, errno mapping, the
 * provider's message, refused connections and malformed JSON.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "msc_http.h"

/* One scripted reply. */
struct canned {
	int status;
	const char *headers;    /* extra lines, each ending in "\r\n" */
	const char *body;
	int delay_ms;           /* before replying (cut short by a hang-up) */
};

struct fake {
	int lfd;
	pthread_t th;
	const struct canned *script;
	int n;
	int served;             /* connections answered (atomic) */
	bool stop;              /* atomic */
	char req[8192];         /* the last request: head and body */
	char url[64];           /* "http://127.0.0.1:<port>" */
};

/* Reads one request (head, then Content-Length bytes) into f->req. */
static void
read_request(struct fake *f, int c)
{
	size_t len = 0, want = 0;
	char *eoh = NULL;

	f->req[0] = '\0';
	while (len < sizeof(f->req) - 1) {
		struct pollfd p = { .fd = c, .events = POLLIN };
		ssize_t r;

		if (eoh != NULL && len >= want)
			break;
		if (poll(&p, 1, 2000) <= 0 || (r = recv(c, f->req + len,
		    sizeof(f->req) - 1 - len, 0)) <= 0)
			break;
		len += (size_t)r;
		f->req[len] = '\0';
		if (eoh == NULL && (eoh = strstr(f->req, "\r\n\r\n")) != NULL) {
			const char *cl = strcasestr(f->req, "Content-Length:");

			want = (size_t)(eoh + 4 - f->req);
			if (cl != NULL && cl < eoh)
				want += strtoul(cl + 15, NULL, 10);
		}
	}
}

static void *
serve(void *arg)
{
	struct fake *f = arg;
	char out[4096];

	while (__atomic_load_n(&f->served, __ATOMIC_ACQUIRE) < f->n &&
	    !__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE)) {
		struct pollfd p = { .fd = f->lfd, .events = POLLIN };
		const struct canned *k;
		int c, n;

		if (poll(&p, 1, 50) <= 0 ||
		    (c = accept(f->lfd, NULL, NULL)) < 0)
			continue;
		read_request(f, c);
		k = &f->script[f->served];
		if (k->delay_ms > 0) {
			struct pollfd q = { .fd = c, .events = POLLIN };

			(void)poll(&q, 1, k->delay_ms);
		}
		n = snprintf(out, sizeof(out), "HTTP/1.1 %d Scripted\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n%s",
		    k->status, k->body ? strlen(k->body) : 0,
		    k->headers ? k->headers : "", k->body ? k->body : "");
		(void)send(c, out, (size_t)n, MSG_NOSIGNAL);
		close(c);
		__atomic_add_fetch(&f->served, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void
fake_start(struct fake *f, const struct canned *script, int n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);

	memset(f, 0, sizeof(*f));
	f->script = script;
	f->n = n;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(f->lfd, 16), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&sa, &sl), 0);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d",
	    ntohs(sa.sin_port));
	assert_int_equal(pthread_create(&f->th, NULL, serve, f), 0);
}

/* Stops the server; returns how many requests it answered. */
static int
fake_stop(struct fake *f)
{
	__atomic_store_n(&f->stop, true, __ATOMIC_RELEASE);
	pthread_join(f->th, NULL);
	close(f->lfd);
	return f->served;
}

/* A request to `f` in E2B's conventions. */
static struct msc_http_req
req_for(const struct fake *f, const char *method, char *url, size_t len)
{
	struct msc_http_req r = { .method = method, .url = url,
		.what = "Test API GET /x", .peer = "Test", .timeout_ms = 2000,
		.deadline_ms = 10000, .retry_5xx = true, .err_key = "message" };

	snprintf(url, len, "%s/x", f->url);
	return r;
}

static void
retries_503_then_succeeds(void **state)
{
	struct msc_http_req r;
	static const struct canned script[] = {
		{ 503, NULL, "{\"message\":\"busy\"}", 0 },
		{ 200, NULL, "{\"ok\":true}", 0 },
	};
	struct fake f;
	char url[128], err[256];
	json_t *resp = NULL;
	long status = -1;

	(void)state;
	fake_start(&f, script, 2);
	r = req_for(&f, "GET", url, sizeof(url));
	assert_int_equal(msc_http_call(&r, &status, &resp, NULL, 0, err,
	    sizeof(err)), 0);
	assert_int_equal(status, 200);
	assert_true(json_is_true(json_object_get(resp, "ok")));
	json_decref(resp);
	assert_int_equal(fake_stop(&f), 2);

	/* Without retry_5xx the 503 is final. */
	fake_start(&f, script, 2);
	r = req_for(&f, "GET", url, sizeof(url));
	r.retry_5xx = false;
	assert_int_equal(msc_http_call(&r, &status, &resp, NULL, 0, err,
	    sizeof(err)), -EIO);
	assert_int_equal(status, 503);
	assert_null(resp);
	assert_string_equal(err, "Test API GET /x: HTTP 503: busy");
	assert_int_equal(fake_stop(&f), 1);
}

static void
honours_retry_after(void **state)
{
	struct msc_http_req r;
	static const struct canned script[] = {
		{ 503, "Retry-After: 1\r\n", "{}", 0 },
		{ 200, NULL, "{}", 0 },
	};
	static const struct canned later[] = {
		{ 429, "Retry-After: 5\r\n", "{\"message\":\"later\"}", 0 },
		{ 200, NULL, "{}", 0 },
	};
	struct fake f;
	char url[128], err[256];
	uint64_t t0;

	(void)state;
	fake_start(&f, script, 2);
	r = req_for(&f, "GET", url, sizeof(url));
	t0 = msc_now_ms();
	assert_int_equal(msc_http_call(&r, NULL, NULL, NULL, 0, err,
	    sizeof(err)), 0);
	assert_true(msc_now_ms() - t0 >= 1000);
	assert_true(msc_now_ms() - t0 < 4000);
	assert_int_equal(fake_stop(&f), 2);

	/* A Retry-After past the deadline: give up at once, no retry. */
	fake_start(&f, later, 2);
	r = req_for(&f, "GET", url, sizeof(url));
	r.deadline_ms = 2000;
	t0 = msc_now_ms();
	assert_int_equal(msc_http_call(&r, NULL, NULL, NULL, 0, err,
	    sizeof(err)), -EAGAIN);
	assert_true(msc_now_ms() - t0 < 1000);
	assert_string_equal(err, "Test API GET /x: HTTP 429: later");
	assert_int_equal(fake_stop(&f), 1);
}

static void
exhausts_429_retries(void **state)
{
	struct msc_http_req r;
	static struct canned script[12];
	struct fake f;
	char url[128], err[256];
	long status = 0;

	(void)state;
	for (size_t i = 0; i < 12; i++)
		script[i] = (struct canned){ 429, "Retry-After: 0\r\n",
			"{\"message\":\"slow down\"}", 0 };
	fake_start(&f, script, 12);
	r = req_for(&f, "POST", url, sizeof(url));
	r.retry_5xx = false;    /* 429s are retried regardless */
	r.deadline_ms = 60000;
	assert_int_equal(msc_http_call(&r, &status, NULL, NULL, 0, err,
	    sizeof(err)), -EAGAIN);
	assert_int_equal(status, 429);
	assert_string_equal(err, "Test API GET /x: HTTP 429: slow down");
	/* The first try and 8 retries. */
	assert_int_equal(fake_stop(&f), 9);
}

static void
deadline_is_timeout(void **state)
{
	struct msc_http_req r;
	static const struct canned script[] = {
		{ 200, NULL, "{}", 5000 },
	};
	struct fake f;
	char url[128], err[256];
	uint64_t t0;

	(void)state;
	fake_start(&f, script, 1);
	r = req_for(&f, "GET", url, sizeof(url));
	r.deadline_ms = 500;
	t0 = msc_now_ms();
	assert_int_equal(msc_http_call(&r, NULL, NULL, NULL, 0, err,
	    sizeof(err)), -ETIMEDOUT);
	assert_true(msc_now_ms() - t0 < 1500);
	assert_non_null(strstr(err, "Test API GET /x: cannot reach Test"));
	fake_stop(&f);

	r.timeout_ms = 0;
	assert_int_equal(msc_http_call(&r, NULL, NULL, NULL, 0, err,
	    sizeof(err)), -EINVAL);
}

/* Fly's convention: 422 {"status":"name_taken"} is a name in use. */
static int
taken(long status, const json_t *j, const char *text)
{
	const char *st = json_string_value(json_object_get(j, "status"));

	(void)text;
	return status == 422 && st != NULL && strcmp(st, "name_taken") == 0
	    ? -EEXIST : 0;
}

static void
maps_status_and_message(void **state)
{
	static const struct canned script[] = {
		{ 404, NULL,
		    "{\"code\":404,\"message\":\"sandbox x not found\"}", 0 },
		{ 400, NULL, "{\"error\":\"bad\\nthing\"}", 0 },
		{ 502, NULL, "<html>\r\nBad gateway</html>", 0 },
		{ 422, NULL,
		    "{\"error\":\"taken\",\"status\":\"name_taken\"}", 0 },
		{ 422, NULL, "{\"error\":\"invalid\"}", 0 },
		{ 409, NULL, "", 0 },
		{ 401, NULL, "{\"message\":\"no\"}", 0 },
		{ 403, NULL, "{}", 0 },
		{ 408, NULL, "{}", 0 },
		{ 418, NULL, "[1]", 0 },
	};
	static const struct {
		const char *key;
		int rv;
		const char *err;
	} want[] = {
		{ "message", -ENOENT, "T: HTTP 404" },    /* message: logged */
		{ "error", -EINVAL, "T: HTTP 400" },
		{ "error", -EIO, "T: HTTP 502: <html>  Bad gateway</html>" },
		{ "error", -EEXIST, "T: HTTP 422" },
		{ "error", -EINVAL, "T: HTTP 422" },
		{ "error", -EEXIST, "T: HTTP 409" },
		{ "message", -EACCES, "T: HTTP 401: no" },
		{ "message", -EACCES, "T: HTTP 403" },
		{ "message", -ETIMEDOUT, "T: HTTP 408" },
		{ "message", -EIO, "T: HTTP 418" },
	};
	struct fake f;
	char url[128], err[256];

	(void)state;
	fake_start(&f, script, 10);
	for (size_t i = 0; i < 10; i++) {
		struct msc_http_req r = req_for(&f, "GET", url, sizeof(url));

		r.what = "T";
		r.retry_5xx = false;
		r.err_key = want[i].key;
		r.status_errno = taken;
		assert_int_equal(msc_http_call(&r, NULL, NULL, NULL, 0, err,
		    sizeof(err)), want[i].rv);
		assert_string_equal(err, want[i].err);
	}
	assert_int_equal(fake_stop(&f), 10);
}

static void
refused_connection(void **state)
{
	struct msc_http_req r;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	char url[128], err[256];
	long status = -1;
	int s;

	(void)state;
	/* A bound port with no listener refuses, and nobody else takes it. */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((s = socket(AF_INET, SOCK_STREAM, 0)) >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/x",
	    ntohs(sa.sin_port));
	r = (struct msc_http_req){ .method = "GET", .url = url,
		.what = "Test API GET /x", .peer = "Test", .timeout_ms = 2000,
		.deadline_ms = 5000, .retry_5xx = true, .err_key = "message" };
	assert_int_equal(msc_http_call(&r, &status, NULL, NULL, 0, err,
	    sizeof(err)), -ECONNREFUSED);
	assert_int_equal(status, 0);
	assert_non_null(strstr(err, "Test API GET /x: cannot reach Test: "));
	close(s);
}

static void
malformed_json_is_eproto(void **state)
{
	struct msc_http_req r;
	static const struct canned script[] = {
		{ 200, NULL, "{nope", 0 },
		{ 204, NULL, NULL, 0 },
	};
	struct fake f;
	char url[128], err[256];
	json_t *resp = (json_t *)1;
	long status = 0;

	(void)state;
	fake_start(&f, script, 2);
	r = req_for(&f, "GET", url, sizeof(url));
	assert_int_equal(msc_http_call(&r, &status, &resp, NULL, 0, err,
	    sizeof(err)), -EPROTO);
	assert_int_equal(status, 200);
	assert_null(resp);
	assert_string_equal(err, "Test API GET /x: malformed JSON reply");
	/* An empty 2xx is no reply, not an error. */
	assert_int_equal(msc_http_call(&r, &status, &resp, NULL, 0, err,
	    sizeof(err)), 0);
	assert_int_equal(status, 204);
	assert_null(resp);
	assert_int_equal(fake_stop(&f), 2);
}

static void
request_shape_and_capture(void **state)
{
	struct msc_http_req r;
	static const struct canned script[] = {
		{ 200, "X-Next-Token: abc 123\r\n", "[]", 0 },
		{ 201, NULL, "{}", 0 },
	};
	struct curl_slist key = { .data = "X-API-Key: k-secret" };
	struct fake f;
	char url[128], err[256], next[64];
	json_t *resp = NULL, *body = json_pack("{s:i}", "a", 1);

	(void)state;
	fake_start(&f, script, 2);
	r = req_for(&f, "POST", url, sizeof(url));
	r.hdrs = &key;
	r.capture = "x-next-token";
	assert_int_equal(msc_http_call(&r, NULL, &resp, next, sizeof(next),
	    err, sizeof(err)), 0);
	assert_true(json_is_array(resp));
	json_decref(resp);
	assert_string_equal(next, "abc 123");
	assert_non_null(strstr(f.req, "POST /x HTTP/1.1\r\n"));
	assert_non_null(strstr(f.req, "X-API-Key: k-secret\r\n"));
	assert_non_null(strstr(f.req, "Content-Length: 0\r\n"));
	assert_null(strstr(f.req, "Expect:"));
	/* A body goes out as compact JSON; no header is captured. */
	r.body = body;
	assert_int_equal(msc_http_call(&r, NULL, NULL, next, sizeof(next),
	    err, sizeof(err)), 0);
	assert_string_equal(next, "");
	assert_int_equal(fake_stop(&f), 2);
	assert_non_null(strstr(f.req, "Content-Type: application/json\r\n"));
	assert_non_null(strstr(f.req, "\r\n\r\n{\"a\":1}"));
	json_decref(body);
}

static void
backoff_and_escape(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(msc_http_init(), 0);
	assert_int_equal(msc_http_init(), 0);
	for (int i = 0; i < 50; i++) {
		int w0 = msc_http_backoff_ms(0, 0);
		int w9 = msc_http_backoff_ms(9, 0);
		int ra = msc_http_backoff_ms(0, 3);
		int big = msc_http_backoff_ms(1, 99);

		assert_true(w0 >= 125 && w0 <= 250);
		assert_true(w9 >= 2500 && w9 <= 5000);
		assert_int_equal(ra, 3000);
		assert_int_equal(big, 10000);
	}
	assert_int_equal(msc_http_escape("a-b_c.d~", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "a-b_c.d~");
	assert_int_equal(msc_http_escape("a b&c=/\xc3\xa9", buf, sizeof(buf)),
	    0);
	assert_string_equal(buf, "a%20b%26c%3D%2F%C3%A9");
	assert_int_equal(msc_http_escape("&&&&", buf, 6), -ENOSPC);
	assert_int_equal(msc_http_escape("", buf, 0), -ENOSPC);
}

/* libcurl's codes to errno, with the caller's errno for the rest. */
static void
curl_codes_to_errno(void **state)
{
	(void)state;
	assert_int_equal(msc_http_curl_errno(CURLE_OK, -EIO), 0);
	assert_int_equal(msc_http_curl_errno(CURLE_COULDNT_CONNECT, -EIO),
	    -ECONNREFUSED);
	assert_int_equal(msc_http_curl_errno(CURLE_COULDNT_RESOLVE_HOST,
			     -EIO), -ECONNREFUSED);
	assert_int_equal(msc_http_curl_errno(CURLE_OPERATION_TIMEDOUT, -EIO),
	    -ETIMEDOUT);
	assert_int_equal(msc_http_curl_errno(CURLE_ABORTED_BY_CALLBACK,
			     -EIO), -ECANCELED);
	assert_int_equal(msc_http_curl_errno(CURLE_OUT_OF_MEMORY, -EIO),
	    -ENOMEM);
	assert_int_equal(msc_http_curl_errno(CURLE_RECV_ERROR, -EIO), -EIO);
	assert_int_equal(msc_http_curl_errno(CURLE_SEND_ERROR,
			     -ECONNREFUSED), -ECONNREFUSED);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(backoff_and_escape),
		cmocka_unit_test(retries_503_then_succeeds),
		cmocka_unit_test(honours_retry_after),
		cmocka_unit_test(deadline_is_timeout),
		cmocka_unit_test(maps_status_and_message),
		cmocka_unit_test(refused_connection),
		cmocka_unit_test(malformed_json_is_eproto),
		cmocka_unit_test(request_shape_and_capture),
		cmocka_unit_test(exhausts_429_retries),
		cmocka_unit_test(curl_codes_to_errno),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
