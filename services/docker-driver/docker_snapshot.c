/*
 * docker_snapshot.c - snapshots on Docker and Podman (issue 31): a
 * computer's container committed to the image kilntainers-snapshot:<hex>
 * with labels that say which snapshot it is, who made it (a principal's
 * name, never a credential), of which computer, when, and by which
 * driver. Everything is found again from those labels: a server that
 * restarts lists the same snapshots.
 *
 * What a snapshot holds: the container's filesystem, as `docker commit`
 * takes it, without pausing the container (a command running in it goes
 * on; a file being written at that moment may be caught half-way).
 * Memory and processes are not kept. The exec helper's mounts (/.msc, a
 * tmpfs, and /.msc-helper, a bind mount) are not part of a commit; the
 * allowlist proxy's variables are blanked in the image (a fork gets its
 * own), and the warm pool's label is cleared so that no fork is taken
 * for a spare. A restore or a fork pins its snapshot (msc_snap_pin) from
 * before it finds the image until its container exists: a delete
 * meanwhile is refused as "in use", never leaving a computer without its
 * container.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "docker_pool.h"
#include "msc_log.h"
#include "msc_principal.h"
#include "msc_snapshot.h"

#define SNAP_REPO "kilntainers-snapshot"
#define SNAP_L "kilntainers.snapshot."
#define SNAP_LABEL_ID SNAP_L "id"
#define T_SNAP_OP 30000
#define T_COMMIT 600000         /* a large filesystem takes a while */

/* The image of snapshot `id` (valid): "kilntainers-snapshot:<hex>". */
static void
snap_ref(const char *id, char *out, size_t len)
{
	snprintf(out, len, SNAP_REPO ":%s", id + 5);
}

static const char *
label(json_t *labels, const char *key)
{
	const char *v = json_string_value(json_object_get(labels, key));

	return v != NULL ? v : "";
}

/* The labels of an image inspect or list row. */
static json_t *
image_labels(json_t *img)
{
	json_t *l = json_object_get(img, "Labels");

	if (!json_is_object(l))
		l = json_object_get(json_object_get(img, "Config"), "Labels");
	return l;
}

/* Whether the snapshot with these labels is this driver's. */
static bool
snap_mine(const struct dock_driver *d, json_t *labels)
{
	const char *drv = label(labels, SNAP_L "driver");

	return drv[0] == '\0' || strcmp(drv, d->cfg->driver_id) == 0;
}

/* Whether `principal` may use (or, for_delete, delete) it. */
static bool
snap_visible(const struct dock_driver *d, json_t *labels,
    const char *principal, bool for_delete)
{
	if (d->cfg->share_snapshots && !for_delete)
		return true;
	return strcmp(label(labels, SNAP_L "owner"), principal) == 0;
}

static int
not_found(const char *id, char *err, size_t errlen)
{
	snprintf(err, errlen, MSC_SNAPSHOT_NOT_FOUND, id);
	return -ENOENT;
}

/*
 * Snapshot `id` as `principal` sees it: 0 and its image in *imgp, or
 * -ENOENT (unknown, deleted, another driver's or principal's: one text
 * for all, so that a guess learns nothing).
 */
static int
snap_find(struct dock_driver *d, const char *id, const char *principal,
    bool for_delete, json_t **imgp, char *err, size_t errlen)
{
	char ref[64];
	json_t *img = NULL, *labels;
	int rv;

	if (!msc_snapshot_id_valid(id)) {
		snprintf(err, errlen, "%s", MSC_SNAPSHOT_ID_ERROR);
		return -EINVAL;
	}
	snap_ref(id, ref, sizeof(ref));
	if ((rv = dock_image_inspect(d->engine, ref, T_SNAP_OP, &img, err,
	    errlen)) != 0)
		return rv == -ENOENT ? not_found(id, err, errlen) : rv;
	labels = image_labels(img);
	if (strcmp(label(labels, SNAP_LABEL_ID), id) != 0 ||
	    !snap_mine(d, labels) ||
	    !snap_visible(d, labels, principal, for_delete)) {
		json_decref(img);
		return not_found(id, err, errlen);
	}
	*imgp = img;
	return 0;
}

static char *
dup_str(const char *s)
{
	return strdup(s != NULL ? s : "");
}

static uint64_t
json_size(json_t *v)
{
	return json_is_integer(v) && json_integer_value(v) > 0 ?
	    (uint64_t)json_integer_value(v) : 0;
}

