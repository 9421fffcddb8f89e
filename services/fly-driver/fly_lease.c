/*
 * fly_lease.c - the watch loop of temporary Fly Machines and the renewal
 * of their leases; see fly_lease.h.
 */
#include "fly_lease.h"

#include "fly_driver_int.h"

#include <errno.h>
#include <stdio.h>

#include "msc_lease_renewer.h"

/* One round (msc_lease_renewer.h): touches each Machine's lease file. */
static void
renew(void *arg, struct msc_lease_item *items, size_t n)
{
	struct fly_driver *d = arg;
	json_t *argv = json_pack("[ss]", "touch", MSC_LEASE_FILE);

	for (size_t i = 0; argv != NULL && i < n; i++) {
		struct msc_lease_item *it = &items[i];
		char err[FLY_ERRLEN];
		json_t *reply = NULL;
		int rv = fly_exec_once(d, it->ref, argv, NULL, 0, 5, &reply,
		    err, sizeof(err));

		json_decref(reply);
		it->outcome = rv == 0 ? MSC_LEASE_RENEWED : rv == -ENOENT ?
		    MSC_LEASE_GONE : MSC_LEASE_FAILED;
		if (rv != 0)
			snprintf(it->err, sizeof(it->err), "%.159s", err);
	}
	json_decref(argv);
}

int
fly_lease_start(struct fly_driver *d)
{
	return msc_lease_renewer_start(&d->lease, "fly",
	    (uint32_t)d->cfg->lease_timeout * 1000u, renew, d);
}

int
fly_lease_body(struct fly_driver *d, json_t *body, bool temporary)
{
	json_t *config = json_object_get(body, "config"), *exec;
	char secs[24];

	if (!temporary)
		return 0;
	snprintf(secs, sizeof(secs), "%ld", d->cfg->lease_timeout);
	exec = json_pack("[ssss]", "/bin/sh", "-c", msc_lease_watch_sh,
	    "msc-lease");
	if (exec == NULL || json_array_append_new(exec, json_string(secs)) ||
	    json_object_set_new(config, "init", json_pack("{s:o}", "exec",
		exec)) != 0)
		return -ENOMEM;
	return 0;
}
