/*
 * fly_api.h - the Fly Machines REST API: the Authorization header for a
 * token, and one JSON call over msc_http (deadline, bounded retries with
 * jittered back-off on 429 and 5xx).
 *
 * Thread-safe: struct fly_api is read-only after fly_api_new(). Calls
 * block; run them on a pool.
 *
 * Errors: those of msc_http_call(), with Fly's 422 {"status":
 * "name_taken"} (or an "already ..." message) as -EEXIST. `err` then
 * holds one line naming the call, the status and Fly's {"error"} text.
 * The token never appears in `err` or in logs.
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

#endif /* FLY_API_H */