/* Fills out from an image inspect or list row; base: the base's size. */
static int
fill_snapshot(struct dock_driver *d, json_t *img, uint64_t base,
    Msc__V1__Snapshot *out)
{
	json_t *labels = image_labels(img);

	out->snapshot_id = dup_str(label(labels, SNAP_LABEL_ID));
	out->name = dup_str(label(labels, SNAP_L "name"));
	out->computer_id = dup_str(label(labels, SNAP_L "computer-id"));
	out->principal = dup_str(label(labels, SNAP_L "owner"));
	out->created_at = dup_str(label(labels, SNAP_L "created-at"));
	out->backend = dup_str("docker");
	out->driver = dup_str(d->cfg->driver_id);
	out->size_bytes = json_size(json_object_get(img, "Size"));
	out->own_bytes = out->size_bytes > base ? out->size_bytes - base : 0;
	if (!out->snapshot_id || !out->name || !out->computer_id ||
	    !out->principal || !out->created_at || !out->backend ||
	    !out->driver)
		return -ENOMEM;
	return 0;
}

/* The configured image's size (0 when not known). */
static uint64_t
base_size(struct dock_driver *d)
{
	json_t *img = NULL;
	char ignore[DOCK_ERRLEN];
	uint64_t n = 0;

	if (dock_image_inspect(d->engine, dock_cfg(d->cfg)->image, T_SNAP_OP, &img,
	    ignore, sizeof(ignore)) == 0)
		n = json_size(json_object_get(img, "Size"));
	json_decref(img);
	return n;
}

/* This driver's snapshots as the engine lists them (a new array). */
static int
list_mine(struct dock_driver *d, json_t **outp, char *err, size_t errlen)
{
	json_t *all = NULL, *mine, *row;
	size_t i;
	int rv;

	if ((rv = dock_image_list(d->engine, SNAP_LABEL_ID, T_SNAP_OP, &all,
	    err, errlen)) != 0)
		return rv;
	if ((mine = json_array()) == NULL) {
		json_decref(all);
		return -ENOMEM;
	}
	json_array_foreach (all, i, row) {
		json_t *labels = image_labels(row);

		if (msc_snapshot_id_valid(label(labels, SNAP_LABEL_ID)) &&
		    snap_mine(d, labels))
			json_array_append(mine, row);
	}
	json_decref(all);
	*outp = mine;
	return 0;
}

/* Whether the engine's message says its disk is full. */
static bool
out_of_disk(const char *msg)
{
	return strstr(msg, "no space left") != NULL ||
	    strstr(msg, "No space left") != NULL ||
	    strstr(msg, "disk quota exceeded") != NULL;
}

/* One Dockerfile instruction: KEY="VALUE" with VALUE's " and \ escaped. */
static char *
instruction(const char *verb, const char *key, const char *value)
{
	size_t n = strlen(value);
	char *esc = malloc(2 * n + 1), *out = NULL, *p = esc;

	if (esc == NULL)
		return NULL;
	for (const char *s = value; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			*p++ = '\\';
		*p++ = *s;
	}
	*p = '\0';
	if (asprintf(&out, "%s %s=\"%s\"", verb, key, esc) < 0)
		out = NULL;
	free(esc);
	return out;
}

#define SNAP_MAX_CHANGES 16

struct changes {
	char *v[SNAP_MAX_CHANGES];
	size_t n;
	bool oom;
};

static void
add(struct changes *c, char *s)
{
	if (s == NULL || c->n == SNAP_MAX_CHANGES) {
		free(s);
		c->oom = true;
		return;
	}
	c->v[c->n++] = s;
}

static void
changes_fini(struct changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i]);
}

/* Whether the container's environment sets `var`. */
static bool
env_has(json_t *ctr, const char *var)
{
	json_t *env = json_object_get(json_object_get(ctr, "Config"), "Env"),
	    *v;
	size_t i, n = strlen(var);

	json_array_foreach (env, i, v) {
		const char *s = json_string_value(v);

		if (s != NULL && strncmp(s, var, n) == 0 && s[n] == '=')
			return true;
	}
	return false;
}

/*
 * Whether container `cid` is gone or going (a delete or reset ran); the
 * engine's "being removed" says it too (a running one being removed
 * still inspects as running).
 */
