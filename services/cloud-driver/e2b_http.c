/*
 * e2b_http.c - one JSON request to E2B with libcurl: deadline, bounded
 * retries on 429 and 5xx, E2B's {"code","message"} errors.
 */
#include "e2b_http.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "msc_log.h"

#define MAX_BODY (64u << 20)
#define MAX_429 6
#define MAX_5XX 3

struct buf {
	char *data;
	size_t len;
	int retry_after_s;
	char next[512];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_rc;

static void
curl_init_once(void)
{
	curl_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0
								    : -ENOMEM;
}

int
e2b_http_init(void)
{
	int rv;

	if ((rv = pthread_once(&curl_once, curl_init_once)) != 0)
		return -rv;
	return curl_rc;
}

uint64_t
e2b_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
e2b_http_escape(const char *s, char *buf, size_t len)
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

	if (b->len + len > MAX_BODY ||
	    (grown = realloc(b->data, b->len + len + 1)) == NULL)
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
	else if (len > 13 && strncasecmp(p, "X-Next-Token:", 13) == 0) {
		p += 13;
		while (*p == ' ')
			p++;
		snprintf(b->next, sizeof(b->next), "%.*s",
		    (int)strcspn(p, "\r\n"), p);
	}
	return len;
}

int
e2b_http_backoff_ms(int attempt, int retry_after_s)
{
	unsigned r = 0;
	int base = 250 << (attempt < 5 ? attempt : 5);

	if (base > 5000)
		base = 5000;
	if (retry_after_s > 0 && retry_after_s * 1000 > base)
		base = retry_after_s * 1000 > 10000 ? 10000
						   : retry_after_s * 1000;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (unsigned)e2b_now_ms();
	return base / 2 + (int)(r % (unsigned)(base / 2 + 1));
}

static void
describe(const struct e2b_req *r, long status, const struct buf *b,
    char *err, size_t errlen)
{
	json_t *j = b->data ? json_loads(b->data, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(j, "message"));

	if (msg == NULL && b->data != NULL && b->len > 0 && b->len < 300 &&
	    j == NULL)
		msg = b->data;
	snprintf(err, errlen, "%s: HTTP %ld%s%s", r->what, status,
	    msg ? ": " : "", msg ? msg : "");
	json_decref(j);
}

static int
errno_for(long status)
{
	switch (status) {
	case 400:
		return -EINVAL;
	case 401:
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 409:
		return -EEXIST;
	case 429:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

static int
attempt(const struct e2b_req *r, const char *body, int timeout_ms,
    struct buf *b, long *statusp, char *err, size_t errlen)
{
	struct curl_slist *h = NULL;
	const struct curl_slist *e;
	CURL *c;
	CURLcode cc;
	int rv = 0;

	if ((c = curl_easy_init()) == NULL)
		return -ENOMEM;
	for (e = r->hdrs; e != NULL; e = e->next)
		h = curl_slist_append(h, e->data);
	h = curl_slist_append(h, "Accept: application/json");
	if (body != NULL)
		h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_URL, r->url);
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
	} else if (strcmp(r->method, "POST") == 0) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
	}
	cc = curl_easy_perform(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, statusp);
	else {
		rv = cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT
		    : cc == CURLE_OUT_OF_MEMORY	    ? -ENOMEM
						    : -ECONNREFUSED;
		snprintf(err, errlen, "%s: cannot reach E2B: %s", r->what,
		    curl_easy_strerror(cc));
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return rv;
}

int
e2b_http_call(const struct e2b_req *r, long *statusp, json_t **respp,
    char *next_token, size_t ntlen, char *err, size_t errlen)
{
	char *body = NULL;
	int deadline = r->deadline_ms > 0 ? r->deadline_ms : 3 * r->timeout_ms;
	uint64_t end = e2b_now_ms() + (uint64_t)deadline;
	int n429 = 0, n5xx = 0, rv;
	long status = 0;

	if (statusp != NULL)
		*statusp = 0;
	if (respp != NULL)
		*respp = NULL;
	if (next_token != NULL && ntlen > 0)
		next_token[0] = '\0';
	if ((rv = e2b_http_init()) != 0)
		return rv;
	if (r->body != NULL &&
	    (body = json_dumps(r->body, JSON_COMPACT)) == NULL)
		return -ENOMEM;
	for (;;) {
		struct buf b = { 0 };
		uint64_t now = e2b_now_ms();
		int left = now < end ? (int)(end - now) : 1;
		int wait = 0;

		status = 0;
		rv = attempt(r, body, left < r->timeout_ms ? left : r->timeout_ms,
		    &b, &status, err, errlen);
		if (rv == 0 && status >= 200 && status < 300) {
			if (respp != NULL && b.len > 0 &&
			    (*respp = json_loadb(b.data, b.len, 0, NULL)) ==
				NULL) {
				snprintf(err, errlen, "%s: malformed JSON reply",
				    r->what);
				rv = -EPROTO;
			}
			if (next_token != NULL)
				snprintf(next_token, ntlen, "%s", b.next);
			free(b.data);
			break;
		}
		if (rv == 0) {
			describe(r, status, &b, err, errlen);
			rv = errno_for(status);
		}
		if (status == 429 && n429 < MAX_429)
			wait = e2b_http_backoff_ms(n429++, b.retry_after_s);
		else if (r->retry_5xx && n5xx < MAX_5XX &&
		    (status >= 500 || rv == -ECONNREFUSED))
			wait = e2b_http_backoff_ms(n5xx++, b.retry_after_s);
		free(b.data);
		if (wait == 0 || e2b_now_ms() + (uint64_t)wait + 50 >= end)
			break;
		msc_log_debug("e2b: %s: retrying in %d ms", err, wait);
		usleep((useconds_t)wait * 1000);
	}
	if (statusp != NULL)
		*statusp = status;
	free(body);
	return rv;
}
