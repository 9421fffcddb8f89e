/*
 * fly_driver.c - the msc.v1.Driver service for Fly Machines: the shared
 * service skeleton (lib/msc_driver.h) over the operations of
 * fly_computers.c and fly_exec.c.
 */
#include "fly_driver_int.h"
#include "fly_lease.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fly_cfg.h"
#include "msc_driver.h"
#include "msc_lease_renewer.h"
#include "msc_log.h"

MSC_DRIVER_OPS(fly_ops, fly, "fly-driver", msc_driver_code_cloud,
    fly_cfg_describe);
/* fly_ops with its preview refusal (issue 30) and owners, filled once. */
static struct msc_driver_ops fly_ops_full;

static int
create_owned(void *be, const char *id, bool temporary, const char *principal,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return fly_create_owned(be, id, temporary, principal, out, err,
	    errlen);
}

static int
owner(void *be, const char *id, char *tag, size_t taglen, char *err,
    size_t errlen)
{
	return fly_owner(be, id, tag, taglen, err, errlen);
}

int
fly_driver_start(const struct msc_cfg *cfg, const char *url,
    struct fly_driver **dp)
{
	const struct fly_cfg *fc = fly_cfg(cfg);
	struct fly_driver *d;
	char err[FLY_ERRLEN];
	int rv;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	pthread_mutex_init(&d->setup_mu, NULL);
	if ((rv = fly_conv_guest(fc->fly_image, fc->fly_region,
		 fc->fly_cpu_kind, fc->fly_cpus, fc->fly_memory,
		 fc->fly_rootfs_size, &d->guest, err, sizeof(err))) != 0) {
		msc_cfg_error("%s", err);
		goto fail;
	}
	d->base_url = fc->fly_api_url != NULL && *fc->fly_api_url != '\0'
	    ? fc->fly_api_url : FLY_API_DEFAULT_URL;
	if (strncmp(d->base_url, "http://", 7) != 0 &&
	    strncmp(d->base_url, "https://", 8) != 0) {
		msc_cfg_error("--fly-api-url must start with http:// or "
			      "https://, got: %s", d->base_url);
		rv = -EINVAL;
		goto fail;
	}
	if (!cfg->network)
		msc_log_warn("fly: Machines always have outbound network; "
			     "--no-network is not enforced on this backend");
	if (fly_ops_full.exec == NULL) {
		fly_ops_full = fly_ops;
		fly_ops_full.preview_refusal = fly_preview_refusal;
		fly_ops_full.create_owned = create_owned;
		fly_ops_full.owner = owner;
	}
	if ((rv = msc_known_new(sizeof(struct fly_known), &d->known)) != 0 ||
	    (rv = fly_lease_start(d)) != 0 ||
	    (rv = msc_driver_start(url, &fly_ops_full, d,
		 (int)cfg->driver_workers, &d->svc)) != 0)
		goto fail;
	msc_driver_limit_owners(d->svc, (int)cfg->driver_owner_workers);
	*dp = d;
	return 0;
fail:
	fly_driver_stop(d);
	return rv;
}

void
fly_driver_stop(struct fly_driver *d)
{
	if (d == NULL)
		return;
	if (!msc_driver_stop(d->svc))
		return;         /* a job still runs and uses d: the process ends */
	msc_lease_renewer_stop(d->lease);
	msc_known_free(d->known);
	fly_api_free(d->api);
	pthread_mutex_destroy(&d->setup_mu);
	free(d);
}
