/*
 * e2b_driver.c - the msc.v1.Driver service for E2B: the shared service
 * skeleton (lib/msc_driver.h) over the operations of e2b_sandboxes.c and
 * e2b_exec.c, and the configuration.
 */
#include "e2b_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2b_cfg.h"
#include "e2b_lease.h"
#include "msc_driver.h"
#include "msc_lease_renewer.h"
#include "msc_log.h"

MSC_DRIVER_OPS(e2b_ops, e2b, "cloud-driver", msc_driver_code_cloud,
    e2b_cfg_describe);
/* e2b_ops with the optional ops, filled once before any service. */
static struct msc_driver_ops e2b_ops_full;

static int
create_owned(void *be, const char *id, bool temporary, const char *principal,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return e2b_create_owned(be, id, temporary, principal, out, err,
	    errlen);
}

static int
owner(void *be, const char *id, char *tag, size_t taglen, char *err,
    size_t errlen)
{
	return e2b_owner(be, id, tag, taglen, err, errlen);
}

CLOUD_SNAP_OPS(e2b_snaps, struct e2b_driver)

static const char *
env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : def;
}

static char *
trimmed_url(const char *u)
{
	char *s = strdup(u);
	size_t n;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	while (n > 0 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

static int
configure(struct e2b_driver *d, const struct msc_cfg *cfg)
{
	const struct e2b_cfg *ec = e2b_cfg(cfg);
	const char *key = ec->e2b_api_key, *api, *sbx;
	char *end;

	if (key == NULL || *key == '\0')
		key = env_or("E2B_API_KEY", NULL);
	if (key != NULL && asprintf(&d->key_hdr, "X-API-Key: %s", key) < 0) {
		d->key_hdr = NULL;
		return -ENOMEM;
	}
	d->lifetime_s = strtol(ec->e2b_sandbox_timeout != NULL
		? ec->e2b_sandbox_timeout : "3600", &end, 10);
	if (*end != '\0' || d->lifetime_s < 1 || d->lifetime_s > 86400) {
		msc_cfg_error("argument --e2b-sandbox-timeout: invalid int "
			      "value: '%s'", ec->e2b_sandbox_timeout);
		return -EINVAL;
	}
	d->template_id = ec->e2b_template != NULL && *ec->e2b_template
	    ? ec->e2b_template : "base";
	if ((d->domain = strdup(env_or("E2B_DOMAIN", "e2b.app"))) == NULL)
		return -ENOMEM;
	if ((api = env_or("E2B_API_URL", NULL)) != NULL)
		d->api_url = trimmed_url(api);
	else if (asprintf(&d->api_url, "https://api.%s", d->domain) < 0)
		d->api_url = NULL;
	if (d->api_url == NULL)
		return -ENOMEM;
	if ((sbx = env_or("E2B_SANDBOX_URL", NULL)) != NULL &&
	    (d->sandbox_url = trimmed_url(sbx)) == NULL)
		return -ENOMEM;
	if (strncmp(d->api_url, "http://", 7) != 0 &&
	    strncmp(d->api_url, "https://", 8) != 0) {
		msc_cfg_error("E2B_API_URL must start with http:// or "
			      "https://, got: %s", d->api_url);
		return -EINVAL;
	}
	d->metadata = e2b_conv_pairs(ec->e2b_metadata, ec->n_e2b_metadata);
	d->envs = e2b_conv_pairs(ec->e2b_env, ec->n_e2b_env);
	if (d->metadata == NULL || d->envs == NULL)
		return -ENOMEM;
	/* Our keys are ours: a user pair cannot fake or hide them. */
	json_object_del(d->metadata, E2B_META_OWNED);
	json_object_del(d->metadata, E2B_META_ID);
	json_object_del(d->metadata, E2B_META_TEMPORARY);
	json_object_del(d->metadata, E2B_META_TEMPLATE);
	json_object_del(d->metadata, E2B_META_PRINCIPAL);
	return msc_http_init();
}

int
e2b_driver_start(const struct msc_cfg *cfg, const char *url,
    struct e2b_driver **dp)
{
	struct e2b_driver *d;
	int rv;

	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	if (e2b_ops_full.exec == NULL) {
		e2b_ops_full = e2b_ops;
		e2b_ops_full.processes = e2b_processes;
		e2b_ops_full.restart_keeps_processes = true;
		e2b_ops_full.expose_port = e2b_expose_port;
		e2b_ops_full.create_owned = create_owned;
		e2b_ops_full.owner = owner;
		e2b_snaps_fill(&e2b_ops_full);
	}
	if ((rv = cloud_snap_init(&d->snap, &e2b_snap_ops, d, cfg)) != 0 ||
	    (rv = configure(d, cfg)) != 0 ||
	    (rv = msc_known_new(sizeof(struct e2b_known), &d->known)) != 0 ||
	    (rv = cloud_ports_new(&d->ports)) != 0 ||
	    (rv = e2b_lease_start(d)) != 0 ||
	    (rv = msc_driver_start(url, &e2b_ops_full, d,
		 (int)cfg->driver_workers, &d->svc)) != 0)
		goto fail;
	msc_driver_limit_owners(d->svc, (int)cfg->driver_owner_workers);
	*dp = d;
	return 0;
fail:
	e2b_driver_stop(d);
	return rv;
}

void
e2b_driver_stop(struct e2b_driver *d)
{
	if (d == NULL)
		return;
	if (!msc_driver_stop(d->svc))
		return;         /* a job still runs and uses d: the process ends */
	msc_lease_renewer_stop(d->lease);
	msc_known_free(d->known);
	cloud_ports_free(d->ports);
	cloud_snap_fini(&d->snap);
	if (d->key_hdr != NULL) {
		explicit_bzero(d->key_hdr, strlen(d->key_hdr));
		free(d->key_hdr);
	}
	json_decref(d->metadata);
	json_decref(d->envs);
	free(d->api_url);
	free(d->sandbox_url);
	free(d->domain);
	free(d);
}
