/*
 * fly_computers.c - computers as Fly Machines: create (wait for started,
 * then a readiness exec), find again by metadata, restart, factory
 * reset, stop, delete and list. All blocking, run on the worker pool.
 */
#include "fly_driver_int.h"
#include "fly_lease.h"
#include "msc_driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_principal.h"

#define T_CREATE 60000
#define T_START_TOTAL 180000    /* a Machine may take a while to boot */
#define T_OP 30000
#define T_READY 20

static int
wait_started(struct fly_driver *d, const char *mid, char *err,
    size_t errlen)
{
	uint64_t end = msc_now_ms() + T_START_TOTAL;
	char path[256];
	int rv = -ETIMEDOUT;

	while (msc_now_ms() < end) {
		long left = (long)((end - msc_now_ms()) / 1000);
		long t = left < 1 ? 1 : left > 60 ? 60 : left;

		snprintf(path, sizeof(path), "/v1/apps/%s/machines/%s/wait?"
					     "state=started&timeout=%ld",
		    d->app, mid, t);
		rv = fly_call(d, "GET", path, NULL, (int)t * 1000 + 10000, true,
		    NULL, NULL, err, errlen);
		if (rv != -ETIMEDOUT)
			break;
	}
	if (rv == -ETIMEDOUT)
		snprintf(err, errlen, "Fly Machine %s did not start within %d s.",
		    mid, T_START_TOTAL / 1000);
	return rv;
}

/* Destroys a Machine (force); a missing one counts as destroyed. */
static int
destroy(struct fly_driver *d, const char *mid, char *err, size_t errlen)
{
	char path[256];
	int rv;

	snprintf(path, sizeof(path), "/v1/apps/%s/machines/%s?force=true&"
				     "kill=true", d->app, mid);
	rv = fly_call(d, "DELETE", path, NULL, T_OP, true, NULL, NULL, err,
	    errlen);
	return rv == -ENOENT ? 0 : rv;
}

static int
readiness(struct fly_driver *d, const char *mid, char *err, size_t errlen)
{
	const char *cmd = "echo kilntainers-ready";
	json_t *argv = fly_conv_exec_argv(d->cfg->shell, cmd, NULL, 0, NULL,
	    NULL, 0);
	uint64_t end = msc_now_ms() + 30000;
	char *out = NULL, *eout = NULL;
	size_t olen, elen;
	int code = 0, rv;

	if (argv == NULL)
		return -ENOMEM;
	/* Right after "started" the exec agent may need a moment. */
	for (;;) {
		json_t *reply = NULL;

		rv = fly_exec_once(d, mid, argv, NULL, 0, T_READY, &reply, err,
		    errlen);
		if (rv == 0)
			rv = fly_conv_exec_reply(reply, &out, &olen, &eout,
			    &elen, &code);
		json_decref(reply);
		if (rv == 0 || rv == -EACCES || msc_now_ms() > end)
			break;
		usleep(500 * 1000);
	}
	json_decref(argv);
	if (rv == 0 && (code != 0 || strstr(out, "kilntainers-ready") == NULL)) {
		snprintf(err, errlen, "Fly Machine %s started but readiness "
				      "failed: %s", mid, elen > 0 ? eout : out);
		rv = -EIO;
	} else if (rv != 0) {
		char detail[FLY_ERRLEN];

		snprintf(detail, sizeof(detail), "%s", err);
		snprintf(err, errlen, "Fly Machine %s started but readiness "
				      "failed: %s", mid, detail);
	}
	free(out);
	free(eout);
	return rv;
}

int
fly_create(struct fly_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return fly_create_owned(d, id, temporary, "", out, err, errlen);
}

