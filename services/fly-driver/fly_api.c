/*
 * fly_api.c - the Fly Machines API over msc_http: the base URL, the
 * Authorization header, and Fly's error conventions.
 */
#include "fly_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "msc_http.h"
#include "msc_log.h"

struct fly_api {
	char *base;
	char *auth;      /* "Authorization: ..." header line */
	char *peer;      /* "the Fly Machines API at <base>" */
};

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
	struct fly_api *a = NULL;
	char hdr[8192];
	size_t n;
	int rv;

	if ((rv = fly_auth_header(token, hdr, sizeof(hdr))) != 0)
		goto out;
	rv = -ENOMEM;
	if ((a = calloc(1, sizeof(*a))) == NULL ||
	    (a->base = strdup(base)) == NULL)
		goto out;
	n = strlen(a->base);
	while (n > 0 && a->base[n - 1] == '/')
		a->base[--n] = '\0';
	if (asprintf(&a->auth, "Authorization: %s", hdr) < 0)
		a->auth = NULL;
	else if (asprintf(&a->peer, "the Fly Machines API at %s",
	    a->base) < 0)
		a->peer = NULL;
	else {
		*ap = a;
		a = NULL;
		rv = 0;
	}
out:
	explicit_bzero(hdr, sizeof(hdr));
	fly_api_free(a);
	return rv;
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
	free(a->peer);
	free(a);
}

/* Fly's 422 for a name in use: {"status": "name_taken"}, or "already". */
static int
fly_status_errno(long status, const json_t *j, const char *text)
{
	const char *st = json_string_value(json_object_get(j, "status"));

	if (status != 422)
		return 0;
	if ((st != NULL && strcmp(st, "name_taken") == 0) ||
	    (text != NULL && strstr(text, "already") != NULL))
		return -EEXIST;
	return 0;
}

int
fly_api_call(struct fly_api *a, const struct fly_req *r, long *statusp,
    json_t **respp, char *err, size_t errlen)
{
	struct curl_slist auth = { .data = a->auth, .next = NULL };
	char url[4096], what[256], reqid[64];
	struct msc_http_req h = { .method = r->method, .url = url,
		.what = what, .peer = a->peer, .hdrs = &auth, .body = r->body,
		.timeout_ms = r->timeout_ms, .deadline_ms = r->deadline_ms,
		.retry_5xx = r->retry_5xx, .err_key = "error",
		.capture = "fly-request-id", .status_errno = fly_status_errno };
	long status = 0;
	int rv, n;

	n = snprintf(url, sizeof(url), "%s%s", a->base, r->path);
	snprintf(what, sizeof(what), "Fly API %s %.*s", r->method,
	    (int)strcspn(r->path, "?"), r->path);
	if (n < 0 || (size_t)n >= sizeof(url)) {
		if (statusp != NULL)
			*statusp = 0;
		if (respp != NULL)
			*respp = NULL;
		snprintf(err, errlen, "%s: the URL is too long", what);
		return -EINVAL;
	}
	rv = msc_http_call(&h, &status, respp, reqid, sizeof(reqid), err,
	    errlen);
	if (reqid[0] != '\0')
		msc_log_debug("fly: %s -> %ld (fly-request-id %s)", what,
		    status, reqid);
	if (statusp != NULL)
		*statusp = status;
	return rv;
}
