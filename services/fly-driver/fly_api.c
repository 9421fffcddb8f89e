/*
 * fly_api.c - one JSON request to the Fly Machines API with libcurl:
 * auth header, deadline, and bounded retries on 429 and 5xx.
 */
#include "fly_api.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "msc_log.h"

#define FLY_MAX_BODY (64u << 20)
#define FLY_MAX_429 8
#define FLY_MAX_5XX 3

struct fly_api {
	char *base;
	char *auth;      /* "Authorization: ..." header line */
};

struct buf {
	char *data;
	size_t len;
	int retry_after_s;
	char request_id[64];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_rc;

static void
curl_init_once(void)
{
	curl_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0
								    : -ENOMEM;
}

static const char *
strip_scheme(const char *t)
{
	while (*t == ' ')
		t++;
	if (strncasecmp(t, "Bearer ", 7) == 0)
		t += 7;
	else if (strncasecmp(t, "FlyV1 ", 6) == 0)
		t += 6;
	while (*t == ' ')
		t++;
	return t;
}

int
fly_auth_header(const char *token, char *buf, size_t len)
{
	const char *t, *p;
	bool macaroon = false;
	size_t n;
	int w;

	if (token == NULL)
		return -EINVAL;
	t = strip_scheme(token);
	n = strlen(t);
	while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\n' ||
			    t[n - 1] == '\r'))
		n--;
	if (n == 0)
		return -EINVAL;
	for (p = t; p < t + n;) {
		while (p < t + n && (*p == ',' || *p == ' '))
			p++;
		if (strncmp(p, "fm1r_", 5) == 0 || strncmp(p, "fm1a_", 5) == 0 ||
		    strncmp(p, "fm2_", 4) == 0)
			macaroon = true;
		while (p < t + n && *p != ',')
			p++;
	}
	w = snprintf(buf, len, "%s %.*s", macaroon ? "FlyV1" : "Bearer",
	    (int)n, t);
	return w < 0 || (size_t)w >= len ? -ENOSPC : 0;
}

int
fly_api_new(const char *base, const char *token, struct fly_api **ap)
{
	struct fly_api *a;
	char hdr[8192];
	size_t n;
	int rv;

	if ((rv = pthread_once(&curl_once, curl_init_once)) != 0)
		return -rv;
	if (curl_rc != 0)
		return curl_rc;
	if ((rv = fly_auth_header(token, hdr, sizeof(hdr))) != 0)
		return rv;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return -ENOMEM;
	if ((a->base = strdup(base)) == NULL ||
	    asprintf(&a->auth, "Authorization: %s", hdr) < 0) {
		a->auth = NULL;
		fly_api_free(a);
		return -ENOMEM;
	}
	explicit_bzero(hdr, sizeof(hdr));
	n = strlen(a->base);
	while (n > 0 && a->base[n - 1] == '/')
		a->base[--n] = '\0';
	*ap = a;
	return 0;
}

void
fly_api_free(struct fly_api *a)
{
	if (a == NULL)
		return;
	if (a->auth != NULL) {
		explicit_bzero(a->auth, strlen(a->auth));
		free(a->auth);
	}
	free(a->base);
	free(a);
}

const char *
fly_api_base(const struct fly_api *a)
{
	return a->base;
}

int
fly_api_escape(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == '~';

		if (o + (plain ? 1 : 3) >= len)
			return -ENOSPC;
		if (plain)
			buf[o++] = (char)c;
		else {
			buf[o++] = '%';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
		}
	}
	buf[o] = '\0';
	return 0;
}

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t len = sz * n;
	char *grown;

	if (b->len + len > FLY_MAX_BODY)
		return 0;
	if ((grown = realloc(b->data, b->len + len + 1)) == NULL)
		return 0;
	memcpy(grown + b->len, p, len);
	b->data = grown;
	b->len += len;
	b->data[b->len] = '\0';
	return len;
}

static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct buf *b = arg;
	size_t len = sz * n;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
		b->retry_after_s = atoi(p + 12);
	else if (len > 15 && strncasecmp(p, "fly-request-id:", 15) == 0)
		snprintf(b->request_id, sizeof(b->request_id), "%.*s",
		    (int)strcspn(p + 15, "\r\n"), p + 15);
	return len;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Exponential back-off with full jitter in [base/2, base]. */
static int
backoff_ms(int attempt, int retry_after_s)
{
	unsigned r = 0;
	int base = 250 << (attempt < 5 ? attempt : 5);

	if (base > 5000)
		base = 5000;
	if (retry_after_s > 0 && retry_after_s * 1000 > base)
		base = retry_after_s * 1000 > 10000 ? 10000
						   : retry_after_s * 1000;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (unsigned)now_ms();
	return base / 2 + (int)(r % (unsigned)(base / 2 + 1));
}

