/*
 * docker_computers.c - computers as containers: create, find again by
 * name and labels, restart, stop, list, and exec, all blocking (run on the
 * driver's worker pool).
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "docker_lease.h"
#include "docker_pool.h"
#include "docker_preview.h"
#include "msc_log.h"
#include "msc_principal.h"

#define T_PING 10000
#define T_PULL 600000
#define T_CREATE 60000
#define T_READY 15000
#define T_OP 30000
#define T_STOP 20000
#define T_HELPER 5000       /* for the helper's socket after a start */

int
dock_validate(struct dock_driver *d, char *err, size_t errlen)
{
	int rv;

	pthread_mutex_lock(&d->mu);
	bool ok = d->validated;
	pthread_mutex_unlock(&d->mu);
	if (ok)
		return 0;
	if ((rv = dock_engine_ping(d->engine, T_PING, err, errlen)) != 0)
		return rv == -ETIMEDOUT ? -ECONNREFUSED : rv;
	if ((rv = dock_runtime_check(d, false, err, errlen)) != 0)
		return rv == -EINVAL ? -EINVAL : -ECONNREFUSED;
	dock_disk_probe(d);
	if ((rv = dock_image_ensure(d->engine, dock_cfg(d->cfg)->image, T_PULL, err,
		 errlen)) != 0)
		return rv == -ENOENT ? -EINVAL : rv;
	pthread_mutex_lock(&d->mu);
	d->validated = true;
	pthread_mutex_unlock(&d->mu);
	return 0;
}

static char *
dup_or_empty(const char *s)
{
	return strdup(s != NULL ? s : "");
}

/* Fills `out` from a container inspect or list row. */
int
dock_fill_computer(struct dock_driver *d, json_t *ctr, const char *id,
    Msc__V1__Computer *out, const char *fallback_image, const char *driver_id)
{
	json_t *labels = json_object_get(ctr, "Labels");
	const char *cid = json_string_value(json_object_get(ctr, "Id"));
	const char *state, *tmp, *image, *owner, *created = NULL;
	char sandbox[13] = "", createdbuf[32];
	json_t *cr;

	if (labels == NULL) {
		json_t *config = json_object_get(ctr, "Config");
		labels = json_object_get(config, "Labels");
	}
	state = json_string_value(json_object_get(ctr, "State"));
	if (state == NULL)
		state = json_string_value(json_object_get(
		    json_object_get(ctr, "State"), "Status"));
	tmp = json_string_value(json_object_get(labels, "kilntainers.temporary"));
	image = json_string_value(json_object_get(labels, "kilntainers.image"));
	owner = json_string_value(json_object_get(labels, MSC_PRINCIPAL_LABEL));
	cr = json_object_get(ctr, "Created");
	if (json_is_string(cr))
		created = json_string_value(cr);
	else if (json_is_integer(cr)) {
		time_t t = (time_t)json_integer_value(cr);
		struct tm tm;

		gmtime_r(&t, &tm);
		strftime(createdbuf, sizeof(createdbuf), "%Y-%m-%dT%H:%M:%SZ",
		    &tm);
		created = createdbuf;
	}
	if (cid != NULL)
		snprintf(sandbox, sizeof(sandbox), "%.12s", cid);
	out->computer_id = dup_or_empty(id);
	out->sandbox_id = dup_or_empty(sandbox);
	out->temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	out->image = dup_or_empty(image != NULL ? image : fallback_image);
	out->state = dup_or_empty(state);
	out->created_at = dup_or_empty(created);
	out->backend = dup_or_empty("docker");
	out->driver = dup_or_empty(driver_id);
	if (d->net_sandbox) {
		struct dock_pol_lists l;
		bool owned;

		dock_pol_current(d, id, cid, labels, &l, &owned);
		out->network = dock_pol_describe(&l);
		if (owned)
			dock_pol_lists_free(&l);
	} else
		out->network = dup_or_empty("none");
	out->disk = dock_disk_text(d);
	out->runtime = dock_runtime_of(d, ctr, labels);
	out->principal = dup_or_empty(owner);
	if (dock_preview_ports(d->preview, id, &out->exposed_ports,
	    &out->n_exposed_ports) != 0)
		return -ENOMEM;
	if (!out->driver || !out->computer_id || !out->sandbox_id || !out->image ||
	    !out->state || !out->created_at || !out->backend || !out->network ||
	    !out->disk || !out->runtime || !out->principal)
		return -ENOMEM;
	return 0;
}

