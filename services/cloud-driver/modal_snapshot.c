/*
 * modal_snapshot.c - snapshots on Modal (issue 31): a computer's
 * filesystem saved as an image with SandboxSnapshotFs (memory and
 * processes are not kept), and a record of it in the named Dict
 * "<app>-snapshots" of the environment (DictGetOrCreate, DictUpdate,
 * DictGet, DictContents, DictPop): key the snapshot id, value a JSON
 * object with the image id, name, computer id, maker's tag and time. A
 * restarted server reads the same Dict. A restore or fork makes a
 * sandbox of the image; a delete removes the record (DictPop) and then
 * the image (ImageDelete): a record never names a deleted image.
 */
#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "msc_log.h"

#define T_OP 30000
#define DICT_SUFFIX "-snapshots"
#define VALUE_MAX 4096          /* a record's JSON, and what we read back */

/* The Dict's id, made when missing; cached in d. */
static int
dict_id(struct modal_driver *d, char *out, size_t len, char *err,
    size_t errlen)
{
	Modal__Client__DictGetOrCreateRequest req =
	    MODAL__CLIENT__DICT_GET_OR_CREATE_REQUEST__INIT;
	Modal__Client__DictGetOrCreateResponse *resp = NULL;
	char name[160];
	int rv;

	pthread_mutex_lock(&d->mu);
	snprintf(out, len, "%s", d->dict_id);
	pthread_mutex_unlock(&d->mu);
	if (out[0] != '\0')
		return 0;
	snprintf(name, sizeof(name), "%s" DICT_SUFFIX, d->app_name);
	req.deployment_name = name;
	req.environment_name = d->creds.environment;
	req.object_creation_type =
	    MODAL__CLIENT__OBJECT_CREATION_TYPE__OBJECT_CREATION_TYPE_CREATE_IF_MISSING;
	if ((rv = modal_call(d, "DictGetOrCreate", &req.base,
	    &modal__client__dict_get_or_create_response__descriptor,
	    (ProtobufCMessage **)&resp, T_OP, true, err, errlen)) != 0)
		return rv;
	if (resp->dict_id == NULL || resp->dict_id[0] == '\0' ||
	    strlen(resp->dict_id) >= sizeof(d->dict_id) ||
	    strlen(resp->dict_id) >= len) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		snprintf(err, errlen, "Modal DictGetOrCreate: no dict id in "
		    "the reply");
		return -EPROTO;
	}
	pthread_mutex_lock(&d->mu);
	snprintf(d->dict_id, sizeof(d->dict_id), "%s", resp->dict_id);
	pthread_mutex_unlock(&d->mu);
	snprintf(out, len, "%s", resp->dict_id);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

static bool
copy(json_t *j, const char *key, char *out, size_t len)
{
	const char *v = json_string_value(json_object_get(j, key));

	if (v == NULL || strlen(v) >= len)
		return false;
	snprintf(out, len, "%s", v);
	return true;
}

/* A record read back (key, value): ours and well formed, else false. */
static bool
parse(const ProtobufCBinaryData *key, const ProtobufCBinaryData *value,
    struct cloud_snap_rec *r)
{
	json_t *j;
	bool ok;

	memset(r, 0, sizeof(*r));
	if (key->len != MSC_SNAPSHOT_ID_LEN || value->len > VALUE_MAX)
		return false;
	memcpy(r->id, key->data, key->len);
	r->id[key->len] = '\0';
	if (!msc_snapshot_id_valid(r->id) ||
	    (j = json_loadb((const char *)value->data, value->len, 0,
	    NULL)) == NULL)
		return false;
	ok = copy(j, "image_id", r->ref, sizeof(r->ref)) && r->ref[0] != '\0' &&
	    copy(j, "name", r->name, sizeof(r->name)) &&
	    copy(j, "computer_id", r->computer, sizeof(r->computer)) &&
	    copy(j, "owner", r->owner, sizeof(r->owner)) &&
	    copy(j, "created_at", r->created, sizeof(r->created)) &&
	    msc_snapshot_name_valid(r->name) && cloud_snap_owner_ok(r->owner);
	json_decref(j);
	return ok;
}

static int
image_delete(struct modal_driver *d, const char *image_id, char *err,
    size_t errlen)
{
	Modal__Client__ImageDeleteRequest req =
	    MODAL__CLIENT__IMAGE_DELETE_REQUEST__INIT;
	Modal__Client__ImageDeleteResponse *resp = NULL;
	int rv;

	req.image_id = (char *)image_id;
	rv = modal_call(d, "ImageDelete", &req.base,
	    &modal__client__image_delete_response__descriptor,
	    (ProtobufCMessage **)&resp, T_OP, true, err, errlen);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rv == -ENOENT ? 0 : rv;
}

