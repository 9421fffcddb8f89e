/*
 * modal_sandboxes.c - computers as Modal sandboxes: create with the
 * kilntainers tags (a failed create terminates what it made; its
 * definition takes the lease's entrypoint, modal_lease.c, and the tunnels,
 * modal_ports.c), attach, terminate, restart through a filesystem
 * snapshot, list. Finding a computer's sandbox is modal_lookup.c's. All
 * blocking, on the pool.
 */
#include "modal_driver_int.h"
#include "modal_cfg.h"
#include "modal_lease.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_driver.h"
#include "msc_log.h"
#include "msc_principal.h"
#include "msc_netpolicy.h"

#define T_OP 30000
#define T_CREATE 60000
#define T_READINESS_S 60

int
modal_terminate(struct modal_driver *d, const char *sbx, char *err,
    size_t errlen)
{
	Modal__Client__SandboxTerminateRequest req =
	    MODAL__CLIENT__SANDBOX_TERMINATE_REQUEST__INIT;
	Modal__Client__SandboxTerminateResponse *resp = NULL;
	int rv;

	cloud_ports_retire(d->exposed, sbx);    /* no exposure on it now */
	req.sandbox_id = (char *)sbx;
	rv = modal_call(d, "SandboxTerminate", &req.base,
	    &modal__client__sandbox_terminate_response__descriptor,
	    (ProtobufCMessage **)&resp, T_OP, true, err, errlen);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rv == -ENOENT ? 0 : rv;
}

static int
fill(Msc__V1__Computer *out, const char *id, const char *sbx,
    bool temporary, const char *image, const char *principal)
{
	char when[32];

	modal_conv_time((double)time(NULL), when, sizeof(when));
	out->computer_id = strdup(id);
	out->sandbox_id = strdup(sbx);
	out->temporary = temporary;
	out->image = strdup(image);
	out->state = strdup("running");
	out->created_at = strdup(when);
	out->backend = strdup("modal");
	out->principal = strdup(principal);
	return out->computer_id && out->sandbox_id && out->image &&
		out->state && out->created_at && out->backend &&
		out->principal ? 0 : -ENOMEM;
}

/* Proves the sandbox runs commands: `<shell> -c 'echo kilntainers-ready'`. */
static int
readiness(struct modal_driver *d, struct modal_known *k, char *err,
    size_t errlen)
{
	const char *argv[] = { d->cfg->shell, "-c", "echo kilntainers-ready" };
	struct modal_run r = { 0 };
	char detail[MODAL_ERRLEN] = "";
	int rv;

	rv = modal_exec_argv(d, k, argv, 3, T_READINESS_S, &r, detail,
	    sizeof(detail));
	if (rv == 0 && r.exited && r.out != NULL &&
	    strstr(r.out, "kilntainers-ready") != NULL) {
		modal_run_fini(&r);
		return 0;
	}
	if (rv == 0)
		snprintf(detail, sizeof(detail), "exit %d%s%.300s",
		    r.exited ? r.exit_code : 124, r.err && *r.err ? ": " : "",
		    r.err ? r.err : "");
	snprintf(err, errlen, "Modal sandbox %s started but readiness check "
			      "failed (%s). If the image has no %s, pass "
			      "--shell /bin/sh.", k->sandbox_id, detail,
	    d->cfg->shell);
	modal_run_fini(&r);
	return rv != 0 && rv != -EIO ? rv : -EIO;
}

