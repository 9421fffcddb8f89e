/*
 * msc_http.c - one JSON request with libcurl: attempts under a deadline,
 * bounded retries on 429 and 5xx, and the provider's error message.
 */
#include "msc_http.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_random.h"

#define MAX_BODY (64u << 20)
#define MAX_429 8
#define MAX_5XX 3
#define MAX_HDR 512

/* One reply: the body, and the headers we look at. */
struct reply {
	char *data;
	size_t len;
	int retry_after_s;
	const char *capture;   /* borrowed from the request */
	char hdr[MAX_HDR];
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
msc_http_init(void)
{
	int rv;

	if ((rv = pthread_once(&curl_once, curl_init_once)) != 0)
		return -rv;
	return curl_rc;
}

int
msc_http_curl_errno(CURLcode cc, int other)
{
	switch (cc) {
	case CURLE_OK:
		return 0;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_ABORTED_BY_CALLBACK:
		return -ECANCELED;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return other;
	}
}

int
msc_http_escape(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	if (len == 0)
		return -ENOSPC;
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

int
msc_http_backoff_ms(int attempt, int retry_after_s)
{
	int base, wait;

	if (attempt < 0)
		attempt = 0;
	base = 250 << (attempt < 5 ? attempt : 5);
	if (base > 5000)
		base = 5000;
	wait = base / 2 + (int)msc_random_uniform((uint32_t)(base / 2 + 1));
	if (retry_after_s > 0) {
		int ra = retry_after_s > 10 ? 10000 : retry_after_s * 1000;

		if (wait < ra)
			wait = ra;
	}
	return wait;
}

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct reply *b = arg;
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
	struct reply *b = arg;
	size_t len = sz * n, cl;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0)
		b->retry_after_s = atoi(p + 12);
	else if (b->capture != NULL && (cl = strlen(b->capture)) < len &&
	    strncasecmp(p, b->capture, cl) == 0 && p[cl] == ':') {
		size_t i = cl + 1, v;

		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		for (v = 0; i + v < len && p[i + v] != '\r' &&
		    p[i + v] != '\n'; v++)
			;
		snprintf(b->hdr, sizeof(b->hdr), "%.*s", (int)v, p + i);
	}
	return len;
}

/* The common status -> errno mapping. */
static int
errno_for(long status)
{
	switch (status) {
	case 400:
	case 422:
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
	case 429:
		return -EAGAIN;
	default:
		return -EIO;
	}
}

/*
 * Writes "<what>: HTTP <status>[: <message>]" into err, on one line, and
 * returns the errno for the status. For a status whose errno agents see
 * the text of (-EINVAL, -ENOENT, -EEXIST: the driver passes them on as
 * is), the provider's message is only logged: it may hold anything.
 */
static int
describe(const struct msc_http_req *r, long status, const struct reply *b,
    char *err, size_t errlen)
{
	json_t *j = b->data ? json_loadb(b->data, b->len, 0, NULL) : NULL;
	const char *msg = NULL;
	int rv = 0;

	if (r->err_key != NULL)
		msg = json_string_value(json_object_get(j, r->err_key));
	if (msg == NULL && j == NULL && b->len > 0 && b->len < 300)
		msg = b->data;
	snprintf(err, errlen, "%s: HTTP %ld%s%s", r->what, status,
	    msg ? ": " : "", msg ? msg : "");
	for (char *p = err; *p != '\0'; p++)
		if ((unsigned char)*p < ' ')
			*p = ' ';
	if (r->status_errno != NULL)
		rv = r->status_errno(status, j, b->data);
	json_decref(j);
	if (rv == 0)
		rv = errno_for(status);
	if (msg != NULL && (rv == -EINVAL || rv == -ENOENT || rv == -EEXIST)) {
		msc_log_warn("%s", err);
		snprintf(err, errlen, "%s: HTTP %ld", r->what, status);
	}
	return rv;
}