int
fly_create_owned(struct fly_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen)
{
	char path[256], ignore[FLY_ERRLEN];
	json_t *body, *m = NULL;
	const char *mid;
	int rv;

	rv = fly_find(d, id, &m, err, errlen);
	json_decref(m);
	m = NULL;
	if (rv == 0) {
		snprintf(err, errlen, "Computer '%s' already exists in Fly.", id);
		return -EEXIST;
	}
	if (rv != -ENOENT)
		return rv;
	if ((body = fly_conv_machine_body(&d->guest, id, temporary)) == NULL)
		return -ENOMEM;
	if (principal[0] != '\0' &&     /* a principal of --tokens-file */
	    json_object_set_new(json_object_get(json_object_get(body,
		"config"), "metadata"), FLY_META_PRINCIPAL,
		json_string(principal)) != 0) {
		json_decref(body);
		return -ENOMEM;
	}
	if (fly_lease_body(d, body, temporary) != 0) {
		json_decref(body);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "/v1/apps/%s/machines", d->app);
	rv = fly_call(d, "POST", path, body, T_CREATE, false, NULL, &m, err,
	    errlen);
	json_decref(body);
	if (rv == -EEXIST)
		snprintf(err, errlen, "Computer '%s' already exists in Fly.", id);
	if (rv != 0)
		return rv;
	if ((mid = json_string_value(json_object_get(m, "id"))) == NULL) {
		json_decref(m);
		snprintf(err, errlen, "Fly API POST %s: the reply has no "
				      "Machine id", path);
		return -EPROTO;
	}
	if ((rv = wait_started(d, mid, err, errlen)) != 0 ||
	    (rv = readiness(d, mid, err, errlen)) != 0) {
		/* Whatever we made goes, permanent ones included. */
		if (destroy(d, mid, ignore, sizeof(ignore)) != 0)
			msc_log_warn("fly: cannot destroy machine %s: %s", mid,
			    ignore);
		json_decref(m);
		return rv == -ETIMEDOUT ? -EIO : rv;
	}
	json_object_set_new(m, "state", json_string("started"));
	fly_remember(d, id, mid, temporary);
	rv = fly_conv_computer(m, d->guest.image, out);
	msc_log_info("created %s computer %s (machine %s)",
	    temporary ? "temporary" : "permanent", id, mid);
	json_decref(m);
	return rv;
}

static int
start_machine(struct fly_driver *d, const char *mid, char *err,
    size_t errlen)
{
	char path[256];

	snprintf(path, sizeof(path), "/v1/apps/%s/machines/%s/start", d->app,
	    mid);
	return fly_call(d, "POST", path, NULL, T_OP, true, NULL, NULL, err,
	    errlen);
}

int
fly_attach(struct fly_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	json_t *m = NULL;
	const char *mid, *state;
	int rv;

	if ((rv = fly_find(d, id, &m, err, errlen)) != 0)
		return rv;
	mid = json_string_value(json_object_get(m, "id"));
	state = json_string_value(json_object_get(m, "state"));
	if (state == NULL || (strcmp(state, "started") != 0 &&
				 strcmp(state, "starting") != 0)) {
		if ((rv = start_machine(d, mid, err, errlen)) != 0)
			goto done;
		msc_log_info("started %s computer %s (machine %s)",
		    state ? state : "stopped", id, mid);
	}
	if ((rv = wait_started(d, mid, err, errlen)) != 0 ||
	    (rv = readiness(d, mid, err, errlen)) != 0)
		goto done;
	json_object_set_new(m, "state", json_string("started"));
	rv = fly_conv_computer(m, d->guest.image, out);
done:
	json_decref(m);
	return rv;
}

int
fly_restart(struct fly_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	char path[256];
	json_t *m = NULL;
	int rv;

	if ((rv = fly_find(d, id, &m, err, errlen)) != 0)
		return rv;
	snprintf(path, sizeof(path), "/v1/apps/%s/machines/%s/restart?"
				     "timeout=10s", d->app,
	    json_string_value(json_object_get(m, "id")));
	rv = fly_call(d, "POST", path, NULL, T_OP * 2, true, NULL, NULL, err,
	    errlen);
	json_decref(m);
	if (rv != 0)
		return rv;
	msc_log_info("restarted computer %s", id);
	return fly_attach(d, id, out, err, errlen);
}