/* Makes computer `id`'s sandbox from image_id; nothing left on failure. */
static int
create_sandbox(struct modal_driver *d, const char *id, bool temporary,
    const char *image_id, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	Modal__Client__SandboxCreateRequest req =
	    MODAL__CLIENT__SANDBOX_CREATE_REQUEST__INIT;
	Modal__Client__SandboxCreateResponse *resp = NULL;
	Modal__Client__Sandbox def = MODAL__CLIENT__SANDBOX__INIT;
	Modal__Client__Resources res = MODAL__CLIENT__RESOURCES__INIT;
	Modal__Client__GPUConfig gpu = MODAL__CLIENT__GPUCONFIG__INIT;
	Modal__Client__NetworkAccess net = MODAL__CLIENT__NETWORK_ACCESS__INIT;
	Modal__Client__SchedulerPlacement place =
	    MODAL__CLIENT__SCHEDULER_PLACEMENT__INIT;
	Modal__Client__SandboxTag tag[5], *tags[5];
	Modal__Client__PortSpecs specs = MODAL__CLIENT__PORT_SPECS__INIT;
	Modal__Client__PortSpec spec[MODAL_PORTS_MAX], *specp[MODAL_PORTS_MAX];
	char *region = (char *)modal_cfg(d->cfg)->region, app_id[128], sbx[128];
	char ignore[MODAL_ERRLEN];
	struct modal_known k;
	struct modal_lease_entry entry;
	/* The principal's tag (--tokens-file's) when there is one. */
	const char *kv[5][2] = { { MODAL_TAG_OWNED, "true" }, { MODAL_TAG_ID, id },
		{ MODAL_TAG_TEMPORARY, temporary ? "true" : "false" },
		{ MODAL_TAG_IMAGE, d->image }, { MODAL_TAG_PRINCIPAL, principal } };
	int ntags = principal[0] != '\0' ? 5 : 4;
	char **allowed = NULL;
	size_t n_allowed = 0;
	int rv;

	if ((rv = modal_app(d, app_id, sizeof(app_id), err, errlen)) != 0)
		return rv;
	for (int i = 0; i < ntags; i++) {
		modal__client__sandbox_tag__init(&tag[i]);
		tag[i].tag_name = (char *)kv[i][0];
		tag[i].tag_value = (char *)kv[i][1];
		tags[i] = &tag[i];
	}
	res.milli_cpu = d->milli_cpu;
	res.memory_mb = d->memory_mb;
	if (d->gpu_type[0] != '\0') {
		gpu.gpu_type = d->gpu_type;
		gpu.count = d->gpu_count;
		res.gpu_config = &gpu;
	}
	net.network_access_type = d->cfg->network
	    ? MODAL__CLIENT__NETWORK_ACCESS__NETWORK_ACCESS_TYPE__OPEN
	    : MODAL__CLIENT__NETWORK_ACCESS__NETWORK_ACCESS_TYPE__BLOCKED;
	def.image_id = (char *)image_id;
	def.resources = &res;
	def.timeout_secs = d->lifetime_s;
	def.idle_timeout_secs = modal_lease_idle_s(d, temporary);
	modal_lease_entrypoint(d, temporary, &entry, &def);
	def.block_network = !d->cfg->network;
	def.network_access = &net;
	if (d->cfg->network && d->cfg->n_net_allow > 0) {
		char why[512];

		/* Allowlist: blocked but for the domains (--network-allow). */
		if ((rv = msc_net_list_parse(d->cfg->net_allow,
		    d->cfg->n_net_allow, &allowed, &n_allowed, why,
		    sizeof(why))) != 0) {
			msc_net_list_free(allowed, n_allowed);
			snprintf(err, errlen, "the network allowlist: %s", why);
			return rv;
		}
		net.network_access_type =
		    MODAL__CLIENT__NETWORK_ACCESS__NETWORK_ACCESS_TYPE__BLOCKED;
		net.allowed_domains = allowed;
		net.n_allowed_domains = n_allowed;
	}
	if (region != NULL && *region != '\0') {
		place.n_regions = 1;
		place.regions = &region;
		def.scheduler_placement = &place;
	}
	modal_ports_open(d, &def, &specs, spec, specp);
	req.app_id = app_id;
	req.definition = &def;
	req.n_tags = (size_t)ntags;
	req.tags = tags;
	/* Not retried: a second attempt could make a second sandbox. */
	rv = modal_call(d, "SandboxCreate", &req.base,
	    &modal__client__sandbox_create_response__descriptor,
	    (ProtobufCMessage **)&resp, T_CREATE, false, err, errlen);
	msc_net_list_free(allowed, n_allowed);
	if (rv != 0)
		return rv;
	snprintf(sbx, sizeof(sbx), "%s", resp->sandbox_id ? resp->sandbox_id
							   : "");
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	if (sbx[0] == '\0') {
		snprintf(err, errlen, "Modal SandboxCreate: no sandbox id in the "
				      "reply");
		return -EPROTO;
	}
	if ((rv = modal_connect(d, id, sbx, temporary, &k, err,
	    errlen)) != 0 ||
	    (rv = readiness(d, &k, err, errlen)) != 0 ||
	    (rv = fill(out, id, sbx, temporary, d->image, principal)) != 0) {
		modal_forget(d, id);
		if (modal_terminate(d, sbx, ignore, sizeof(ignore)) != 0)
			msc_log_warn("modal: cannot terminate sandbox %s after a "
				     "failed create: %s", sbx, ignore);
		return rv;
	}
	msc_log_info("created %s computer %s (Modal sandbox %s)",
	    temporary ? "temporary" : "permanent", id, sbx);
	return 0;
}

