/*
 * e2b_sandboxes.c - computers as E2B sandboxes: create with the
 * kilntainers metadata, find again by metadata, connect (resumes a
 * paused one), pause or kill at stop, list. All blocking, on the pool.
 * Above the control-plane call (e2b_api.c) and the leases (e2b_lease.c).
 */
#include "e2b_driver_int.h"
#include "e2b_lease.h"

#include "msc_netpolicy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_driver.h"
#include "msc_lease_renewer.h"
#include "msc_log.h"
#include "msc_principal.h"

#define T_CREATE 60000
#define T_OP 30000

/* What remember() learnt of a sandbox, for msc_known_update. */
struct learnt {
	const char *sbx, *token, *domain, *envd_version, *temporary;
	bool fresh_ttl;
};

static void
learn(void *rec, void *arg)
{
	struct e2b_known *k = rec;
	const struct learnt *l = arg;

	snprintf(k->sbx, sizeof(k->sbx), "%s", l->sbx);
	snprintf(k->token, sizeof(k->token), "%s", l->token);
	snprintf(k->domain, sizeof(k->domain), "%s", l->domain);
	snprintf(k->envd_version, sizeof(k->envd_version), "%s",
	    l->envd_version);
	if (l->temporary != NULL)
		k->temporary = strcmp(l->temporary, "false") != 0;
	if (l->fresh_ttl)
		k->refreshed_ms = msc_now_ms();
}

/* Whether E2B's sandboxID and domain fit a URL's host (and k). */
static bool
host_ok(const char *sbx, const char *dom)
{
	struct e2b_known *k = NULL;

	return sbx != NULL && strlen(sbx) < sizeof(k->sbx) &&
	    strchr(sbx, '.') == NULL && cloud_ports_host_ok(sbx) &&
	    strlen(dom) < sizeof(k->domain) && cloud_ports_host_ok(dom);
}

/* 0, or -EPROTO (err) when E2B named a host a URL cannot have. */
static int
remember(struct e2b_driver *d, const char *id, json_t *sbx,
    bool fresh_ttl, char *err, size_t errlen)
{
	const char *s = json_string_value(json_object_get(sbx, "sandboxID"));
	const char *tok = json_string_value(json_object_get(sbx,
	    "envdAccessToken"));
	const char *dom = json_string_value(json_object_get(sbx, "domain"));
	const char *ver = json_string_value(json_object_get(sbx,
	    "envdVersion"));
	struct learnt l = { .sbx = s, .token = tok ? tok : "",
		.domain = dom ? dom : d->domain, .envd_version = ver ? ver : "",
		.temporary = e2b_conv_meta(sbx, E2B_META_TEMPORARY),
		.fresh_ttl = fresh_ttl };

	if (!host_ok(s, l.domain)) {
		/* Never cut short nor passed on: it goes into URLs. */
		msc_log_warn("e2b: computer %s: E2B named a sandbox or domain "
		    "that is not a host name", id);
		snprintf(err, errlen, "E2B gave computer '%s' a sandbox id or "
		    "domain that is not a host name", id);
		return -EPROTO;
	}
	/* A cache: a computer not remembered is looked up again (and
	 * e2b_lookup says -ENOMEM). */
	if (msc_known_update(d->known, id, true, learn, &l) != 0)
		msc_log_debug("e2b: cannot remember computer %s", id);
	if (l.temporary == NULL || strcmp(l.temporary, "false") != 0)
		(void)msc_lease_renewer_hold(d->lease, id, s);
	return 0;
}

void
e2b_forget(struct e2b_driver *d, const char *id)
{
	msc_known_forget(d->known, id);
	msc_lease_renewer_drop(d->lease, id);
}

/* Finds computer `id`'s sandbox (running or paused) by metadata. */
static int
find(struct e2b_driver *d, const char *id, json_t **sp, char *err,
    size_t errlen)
{
	char path[1024], q[768];
	json_t *arr = NULL, *s, *hit = NULL;
	size_t i;
	int rv;

	if ((rv = e2b_conv_meta_query(E2B_META_ID, id, q, sizeof(q))) != 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/v2/sandboxes?metadata=%s&state=running"
				     "%%2Cpaused&limit=100", q);
	if ((rv = e2b_api(d, "GET", path, NULL, T_OP, true, &arr, NULL, 0,
		 err, errlen)) != 0)
		return rv;
	json_array_foreach (arr, i, s) {
		const char *m = e2b_conv_meta(s, E2B_META_ID);

		if (m != NULL && strcmp(m, id) == 0) {
			hit = s;
			break;
		}
	}
	if (hit == NULL) {
		json_decref(arr);
		e2b_forget(d, id);
		snprintf(err, errlen, "Computer '%s' was not found.", id);
		return -ENOENT;
	}
	*sp = json_incref(hit);
	json_decref(arr);
	return 0;
}

