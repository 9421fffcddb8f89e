/*
 * modal_driver.c - the msc.v1.Driver service for Modal: the shared
 * service skeleton (lib/msc_driver.h) over the operations of
 * modal_sandboxes.c and modal_exec.c, and the configuration.
 */
#include "modal_driver_int.h"
#include "modal_cfg.h"
#include "modal_lease.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_driver.h"
#include "msc_http.h"
#include "msc_lease_renewer.h"
#include "msc_log.h"

MSC_DRIVER_OPS(modal_ops, modal, "cloud-driver", msc_driver_code_cloud,
    modal_cfg_describe);

static int
create_owned(void *be, const char *id, bool temporary, const char *principal,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return modal_create_owned(be, id, temporary, principal, out, err,
	    errlen);
}

static int
owner(void *be, const char *id, char *tag, size_t taglen, char *err,
    size_t errlen)
{
	return modal_owner(be, id, tag, taglen, err, errlen);
}
/* modal_ops with the optional ops, filled once before any service. */
static struct msc_driver_ops modal_ops_full;

CLOUD_SNAP_OPS(modal_snaps, struct modal_driver)

#define DEFAULT_IMAGE "debian:bookworm-slim"

static int
configure(struct modal_driver *d, const struct msc_cfg *cfg)
{
	const struct modal_cfg *mc = modal_cfg(cfg);
	char err[MODAL_ERRLEN];
	int rv;

	if ((rv = modal_conf_resolve(mc->modal_token_id,
		 mc->modal_token_secret, &d->creds, err, sizeof(err))) != 0) {
		msc_cfg_error("%s", err);
		return rv;
	}
	if (grpc_target_init(&d->api, d->creds.server_url) != 0) {
		msc_cfg_error("the Modal server URL must start with https:// "
			      "(or http:// for a local server), got: %s",
		    d->creds.server_url);
		return -EINVAL;
	}
	d->app_name = mc->modal_app_name != NULL && *mc->modal_app_name
	    ? mc->modal_app_name : "kilntainers";
	d->image = mc->image != NULL && *mc->image ? mc->image
						     : DEFAULT_IMAGE;
	if (modal_conv_cpu(mc->modal_cpu != NULL ? mc->modal_cpu : "1.0",
		&d->milli_cpu) != 0) {
		msc_cfg_error("argument --modal-cpu: invalid value: '%s' (a "
			      "number of cores above 0, such as 0.5 or 2)",
		    mc->modal_cpu);
		return -EINVAL;
	}
	if (modal_conv_uint(mc->modal_memory != NULL ? mc->modal_memory
						      : "512", 1, 4194304,
		&d->memory_mb) != 0) {
		msc_cfg_error("argument --modal-memory: invalid int value: '%s' "
			      "(MiB)", mc->modal_memory);
		return -EINVAL;
	}
	if (modal_conv_uint(mc->sandbox_timeout != NULL ? mc->sandbox_timeout
							 : "3600", 1, 86400,
		&d->lifetime_s) != 0) {
		msc_cfg_error("argument --sandbox-timeout: invalid value: '%s' "
			      "(seconds, 1 to 86400)", mc->sandbox_timeout);
		return -EINVAL;
	}
	if (mc->gpu != NULL && *mc->gpu != '\0' &&
	    modal_conv_gpu(mc->gpu, d->gpu_type, sizeof(d->gpu_type),
		&d->gpu_count) != 0) {
		msc_cfg_error("argument --gpu: invalid value: '%s' (a GPU type "
			      "such as A10G or H100, optionally :count)",
		    mc->gpu);
		return -EINVAL;
	}
	if (modal_conv_ports(mc->modal_ports, d->ports, &d->n_ports) != 0) {
		msc_cfg_error("argument --modal-ports: invalid value: '%s' (at "
			      "most %d ports from 1 to 65535, comma-separated, "
			      "none twice)", mc->modal_ports, MODAL_PORTS_MAX);
		return -EINVAL;
	}
	if (d->n_ports > 0 && !cfg->network) {
		/* Tunnels are public ways in: as on Docker, a computer
		 * without network serves no preview. */
		msc_cfg_error("argument --modal-ports: not allowed with "
			      "--no-network (a computer without network has "
			      "no preview URLs)");
		return -EINVAL;
	}
	return msc_http_init();       /* libcurl, before threads call */
}

int
modal_driver_start(const struct msc_cfg *cfg, const char *url,
    struct modal_driver **dp)
{
	struct modal_driver *d;
	int rv;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->build_mu, NULL);
	if (modal_ops_full.exec == NULL) {
		modal_ops_full = modal_ops;
		modal_ops_full.processes = modal_processes;
		modal_ops_full.expose_port = modal_expose_port;
		modal_ops_full.create_owned = create_owned;
		modal_ops_full.owner = owner;
		modal_snaps_fill(&modal_ops_full);
	}
	if ((rv = cloud_snap_init(&d->snap, &modal_snap_ops, d, cfg)) != 0 ||
	    (rv = configure(d, cfg)) != 0 ||
	    (rv = msc_known_new(sizeof(struct modal_known), &d->known)) != 0 ||
	    (rv = cloud_ports_new(&d->exposed)) != 0 ||
	    (rv = modal_lease_start(d)) != 0 ||
	    (rv = msc_driver_start(url, &modal_ops_full, d,
		 (int)cfg->driver_workers, &d->svc)) != 0)
		goto fail;
	msc_driver_limit_owners(d->svc, (int)cfg->driver_owner_workers);
	if (d->creds.token_id[0] == '\0' || d->creds.token_secret[0] == '\0')
		msc_log_warn("modal: no token yet: pass --modal-token-id and "
			     "--modal-token-secret, set MODAL_TOKEN_ID and "
			     "MODAL_TOKEN_SECRET, or add them to ~/.modal.toml");
	*dp = d;
	return 0;
fail:
	modal_driver_stop(d);
	return rv;
}

void
modal_driver_stop(struct modal_driver *d)
{
	if (d == NULL)
		return;
	if (!msc_driver_stop(d->svc))
		return;         /* a job still runs and uses d: the process ends */
	msc_lease_renewer_stop(d->lease);
	msc_known_free(d->known);
	cloud_ports_free(d->exposed);
	cloud_snap_fini(&d->snap);
	grpc_target_fini(&d->api);
	modal_creds_clear(&d->creds);
	explicit_bzero(d->auth_token, sizeof(d->auth_token));
	pthread_mutex_destroy(&d->mu);
	pthread_mutex_destroy(&d->build_mu);
	free(d);
}
