/*
 * e2b_api.c - one call to E2B's control plane (REST, under the API key,
 * with a deadline): the lowest of the E2B files, which the sandboxes,
 * the leases, the commands and the snapshots call.
 */
#include "e2b_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int
e2b_api(struct e2b_driver *d, const char *method, const char *path,
    json_t *body, int timeout_ms, bool retry, json_t **respp, char *next,
    size_t nextlen, char *err, size_t errlen)
{
	struct curl_slist h = { .data = d->key_hdr, .next = NULL };
	char url[4096], what[256];
	struct msc_http_req r = { .method = method, .url = url,
		.what = what, .peer = "E2B", .hdrs = &h, .body = body,
		.timeout_ms = timeout_ms, .deadline_ms = timeout_ms * 2 + 20000,
		.retry_5xx = retry, .err_key = "message",
		.capture = "X-Next-Token" };
	int rv;

	if (d->key_hdr == NULL) {
		snprintf(err, errlen, "E2B backend requires an API key: pass "
				      "--e2b-api-key or set E2B_API_KEY.");
		return -EACCES;
	}
	snprintf(url, sizeof(url), "%s%s", d->api_url, path);
	snprintf(what, sizeof(what), "E2B API %s %.*s", method,
	    (int)strcspn(path, "?"), path);
	rv = msc_http_call(&r, NULL, respp, next, nextlen, err, errlen);
	if (rv == -EACCES) {
		char detail[E2B_ERRLEN];

		snprintf(detail, sizeof(detail), "%s", err);
		snprintf(err, errlen, "E2B validation failed: %s (check "
				      "--e2b-api-key or E2B_API_KEY)", detail);
	}
	return rv;
}