int
fly_stop(struct fly_driver *d, const char *id, bool remove, char *err,
    size_t errlen)
{
	char path[256];
	json_t *m = NULL;
	const char *tmp, *mid;
	int rv;

	/* Stopping what is gone is done; deleting it is an error. */
	if ((rv = fly_find(d, id, &m, err, errlen)) != 0)
		return rv == -ENOENT && !remove ? 0 : rv;
	tmp = fly_conv_meta(m, FLY_META_TEMPORARY);
	mid = json_string_value(json_object_get(m, "id"));
	if (remove || tmp == NULL || strcmp(tmp, "false") != 0) {
		rv = destroy(d, mid, err, errlen);
		fly_forget(d, id);
		if (rv == 0)
			msc_log_info("destroyed computer %s (machine %s)", id,
			    mid);
	} else {
		snprintf(path, sizeof(path), "/v1/apps/%s/machines/%s/stop",
		    d->app, mid);
		rv = fly_call(d, "POST", path, NULL, T_OP, true, NULL, NULL,
		    err, errlen);
	}
	json_decref(m);
	return rv;
}

int
fly_owner(struct fly_driver *d, const char *id, char *tag, size_t taglen,
    char *err, size_t errlen)
{
	json_t *m = NULL;
	const char *p;
	int rv;

	if ((rv = fly_find(d, id, &m, err, errlen)) != 0)
		return rv;
	p = fly_conv_meta(m, FLY_META_PRINCIPAL);
	snprintf(tag, taglen, "%s", p != NULL ? p : "");
	json_decref(m);
	return 0;
}

int
fly_reset(struct fly_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];
	const char *tmp, *p;
	json_t *m = NULL;
	bool temporary;
	int rv;

	if ((rv = fly_find(d, id, &m, err, errlen)) != 0)
		return rv;
	tmp = fly_conv_meta(m, FLY_META_TEMPORARY);
	temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	/* The new Machine is the same principal's. */
	p = fly_conv_meta(m, FLY_META_PRINCIPAL);
	snprintf(principal, sizeof(principal), "%s", p != NULL ? p : "");
	rv = destroy(d, json_string_value(json_object_get(m, "id")), err,
	    errlen);
	json_decref(m);
	fly_forget(d, id);
	if (rv != 0)
		return rv;
	/* A destroyed Machine may keep its name a moment: retry. */
	for (int i = 0; i < 30; i++) {
		rv = fly_create_owned(d, id, temporary, principal, out, err,
		    errlen);
		if (rv != -EEXIST)
			break;
		msc_computer_fini(out);
		usleep(500 * 1000);
	}
	if (rv == 0)
		msc_log_info("factory reset computer %s", id);
	return rv;
}

int
fly_list(struct fly_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen)
{
	char path[256];
	json_t *arr = NULL, *m;
	size_t i;
	int rv;

	if ((rv = fly_setup(d, err, errlen)) != 0)
		return rv;
	snprintf(path, sizeof(path), "/v1/apps/%s/machines?include_deleted="
				     "false&metadata." FLY_META_OWNED "=true",
	    d->app);
	if ((rv = fly_call(d, "GET", path, NULL, T_OP, true, NULL, &arr, err,
		 errlen)) != 0)
		return rv;
	if (!json_is_array(arr)) {
		json_decref(arr);
		snprintf(err, errlen, "Fly API GET /v1/apps/%s/machines: "
				      "expected a JSON array", d->app);
		return -EPROTO;
	}
	out->computers = calloc(json_array_size(arr) + 1,
	    sizeof(*out->computers));
	if (out->computers == NULL) {
		json_decref(arr);
		return -ENOMEM;
	}
	json_array_foreach (arr, i, m) {
		Msc__V1__Computer *c;

		if (fly_conv_meta(m, FLY_META_ID) == NULL ||
		    fly_conv_state_gone(json_string_value(json_object_get(m,
			"state"))) ||
		    (c = malloc(sizeof(*c))) == NULL)
			continue;
		*c = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
		out->computers[out->n_computers++] = c;
		if ((rv = fly_conv_computer(m, d->guest.image, c)) != 0)
			break;
	}
	json_decref(arr);
	return rv;
}
