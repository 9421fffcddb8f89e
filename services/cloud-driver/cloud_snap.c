/*
 * cloud_snap.c - the snapshot calls of a cloud provider (cloud_snap.h),
 * with the Docker driver's rules and texts: a snapshot is its maker's
 * alone (another principal is told "not found", as for an unknown id)
 * unless --share-snapshots; deleting stays the maker's; a restore or a
 * fork pins its snapshot so that a delete meanwhile is refused as "in
 * use"; --max-snapshots bounds how many this team or app keeps, and
 * --max-principal-snapshots how many of them one principal made.
 */
#include "cloud_snap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_driver.h"
#include "msc_log.h"

int
cloud_snap_init(struct cloud_snap *s, const struct cloud_snap_ops *ops,
    void *be, const struct msc_cfg *cfg)
{
	s->ops = ops;
	s->be = be;
	s->cfg = cfg;
	TAILQ_INIT(&s->unseen);
	pthread_mutex_init(&s->quota_mu, NULL);
	return msc_snap_pins_new(&s->pins);
}

void
cloud_snap_fini(struct cloud_snap *s)
{
	struct cloud_snap_unseen *u;

	while ((u = TAILQ_FIRST(&s->unseen)) != NULL) {
		TAILQ_REMOVE(&s->unseen, u, link);
		free(u);
	}
	pthread_mutex_destroy(&s->quota_mu);
	msc_snap_pins_free(s->pins);
	s->pins = NULL;
}

static bool
listed(const struct cloud_snap_rec *recs, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(recs[i].id, id) == 0)
			return true;
	return false;
}

/*
 * Forgets the unseen records that listing recs shows; counts the others
 * into *have and, of `principal` (NULL: none), *mine. quota_mu held.
 */
static void
merge_unseen(struct cloud_snap *s, const struct cloud_snap_rec *recs,
    size_t n, const char *principal, size_t *have, size_t *mine)
{
	struct cloud_snap_unseen *u, *next;

	for (u = TAILQ_FIRST(&s->unseen); u != NULL; u = next) {
		next = TAILQ_NEXT(u, link);
		if (listed(recs, n, u->id)) {
			TAILQ_REMOVE(&s->unseen, u, link);
			free(u);
			continue;
		}
		(*have)++;
		if (principal != NULL && strcmp(u->owner, principal) == 0)
			(*mine)++;
	}
}

/* Forgets unseen record `id` (deleted). */
static void
forget_unseen(struct cloud_snap *s, const char *id)
{
	struct cloud_snap_unseen *u;

	pthread_mutex_lock(&s->quota_mu);
	TAILQ_FOREACH (u, &s->unseen, link)
		if (strcmp(u->id, id) == 0) {
			TAILQ_REMOVE(&s->unseen, u, link);
			free(u);
			break;
		}
	pthread_mutex_unlock(&s->quota_mu);
}

bool
cloud_snap_owner_ok(const char *s)
{
	size_t n = strnlen(s, MSC_PRINCIPAL_TAG_LEN + 1);

	return (n == 0 || n == MSC_PRINCIPAL_TAG_LEN) &&
	    strspn(s, "0123456789abcdef") == n;
}

static int
not_found(const char *id, char *err, size_t errlen)
{
	snprintf(err, errlen, MSC_SNAPSHOT_NOT_FOUND, id);
	return -ENOENT;
}

/* Whether `principal` may use (or, for_delete, delete) it. */
static bool
visible(const struct cloud_snap *s, const struct cloud_snap_rec *r,
    const char *principal, bool for_delete)
{
	if (s->cfg->share_snapshots && !for_delete)
		return true;
	return strcmp(r->owner, principal) == 0;
}

/*
 * Snapshot `id` as `principal` sees it, or -ENOENT (unknown, deleted,
 * another principal's: one text for all, so a guess learns nothing).
 */
