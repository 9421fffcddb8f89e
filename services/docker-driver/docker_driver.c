/*
 * docker_driver.c - the msc.v1.Driver service for Docker: the shared
 * service skeleton (lib/msc_driver.h) over the operations of
 * docker_computers.c and docker_fxsetup.c.
 */
#include "docker_driver_int.h"
#include "docker_pool.h"

#include <errno.h>
#include <stdlib.h>

#include "docker_fxloop.h"
#include "docker_lease.h"
#include "docker_preview.h"
#include "msc_driver.h"
#include "msc_log.h"
#include "msc_snapshot.h"

/* Threads that end the Engine API execs no worker takes (engine_spare). */
#define DOCK_FINISHERS 4

MSC_DRIVER_OPS(docker_ops_base, dock, "docker-driver", msc_driver_code,
    dock_cfg_describe);

static int
snap_snapshot(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen)
{
	return dock_snapshot(be, req, out, err, errlen);
}

static int
snap_restore(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return dock_restore(be, req, out, err, errlen);
}

static int
snap_list(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__SnapshotList *out, char *err, size_t errlen)
{
	return dock_snapshots(be, req, out, err, errlen);
}

static int
snap_delete(void *be, const Msc__V1__SnapshotRequest *req, char *err,
    size_t errlen)
{
	return dock_snapshot_delete(be, req, err, errlen);
}

static int
expose_port(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Preview *out, char *err, size_t errlen)
{
	return dock_preview_expose(be, req, out, err, errlen);
}

static int
snap_create_from(void *be, const Msc__V1__CreateRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return dock_create_from(be, req, out, err, errlen);
}

/* docker_ops_base, the network policy of a computer to create, the
 * principal that made it, the count of its background processes, and
 * snapshots. */
static struct msc_driver_ops docker_ops;

static int
create_owned(void *be, const char *id, bool temporary, const char *principal,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return dock_create_owned(be, id, temporary, principal, out, err,
	    errlen);
}

static int
owner(void *be, const char *id, char *tag, size_t taglen, char *err,
    size_t errlen)
{
	return dock_owner(be, id, tag, taglen, err, errlen);
}

/* --driver-output-buffer in bytes (checked by docker_cfg.c); 0: none,
 * for a cfg no docker program parsed. */
static uint64_t
output_bound(const struct msc_cfg *cfg)
{
	const char *s = dock_cfg(cfg)->driver_output_buffer;
	uint64_t bytes = 0;

	if (s != NULL && msc_cfg_size(s, &bytes) != 0)
		bytes = 0;
	return bytes;
}

static int
driver_start(const struct msc_cfg *cfg, const char *url, bool tool,
    struct dock_driver **dp)
{
	char err[DOCK_ERRLEN];
	struct dock_driver *d;
	int rv;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	d->tool = tool;
	d->serves_hosts = dock_preview_url_serves_hosts(url);
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->fx_mu, NULL);
	pthread_mutex_init(&d->net_mu, NULL);
	pthread_mutex_init(&d->pol.mu, NULL);
	d->net_learnt = dock_pol_network;       /* the network's news */
	if ((rv = msc_map_new(&d->fx_procs)) != 0 ||
	    (rv = msc_snap_pins_new(&d->snap_pins)) != 0 ||
	    (rv = dock_build_template(cfg, &d->create_template)) != 0 ||
	    (rv = dock_disk_init(d)) != 0)
		goto fail;
	if ((rv = dock_engine_new(dock_cfg(cfg)->docker_host, dock_cfg(cfg)->engine,
		 &d->engine)) != 0) {
		msc_cfg_error("invalid --docker-host '%s'", dock_cfg(cfg)->docker_host);
		goto fail;
	}
	if ((rv = dock_runtime_check(d, true, err, sizeof(err))) != 0)
		goto fail;
	if ((d->rt_hides_helper = dock_runtime_gvisor(d,
	    dock_runtime_name(d))))
		msc_log_info("runtime %s is gVisor: computers run the exec "
		    "helper inside gVisor's kernel, where the driver cannot "
		    "reach its socket; commands use the Engine API exec",
		    dock_runtime_name(d));
	dock_fx_init(d);
	/* Its queue holds every command that may wait (msc_driver.h). */
	if ((rv = dock_fxloop_start(output_bound(cfg), &d->fxloop)) != 0 ||
	    (rv = msc_pool_new(DOCK_FINISHERS, (size_t)(cfg->driver_workers +
	    1) * MSC_DRIVER_WAITING_PER_WORKER, &d->finisher)) != 0)
		goto fail;
	if ((rv = dock_lease_start(d)) != 0 || (rv = dock_net_init(d)) != 0 ||
	    (rv = dock_pol_init(d)) != 0 ||
	    (!tool && (rv = dock_preview_init(d, &dock_preview_proxy,
	    &d->preview)) != 0))
		goto fail;
	if (docker_ops.create == NULL) {        /* once, before any service */
		docker_ops = docker_ops_base;
		docker_ops.set_network = dock_pol_set_create;
		docker_ops.processes = dock_processes;
		docker_ops.snapshot = snap_snapshot;
		docker_ops.restore = snap_restore;
		docker_ops.snapshots = snap_list;
		docker_ops.snapshot_delete = snap_delete;
		docker_ops.create_from = snap_create_from;
		docker_ops.expose_port = expose_port;
		docker_ops.create_owned = create_owned;
		docker_ops.owner = owner;
		docker_ops.exec_start = dock_exec_start;
	}
	if ((rv = msc_driver_start(url, &docker_ops, d,
		 (int)cfg->driver_workers, &d->svc)) != 0)
		goto fail;
	/* An engine asked for many containers at once is slow at each. */
	msc_driver_limit_creations(d->svc, (int)dock_cfg(cfg)->driver_creations);
	msc_driver_limit_owners(d->svc, (int)cfg->driver_owner_workers);
	if ((rv = dock_pool_start(d, &dock_pool_computers)) != 0 ||
	    (!tool && (rv = dock_pol_restore_start(d)) != 0))
		goto fail;
	*dp = d;
	return 0;
fail:
	dock_driver_stop(d);
	return rv;
}

int
dock_driver_start(const struct msc_cfg *cfg, const char *url,
    struct dock_driver **dp)
{
	return driver_start(cfg, url, false, dp);
}

int
dock_driver_start_tool(const struct msc_cfg *cfg, const char *url,
    struct dock_driver **dp)
{
	return driver_start(cfg, url, true, dp);
}

void
dock_driver_stop(struct dock_driver *d)
{
	if (d == NULL)
		return;
	/* The waiting containers go first; a take finds none. */
	dock_pool_drain(d);
	dock_pol_restore_wait(d);
	if (!msc_driver_stop(d->svc))
		return;         /* a job still runs and uses d: the process ends */
	dock_fxloop_stop(d->fxloop);    /* its commands all ended */
	/* After the loop's last ends; one still killing uses d. */
	if (!msc_pool_free(d->finisher))
		return;
	dock_preview_free(d->preview);  /* its thread asks the engine */
	dock_pool_free(d);
	dock_lease_stop(d);
	dock_engine_free(d->engine);
	json_decref(d->create_template);
	dock_fx_procs_free(d);
	msc_snap_pins_free(d->snap_pins);
	pthread_mutex_destroy(&d->mu);
	pthread_mutex_destroy(&d->fx_mu);
	pthread_mutex_destroy(&d->net_mu);
	dock_pol_fini(d);
	free(d);
}