static bool
container_went(struct dock_driver *d, const char *cid)
{
	json_t *ctr = NULL;
	char ignore[DOCK_ERRLEN];
	const char *st;
	bool went;

	if (cid[0] == '\0')
		return false;
	if (dock_container_inspect(d->engine, cid, T_SNAP_OP, &ctr, ignore,
	    sizeof(ignore)) != 0)
		return true;
	st = json_string_value(json_object_get(json_object_get(ctr, "State"),
	    "Status"));
	went = st != NULL && (strcmp(st, "removing") == 0 ||
	    strcmp(st, "exited") == 0 || strcmp(st, "dead") == 0);
	json_decref(ctr);
	return went;
}

/*
 * Counts one more snapshot being made by `principal`; -EDQUOT at
 * --max-snapshots or at its share (--max-principal-snapshots).
 */
static int
quota_take(struct dock_driver *d, const char *principal, char *err,
    size_t errlen)
{
	json_t *mine = NULL, *row;
	size_t have, by = 0, i;
	int rv;

	if ((rv = list_mine(d, &mine, err, errlen)) != 0)
		return rv;
	have = json_array_size(mine);
	json_array_foreach (mine, i, row)
		if (strcmp(label(image_labels(row), SNAP_L "owner"),
		    principal) == 0)
			by++;
	json_decref(mine);
	return msc_snap_reserve_as(d->snap_pins, principal, have, by,
	    d->cfg->max_snapshots, d->cfg->max_principal_snapshots, err,
	    errlen);
}

int
dock_snapshot(struct dock_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen)
{
	static const char *const proxy_vars[] = { "http_proxy", "https_proxy",
	    "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY", NULL };
	char id[MSC_SNAPSHOT_ID_LEN + 1], ref[64], when[32], cid_copy[80];
	const char *cid;
	struct changes ch = { .n = 0 };
	json_t *ctr = NULL, *img = NULL, *reply = NULL;
	time_t now = time(NULL);
	struct tm tm;
	int rv;

	if (!msc_principal_valid(req->principal)) {
		snprintf(err, errlen, "not a principal's name");
		return -EINVAL;
	}
	if ((rv = dock_find(d, req->computer_id, &ctr, err, errlen)) != 0)
		return rv;
	if ((rv = quota_take(d, req->principal, err, errlen)) != 0) {
		json_decref(ctr);
		return rv;
	}
	msc_snapshot_id_new(id);
	snap_ref(id, ref, sizeof(ref));
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	add(&ch, instruction("LABEL", SNAP_LABEL_ID, id));
	add(&ch, instruction("LABEL", SNAP_L "name", req->name));
	add(&ch, instruction("LABEL", SNAP_L "computer-id", req->computer_id));
	add(&ch, instruction("LABEL", SNAP_L "owner", req->principal));
	add(&ch, instruction("LABEL", SNAP_L "created-at", when));
	add(&ch, instruction("LABEL", SNAP_L "driver", d->cfg->driver_id));
	/* Not a spare of the pool, whatever the source was. */
	add(&ch, instruction("LABEL", DOCK_POOL_LABEL, ""));
	/*
	 * Nobody's: a computer made from it records its own creator (the
	 * source's principal would otherwise come along in the image).
	 */
	add(&ch, instruction("LABEL", MSC_PRINCIPAL_LABEL, ""));
	for (int i = 0; proxy_vars[i] != NULL; i++)
		if (env_has(ctr, proxy_vars[i]))
			add(&ch, instruction("ENV", proxy_vars[i], ""));
	cid = json_string_value(json_object_get(ctr, "Id"));
	snprintf(cid_copy, sizeof(cid_copy), "%s", cid != NULL ? cid : "");
	if (ch.oom)
		rv = -ENOMEM;
	else
		rv = dock_image_commit(d->engine, cid, SNAP_REPO, id + 5,
		    (const char *const *)ch.v, ch.n, T_COMMIT, &reply, err,
		    errlen);
	changes_fini(&ch);
	json_decref(ctr);
	json_decref(reply);
	if (rv == 0 && (rv = dock_image_inspect(d->engine, ref, T_SNAP_OP,
	    &img, err, errlen)) == 0)
		rv = fill_snapshot(d, img, base_size(d), out);
	json_decref(img);
	msc_snap_unreserve_as(d->snap_pins, req->principal);
	if (rv != 0) {
		char why[DOCK_ERRLEN], ignore[DOCK_ERRLEN];

		/* Nothing half-made stays: the image, if the engine made it. */
		(void)dock_image_remove(d->engine, ref, T_SNAP_OP, ignore,
		    sizeof(ignore));
		snprintf(why, sizeof(why), "%s", err);
		if (out_of_disk(why)) {
			snprintf(err, errlen, "Cannot snapshot computer '%s': "
			    "the engine is out of disk space (delete snapshots "
			    "or computers, then retry).", req->computer_id);
			rv = -ENOSPC;
		} else if (rv != -ENOMEM && (strstr(why, "being removed") !=
		    NULL || strstr(why, "No such container") != NULL ||
		    container_went(d, cid_copy))) {
			snprintf(err, errlen, MSC_SNAPSHOT_WENT,
			    req->computer_id);
			rv = -ECONNABORTED;
		} else
			snprintf(err, errlen, "Cannot snapshot computer '%s': "
			    "%s", req->computer_id, why);
		return rv;
	}
	msc_log_info("snapshot %s of computer %s made", id, req->computer_id);
	return 0;
}

