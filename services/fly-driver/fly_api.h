/*
 * fly_api.h - the Fly Machines REST API over libcurl: JSON requests with
 * the right Authorization header, a deadline on every call, bounded
 * retries with jittered back-off on 429 and 5xx.
 *
 * Thread-safe: each call uses its own CURL easy handle and struct fly_api
 * is read-only after fly_api_new(). Calls block; run them on a pool.
 *
 * Errors: 0, or a negative errno: -ENOENT (404), -EACCES (401/403),
 * -EEXIST (409, or 422 with status name_taken), -EINVAL (400/422),
 * -ETIMEDOUT (408 or our deadline), -ECONNREFUSED (API unreachable),
 * -EAGAIN (429 after every retry), -EIO (5xx or another status), -EPROTO
 * (malformed JSON). `err` then holds one line naming the call, the status
 * and Fly's {"error"} text. The token never appears in `err` or in logs.
 */
#ifndef FLY_API_H
#define FLY_API_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The public Machines API; --fly-api-url and FLY_API_HOSTNAME override. */
#define FLY_API_DEFAULT_URL "https://api.machines.dev"

struct fly_api;

/*
 * Makes a handle for base URL `base` (e.g. "http://127.0.0.1:4280"; a
 * trailing slash is dropped) and `token` (copied; "Bearer "/"FlyV1 "
 * prefixes are stripped). Does no I/O. Free with fly_api_free().
 */
int fly_api_new(const char *base, const char *token, struct fly_api **ap);
void fly_api_free(struct fly_api *a);

/* The base URL (borrowed). */
const char *fly_api_base(const struct fly_api *a);

/*
 * Writes the Authorization header for `token` into buf: "FlyV1 <tokens>"
 * when any comma-separated part is a macaroon (fm1r_, fm1a_, fm2_),
 * otherwise "Bearer <token>"; a pasted scheme is stripped first (the
 * flyctl rule). Returns 0, or -ENOSPC / -EINVAL for an empty token.
 */
int fly_auth_header(const char *token, char *buf, size_t len);

/* Options of one call. */
struct fly_req {
	const char *method;    /* GET, POST, DELETE */
	const char *path;      /* "/v1/apps/..." with the query, escaped */
	json_t *body;          /* borrowed; NULL: no body */
	int timeout_ms;        /* per attempt */
	int deadline_ms;       /* all attempts and back-off; 0: 4 x timeout */
	bool retry_5xx;        /* false for calls that must not run twice */
};

/*
 * Sends one request and parses the JSON reply into *respp (a new
 * reference, or NULL for an empty body) when the status is 2xx.
 * *statusp (may be NULL) receives the last HTTP status (0 when none).
 */
int fly_api_call(struct fly_api *a, const struct fly_req *r, long *statusp,
    json_t **respp, char *err, size_t errlen);

/* Percent-escapes s for a path segment or query value into buf. */
int fly_api_escape(const char *s, char *buf, size_t len);

#endif /* FLY_API_H */
