/*
 * docker_disk.c - --disk-quota on Docker and Podman (issue 27): the
 * storage driver's size option (HostConfig.StorageOpt.size) bounds a
 * container's writable layer where the engine has one: overlay2 (Podman:
 * overlay) on xfs mounted with pquota, btrfs, zfs. Which one the engine
 * runs is asked once (GET /info, with the first validation); elsewhere
 * computers are created without it and computer_list says that the
 * backend cannot bound their disk here. An xfs without pquota refuses
 * the option at create: the refusal turns it off and the create goes on.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "docker_api.h"
#include "msc_log.h"

/* Podman's /info counts its storage: seconds on a busy host. */
#define T_INFO 30000

int
dock_disk_init(struct dock_driver *d)
{
	const char *dq = dock_cfg(d->cfg)->disk_quota;
	const char *q = dq != NULL ? dq : "0";

	if (msc_cfg_size(q, &d->disk_quota) != 0) {
		msc_cfg_error("argument --disk-quota: invalid value: '%s' (a "
			      "size such as 500M, 1G or 1GiB; 0: no bound)", q);
		return -EINVAL;
	}
	if (d->disk_quota == 0)
		snprintf(d->disk_text, sizeof(d->disk_text),
		    "no quota (--disk-quota 0)");
	return 0;
}

/* "Backing Filesystem" of the storage driver, from /info. */
static const char *
backing_fs(json_t *info)
{
	json_t *pair;
	size_t i;

	json_array_foreach(json_object_get(info, "DriverStatus"), i, pair) {
		const char *k = json_string_value(json_array_get(pair, 0));

		if (k != NULL && strcasecmp(k, "Backing Filesystem") == 0)
			return json_string_value(json_array_get(pair, 1));
	}
	return NULL;
}

/* Sets the mode and what computer_list says (d->mu held). */
static void
set_unbounded_locked(struct dock_driver *d, const char *why)
{
	d->disk_size_opt = false;
	snprintf(d->disk_text, sizeof(d->disk_text), "not bounded: %s", why);
}

void
dock_disk_probe(struct dock_driver *d)
{
	char err[DOCK_ERRLEN], why[200];
	json_t *info = NULL;
	const char *drv = NULL, *fs = NULL;
	bool opt = false;

	if (d->disk_quota == 0)
		return;
	if (dock_engine_info(d->engine, T_INFO, &info, err, sizeof(err)) == 0) {
		drv = json_string_value(json_object_get(info, "Driver"));
		fs = backing_fs(info);
	}
	if (drv != NULL && (strcmp(drv, "btrfs") == 0 ||
	    strcmp(drv, "zfs") == 0 || ((strcmp(drv, "overlay2") == 0 ||
	    strcmp(drv, "overlay") == 0) && fs != NULL &&
	    strcmp(fs, "xfs") == 0)))
		opt = true;
	else if (drv != NULL)
		snprintf(why, sizeof(why), "the engine's %s storage%s%s has no "
		    "size option (it needs overlay2 on xfs with pquota, btrfs "
		    "or zfs)", drv, fs != NULL ? " on " : "", fs != NULL ? fs
									 : "");
	else
		snprintf(why, sizeof(why), "the engine did not say its storage "
		    "driver");
	pthread_mutex_lock(&d->mu);
	if (opt) {
		d->disk_size_opt = true;
		msc_cfg_size_text(d->disk_quota, d->disk_text,
		    sizeof(d->disk_text));
	} else {
		set_unbounded_locked(d, why);
	}
	pthread_mutex_unlock(&d->mu);
	if (!opt)
		msc_log_warn("--disk-quota: computers' disks are %s",
		    d->disk_text);
	json_decref(info);
}

void
dock_disk_body(struct dock_driver *d, json_t *body)
{
	char size[32];
	bool opt;

	pthread_mutex_lock(&d->mu);
	opt = d->disk_size_opt;
	pthread_mutex_unlock(&d->mu);
	if (!opt)
		return;
	snprintf(size, sizeof(size), "%llu",
	    (unsigned long long)d->disk_quota);
	json_object_set_new(json_object_get(body, "HostConfig"), "StorageOpt",
	    json_pack("{s:s}", "size", size));
}

bool
dock_disk_refused(struct dock_driver *d, json_t *body, const char *err)
{
	json_t *hc = json_object_get(body, "HostConfig");

	/*
	 * The engine's own words only ("--storage-opt is supported only for
	 * overlay over xfs with 'pquota' mount option"): an error that names
	 * a computer (a slug has no space) or any other failure must not turn
	 * the quota off for every computer after it.
	 */
	if (json_object_get(hc, "StorageOpt") == NULL || err == NULL ||
	    strstr(err, "--storage-opt is supported only") == NULL)
		return false;
	pthread_mutex_lock(&d->mu);
	if (d->disk_size_opt) {
		set_unbounded_locked(d, "the engine refused the storage size "
		    "option (overlay2 needs xfs mounted with pquota)");
		msc_log_warn("--disk-quota: %s; computers go without it", err);
	}
	pthread_mutex_unlock(&d->mu);
	return true;
}

void
dock_disk_strip(json_t *body)
{
	json_object_del(json_object_get(body, "HostConfig"), "StorageOpt");
}

char *
dock_disk_text(struct dock_driver *d)
{
	char *s;

	pthread_mutex_lock(&d->mu);
	s = strdup(d->disk_text);
	pthread_mutex_unlock(&d->mu);
	return s;
}