static void
describe(const struct fly_req *r, long status, const struct buf *b,
    char *err, size_t errlen)
{
	json_t *j = b->data ? json_loads(b->data, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(j, "error"));
	char path[256];

	snprintf(path, sizeof(path), "%.*s", (int)strcspn(r->path, "?"),
	    r->path);
	if (msg == NULL && b->data != NULL && b->len > 0 && b->len < 300 &&
	    j == NULL)
		msg = b->data;
	snprintf(err, errlen, "Fly API %s %s: HTTP %ld%s%s", r->method, path,
	    status, msg ? ": " : "", msg ? msg : "");
	json_decref(j);
}

static int
errno_for(long status, const struct buf *b)
{
	json_t *j;
	const char *st;
	int rv;

	switch (status) {
	case 400:
		return -EINVAL;
	case 401:
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 408:
		return -ETIMEDOUT;
	case 409:
		return -EEXIST;
	case 422:
		j = b->data ? json_loads(b->data, 0, NULL) : NULL;
		st = json_string_value(json_object_get(j, "status"));
		rv = st != NULL && strcmp(st, "name_taken") == 0 ? -EEXIST
								 : -EINVAL;
		if (rv == -EINVAL && b->data != NULL &&
		    strstr(b->data, "already") != NULL)
			rv = -EEXIST;
		json_decref(j);
		return rv;
	case 429:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

/* One attempt. Returns 0 with *statusp set, or a curl-level error. */
static int
attempt(struct fly_api *a, const struct fly_req *r, const char *body,
    int timeout_ms, struct buf *b, long *statusp, char *err, size_t errlen)
{
	struct curl_slist *h = NULL;
	char url[4096];
	CURL *c;
	CURLcode cc;
	int rv = 0;

	snprintf(url, sizeof(url), "%s%s", a->base, r->path);
	if ((c = curl_easy_init()) == NULL)
		return -ENOMEM;
	h = curl_slist_append(h, a->auth);
	h = curl_slist_append(h, "Accept: application/json");
	if (body != NULL)
		h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(timeout_ms < 10000 ? timeout_ms : 10000));
	curl_easy_setopt(c, CURLOPT_USERAGENT, "mcp-sandbox-computer/"
	    MSC_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, b);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, statusp);
	else {
		rv = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT
		    : cc == CURLE_OUT_OF_MEMORY	    ? -ENOMEM
						    : -ECONNREFUSED;
		snprintf(err, errlen, "Cannot reach the Fly Machines API at %s "
				      "(%s %.*s): %s", a->base, r->method,
		    (int)strcspn(r->path, "?"), r->path, curl_easy_strerror(cc));
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return rv;
}

int
fly_api_call(struct fly_api *a, const struct fly_req *r, long *statusp,
    json_t **respp, char *err, size_t errlen)
{
	char *body = NULL;
	int deadline = r->deadline_ms > 0 ? r->deadline_ms : 4 * r->timeout_ms;
	uint64_t end = now_ms() + (uint64_t)deadline;
	int n429 = 0, n5xx = 0, rv;
	long status = 0;

	if (statusp != NULL)
		*statusp = 0;
	if (respp != NULL)
		*respp = NULL;
	if (r->body != NULL &&
	    (body = json_dumps(r->body, JSON_COMPACT)) == NULL)
		return -ENOMEM;
	for (;;) {
		struct buf b = { 0 };
		uint64_t now = now_ms();
		int left = now < end ? (int)(end - now) : 0;
		int wait;

		status = 0;
		rv = attempt(a, r, body, left < r->timeout_ms ? left : r->timeout_ms,
		    &b, &status, err, errlen);
		if (b.request_id[0] != '\0')
			msc_log_debug("fly: %s %.*s -> %ld (fly-request-id %s)",
			    r->method, (int)strcspn(r->path, "?"), r->path,
			    status, b.request_id);
		if (rv == 0 && status >= 200 && status < 300) {
			if (respp != NULL && b.len > 0 &&
			    (*respp = json_loadb(b.data, b.len, 0, NULL)) ==
				NULL) {
				snprintf(err, errlen, "Fly API %s %.*s: malformed "
						      "JSON reply", r->method,
				    (int)strcspn(r->path, "?"), r->path);
				rv = -EPROTO;
			}
			free(b.data);
			break;
		}
		if (rv == 0) {
			describe(r, status, &b, err, errlen);
			rv = errno_for(status, &b);
		}
		wait = 0;
		if (status == 429 && n429 < FLY_MAX_429)
			wait = backoff_ms(n429++, b.retry_after_s);
		else if (r->retry_5xx && n5xx < FLY_MAX_5XX &&
		    (status >= 500 || rv == -ECONNREFUSED))
			wait = backoff_ms(n5xx++, b.retry_after_s);
		free(b.data);
		if (wait == 0 || now_ms() + (uint64_t)wait + 50 >= end)
			break;
		msc_log_debug("fly: %s: retrying in %d ms", err, wait);
		usleep((useconds_t)wait * 1000);
	}
	if (statusp != NULL)
		*statusp = status;
	free(body);
	return rv;
}
