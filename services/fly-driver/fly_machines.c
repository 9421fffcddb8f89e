/*
 * fly_machines.c - Machine helpers shared by the operations: one API
 * call with the app's credentials, finding a computer's Machine by
 * metadata, the computer id -> Machine id cache, one exec, and the
 * "died" check.
 */
#include "fly_driver_int.h"
#include "fly_lease.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_driver.h"
#include "msc_lease_renewer.h"
#include "msc_log.h"

#define T_GET 20000

int
fly_call(struct fly_driver *d, const char *method, const char *path,
    json_t *body, int timeout_ms, bool retry, long *statusp, json_t **respp,
    char *err, size_t errlen)
{
	struct fly_req r = { .method = method, .path = path, .body = body,
		.timeout_ms = timeout_ms, .retry_5xx = retry };
	int rv;

	if ((rv = fly_setup(d, err, errlen)) != 0)
		return rv;
	/* 429s and 5xx are retried within twice the attempt's time. */
	r.deadline_ms = timeout_ms * 2 + 20000;
	return fly_api_call(__atomic_load_n(&d->api, __ATOMIC_ACQUIRE), &r,
	    statusp, respp, err, errlen);
}

void
fly_remember(struct fly_driver *d, const char *id, const char *mid,
    bool temporary)
{
	struct fly_known k = { .temporary = temporary };

	snprintf(k.machine_id, sizeof(k.machine_id), "%s", mid);
	/* A cache: a computer not remembered is looked up again. */
	if (msc_known_put(d->known, id, &k) != 0)
		msc_log_debug("fly: cannot remember computer %s", id);
	if (temporary)
		(void)msc_lease_renewer_hold(d->lease, id, mid);
}

static void
remember(struct fly_driver *d, const char *id, json_t *m)
{
	const char *mid = json_string_value(json_object_get(m, "id"));
	const char *tmp = fly_conv_meta(m, FLY_META_TEMPORARY);

	if (mid != NULL)
		fly_remember(d, id, mid, tmp == NULL || strcmp(tmp, "false"));
}

void
fly_forget(struct fly_driver *d, const char *id)
{
	msc_known_forget(d->known, id);
	msc_lease_renewer_drop(d->lease, id);
}

int
fly_find(struct fly_driver *d, const char *id, json_t **mp, char *err,
    size_t errlen)
{
	char path[512], esc[256];
	json_t *arr = NULL, *m, *hit = NULL;
	size_t i;
	int rv;

	if ((rv = fly_setup(d, err, errlen)) != 0)
		return rv;
	if (msc_http_escape(id, esc, sizeof(esc)) != 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/v1/apps/%s/machines?include_deleted="
				     "false&metadata." FLY_META_ID "=%s",
	    d->app, esc);
	if ((rv = fly_call(d, "GET", path, NULL, T_GET, true, NULL, &arr, err,
		 errlen)) != 0)
		return rv;
	if (!json_is_array(arr)) {
		json_decref(arr);
		snprintf(err, errlen, "Fly API GET /v1/apps/%s/machines: "
				      "expected a JSON array", d->app);
		return -EPROTO;
	}
	/* Filter again: never trust a filter to have been applied. */
	json_array_foreach (arr, i, m) {
		const char *mid = fly_conv_meta(m, FLY_META_ID);
		const char *state = json_string_value(json_object_get(m,
		    "state"));

		if (mid != NULL && strcmp(mid, id) == 0 &&
		    !fly_conv_state_gone(state)) {
			hit = m;
			break;
		}
	}
	if (hit == NULL) {
		json_decref(arr);
		fly_forget(d, id);
		snprintf(err, errlen, "Computer '%s' was not found.", id);
		return -ENOENT;
	}
	json_incref(hit);
	json_decref(arr);
	remember(d, id, hit);
	*mp = hit;
	return 0;
}

int
fly_machine_get(struct fly_driver *d, const char *mid, json_t **mp,
    char *err, size_t errlen)
{
	char path[256];

	snprintf(path, sizeof(path), "/v1/apps/%s/machines/%s", d->app, mid);
	return fly_call(d, "GET", path, NULL, T_GET, true, NULL, mp, err,
	    errlen);
}

int
fly_machine_id(struct fly_driver *d, const char *id, struct fly_known *k,
    char *err, size_t errlen)
{
	json_t *m = NULL;
	int rv;

	if (msc_known_get(d->known, id, k))
		return fly_setup(d, err, errlen);
	if ((rv = fly_find(d, id, &m, err, errlen)) != 0)
		return rv;
	snprintf(k->machine_id, sizeof(k->machine_id), "%s",
	    json_string_value(json_object_get(m, "id")));
	k->temporary = fly_conv_meta(m, FLY_META_TEMPORARY) == NULL ||
	    strcmp(fly_conv_meta(m, FLY_META_TEMPORARY), "false") != 0;
	json_decref(m);
	return 0;
}

int
fly_exec_once(struct fly_driver *d, const char *mid, json_t *argv,
    const char *stdin_data, size_t stdin_len, unsigned timeout_s,
    json_t **replyp, char *err, size_t errlen)
{
	char path[256];
	json_t *body;
	int rv;

	snprintf(path, sizeof(path), "/v1/apps/%s/machines/%s/exec", d->app,
	    mid);
	body = json_pack("{s:O, s:I}", "command", argv, "timeout",
	    (json_int_t)timeout_s);
	if (body == NULL)
		return -ENOMEM;
	if (stdin_data != NULL) {
		json_t *s = json_stringn(stdin_data, stdin_len);

		if (s == NULL) {
			json_decref(body);
			snprintf(err, errlen, "stdin must be UTF-8 text on the "
					      "fly backend.");
			return -EINVAL;
		}
		json_object_set_new(body, "stdin", s);
	}
	/* An exec must never run twice: no retry on 5xx, only on 429. */
	rv = fly_call(d, "POST", path, body, (int)timeout_s * 1000 + 15000,
	    false, NULL, replyp, err, errlen);
	json_decref(body);
	return rv;
}

int
fly_died(struct fly_driver *d, const char *id, const char *mid, char *err,
    size_t errlen)
{
	char ignore[FLY_ERRLEN];
	json_t *m = NULL;
	const char *state;
	int rv = fly_machine_get(d, mid, &m, ignore, sizeof(ignore));
	bool dead;

	state = json_string_value(json_object_get(m, "state"));
	dead = rv == -ENOENT ||
	    (rv == 0 && (state == NULL || strcmp(state, "started") != 0));
	json_decref(m);
	if (!dead)
		return 0;
	fly_forget(d, id);
	rv = msc_driver_died(err, errlen, id, "its Fly Machine %s stopped or "
	    "was destroyed. The next call starts it again.", mid);
	msc_log_warn("fly: computer %s (machine %s) died", id, mid);
	return rv;
}
