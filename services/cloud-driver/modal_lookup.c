/*
 * modal_lookup.c - finding a computer's Modal sandbox again: the cache
 * of known sandboxes (d->known; a temporary one's lease held while it is
 * known, modal_lease.c renewing it), the app's sandboxes by tag, the wait
 * for a sandbox's task and its command router, and a sandbox found
 * ended. Below the sandboxes' lifecycle (modal_sandboxes.c), the leases'
 * renewal and the ports (modal_lease.c, modal_ports.c), which look
 * computers up here; above the control plane (modal_api.c).
 */
#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "msc_driver.h"
#include "msc_lease_renewer.h"
#include "msc_log.h"

#define T_OP 30000
#define T_READY_MS 180000       /* a sandbox has this long to get a task */

void
modal_remember(struct modal_driver *d, const char *id,
    const struct modal_known *k)
{
	/* A cache: a computer not remembered is looked up again. */
	if (msc_known_put(d->known, id, k) != 0)
		msc_log_debug("modal: cannot remember computer %s", id);
	if (k->temporary)
		(void)msc_lease_renewer_hold(d->lease, id, NULL);
}

void
modal_forget(struct modal_driver *d, const char *id)
{
	msc_known_forget(d->known, id);
	msc_lease_renewer_drop(d->lease, id);
}

/* The app's sandboxes with tag name=value (NULL: every one of ours). */
int
modal_list_page(struct modal_driver *d, const char *name, const char *value,
    double before, Modal__Client__SandboxListResponse **respp, char *err,
    size_t errlen)
{
	Modal__Client__SandboxListRequest req =
	    MODAL__CLIENT__SANDBOX_LIST_REQUEST__INIT;
	Modal__Client__SandboxTag tag = MODAL__CLIENT__SANDBOX_TAG__INIT;
	Modal__Client__SandboxTag *tags[1] = { &tag };
	char app_id[128];
	int rv;

	if ((rv = modal_app(d, app_id, sizeof(app_id), err, errlen)) != 0)
		return rv;
	req.app_id = app_id;
	req.environment_name = d->creds.environment;
	req.before_timestamp = before;
	tag.tag_name = (char *)name;
	tag.tag_value = (char *)value;
	req.n_tags = 1;
	req.tags = tags;
	return modal_call(d, "SandboxList", &req.base,
	    &modal__client__sandbox_list_response__descriptor,
	    (ProtobufCMessage **)respp, T_OP, true, err, errlen);
}

/*
 * Finds computer `id`'s running sandbox: *sp points into *respp, which
 * the caller frees. -ENOENT when there is none.
 */
int
modal_find(struct modal_driver *d, const char *id,
    Modal__Client__SandboxListResponse **respp, ModalSandboxInfo **sp,
    char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	int rv;

	*respp = NULL;
	if ((rv = modal_list_page(d, MODAL_TAG_ID, id, 0, &resp, err,
	    errlen)) != 0)
		return rv;
	for (size_t i = 0; i < resp->n_sandboxes; i++) {
		ModalSandboxInfo *s = resp->sandboxes[i];
		const char *tag = modal_conv_tag(s, MODAL_TAG_ID);

		if (tag == NULL || strcmp(tag, id) != 0 ||
		    modal_conv_tag(s, MODAL_TAG_OWNED) == NULL ||
		    (s->task_info != NULL &&
			modal_conv_finished(s->task_info->result)))
			continue;
		*respp = resp;
		*sp = s;
		return 0;
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	modal_forget(d, id);
	snprintf(err, errlen, "Computer '%s' was not found.", id);
	return -ENOENT;
}

/* Waits for the sandbox's task, then gets its command router. */
int
modal_connect(struct modal_driver *d, const char *id, const char *sbx,
    bool temporary, struct modal_known *k, char *err, size_t errlen)
{
	Modal__Client__SandboxGetTaskIdRequest req =
	    MODAL__CLIENT__SANDBOX_GET_TASK_ID_REQUEST__INIT;
	uint64_t end = msc_now_ms() + T_READY_MS;
	int rv;

	memset(k, 0, sizeof(*k));
	snprintf(k->sandbox_id, sizeof(k->sandbox_id), "%s", sbx);
	k->temporary = temporary;
	req.sandbox_id = (char *)sbx;
	req.timeout = 50;
	req.wait_until_ready = true;
	while (k->task_id[0] == '\0') {
		Modal__Client__SandboxGetTaskIdResponse *resp = NULL;
		char why[512];

		if (msc_now_ms() >= end) {
			snprintf(err, errlen, "Modal sandbox %s got no task "
					      "within %d s", sbx, T_READY_MS / 1000);
			return -ETIMEDOUT;
		}
		if ((rv = modal_call(d, "SandboxGetTaskId", &req.base,
			 &modal__client__sandbox_get_task_id_response__descriptor,
			 (ProtobufCMessage **)&resp, 60000, true, err,
			 errlen)) != 0)
			return rv;
		if (modal_conv_finished(resp->task_result)) {
			modal_conv_ended(resp->task_result, why, sizeof(why));
			snprintf(err, errlen, "Modal sandbox %s %s", sbx, why);
			protobuf_c_message_free_unpacked(&resp->base, NULL);
			return -ECONNABORTED;
		}
		if (resp->task_id != NULL)
			snprintf(k->task_id, sizeof(k->task_id), "%s",
			    resp->task_id);
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	}
	if ((rv = modal_router_access(d, k, err, errlen)) != 0)
		return rv;
	modal_remember(d, id, k);
	return 0;
}

bool
modal_tag_temporary(const ModalSandboxInfo *s)
{
	const char *t = modal_conv_tag(s, MODAL_TAG_TEMPORARY);

	return t == NULL || strcmp(t, "false") != 0;
}

int
modal_lookup(struct modal_driver *d, const char *id, struct modal_known *k,
    char *err, size_t errlen)
{
	Modal__Client__SandboxListResponse *resp = NULL;
	ModalSandboxInfo *s;
	int rv;

	if (msc_known_get(d->known, id, k))
		return 0;
	/* Not known here (made by an earlier run or another driver). */
	if ((rv = modal_find(d, id, &resp, &s, err, errlen)) != 0)
		return rv;
	rv = modal_connect(d, id, s->id, modal_tag_temporary(s), k, err,
	    errlen);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rv;
}

int
modal_died(struct modal_driver *d, const char *id, const char *sbx,
    char *err, size_t errlen)
{
	Modal__Client__SandboxWaitRequest req =
	    MODAL__CLIENT__SANDBOX_WAIT_REQUEST__INIT;
	Modal__Client__SandboxWaitResponse *resp = NULL;
	char ignore[MODAL_ERRLEN], why[600];
	bool dead;
	int rv;

	req.sandbox_id = (char *)sbx;
	req.timeout = 0.5f;
	rv = modal_call(d, "SandboxWait", &req.base,
	    &modal__client__sandbox_wait_response__descriptor,
	    (ProtobufCMessage **)&resp, 15000, true, ignore, sizeof(ignore));
	dead = rv == -ENOENT || (rv == 0 && modal_conv_finished(resp->result));
	if (dead)
		modal_conv_ended(rv == 0 ? resp->result : NULL, why, sizeof(why));
	if (resp != NULL)
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	if (!dead)
		return 0;
	modal_forget(d, id);
	rv = msc_driver_died(err, errlen, id, "its Modal sandbox %s %s. The "
	    "next call starts it again.", sbx, why);
	msc_log_warn("modal: computer %s (sandbox %s) died: %s", id, sbx, why);
	return rv;
}