static int
find(struct cloud_snap *s, const char *id, const char *principal,
    bool for_delete, struct cloud_snap_rec *r, char *err, size_t errlen)
{
	int rv;

	if (!msc_snapshot_id_valid(id)) {
		snprintf(err, errlen, "%s", MSC_SNAPSHOT_ID_ERROR);
		return -EINVAL;
	}
	if ((rv = s->ops->get(s->be, id, r, err, errlen)) == -ENOENT ||
	    (rv == 0 && (strcmp(r->id, id) != 0 ||
	    !visible(s, r, principal, for_delete))))
		return not_found(id, err, errlen);
	return rv;
}

static char *
dup_str(const char *v)
{
	return strdup(v != NULL ? v : "");
}

static int
fill(const struct cloud_snap *s, const struct cloud_snap_rec *r,
    Msc__V1__Snapshot *out)
{
	out->snapshot_id = dup_str(r->id);
	out->name = dup_str(r->name);
	out->computer_id = dup_str(r->computer);
	out->principal = dup_str(r->owner);
	out->created_at = dup_str(r->created);
	out->backend = dup_str(s->ops->backend);
	out->driver = dup_str(s->cfg->driver_id);
	if (!out->snapshot_id || !out->name || !out->computer_id ||
	    !out->principal || !out->created_at || !out->backend ||
	    !out->driver)
		return -ENOMEM;
	return 0;
}

/*
 * Counts one more snapshot being made by `principal`; -EDQUOT at
 * --max-snapshots or at its share (--max-principal-snapshots). The
 * count is the provider's listing, the snapshots saved here that it
 * does not show yet, and those being made, all under quota_mu: a take
 * that finishes meanwhile is in one of them.
 */
static int
quota_take(struct cloud_snap *s, const char *principal, char *err,
    size_t errlen)
{
	struct cloud_snap_rec *recs = NULL;
	size_t n = 0, have, by = 0;
	int rv;

	pthread_mutex_lock(&s->quota_mu);
	if ((rv = s->ops->list(s->be, &recs, &n, err, errlen)) == 0) {
		for (size_t i = 0; i < n; i++)
			if (strcmp(recs[i].owner, principal) == 0)
				by++;
		have = n;
		merge_unseen(s, recs, n, principal, &have, &by);
		free(recs);
		rv = msc_snap_reserve_as(s->pins, principal, have, by,
		    s->cfg->max_snapshots, s->cfg->max_principal_snapshots,
		    err, errlen);
	}
	pthread_mutex_unlock(&s->quota_mu);
	return rv;
}