/*
 * The engine's id of image img (taken), which names it to Docker and
 * Podman alike (Podman files a short name under a registry's).
 */
static int
image_id(json_t *img, char *out, size_t len, char *err, size_t errlen)
{
	const char *id = json_string_value(json_object_get(img, "Id"));
	int rv = 0;

	if (id == NULL || strlen(id) >= len || strlen(id) < 12 ||
	    strspn(id, "sha256:0123456789abcdef") != strlen(id)) {
		snprintf(err, errlen, "inspect image: no valid Id");
		rv = -EPROTO;
	} else
		snprintf(out, len, "%s", id);
	json_decref(img);
	return rv;
}

/* What a failed create from a snapshot says when the disk is full. */
static int
create_failed(int rv, const char *id, char *err, size_t errlen)
{
	if (rv != 0 && out_of_disk(err)) {
		snprintf(err, errlen, "Cannot create computer '%s' from the "
		    "snapshot: the engine is out of disk space.", id);
		return -ENOSPC;
	}
	return rv;
}

/*
 * Pins snapshot id for a restore or a fork: a snapshot_delete meanwhile
 * is refused, so the image cannot go between the old container's removal
 * and the new one's creation (which would leave the computer gone). 0, or
 * -ENOENT when a delete holds it (as if it were gone already).
 */
static int
pin(struct dock_driver *d, const char *id, char *err, size_t errlen)
{
	int rv = msc_snap_pin(d->snap_pins, id);

	if (rv == -ENOENT)
		return not_found(id, err, errlen);
	if (rv != 0)
		snprintf(err, errlen, "out of memory");
	return rv;
}

/* What computer id records: its lifecycle and principal; 0 or -errno. */
static int
marks(struct dock_driver *d, const char *id, bool *temporary,
    char principal[MSC_PRINCIPAL_TAG_LEN + 1], char *err, size_t errlen)
{
	json_t *ctr = NULL, *labels;
	const char *tmp, *owner;
	int rv;

	if ((rv = dock_find(d, id, &ctr, err, errlen)) != 0)
		return rv;
	labels = json_object_get(json_object_get(ctr, "Config"), "Labels");
	tmp = json_string_value(json_object_get(labels,
	    "kilntainers.temporary"));
	owner = json_string_value(json_object_get(labels,
	    MSC_PRINCIPAL_LABEL));
	*temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	snprintf(principal, MSC_PRINCIPAL_TAG_LEN + 1, "%s", owner != NULL ?
	    owner : "");
	json_decref(ctr);
	return 0;
}

/*
 * A restore whose new container could not be made after the old one
 * went: the computer is made again from the configured image (its id,
 * lifecycle and owner kept), so that it is never left gone; err says so.
 */
static void
fall_back(struct dock_driver *d, const char *id, bool temporary,
    const char *principal, char *err, size_t errlen)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	char why[DOCK_ERRLEN], ignore[DOCK_ERRLEN];
	json_t *ctr = NULL;

	if (dock_find(d, id, &ctr, ignore, sizeof(ignore)) != -ENOENT) {
		json_decref(ctr);
		return;                 /* still there: nothing was lost */
	}
	snprintf(why, sizeof(why), "%s", err);
	if (dock_create_owned(d, id, temporary, principal, &c, ignore,
	    sizeof(ignore)) != 0) {
		msc_log_warn("restore of %s failed and so did its factory "
		    "reset: %s", id, ignore);
		return;
	}
	msc_computer_fini(&c);
	snprintf(err, errlen, MSC_SNAPSHOT_FELL_BACK, why);
}