static int
create_err(int rv, char *err, size_t errlen)
{
	char detail[MODAL_ERRLEN];

	if (rv == -EACCES || rv == -ECONNREFUSED)
		return rv;      /* already says what to do */
	snprintf(detail, sizeof(detail), "%s", err);
	snprintf(err, errlen, "Failed to create Modal sandbox: %s", detail);
	return rv;
}

int
modal_create(struct modal_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return modal_create_owned(d, id, temporary, "", out, err, errlen);
}

/* The principal tag sandbox s records ("" for none) into buf. */
static void
tag_principal(const ModalSandboxInfo *s, char *buf, size_t len)
{
	const char *p = modal_conv_tag(s, MODAL_TAG_PRINCIPAL);

	snprintf(buf, len, "%s", p != NULL ? p : "");
}

int
modal_owner(struct modal_driver *d, const char *id, char *tag, size_t taglen,
    char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	ModalSandboxInfo *s;
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) != 0)
		return rv;
	tag_principal(s, tag, taglen);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

int
modal_create_owned(struct modal_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	ModalSandboxInfo *s;
	char image_id[128];
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) == 0) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		snprintf(err, errlen, "Computer '%s' already exists in Modal.",
		    id);
		return -EEXIST;
	}
	if (rv != -ENOENT)
		return rv;
	/* A new computer: an earlier one's of this id are not its. */
	cloud_ports_forget(d->exposed, id);
	if ((rv = modal_image(d, image_id, sizeof(image_id), err, errlen)) != 0 ||
	    (rv = create_sandbox(d, id, temporary, image_id, principal, out,
		 err, errlen)) != 0)
		return create_err(rv, err, errlen);
	return 0;
}

int
modal_attach(struct modal_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	ModalSandboxInfo *s;
	struct modal_known k;
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) != 0)
		return rv;
	rv = modal_connect(d, id, s->id, modal_tag_temporary(s), &k, err,
	    errlen);
	if (rv == -ECONNABORTED) {
		/* Ended between the list and now: as if it was not there. */
		snprintf(err, errlen, "Computer '%s' was not found.", id);
		rv = -ENOENT;
	}
	if (rv == 0)
		rv = modal_conv_computer(s, d->image, out);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	explicit_bzero(&k, sizeof(k));
	return rv;
}