/*
 * The readiness check: `<shell> -c 'echo kilntainers-ready'`, through the
 * helper when the container has one (waiting up to wait_ms for its
 * socket), else through the Engine API. When the helper of a new
 * container never answers, the engine does not see our folders: the fast
 * path is turned off. (One computer's broken helper does not: its
 * sandboxed code may have removed the socket; it falls back alone.)
 */
int
dock_readiness(struct dock_driver *d, const char *name, bool helper, bool created,
    char *err, size_t errlen)
{
	const char *argv[] = { d->cfg->shell, "-c", "echo kilntainers-ready",
		NULL };
	struct dock_exec_req req = { .container = name, .argv = argv,
		.timeout_ms = T_READY, .output_limit = 4096 };
	struct dock_exec_res res = { 0 };
	bool fast;
	int rv;

	if (helper && dock_fx_enabled(d) &&
	    dock_fx_wait(d, name, T_HELPER) != 0 && created) {
		char why[300];

		snprintf(why, sizeof(why), "no exec helper answered in %s "
		    "(can this driver see the engine's processes and files?)",
		    name);
		dock_fx_disable(d, why);
	}
	rv = dock_run(d, name, &req, &res, &fast, err, errlen);
	if (rv == 0 && (res.outcome != DOCK_EXEC_EXITED ||
			   strstr(res.out, "kilntainers-ready") == NULL))
		rv = -EIO;
	dock_exec_res_fini(&res);
	return rv;
}

/* The cold path: create, start, readiness; from `image` (NULL: the
 * configured one, else a snapshot's). */
static int
create_cold(struct dock_driver *d, const char *id, bool temporary,
    const char *image, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	char name[128], cid[65];
	json_t *body = NULL, *classic, *labels, *hc, *ctr = NULL;
	bool fast, reach;
	int rv;

	if ((rv = dock_validate(d, err, errlen)) != 0)
		return rv;
	if ((rv = dock_net_ensure(d, err, errlen)) != 0) {
		char why[DOCK_ERRLEN];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Cannot create computer '%s': the sandbox "
		    "network is not ready: %s", id, why);
		return rv == -ENOENT ? -EIO : rv;
	}
	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
	if ((body = json_deep_copy(d->create_template)) == NULL)
		return -ENOMEM;
	if (image != NULL)
		json_object_set_new(body, "Image", json_string(image));
	labels = json_object_get(body, "Labels");
	if (labels == NULL) {
		labels = json_object();
		json_object_set_new(body, "Labels", labels);
	}
	json_object_set_new(labels, "kilntainers", json_string("true"));
	json_object_set_new(labels, "kilntainers.computer-id", json_string(id));
	json_object_set_new(labels, "kilntainers.temporary",
	    json_string(temporary ? "true" : "false"));
	json_object_set_new(labels, "kilntainers.driver",
	    json_string(d->cfg->driver_id));
	json_object_set_new(labels, "kilntainers.image",
	    json_string(dock_cfg(d->cfg)->image));
	if (principal[0] != '\0')      /* a principal of --tokens-file */
		json_object_set_new(labels, MSC_PRINCIPAL_LABEL,
		    json_string(principal));
	hc = json_object_get(body, "HostConfig");
	json_object_set_new(hc, "AutoRemove", json_boolean(temporary));
	dock_disk_body(d, body);
	dock_runtime_label(body);
	if (d->net_sandbox && (rv = dock_pol_body(d, dock_pol_mode_for(d, id), body,
	    err, errlen)) != 0) {
		json_decref(body);
		return rv;
	}
	if ((classic = json_deep_copy(body)) == NULL) {
		json_decref(body);
		return -ENOMEM;
	}
	/* Under gVisor the helper runs but its socket is out of reach. */
	fast = dock_fx_body(d, body) == 0;
	reach = fast && !d->rt_hides_helper;
	if (reach && dock_lease_body(d, body, temporary) != 0) {
		json_decref(body);
		json_decref(classic);
		return -ENOMEM;
	}
	rv = dock_container_create(d->engine, name, fast ? body : classic,
	    T_CREATE, cid, err, errlen);
	/* The engine has no size option after all: go without. */
	if (rv != 0 && rv != -EEXIST && dock_disk_refused(d, body, err)) {
		dock_disk_strip(body);
		dock_disk_strip(classic);
		rv = dock_container_create(d->engine, name, fast ? body
		    : classic, T_CREATE, cid, err, errlen);
	}
	/* The engine could not mount or start the helper: go without. */
	if (fast && (rv == -EIO || rv == -EPROTO)) {
		msc_log_warn("creating %s with the exec helper failed: %s", name,
		    err);
		dock_fx_disable(d, "the engine could not start the helper");
		fast = false;
		rv = dock_container_create(d->engine, name, classic, T_CREATE,
		    cid, err, errlen);
	}
	json_decref(body);
	json_decref(classic);
	if (rv == -EEXIST)
		snprintf(err, errlen, "Computer '%s' already exists.", id);
	else if (rv != 0)
		dock_runtime_explain(d, id, err, errlen);
	if (rv != 0)
		return rv;
	if ((rv = dock_container_inspect(d->engine, cid, T_OP, &ctr, err,
		 errlen)) != 0)
		return rv;
	dock_fx_track(d, name, ctr);
	if ((rv = dock_net_confirm(d, err, errlen)) != 0 ||
	    (rv = dock_pol_apply(d, id, cid, err, errlen)) != 0) {
		char ignore[DOCK_ERRLEN];

		json_decref(ctr);
		(void)dock_container_remove(d->engine, cid, T_STOP, ignore,
		    sizeof(ignore));
		dock_fx_forget(d, name);
		return rv;
	}
	if (temporary)
		dock_lease_hold(d, name, ctr);
	if (dock_readiness(d, name, reach, true, err, errlen) != 0) {
		char ignore[DOCK_ERRLEN];

		json_decref(ctr);
		(void)dock_container_remove(d->engine, cid, T_STOP, ignore,
		    sizeof(ignore));
		dock_fx_forget(d, name);
		dock_lease_drop(d, name);
		snprintf(err, errlen, "Container %.12s started but readiness "
				      "check failed (unexpected output)", cid);
		return -EIO;
	}
	rv = dock_fill_computer(d, ctr, id, out, dock_cfg(d->cfg)->image, d->cfg->driver_id);
	json_decref(ctr);
	msc_log_info("created %s computer %s (container %.12s)",
	    temporary ? "temporary" : "permanent", id, cid);
	return rv;
}

