/*
 * e2b_http.h - one HTTP request to E2B with libcurl: the control-plane
 * REST API (X-API-Key) and envd's unary Connect calls. A deadline on
 * every call, bounded retries with jittered back-off on 429 and 5xx.
 *
 * Thread-safe: each call uses its own easy handle. Calls block.
 *
 * Errors: 0, or a negative errno: -EINVAL (400), -EACCES (401/403),
 * -ENOENT (404), -EEXIST (409), -EAGAIN (429 after every retry),
 * -ETIMEDOUT (our deadline), -ECONNREFUSED (unreachable), -EIO (5xx or
 * another status), -EPROTO (malformed JSON). `err` then names the call,
 * the status and E2B's message. Header values (keys, tokens) never
 * appear in `err` or in logs.
 */
#ifndef E2B_HTTP_H
#define E2B_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

struct e2b_req {
	const char *method;            /* GET, POST, DELETE */
	const char *url;               /* full URL, query escaped */
	const char *what;              /* "E2B API POST /sandboxes" */
	const struct curl_slist *hdrs; /* extra headers, borrowed */
	json_t *body;                  /* borrowed; NULL: none */
	int timeout_ms;                /* per attempt */
	int deadline_ms;               /* all attempts; 0: 3 x timeout */
	bool retry_5xx;                /* false when it must not run twice */
};

/* curl_global_init, once. 0 or -ENOMEM. */
int e2b_http_init(void);

/*
 * Sends the request; on 2xx parses a JSON reply into *respp (NULL for an
 * empty body). *statusp gets the last HTTP status (0 when none).
 * next_token (may be NULL) receives the X-Next-Token header.
 */
int e2b_http_call(const struct e2b_req *r, long *statusp, json_t **respp,
    char *next_token, size_t ntlen, char *err, size_t errlen);

/* Jittered exponential back-off for attempt n (ms). */
int e2b_http_backoff_ms(int attempt, int retry_after_s);

/* Percent-escapes s (RFC 3986 unreserved kept) into buf. */
int e2b_http_escape(const char *s, char *buf, size_t len);

uint64_t e2b_now_ms(void);

#endif /* E2B_HTTP_H */