int
modal_snapshot_fs(struct modal_driver *d, const char *id, char *image_id,
    size_t len, char *sbx, size_t sbxlen, bool *temporary, char *principal,
    size_t plen, char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	Modal__Client__SandboxSnapshotFsRequest req =
	    MODAL__CLIENT__SANDBOX_SNAPSHOT_FS_REQUEST__INIT;
	Modal__Client__SandboxSnapshotFsResponse *snap = NULL;
	ModalSandboxInfo *s;
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) != 0)
		return rv;
	snprintf(sbx, sbxlen, "%s", s->id);
	*temporary = modal_tag_temporary(s);
	if (principal != NULL)
		tag_principal(s, principal, plen);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	req.sandbox_id = sbx;
	req.timeout = 55;
	if ((rv = modal_call(d, "SandboxSnapshotFs", &req.base,
		 &modal__client__sandbox_snapshot_fs_response__descriptor,
		 (ProtobufCMessage **)&snap, 120000, false, err, errlen)) != 0)
		return rv;
	if (snap->image_id != NULL && snap->image_id[0] != '\0' &&
	    strlen(snap->image_id) < len && (snap->result == NULL ||
					  snap->result->status ==
	    MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_SUCCESS))
		snprintf(image_id, len, "%s", snap->image_id);
	else {
		char why[600];

		modal_conv_ended(snap->result, why, sizeof(why));
		snprintf(err, errlen, "Modal could not snapshot sandbox %s: "
				      "the snapshot %s", sbx, why);
		rv = -EIO;
	}
	protobuf_c_message_free_unpacked(&snap->base, NULL);
	return rv;
}

int
modal_restart(struct modal_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	char image_id[128] = "", sbx[128];
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];
	bool temporary;
	int rv;

	/* No reboot on Modal: snapshot the filesystem, start it again. */
	if ((rv = modal_snapshot_fs(d, id, image_id, sizeof(image_id), sbx,
	    sizeof(sbx), &temporary, principal, sizeof(principal), err,
	    errlen)) != 0)
		return rv;
	modal_forget(d, id);
	if ((rv = modal_terminate(d, sbx, err, errlen)) != 0)
		return rv;
	if ((rv = create_sandbox(d, id, temporary, image_id, principal, out,
		 err, errlen)) != 0)
		return create_err(rv, err, errlen);
	cloud_ports_moved(d->exposed, id, sbx, out->sandbox_id);
	msc_log_info("restarted computer %s (Modal sandbox %s, files kept)", id,
	    out->sandbox_id);
	return 0;
}

int
modal_replace(struct modal_driver *d, const char *id, const char *image_id,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	char why[MODAL_ERRLEN], ignore[MODAL_ERRLEN], base[128];
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];
	ModalSandboxInfo *s;
	bool temporary;
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) != 0)
		return rv;
	temporary = modal_tag_temporary(s);
	tag_principal(s, principal, sizeof(principal));
	rv = modal_terminate(d, s->id, err, errlen);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	modal_forget(d, id);
	if (rv != 0)
		return rv;
	if ((rv = create_sandbox(d, id, temporary, image_id, principal, out,
	    err, errlen)) == 0)
		return 0;
	rv = create_err(rv, err, errlen);
	/* Never left gone: made again from the configured image. */
	snprintf(why, sizeof(why), "%s", err);
	if (modal_image(d, base, sizeof(base), ignore, sizeof(ignore)) != 0 ||
	    create_sandbox(d, id, temporary, base, principal, &c, ignore,
	    sizeof(ignore)) != 0) {
		msc_log_warn("restore of %s failed and so did its factory "
		    "reset: %s", id, ignore);
		return rv;
	}
	msc_computer_fini(&c);
	snprintf(err, errlen, MSC_SNAPSHOT_FELL_BACK, why);
	return rv;
}

int
modal_create_image(struct modal_driver *d, const char *id, bool temporary,
    const char *image_id, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	ModalSandboxInfo *s;
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) == 0) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		snprintf(err, errlen, "Computer '%s' already exists in Modal.",
		    id);
		return -EEXIST;
	}
	if (rv != -ENOENT)
		return rv;
	cloud_ports_forget(d->exposed, id);     /* a new computer's */
	if ((rv = create_sandbox(d, id, temporary, image_id, principal, out,
	    err, errlen)) != 0)
		return create_err(rv, err, errlen);
	return 0;
}

