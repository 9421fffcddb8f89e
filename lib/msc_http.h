/*
 * msc_http.h - one JSON request over HTTP with libcurl, shared by the
 * drivers that speak a provider's REST API: a timeout
 * on every attempt and a deadline over all of them, bounded retries with
 * jittered exponential back-off on 429 and 5xx (Retry-After honoured),
 * the status mapped to a negative errno, and the provider's own error
 * text in a one-line `err`.
 *
 * Thread-safe: each call uses its own CURL easy handle and reads the
 * request only. Calls block; run them on a pool.
 *
 * Errors: 0, or a negative errno: -EINVAL (400/422), -EACCES (401/403),
 * -ENOENT (404), -ETIMEDOUT (408 or our deadline), -EEXIST (409),
 * -EAGAIN (429 after every retry), -ECONNREFUSED (unreachable), -EIO (5xx
 * or another status), -EPROTO (malformed JSON), -ENOMEM. A request's
 * `status_errno` hook may map some statuses differently. `err` then names
 * the call, the status and the provider's message. Header values (keys,
 * tokens) never appear in `err` or in logs.
 */
#ifndef MSC_HTTP_H
#define MSC_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "msc_time.h" /* msc_now_ms, the clock of its deadlines */

/* One call. Every pointer is borrowed for the duration of the call. */
struct msc_http_req {
	const char *method;            /* GET, POST, DELETE */
	const char *url;               /* full URL, query escaped */
	const char *what;              /* "<provider> API POST /sandboxes" */
	const char *peer;              /* as in "cannot reach <peer>" */
	const struct curl_slist *hdrs; /* extra headers, or NULL */
	json_t *body;                  /* NULL: none (POST sends 0 bytes) */
	int timeout_ms;                /* per attempt */
	int deadline_ms;               /* all attempts; 0: 4 x timeout */
	bool retry_5xx;                /* false when it must not run twice */
	const char *err_key;           /* key of the provider's message */
	const char *capture;           /* response header to keep, or NULL */
	/*
	 * Optional: the errno for a non-2xx `status` when the provider gives
	 * it a special meaning, or 0 for the common mapping. `j` is the
	 * parsed reply (NULL when not JSON), `text` the raw reply (NULL when
	 * empty).
	 */
	int (*status_errno)(long status, const json_t *j, const char *text);
};

/*
 * curl_global_init, once for the process; thread-safe. 0 or -ENOMEM.
 * Every user of libcurl in the process calls it (not only msc_http_call).
 */
int msc_http_init(void);

/*
 * The negative errno of a failed libcurl transfer: 0 for CURLE_OK,
 * -ECONNREFUSED when the peer cannot be resolved or reached, -ETIMEDOUT,
 * -ECANCELED (a callback aborted it), -ENOMEM, and `other` for the rest
 * (each caller knows what else means for it: -EIO, -ECONNREFUSED).
 */
int msc_http_curl_errno(CURLcode cc, int other);

/*
 * Sends the request, retrying as described above, and on 2xx parses a
 * JSON reply into *respp (a new reference, or NULL for an empty body;
 * respp may be NULL to ignore the reply). *statusp (may be NULL) gets the
 * last HTTP status (0 when none). When r->capture is set, `hdr` (may be
 * NULL) receives that header's value from the last reply ("" when
 * absent). Blocks for at most the deadline plus one connect timeout.
 */
int msc_http_call(const struct msc_http_req *r, long *statusp,
    json_t **respp, char *hdr, size_t hdrlen, char *err, size_t errlen);

/*
 * Milliseconds to wait before retry number `attempt` (0-based): full
 * jitter in [base/2, base] with base 250 ms doubling up to 5 s, but never
 * sooner than `retry_after_s` (capped at 10 s) when positive.
 */
int msc_http_backoff_ms(int attempt, int retry_after_s);

/*
 * Percent-escapes s (RFC 3986 unreserved characters kept) into buf for a
 * path segment or query value. 0, or -ENOSPC when buf is too small.
 */
int msc_http_escape(const char *s, char *buf, size_t len);

#endif /* MSC_HTTP_H */