static int
kill_sbx(struct e2b_driver *d, const char *sbx, char *err, size_t errlen)
{
	char path[256];
	int rv;

	cloud_ports_retire(d->ports, sbx);      /* no exposure on it now */
	snprintf(path, sizeof(path), "/sandboxes/%s", sbx);
	rv = e2b_api(d, "DELETE", path, NULL, T_OP, true, NULL, NULL, 0, err,
	    errlen);
	return rv == -ENOENT ? 0 : rv;
}

int
e2b_create(struct e2b_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return e2b_create_tpl(d, id, temporary, d->template_id, "", out, err,
	    errlen);
}

int
e2b_create_owned(struct e2b_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen)
{
	return e2b_create_tpl(d, id, temporary, d->template_id, principal,
	    out, err, errlen);
}

int
e2b_owner(struct e2b_driver *d, const char *id, char *tag, size_t taglen,
    char *err, size_t errlen)
{
	json_t *s = NULL;
	const char *p;
	int rv;

	if ((rv = find(d, id, &s, err, errlen)) != 0)
		return rv;
	p = e2b_conv_meta(s, E2B_META_PRINCIPAL);
	snprintf(tag, taglen, "%s", p != NULL ? p : "");
	json_decref(s);
	return 0;
}

int
e2b_create_tpl(struct e2b_driver *d, const char *id, bool temporary,
    const char *template_id, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	json_t *body, *s = NULL;
	int rv;

	rv = find(d, id, &s, err, errlen);
	json_decref(s);
	s = NULL;
	if (rv == 0) {
		snprintf(err, errlen, "Computer '%s' already exists in E2B.", id);
		return -EEXIST;
	}
	if (rv != -ENOENT)
		return rv;
	body = e2b_conv_create_body(template_id,
	    e2b_lease_ttl(d, temporary), d->metadata,
	    d->envs, d->cfg->network, id, temporary);
	if (body != NULL && principal[0] != '\0' &&    /* --tokens-file's */
	    json_object_set_new(json_object_get(body, "metadata"),
		E2B_META_PRINCIPAL, json_string(principal)) != 0) {
		json_decref(body);
		body = NULL;
	}
	if (body == NULL)
		return -ENOMEM;
	if (d->cfg->network && d->cfg->n_net_allow > 0) {
		char **allow = NULL, why[512];
		size_t n = 0;

		rv = msc_net_list_parse(d->cfg->net_allow, d->cfg->n_net_allow,
		    &allow, &n, why, sizeof(why));
		if (rv == 0)
			rv = e2b_conv_network(body, allow, n);
		msc_net_list_free(allow, n);
		if (rv != 0) {
			json_decref(body);
			snprintf(err, errlen, "the network allowlist: %s", why);
			return rv;
		}
	}
	/* Not retried on 5xx: a retry could make a second sandbox. */
	rv = e2b_api(d, "POST", "/sandboxes", body, T_CREATE, false, &s, NULL,
	    0, err, errlen);
	json_decref(body);
	if (rv != 0) {
		char detail[E2B_ERRLEN];

		snprintf(detail, sizeof(detail), "%s", err);
		snprintf(err, errlen, "Failed to create E2B sandbox: %s", detail);
		return rv;
	}
	if (json_string_value(json_object_get(s, "sandboxID")) == NULL) {
		json_decref(s);
		snprintf(err, errlen, "Failed to create E2B sandbox: the reply "
				      "has no sandboxID");
		return -EPROTO;
	}
	json_object_set_new(s, "metadata", json_pack("{s:s, s:s, s:s}",
	    E2B_META_ID, id, E2B_META_TEMPORARY, temporary ? "true" : "false",
	    E2B_META_TEMPLATE, template_id));
	if (principal[0] != '\0')
		json_object_set_new(json_object_get(s, "metadata"),
		    E2B_META_PRINCIPAL, json_string(principal));
	json_object_set_new(s, "state", json_string("running"));
	if ((rv = remember(d, id, s, true, err, errlen)) == 0)
		rv = e2b_conv_computer(s, template_id, out);
	msc_log_info("created %s computer %s (E2B sandbox %s)",
	    temporary ? "temporary" : "permanent", id,
	    json_string_value(json_object_get(s, "sandboxID")));
	json_decref(s);
	return rv;
}