int
modal_reset(struct modal_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	ModalSandboxInfo *s;
	char image_id[128], old[128], principal[MSC_PRINCIPAL_TAG_LEN + 1];
	bool temporary;
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) != 0)
		return rv;
	temporary = modal_tag_temporary(s);
	tag_principal(s, principal, sizeof(principal)); /* the new one's too */
	snprintf(old, sizeof(old), "%s", s->id);
	rv = modal_terminate(d, s->id, err, errlen);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	modal_forget(d, id);
	if (rv != 0)
		return rv;
	if ((rv = modal_image(d, image_id, sizeof(image_id), err, errlen)) != 0 ||
	    (rv = create_sandbox(d, id, temporary, image_id, principal, out,
		 err, errlen)) != 0)
		return create_err(rv, err, errlen);
	cloud_ports_moved(d->exposed, id, old, out->sandbox_id);
	msc_log_info("factory reset computer %s", id);
	return 0;
}

int
modal_stop(struct modal_driver *d, const char *id, bool remove, char *err,
    size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	ModalSandboxInfo *s;
	int rv;

	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) == -ENOENT)
		/* Gone already (Modal ended it: its lifetime): its ports
		 * too. */
		cloud_ports_forget(d->exposed, id);
	if (rv != 0)
		return rv == -ENOENT && !remove ? 0 : rv;
	if (remove || modal_tag_temporary(s)) {
		if ((rv = modal_terminate(d, s->id, err, errlen)) == 0) {
			msc_log_info("terminated computer %s (Modal sandbox %s)",
			    id, s->id);
			cloud_ports_forget(d->exposed, id);
		}
		modal_forget(d, id);
	} else
		/* Modal cannot pause: it runs on until its lifetime ends. */
		msc_log_info("kept permanent computer %s (Modal sandbox %s)",
		    id, s->id);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rv;
}

static int
add_computer(Msc__V1__ComputerList *out, size_t *cap,
    const ModalSandboxInfo *s, const char *image)
{
	Msc__V1__Computer *c, **grown;

	for (size_t i = 0; i < out->n_computers; i++)
		if (strcmp(out->computers[i]->sandbox_id, s->id) == 0)
			return 0;       /* seen on an earlier page */
	if (out->n_computers == *cap) {
		size_t n = *cap ? *cap * 2 : 16;

		if ((grown = realloc(out->computers, n * sizeof(*grown))) == NULL)
			return -ENOMEM;
		out->computers = grown;
		*cap = n;
	}
	if ((c = malloc(sizeof(*c))) == NULL)
		return -ENOMEM;
	*c = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
	out->computers[out->n_computers++] = c;
	return modal_conv_computer(s, image, c);
}

int
modal_list(struct modal_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	uint64_t mark = cloud_ports_mark(d->exposed);
	double before = 0;
	size_t cap = 0;
	bool complete = false;
	int rv = 0;

	for (int page = 0; rv == 0 && page < 50; page++) {
		double oldest = before;

		if ((rv = modal_list_page(d, MODAL_TAG_OWNED, "true", before,
		    &resp, err, errlen)) != 0)
			break;
		for (size_t i = 0; rv == 0 && i < resp->n_sandboxes; i++) {
			ModalSandboxInfo *s = resp->sandboxes[i];

			if (oldest == 0 || (s->created_at > 0 &&
					       s->created_at < oldest))
				oldest = s->created_at;
			if (s->id == NULL ||
			    modal_conv_tag(s, MODAL_TAG_ID) == NULL)
				continue;
			rv = add_computer(out, &cap, s, d->image);
		}
		/* Pages go back in time; an empty or stuck one ends it. */
		if (resp->n_sandboxes == 0 || !(oldest > 0) ||
		    (before > 0 && oldest >= before)) {
			protobuf_c_message_free_unpacked(&resp->base, NULL);
			complete = rv == 0;
			break;
		}
		before = oldest;
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	}
	if (rv == 0)
		rv = cloud_ports_fill_list(d->exposed, out, complete, mark);
	return rv;
}