int
dock_create(struct dock_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return dock_create_owned(d, id, temporary, "", out, err, errlen);
}

/* A new computer (image NULL: the default one, a warm one if any). */
static int
create_any(struct dock_driver *d, const char *id, bool temporary,
    const char *image, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	int rv;

	if (image != NULL) {
		dock_pool_cold(d, 1);
		rv = create_cold(d, id, temporary, image, principal, out, err,
		    errlen);
		dock_pool_cold(d, -1);
		return rv;
	}

	/*
	 * A temporary computer takes a warm one when there is one. Waiting
	 * containers are made open (no proxy variables): they serve
	 * computers of that mode only, the default one. A principal's is
	 * made cold: its label (kilntainers.principal) is set at creation,
	 * and a waiting container's labels cannot change.
	 */
	if (temporary && principal[0] == '\0' && (!d->net_sandbox ||
		(dock_pol_default(d) == MSC_NET_OPEN &&
		    dock_pol_mode_for(d, id) == MSC_NET_OPEN)) &&
	    (rv = dock_pool_take(d, id, out, err, errlen)) != 1)
		return rv;
	dock_pool_cold(d, 1);
	rv = create_cold(d, id, temporary, NULL, principal, out, err, errlen);
	dock_pool_cold(d, -1);
	return rv;
}

int
dock_create_owned(struct dock_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen)
{
	int rv = create_any(d, id, temporary, NULL, principal, out, err,
	    errlen);

	/* A new computer: no preview URL of an old one by its name opens it. */
	if (rv == 0)
		dock_preview_forget(d->preview, id);
	return rv;
}

int
dock_create_image(struct dock_driver *d, const char *id, bool temporary,
    const char *image, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	int rv = create_any(d, id, temporary, image, principal, out, err,
	    errlen);

	if (rv == 0)
		dock_preview_forget(d->preview, id);
	return rv;
}

/* Whether a container (inspect JSON) is a temporary computer. */
static bool
is_temporary(json_t *ctr)
{
	const char *tmp = json_string_value(json_object_get(json_object_get(
	    json_object_get(ctr, "Config"), "Labels"), "kilntainers.temporary"));

	return tmp == NULL || strcmp(tmp, "false") != 0;
}