/*
 * Whether the Dict holds record r->id naming image r->ref: 1, 0 (not, or
 * another), or a negative errno when DictGet fails.
 */
static int
recorded(struct modal_driver *d, const char *did,
    const struct cloud_snap_rec *r, char *err, size_t errlen)
{
	Modal__Client__DictGetRequest req = MODAL__CLIENT__DICT_GET_REQUEST__INIT;
	Modal__Client__DictGetResponse *resp = NULL;
	ProtobufCBinaryData key = { strlen(r->id), (uint8_t *)r->id };
	struct cloud_snap_rec got;
	int rv;

	req.dict_id = (char *)did;
	req.key = key;
	if ((rv = modal_call(d, "DictGet", &req.base,
	    &modal__client__dict_get_response__descriptor,
	    (ProtobufCMessage **)&resp, T_OP, true, err, errlen)) != 0)
		return rv;
	rv = resp->found && parse(&key, &resp->value, &got) &&
	    strcmp(got.ref, r->ref) == 0;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rv;
}

static int
snap_save(void *be, struct cloud_snap_rec *r, char *err, size_t errlen)
{
	struct modal_driver *d = be;
	Modal__Client__DictUpdateRequest req =
	    MODAL__CLIENT__DICT_UPDATE_REQUEST__INIT;
	Modal__Client__DictUpdateResponse *resp = NULL;
	Modal__Client__DictEntry e = MODAL__CLIENT__DICT_ENTRY__INIT, *es[1];
	char did[128], sbx[128], why[MODAL_ERRLEN], ignore[MODAL_ERRLEN];
	bool temporary;
	char *value;
	json_t *j;
	int rv, landed = 0;

	if ((rv = dict_id(d, did, sizeof(did), err, errlen)) != 0)
		return rv;
	if ((rv = modal_snapshot_fs(d, r->computer, r->ref, sizeof(r->ref),
	    sbx, sizeof(sbx), &temporary, NULL, 0, err, errlen)) != 0) {
		if (rv == -ENOENT)
			return rv;
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Cannot snapshot computer '%s': %s",
		    r->computer, why);
		return rv;
	}
	j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "image_id", r->ref,
	    "name", r->name, "computer_id", r->computer, "owner", r->owner,
	    "created_at", r->created, "sandbox_id", sbx);
	value = j != NULL ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (value == NULL)
		rv = -ENOMEM;
	else {
		e.key.data = (uint8_t *)r->id;
		e.key.len = strlen(r->id);
		e.value.data = (uint8_t *)value;
		e.value.len = strlen(value);
		es[0] = &e;
		req.dict_id = did;
		req.updates = es;
		req.n_updates = 1;
		rv = modal_call(d, "DictUpdate", &req.base,
		    &modal__client__dict_update_response__descriptor,
		    (ProtobufCMessage **)&resp, T_OP, true, err, errlen);
		if (resp != NULL)
			protobuf_c_message_free_unpacked(&resp->base, NULL);
	}
	free(value);
	/*
	 * A failed (timed out, cut) DictUpdate may have landed all the same:
	 * read it back before deleting the image it would name.
	 */
	if (rv != 0 && (landed = recorded(d, did, r, ignore,
	    sizeof(ignore))) > 0) {
		msc_log_warn("modal: snapshot %s recorded after all (%s)", r->id,
		    err);
		return 0;
	}
	if (rv != 0) {
		/* Nothing half-made stays: the image without its record. */
		if (landed < 0)
			msc_log_warn("modal: image %s of a failed snapshot kept: "
			    "whether its record %s was written is unknown (%s)",
			    r->ref, r->id, ignore);
		else if (image_delete(d, r->ref, ignore, sizeof(ignore)) != 0)
			msc_log_warn("modal: image %s of a failed snapshot not "
			    "deleted: %s", r->ref, ignore);
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Cannot snapshot computer '%s': %s",
		    r->computer, why);
	}
	return rv;
}

struct gather {
	struct cloud_snap_rec *recs;
	size_t n, cap;
	size_t seen;            /* entries read, ours or not */
	bool oom, flood;
};

