/*
 * e2b_lease.c - extending the timeouts of the temporary E2B sandboxes
 * this driver holds; see e2b_lease.h.
 */
#include "e2b_lease.h"

#include "e2b_driver_int.h"

#include <errno.h>
#include <stdio.h>

#include "msc_lease_renewer.h"

/* One round (msc_lease_renewer.h): POST /sandboxes/{ref}/timeout each. */
static void
renew(void *arg, struct msc_lease_item *items, size_t n)
{
	struct e2b_driver *d = arg;
	uint32_t period = msc_lease_renewer_period_ms(d->lease);
	int t_ms = period < 5000 ? (int)period : 5000;

	for (size_t i = 0; i < n; i++) {
		struct msc_lease_item *it = &items[i];
		char path[256], err[E2B_ERRLEN];
		json_t *body = json_pack("{s:I}", "timeout",
		    (json_int_t)d->cfg->lease_timeout);
		int rv;

		if (body == NULL) {
			snprintf(it->err, sizeof(it->err), "out of memory");
			continue;
		}
		snprintf(path, sizeof(path), "/sandboxes/%s/timeout", it->ref);
		rv = e2b_api(d, "POST", path, body, t_ms, false, NULL, NULL, 0,
		    err, sizeof(err));
		json_decref(body);
		it->outcome = rv == 0 ? MSC_LEASE_RENEWED : rv == -ENOENT ?
		    MSC_LEASE_GONE : MSC_LEASE_FAILED;
		if (rv != 0)
			snprintf(it->err, sizeof(it->err), "%.159s", err);
	}
}

int
e2b_lease_start(struct e2b_driver *d)
{
	return msc_lease_renewer_start(&d->lease, "e2b",
	    (uint32_t)d->cfg->lease_timeout * 1000u, renew, d);
}

long
e2b_lease_ttl(const struct e2b_driver *d, bool temporary)
{
	return temporary ? d->cfg->lease_timeout : d->lifetime_s;
}