int
cloud_snap_take(struct cloud_snap *s, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen)
{
	struct cloud_snap_rec r;
	struct cloud_snap_unseen *u;
	time_t now = time(NULL);
	struct tm tm;
	int rv;

	if (!cloud_snap_owner_ok(req->principal)) {
		snprintf(err, errlen, "not a principal's name");
		return -EINVAL;
	}
	if (!msc_snapshot_name_valid(req->name)) {
		snprintf(err, errlen, "%s", MSC_SNAPSHOT_NAME_ERROR);
		return -EINVAL;
	}
	if (!msc_slug_valid(req->computer_id)) {
		snprintf(err, errlen, "%s", MSC_SLUG_ERROR);
		return -EINVAL;
	}
	/* Made before: a saved snapshot is never left uncounted. */
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((rv = quota_take(s, req->principal, err, errlen)) != 0) {
		free(u);
		return rv;
	}
	memset(&r, 0, sizeof(r));
	msc_snapshot_id_new(r.id);
	snprintf(r.name, sizeof(r.name), "%s", req->name);
	snprintf(r.computer, sizeof(r.computer), "%s", req->computer_id);
	snprintf(r.owner, sizeof(r.owner), "%s", req->principal);
	gmtime_r(&now, &tm);
	strftime(r.created, sizeof(r.created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	rv = s->ops->save(s->be, &r, err, errlen);
	pthread_mutex_lock(&s->quota_mu);
	if (rv == 0) {
		snprintf(u->id, sizeof(u->id), "%s", r.id);
		snprintf(u->owner, sizeof(u->owner), "%s", r.owner);
		TAILQ_INSERT_TAIL(&s->unseen, u, link);
		u = NULL;
	}
	msc_snap_unreserve_as(s->pins, req->principal);
	pthread_mutex_unlock(&s->quota_mu);
	free(u);
	if (rv == 0)
		rv = fill(s, &r, out);
	if (rv == 0)
		msc_log_info("snapshot %s of computer %s made (%s %s)", r.id,
		    r.computer, s->ops->backend, r.ref);
	return rv;
}

/* Pins snapshot id for a restore or a fork (docker_snapshot.c's pin). */
static int
pin(struct cloud_snap *s, const char *id, char *err, size_t errlen)
{
	int rv = msc_snap_pin(s->pins, id);

	if (rv == -ENOENT)
		return not_found(id, err, errlen);
	if (rv != 0)
		snprintf(err, errlen, "out of memory");
	return rv;
}

int
cloud_snap_restore(struct cloud_snap *s,
    const Msc__V1__SnapshotRequest *req, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	struct cloud_snap_rec r;
	int rv;

	if ((rv = pin(s, req->snapshot_id, err, errlen)) != 0)
		return rv;
	if ((rv = find(s, req->snapshot_id, req->principal, false, &r, err,
	    errlen)) == 0)
		rv = s->ops->restore(s->be, req->computer_id, &r, out, err,
		    errlen);
	msc_snap_unpin(s->pins, req->snapshot_id);
	if (rv == 0)
		msc_log_info("computer %s restored from snapshot %s",
		    req->computer_id, req->snapshot_id);
	return rv;
}

int
cloud_snap_create_from(struct cloud_snap *s,
    const Msc__V1__CreateRequest *req, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	struct cloud_snap_rec r;
	int rv;

	if ((rv = pin(s, req->from_snapshot, err, errlen)) != 0)
		return rv;
	if ((rv = find(s, req->from_snapshot, req->principal, false, &r, err,
	    errlen)) == 0)
		rv = s->ops->create(s->be, req->computer_id, req->temporary,
		    req->principal, &r, out, err, errlen);
	msc_snap_unpin(s->pins, req->from_snapshot);
	return rv;
}

int
cloud_snap_list(struct cloud_snap *s, const Msc__V1__SnapshotRequest *req,
    Msc__V1__SnapshotList *out, char *err, size_t errlen)
{
	struct cloud_snap_rec *recs = NULL;
	size_t n = 0, have = 0, mine = 0;
	int rv;

	if ((rv = s->ops->list(s->be, &recs, &n, err, errlen)) != 0)
		return rv;
	/* What this listing shows is no longer unseen. */
	pthread_mutex_lock(&s->quota_mu);
	merge_unseen(s, recs, n, NULL, &have, &mine);
	pthread_mutex_unlock(&s->quota_mu);
	if ((out->snapshots = calloc(n + 1, sizeof(*out->snapshots))) == NULL) {
		free(recs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && rv == 0; i++) {
		Msc__V1__Snapshot *o;

		if (!visible(s, &recs[i], req->principal, false))
			continue;
		if ((o = malloc(sizeof(*o))) == NULL) {
			rv = -ENOMEM;
			break;
		}
		*o = (Msc__V1__Snapshot)MSC__V1__SNAPSHOT__INIT;
		out->snapshots[out->n_snapshots++] = o;
		rv = fill(s, &recs[i], o);
	}
	free(recs);
	return rv;
}

int
cloud_snap_delete(struct cloud_snap *s,
    const Msc__V1__SnapshotRequest *req, char *err, size_t errlen)
{
	struct cloud_snap_rec r;
	int rv;

	if ((rv = find(s, req->snapshot_id, req->principal, true, &r, err,
	    errlen)) != 0)
		return rv;
	/* Not while a restore or fork reads it (pin). */
	if (msc_snap_claim(s->pins, req->snapshot_id) != 0) {
		snprintf(err, errlen, MSC_SNAPSHOT_PINNED, req->snapshot_id);
		return -EEXIST;
	}
	rv = s->ops->remove(s->be, &r, err, errlen);
	msc_snap_release(s->pins, req->snapshot_id);
	if (rv == 0 || rv == -ENOENT)
		forget_unseen(s, req->snapshot_id);
	if (rv == -ENOENT)
		return not_found(req->snapshot_id, err, errlen);
	if (rv == 0)
		msc_log_info("snapshot %s deleted", req->snapshot_id);
	return rv;
}