/* POST /connect: resumes a paused sandbox; the reply has the token. */
static int
connect_sbx(struct e2b_driver *d, const char *id, json_t *s, char *err,
    size_t errlen)
{
	const char *sbx = json_string_value(json_object_get(s, "sandboxID"));
	const char *tmp = e2b_conv_meta(s, E2B_META_TEMPORARY);
	json_t *body = json_pack("{s:I}", "timeout", (json_int_t)e2b_lease_ttl(d,
	    tmp == NULL || strcmp(tmp, "false") != 0));
	json_t *r = NULL, *v;
	const char *key;
	char path[256];
	int rv;

	snprintf(path, sizeof(path), "/sandboxes/%s/connect", sbx);
	rv = e2b_api(d, "POST", path, body, T_CREATE, true, &r, NULL, 0, err,
	    errlen);
	json_decref(body);
	if (rv != 0)
		return rv;
	json_object_foreach (r, key, v)
		if (strcmp(key, "metadata") != 0)
			json_object_set(s, key, v);
	json_object_set_new(s, "state", json_string("running"));
	json_decref(r);
	return remember(d, id, s, true, err, errlen);
}

int
e2b_running(struct e2b_driver *d, const char *id, json_t **sp, char *err,
    size_t errlen)
{
	json_t *s = NULL;
	const char *state;
	int rv;

	if ((rv = find(d, id, &s, err, errlen)) != 0)
		return rv;
	state = json_string_value(json_object_get(s, "state"));
	if (state != NULL && strcmp(state, "paused") == 0 &&
	    (rv = connect_sbx(d, id, s, err, errlen)) != 0) {
		json_decref(s);
		return rv;
	}
	*sp = s;
	return 0;
}

int
e2b_kill(struct e2b_driver *d, const char *id, json_t *s, char *err,
    size_t errlen)
{
	int rv = kill_sbx(d, json_string_value(json_object_get(s,
	    "sandboxID")), err, errlen);

	e2b_forget(d, id);
	return rv;
}

int
e2b_attach(struct e2b_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	json_t *s = NULL;
	const char *state;
	int rv;

	if ((rv = find(d, id, &s, err, errlen)) != 0)
		return rv;
	state = json_string_value(json_object_get(s, "state"));
	if (state != NULL && strcmp(state, "paused") == 0)
		msc_log_info("resuming paused computer %s", id);
	if ((rv = connect_sbx(d, id, s, err, errlen)) == 0)
		rv = e2b_conv_computer(s, d->template_id, out);
	json_decref(s);
	return rv;
}

int
e2b_restart(struct e2b_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	json_t *s = NULL;
	char path[256];
	int rv;

	/* E2B has no reboot: pause and resume (files and memory kept). */
	if ((rv = find(d, id, &s, err, errlen)) != 0)
		return rv;
	snprintf(path, sizeof(path), "/sandboxes/%s/pause",
	    json_string_value(json_object_get(s, "sandboxID")));
	rv = e2b_api(d, "POST", path, NULL, T_CREATE, true, NULL, NULL, 0, err,
	    errlen);
	json_decref(s);
	if (rv != 0 && rv != -EEXIST)
		return rv;
	return e2b_attach(d, id, out, err, errlen);
}

int
e2b_reset(struct e2b_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];
	const char *tmp, *p;
	char old[128];
	json_t *s = NULL;
	bool temporary;
	int rv;

	if ((rv = find(d, id, &s, err, errlen)) != 0)
		return rv;
	tmp = e2b_conv_meta(s, E2B_META_TEMPORARY);
	temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	/* The new sandbox is the same principal's. */
	p = e2b_conv_meta(s, E2B_META_PRINCIPAL);
	snprintf(principal, sizeof(principal), "%s", p != NULL ? p : "");
	snprintf(old, sizeof(old), "%s",
	    json_string_value(json_object_get(s, "sandboxID")));
	rv = kill_sbx(d, old, err, errlen);
	json_decref(s);
	e2b_forget(d, id);
	if (rv != 0)
		return rv;
	if ((rv = e2b_create_owned(d, id, temporary, principal, out, err,
	    errlen)) == 0) {
		cloud_ports_moved(d->ports, id, old, out->sandbox_id);
		msc_log_info("factory reset computer %s", id);
	}
	return rv;
}