static int
on_entry(const ProtobufCMessage *m, void *arg)
{
	const Modal__Client__DictEntry *e = (const void *)m;
	struct gather *g = arg;
	struct cloud_snap_rec r;

	/* A flood is refused, not read into memory (cloud_snap.h). */
	if (++g->seen > CLOUD_SNAP_LIST_MAX) {
		g->flood = true;
		return -EDQUOT;
	}
	if (!parse(&e->key, &e->value, &r))
		return 0;
	if (g->n == g->cap) {
		size_t c = g->cap ? g->cap * 2 : 16;
		void *p = realloc(g->recs, c * sizeof(*g->recs));

		if (p == NULL) {
			g->oom = true;
			return -ENOMEM;
		}
		g->recs = p;
		g->cap = c;
	}
	g->recs[g->n++] = r;
	return 0;
}

static int
snap_list(void *be, struct cloud_snap_rec **recsp, size_t *np, char *err,
    size_t errlen)
{
	struct modal_driver *d = be;
	Modal__Client__DictContentsRequest req =
	    MODAL__CLIENT__DICT_CONTENTS_REQUEST__INIT;
	struct gather g = { .recs = NULL };
	char did[128];
	int rv;

	if ((rv = dict_id(d, did, sizeof(did), err, errlen)) != 0)
		return rv;
	req.dict_id = did;
	req.keys = true;
	req.values = true;
	rv = modal_call_stream(d, "DictContents", &req.base,
	    &modal__client__dict_entry__descriptor, on_entry, &g, T_OP, err,
	    errlen);
	if (g.flood) {
		snprintf(err, errlen, "Modal's snapshot Dict has more than %d "
		    "records: refused", CLOUD_SNAP_LIST_MAX);
		rv = -EDQUOT;
	} else if (rv == 0 && g.oom)
		rv = -ENOMEM;
	if (rv != 0) {
		free(g.recs);
		return rv;
	}
	*recsp = g.recs;
	*np = g.n;
	return 0;
}

static int
snap_get(void *be, const char *id, struct cloud_snap_rec *rec, char *err,
    size_t errlen)
{
	struct modal_driver *d = be;
	Modal__Client__DictGetRequest req = MODAL__CLIENT__DICT_GET_REQUEST__INIT;
	Modal__Client__DictGetResponse *resp = NULL;
	ProtobufCBinaryData key = { strlen(id), (uint8_t *)id };
	char did[128];
	int rv;

	if ((rv = dict_id(d, did, sizeof(did), err, errlen)) != 0)
		return rv;
	req.dict_id = did;
	req.key = key;
	if ((rv = modal_call(d, "DictGet", &req.base,
	    &modal__client__dict_get_response__descriptor,
	    (ProtobufCMessage **)&resp, T_OP, true, err, errlen)) != 0)
		return rv;
	rv = resp->found && parse(&key, &resp->value, rec) ? 0 : -ENOENT;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rv;
}

static int
snap_remove(void *be, const struct cloud_snap_rec *r, char *err,
    size_t errlen)
{
	struct modal_driver *d = be;
	Modal__Client__DictPopRequest req = MODAL__CLIENT__DICT_POP_REQUEST__INIT;
	Modal__Client__DictPopResponse *resp = NULL;
	char did[128];
	int rv;

	char ignore[MODAL_ERRLEN];

	/*
	 * The record first: a failed pop leaves the snapshot whole; a failed
	 * image delete after it leaves an image no record names (logged).
	 */
	if ((rv = dict_id(d, did, sizeof(did), err, errlen)) != 0)
		return rv;
	req.dict_id = did;
	req.key.data = (uint8_t *)r->id;
	req.key.len = strlen(r->id);
	if ((rv = modal_call(d, "DictPop", &req.base,
	    &modal__client__dict_pop_response__descriptor,
	    (ProtobufCMessage **)&resp, T_OP, true, err, errlen)) != 0)
		return rv;
	rv = resp->found ? 0 : -ENOENT;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	if (rv == 0 && image_delete(d, r->ref, ignore, sizeof(ignore)) != 0)
		msc_log_warn("modal: image %s of deleted snapshot %s not "
		    "deleted: %s", r->ref, r->id, ignore);
	return rv;
}

static int
snap_restore(void *be, const char *id, const struct cloud_snap_rec *r,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return modal_replace(be, id, r->ref, out, err, errlen);
}

static int
snap_create(void *be, const char *id, bool temporary, const char *principal,
    const struct cloud_snap_rec *r, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	return modal_create_image(be, id, temporary, r->ref, principal, out,
	    err, errlen);
}

const struct cloud_snap_ops modal_snap_ops = {
	.backend = "modal",
	.save = snap_save,
	.list = snap_list,
	.get = snap_get,
	.remove = snap_remove,
	.restore = snap_restore,
	.create = snap_create,
};