/* The request's headers and ours (a new list), or NULL without memory. */
static struct curl_slist *
headers(const struct msc_http_req *r, bool has_body)
{
	const char *ours[] = { "Accept: application/json", "Expect:",
		has_body ? "Content-Type: application/json" : NULL };
	struct curl_slist *h = NULL, *t;
	const struct curl_slist *e;

	for (e = r->hdrs; e != NULL; e = e->next) {
		if ((t = curl_slist_append(h, e->data)) == NULL)
			goto fail;
		h = t;
	}
	for (size_t i = 0; i < 3 && ours[i] != NULL; i++) {
		if ((t = curl_slist_append(h, ours[i])) == NULL)
			goto fail;
		h = t;
	}
	return h;
fail:
	curl_slist_free_all(h);
	return NULL;
}

/* One attempt. Returns 0 with *statusp set, or a curl-level error. */
static int
attempt(const struct msc_http_req *r, const char *body, int timeout_ms,
    struct reply *b, long *statusp, char *err, size_t errlen)
{
	struct curl_slist *h;
	CURL *c;
	CURLcode cc;
	int rv = 0;

	if ((h = headers(r, body != NULL)) == NULL ||
	    (c = curl_easy_init()) == NULL) {
		curl_slist_free_all(h);
		snprintf(err, errlen, "%s: out of memory", r->what);
		return -ENOMEM;
	}
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
		rv = msc_http_curl_errno(cc, -ECONNREFUSED);
		snprintf(err, errlen, "%s: cannot reach %s: %s", r->what,
		    r->peer != NULL ? r->peer : "the server",
		    curl_easy_strerror(cc));
	}
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	return rv;
}

int
msc_http_call(const struct msc_http_req *r, long *statusp, json_t **respp,
    char *hdr, size_t hdrlen, char *err, size_t errlen)
{
	char *body = NULL;
	int deadline = r->deadline_ms > 0 ? r->deadline_ms : 4 * r->timeout_ms;
	uint64_t end = msc_now_ms() + (uint64_t)deadline;
	int n429 = 0, n5xx = 0, rv;
	long status = 0;

	if (statusp != NULL)
		*statusp = 0;
	if (respp != NULL)
		*respp = NULL;
	if (hdr != NULL && hdrlen > 0)
		hdr[0] = '\0';
	if (r->timeout_ms <= 0) {
		snprintf(err, errlen, "%s: no timeout given", r->what);
		return -EINVAL;
	}
	if ((rv = msc_http_init()) != 0 || (r->body != NULL &&
	    (body = json_dumps(r->body, JSON_COMPACT)) == NULL)) {
		snprintf(err, errlen, "%s: out of memory", r->what);
		return rv != 0 ? rv : -ENOMEM;
	}
	for (;;) {
		struct reply b = { .capture = r->capture };
		uint64_t now = msc_now_ms();
		int left = now < end ? (int)(end - now) : 1;
		int wait = 0;

		if (left > r->timeout_ms)
			left = r->timeout_ms;
		status = 0;
		rv = attempt(r, body, left, &b, &status, err, errlen);
		if (hdr != NULL && hdrlen > 0)
			snprintf(hdr, hdrlen, "%s", b.hdr);
		if (rv == 0 && status >= 200 && status < 300) {
			if (respp != NULL && b.len > 0 &&
			    (*respp = json_loadb(b.data, b.len, 0, NULL)) ==
				NULL) {
				snprintf(err, errlen, "%s: malformed JSON "
				    "reply", r->what);
				rv = -EPROTO;
			}
			free(b.data);
			break;
		}
		if (rv == 0)
			rv = describe(r, status, &b, err, errlen);
		if (status == 429 && n429 < MAX_429)
			wait = msc_http_backoff_ms(n429++, b.retry_after_s);
		else if (r->retry_5xx && n5xx < MAX_5XX &&
		    (status >= 500 || rv == -ECONNREFUSED))
			wait = msc_http_backoff_ms(n5xx++, b.retry_after_s);
		free(b.data);
		if (wait == 0 || msc_now_ms() + (uint64_t)wait + 50 >= end)
			break;
		msc_log_debug("http: %s: retrying in %d ms", err, wait);
		usleep((useconds_t)wait * 1000);
	}
	if (statusp != NULL)
		*statusp = status;
	free(body);
	return rv;
}