/* Whether the engine answers; else err says "Cannot connect to ...". */
static int
engine_up(struct dock_driver *d, char *err, size_t errlen)
{
	int rv = dock_engine_ping(d->engine, T_PING, err, errlen);

	return rv == -ETIMEDOUT ? -ECONNREFUSED : rv;
}

int
dock_attach(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	json_t *ctr = NULL;
	const char *cid;
	char name[128];
	bool helper;
	int rv;

	if ((rv = engine_up(d, err, errlen)) != 0)
		return rv;
	if ((rv = dock_find(d, id, &ctr, err, errlen)) != 0)
		return rv;
	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
	cid = json_string_value(json_object_get(ctr, "Id"));
	helper = dock_fx_uses_helper(ctr);
	if (!json_is_true(json_object_get(json_object_get(ctr, "State"),
		"Running"))) {
		/* The helper is mounted at each start. */
		if (dock_fx_mounts_helper(ctr) &&
		    (rv = dock_fx_prepare(d, err, errlen)) != 0)
			goto done;
		if ((rv = dock_container_start(d->engine, cid, T_OP, err,
			 errlen)) != 0)
			goto done;
		msc_log_info("started stopped computer %s", id);
	}
	dock_fx_track(d, name, ctr);
	if ((rv = dock_pol_apply(d, id, cid, err, errlen)) != 0)
		goto done;
	if (is_temporary(ctr))
		dock_lease_hold(d, name, ctr);
	if ((rv = dock_readiness(d, name, helper, false, err, errlen)) != 0) {
		snprintf(err, errlen, "Container %.12s started but readiness "
				      "check failed (unexpected output)", cid);
		rv = -EIO;
		goto done;
	}
	json_object_set_new(json_object_get(ctr, "State"), "Status",
	    json_string("running"));
	rv = dock_fill_computer(d, ctr, id, out, dock_cfg(d->cfg)->image, d->cfg->driver_id);
done:
	json_decref(ctr);
	return rv;
}

int
dock_owner(struct dock_driver *d, const char *id, char *tag, size_t taglen,
    char *err, size_t errlen)
{
	json_t *ctr = NULL;
	const char *owner;
	int rv;

	if ((rv = engine_up(d, err, errlen)) != 0 ||
	    (rv = dock_find(d, id, &ctr, err, errlen)) != 0)
		return rv;
	owner = json_string_value(json_object_get(json_object_get(
	    json_object_get(ctr, "Config"), "Labels"), MSC_PRINCIPAL_LABEL));
	snprintf(tag, taglen, "%s", owner != NULL ? owner : "");
	json_decref(ctr);
	return 0;
}

int
dock_restart(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	json_t *ctr = NULL;
	int rv;

	if ((rv = engine_up(d, err, errlen)) != 0 ||
	    (rv = dock_find(d, id, &ctr, err, errlen)) != 0)
		return rv;
	if (dock_fx_mounts_helper(ctr) &&
	    (rv = dock_fx_prepare(d, err, errlen)) != 0) {
		json_decref(ctr);
		return rv;
	}
	dock_preview_moved(d->preview, id);
	rv = dock_container_restart(d->engine,
	    json_string_value(json_object_get(ctr, "Id")), 5, T_OP, err, errlen);
	json_decref(ctr);
	/* Its address may be another's now: asked of the engine again. */
	dock_preview_moved(d->preview, id);
	if (rv != 0)
		return rv;
	return dock_attach(d, id, out, err, errlen);
}

int
dock_stop(struct dock_driver *d, const char *id, bool remove, char *err,
    size_t errlen)
{
	char name[128];
	json_t *ctr = NULL;
	const char *tmp;
	int rv;

	/* No renewals from now on: a removal that fails lets it lapse. */
	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
	dock_lease_drop(d, name);
	/* Stopping what is gone is done; deleting it is an error. */
	if ((rv = engine_up(d, err, errlen)) != 0)
		return rv;
	if ((rv = dock_find(d, id, &ctr, err, errlen)) != 0)
		return rv == -ENOENT && !remove ? 0 : rv;
	tmp = json_string_value(json_object_get(json_object_get(
	    json_object_get(ctr, "Config"), "Labels"), "kilntainers.temporary"));
	if (remove || tmp == NULL || strcmp(tmp, "false") != 0) {
		rv = dock_container_remove(d->engine,
		    json_string_value(json_object_get(ctr, "Id")), T_STOP, err,
		    errlen);
		if (rv == 0) {
			dock_fx_forget(d, name);
			dock_pol_release(d, ctr);
			dock_preview_forget(d->preview, id);
			msc_log_info("removed computer %s", id);
		}
	}
	json_decref(ctr);
	return rv;
}

