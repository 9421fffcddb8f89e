/*
 * docker_containers.c - a computer's container: whether it is ours, its
 * inspect JSON, and running one command in it (through its helper, else
 * the Engine API). Used by the lifecycle ops (docker_computers.c) and the
 * Exec op (docker_driver_exec.c).
 */
#include "docker_driver_int.h"
#include "docker_pool.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define T_FIND 30000

bool
dock_mine(const struct dock_driver *d, json_t *labels)
{
	const char *owner = json_string_value(json_object_get(labels,
	    "kilntainers.driver"));

	return owner == NULL || strcmp(owner, d->cfg->driver_id) == 0;
}

bool
dock_pool_born(const struct dock_driver *d, json_t *labels)
{
	const char *owner = json_string_value(json_object_get(labels,
	    DOCK_POOL_LABEL));

	return owner != NULL && strcmp(owner, d->cfg->driver_id) == 0;
}

int
dock_find(struct dock_driver *d, const char *id, json_t **ctrp, char *err,
    size_t errlen)
{
	char name[128];
	const char *label;
	json_t *ctr;
	int rv;

	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", id);
	dock_pool_wait_named(d, name);  /* a taken pool container's rename */
	if ((rv = dock_container_inspect(d->engine, name, T_FIND, &ctr,
		 err, errlen)) != 0) {
		if (rv == -ENOENT) {
			/* Gone, maybe behind our back: forget its helper. */
			dock_fx_forget(d, name);
			snprintf(err, errlen, "Computer '%s' was not found.", id);
		}
		return rv;
	}
	label = json_string_value(json_object_get(
	    json_object_get(json_object_get(ctr, "Config"), "Labels"),
	    "kilntainers.computer-id"));
	/* A warm pool container taken as this computer: its name says. */
	if (label == NULL && dock_pool_born(d, json_object_get(
				 json_object_get(ctr, "Config"), "Labels")))
		label = id;
	if (label == NULL || strcmp(label, id) != 0) {
		json_decref(ctr);
		snprintf(err, errlen, "Docker name '%s' is already in use by a "
				      "container not owned by this server.", name);
		return -EEXIST;         /* our text, shown as is */
	}
	if (!dock_mine(d, json_object_get(json_object_get(ctr, "Config"),
		"Labels"))) {
		json_decref(ctr);
		snprintf(err, errlen, "Computer '%s' was not found.", id);
		return -ENOENT;         /* another driver's: it answers */
	}
	*ctrp = ctr;
	return 0;
}

int
dock_run(struct dock_driver *d, const char *name,
    const struct dock_exec_req *req, struct dock_exec_res *res,
    bool *fastp, char *err, size_t errlen)
{
	int rv = dock_fx_exec(d, name, req, res, err, errlen);

	*fastp = rv != -ENOTCONN;
	if (*fastp)
		return rv;
	/* The engine knows the container by its name: a taken pool
	 * container's rename must be done (the fast path needs no name). */
	dock_pool_wait_named(d, name);
	return dock_exec_run(d->engine, req, res, err, errlen);
}