int
e2b_stop(struct e2b_driver *d, const char *id, bool remove, char *err,
    size_t errlen)
{
	json_t *s = NULL;
	const char *tmp, *sbx, *state;
	char path[256];
	int rv;

	if ((rv = find(d, id, &s, err, errlen)) == -ENOENT)
		/* Gone already (E2B ended it: a timeout): its ports too. */
		cloud_ports_forget(d->ports, id);
	if (rv != 0)
		return rv == -ENOENT && !remove ? 0 : rv;
	tmp = e2b_conv_meta(s, E2B_META_TEMPORARY);
	sbx = json_string_value(json_object_get(s, "sandboxID"));
	state = json_string_value(json_object_get(s, "state"));
	if (remove || tmp == NULL || strcmp(tmp, "false") != 0) {
		rv = kill_sbx(d, sbx, err, errlen);
		e2b_forget(d, id);
		if (rv == 0)
			cloud_ports_forget(d->ports, id);
		if (rv == 0)
			msc_log_info("killed computer %s (E2B sandbox %s)", id,
			    sbx);
	} else if (state == NULL || strcmp(state, "paused") != 0) {
		snprintf(path, sizeof(path), "/sandboxes/%s/pause", sbx);
		rv = e2b_api(d, "POST", path, NULL, T_CREATE, true, NULL, NULL,
		    0, err, errlen);
		if (rv == -EEXIST)      /* 409: not running any more */
			rv = 0;
		if (rv == 0)
			msc_log_info("paused computer %s (E2B sandbox %s)", id,
			    sbx);
	}
	json_decref(s);
	return rv;
}

int
e2b_list(struct e2b_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen)
{
	char path[2048], q[256], next[512] = "", esc[1024];
	json_t *arr = NULL, *s;
	size_t i, cap = 0;
	uint64_t mark = cloud_ports_mark(d->ports);
	int rv, pages = 0;

	if ((rv = e2b_conv_meta_query(E2B_META_OWNED, "true", q,
		 sizeof(q))) != 0)
		return rv;
	do {
		int n = snprintf(path, sizeof(path), "/v2/sandboxes?metadata=%s"
				 "&state=running%%2Cpaused&limit=100", q);

		if (next[0] != '\0' &&
		    msc_http_escape(next, esc, sizeof(esc)) == 0)
			snprintf(path + n, sizeof(path) - (size_t)n,
			    "&nextToken=%s", esc);
		if ((rv = e2b_api(d, "GET", path, NULL, T_OP, true, &arr, next,
			 sizeof(next), err, errlen)) != 0)
			return rv;
		json_array_foreach (arr, i, s) {
			Msc__V1__Computer *c, **grown;

			if (e2b_conv_meta(s, E2B_META_ID) == NULL ||
			    !json_is_string(json_object_get(json_object_get(s,
				"metadata"), E2B_META_OWNED)))
				continue;
			if (out->n_computers == cap) {
				cap = cap ? cap * 2 : 16;
				grown = realloc(out->computers,
				    cap * sizeof(*grown));
				if (grown == NULL) {
					json_decref(arr);
					return -ENOMEM;
				}
				out->computers = grown;
			}
			if ((c = malloc(sizeof(*c))) == NULL)
				break;
			*c = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
			out->computers[out->n_computers++] = c;
			if ((rv = e2b_conv_computer(s, d->template_id, c)) != 0)
				break;
		}
		json_decref(arr);
		arr = NULL;
	} while (rv == 0 && next[0] != '\0' && ++pages < 50);
	if (rv == 0)
		rv = cloud_ports_fill_list(d->ports, out, next[0] == '\0',
		    mark);
	return rv;
}

int
e2b_lookup(struct e2b_driver *d, const char *id, struct e2b_known *k,
    char *err, size_t errlen)
{
	json_t *s = NULL;
	int rv;

	if (msc_known_get(d->known, id, k))
		return 0;
	/* Not known here (another driver made it): connect gets a token. */
	if ((rv = find(d, id, &s, err, errlen)) != 0)
		return rv;
	rv = connect_sbx(d, id, s, err, errlen);
	json_decref(s);
	if (rv != 0)
		return rv;
	return msc_known_get(d->known, id, k) ? 0 : -ENOMEM;
}

int
e2b_died(struct e2b_driver *d, const char *id, const char *sbx, char *err,
    size_t errlen)
{
	char path[256], ignore[E2B_ERRLEN];
	json_t *s = NULL;
	const char *state;
	bool dead;
	int rv;

	snprintf(path, sizeof(path), "/sandboxes/%s", sbx);
	rv = e2b_api(d, "GET", path, NULL, 15000, true, &s, NULL, 0, ignore,
	    sizeof(ignore));
	state = json_string_value(json_object_get(s, "state"));
	dead = rv == -ENOENT || (rv == 0 && state != NULL &&
				    strcmp(state, "running") != 0);
	json_decref(s);
	if (!dead)
		return 0;
	e2b_forget(d, id);
	rv = msc_driver_died(err, errlen, id, "its E2B sandbox %s was killed, "
	    "paused or expired. The next call starts it again.", sbx);
	msc_log_warn("e2b: computer %s (sandbox %s) died", id, sbx);
	return rv;
}
