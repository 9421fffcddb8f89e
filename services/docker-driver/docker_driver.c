/*
 * docker_driver.c - the msc.v1.Driver service for Docker: the shared
 * service skeleton (lib/msc_driver.h) over the operations of
 * docker_computers.c and docker_fxsetup.c.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <stdlib.h>

#include "msc_driver.h"

#define BE(be) ((struct dock_driver *)(be))

static int
op_create(void *be, const char *id, bool temporary, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	return dock_create(BE(be), id, temporary, out, err, errlen);
}

static int
op_attach(void *be, const char *id, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	return dock_attach(BE(be), id, out, err, errlen);
}

static int
op_restart(void *be, const char *id, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	return dock_restart(BE(be), id, out, err, errlen);
}

static int
op_reset(void *be, const char *id, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	return dock_reset(BE(be), id, out, err, errlen);
}

static int
op_stop(void *be, const char *id, bool remove, char *err, size_t errlen)
{
	return dock_stop(BE(be), id, remove, err, errlen);
}

static int
op_list(void *be, Msc__V1__ComputerList *out, char *err, size_t errlen)
{
	return dock_list(BE(be), out, err, errlen);
}

static int
op_exec(void *be, const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *out,
    char *err, size_t errlen)
{
	return dock_exec(BE(be), req, out, err, errlen);
}

static const struct msc_driver_ops docker_ops = {
	.name = "docker-driver",
	.create = op_create,
	.attach = op_attach,
	.restart = op_restart,
	.reset = op_reset,
	.stop = op_stop,
	.list = op_list,
	.exec = op_exec,
	.computer_fini = msc_computer_fini,
	.list_fini = msc_computer_list_fini,
};

int
dock_driver_start(const struct msc_cfg *cfg, const char *url,
    struct dock_driver **dp)
{
	struct dock_driver *d;
	int rv;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	pthread_mutex_init(&d->mu, NULL);
	if ((rv = dock_build_template(cfg, &d->create_template)) != 0)
		goto fail;
	dock_fx_init(d);
	if ((rv = dock_engine_new(cfg->docker_host, cfg->engine,
		 &d->engine)) != 0) {
		msc_cfg_error("invalid --docker-host '%s'", cfg->docker_host);
		goto fail;
	}
	if ((rv = msc_driver_start(url, &docker_ops, d,
		 (int)cfg->driver_workers, &d->svc)) != 0)
		goto fail;
	*dp = d;
	return 0;
fail:
	dock_driver_stop(d);
	return rv;
}

void
dock_driver_stop(struct dock_driver *d)
{
	if (d == NULL)
		return;
	if (!msc_driver_stop(d->svc))
		return;         /* a job still runs and uses d: the process ends */
	dock_engine_free(d->engine);
	json_decref(d->create_template);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