int
dock_reset(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	return dock_recreate(d, id, NULL, out, err, errlen);
}

int
dock_recreate(struct dock_driver *d, const char *id, const char *image,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	json_t *ctr = NULL, *labels;
	const char *tmp, *owner;
	char principal[MSC_PRINCIPAL_TAG_LEN + 1], old[80];
	bool temporary;
	int rv;

	if ((rv = engine_up(d, err, errlen)) != 0 ||
	    (rv = dock_find(d, id, &ctr, err, errlen)) != 0)
		return rv;
	labels = json_object_get(json_object_get(ctr, "Config"), "Labels");
	tmp = json_string_value(json_object_get(labels, "kilntainers.temporary"));
	temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	owner = json_string_value(json_object_get(labels, MSC_PRINCIPAL_LABEL));
	snprintf(principal, sizeof(principal), "%s", owner != NULL ? owner : "");
	snprintf(old, sizeof(old), "%s", json_string_value(json_object_get(ctr,
	    "Id")) != NULL ? json_string_value(json_object_get(ctr, "Id")) : "");
	rv = dock_container_remove(d->engine,
	    json_string_value(json_object_get(ctr, "Id")), T_STOP, err, errlen);
	if (rv == 0)
		dock_pol_release(d, ctr);
	json_decref(ctr);
	dock_preview_moved(d->preview, id);     /* a new address comes */
	if (rv != 0)
		return rv;
	{
		char name[128];

		snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
		dock_fx_forget(d, name);
		dock_lease_drop(d, name);
	}
	/* AutoRemove containers may still be going away: wait for the name. */
	for (int i = 0; i < 50; i++) {
		rv = create_any(d, id, temporary, image, principal, out, err,
		    errlen);
		if (rv != -EEXIST)
			break;
		msc_computer_fini(out);
		usleep(100 * 1000);
	}
	if (rv == 0) {
		/* The same computer in a new container: its preview URLs
		 * follow it (they name the container's Id). */
		json_t *now = NULL;
		char e2[256];

		if (dock_find(d, id, &now, e2, sizeof(e2)) == 0)
			dock_preview_renamed(d->preview, id, old,
			    json_string_value(json_object_get(now, "Id")));
		else
			dock_preview_forget(d->preview, id);
		json_decref(now);
		msc_log_info("%s computer %s", image != NULL ? "restored" :
		    "factory reset", id);
	}
	return rv;
}

int
dock_list(struct dock_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen)
{
	json_t *arr = NULL, *row;
	size_t i;
	int rv;

	if ((rv = engine_up(d, err, errlen)) != 0)
		return rv;
	if ((rv = dock_container_list(d->engine, "kilntainers.computer-id",
		 T_OP, &arr, err, errlen)) != 0)
		return rv;
	out->computers = calloc(json_array_size(arr) + 1,
	    sizeof(*out->computers));
	if (out->computers == NULL) {
		json_decref(arr);
		return -ENOMEM;
	}
	json_array_foreach (arr, i, row) {
		const char *id = json_string_value(json_object_get(
		    json_object_get(row, "Labels"), "kilntainers.computer-id"));

		Msc__V1__Computer *c;

		if (id == NULL ||
		    !dock_mine(d, json_object_get(row, "Labels")) ||
		    (c = malloc(sizeof(*c))) == NULL)
			continue;
		*c = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
		out->computers[out->n_computers++] = c;
		if ((rv = dock_fill_computer(d, row, id, c, dock_cfg(d->cfg)->image,
			 d->cfg->driver_id)) != 0)
			break;
		if (c->temporary && strcmp(c->state, "running") == 0) {
			char name[128];

			snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
			dock_lease_describe(d, name, c);
		}
	}
	json_decref(arr);
	if (rv == 0)
		rv = dock_pool_list_taken(d, &dock_pool_computers, out, err,
		    errlen);
	return rv;
}

const struct dock_pool_computers dock_pool_computers = { dock_validate,
	dock_readiness, dock_fill_computer };