int
dock_restore(struct dock_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	char ref[80], principal[MSC_PRINCIPAL_TAG_LEN + 1];
	json_t *img = NULL;
	bool temporary;
	int rv;

	if ((rv = pin(d, req->snapshot_id, err, errlen)) != 0)
		return rv;
	if ((rv = snap_find(d, req->snapshot_id, req->principal, false, &img,
	    err, errlen)) == 0 && (rv = image_id(img, ref, sizeof(ref), err,
	    errlen)) == 0 && (rv = marks(d, req->computer_id, &temporary,
	    principal, err, errlen)) == 0) {
		rv = create_failed(dock_recreate(d, req->computer_id, ref, out,
		    err, errlen), req->computer_id, err, errlen);
		if (rv != 0)
			fall_back(d, req->computer_id, temporary, principal,
			    err, errlen);
	}
	msc_snap_unpin(d->snap_pins, req->snapshot_id);
	return rv;
}

int
dock_create_from(struct dock_driver *d, const Msc__V1__CreateRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	json_t *img = NULL;
	char ref[80];
	int rv;

	if ((rv = dock_validate(d, err, errlen)) != 0 ||
	    (rv = pin(d, req->from_snapshot, err, errlen)) != 0)
		return rv;
	if ((rv = snap_find(d, req->from_snapshot, req->principal, false,
	    &img, err, errlen)) == 0 &&
	    (rv = image_id(img, ref, sizeof(ref), err, errlen)) == 0)
		rv = create_failed(dock_create_image(d, req->computer_id,
		    req->temporary, ref, req->principal, out, err, errlen),
		    req->computer_id, err, errlen);
	msc_snap_unpin(d->snap_pins, req->from_snapshot);
	return rv;
}

int
dock_snapshots(struct dock_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__SnapshotList *out, char *err, size_t errlen)
{
	json_t *mine = NULL, *row;
	uint64_t base;
	size_t i;
	int rv;

	if ((rv = list_mine(d, &mine, err, errlen)) != 0)
		return rv;
	base = base_size(d);
	out->snapshots = calloc(json_array_size(mine) + 1,
	    sizeof(*out->snapshots));
	if (out->snapshots == NULL) {
		json_decref(mine);
		return -ENOMEM;
	}
	json_array_foreach (mine, i, row) {
		Msc__V1__Snapshot *s;

		if (!snap_visible(d, image_labels(row), req->principal, false))
			continue;
		if ((s = malloc(sizeof(*s))) == NULL) {
			rv = -ENOMEM;
			break;
		}
		*s = (Msc__V1__Snapshot)MSC__V1__SNAPSHOT__INIT;
		out->snapshots[out->n_snapshots++] = s;
		if ((rv = fill_snapshot(d, row, base, s)) != 0)
			break;
	}
	json_decref(mine);
	return rv;
}

int
dock_snapshot_delete(struct dock_driver *d,
    const Msc__V1__SnapshotRequest *req, char *err, size_t errlen)
{
	json_t *img = NULL;
	char ref[64];
	int rv;

	if ((rv = snap_find(d, req->snapshot_id, req->principal, true, &img,
	    err, errlen)) != 0)
		return rv;
	json_decref(img);
	/* Not while a restore or fork reads it (pin). */
	if (msc_snap_claim(d->snap_pins, req->snapshot_id) != 0) {
		snprintf(err, errlen, MSC_SNAPSHOT_PINNED, req->snapshot_id);
		return -EEXIST;
	}
	snap_ref(req->snapshot_id, ref, sizeof(ref));
	rv = dock_image_remove(d->engine, ref, T_SNAP_OP, err, errlen);
	msc_snap_release(d->snap_pins, req->snapshot_id);
	if (rv == -ENOENT)
		return not_found(req->snapshot_id, err, errlen);
	if (rv == -EBUSY) {
		snprintf(err, errlen, "Snapshot '%s' is in use: computers made "
		    "from it exist (delete them or factory reset them first).",
		    req->snapshot_id);
		return -EEXIST;
	}
	if (rv == 0)
		msc_log_info("snapshot %s deleted", req->snapshot_id);
	return rv;
}
