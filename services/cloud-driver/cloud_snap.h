/*
 * cloud_snap.h - snapshots on a cloud provider (issue 31), what E2B and
 * Modal share: the records a provider keeps for each snapshot (its id,
 * name, computer, maker, time and the provider's own reference to the
 * saved filesystem), who may see and delete one (--share-snapshots),
 * the quota (--max-snapshots), the pins that keep a snapshot while a
 * restore or a fork reads it, and the texts, as the Docker driver gives
 * them. A provider supplies the five calls below, all blocking.
 */
#ifndef CLOUD_SNAP_H
#define CLOUD_SNAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/queue.h>

#include "driver.pb-c.h"
#include "msc_driver.h"
#include "msc_cfg.h"
#include "msc_principal.h"
#include "msc_snapshot.h"
#include "msc_slug.h"

/* What a provider records of one snapshot. */
struct cloud_snap_rec {
	char id[MSC_SNAPSHOT_ID_LEN + 1];
	char name[MSC_SNAPSHOT_NAME_MAX + 1];   /* "" when not kept */
	char computer[MSC_SLUG_MAX + 1];
	char owner[MSC_PRINCIPAL_TAG_LEN + 1];  /* the maker's tag, or "" */
	char created[32];                       /* 2026-12-07T01:02:03Z */
	char ref[512];          /* the provider's: template or image id */
};

struct cloud_snap_ops {
	const char *backend;    /* "e2b", "modal": Snapshot.backend */
	/*
	 * Saves computer rec->computer as snapshot rec->id (the other
	 * fields filled but ref) and writes the provider's reference to
	 * rec->ref. Nothing is left behind when it fails.
	 */
	int (*save)(void *be, struct cloud_snap_rec *rec, char *err,
	    size_t errlen);
	/*
	 * Every snapshot of ours the provider keeps (a malloc'd array), or
	 * an error: never part of them (a listing cut short by its bounds,
	 * CLOUD_SNAP_LIST_MAX records or pages or time, fails with
	 * -EDQUOT, a bound of ours the agent is told, or -ETIMEDOUT).
	 */
	int (*list)(void *be, struct cloud_snap_rec **recsp, size_t *np,
	    char *err, size_t errlen);
	/* Snapshot `id` (valid) into rec, or -ENOENT. */
	int (*get)(void *be, const char *id, struct cloud_snap_rec *rec,
	    char *err, size_t errlen);
	/* Removes it; -ENOENT when gone already. */
	int (*remove)(void *be, const struct cloud_snap_rec *rec, char *err,
	    size_t errlen);
	/*
	 * Replaces computer `id`'s sandbox by one made from rec->ref (its
	 * id, lifecycle kept). When the new one cannot be made after the
	 * old one went, makes it again from the configured image and says
	 * so in err, still failing.
	 */
	int (*restore)(void *be, const char *id, const struct cloud_snap_rec *rec,
	    Msc__V1__Computer *out, char *err, size_t errlen);
	/* A new computer `id` made from rec->ref, recording `principal`
	 * (msc_principal.h; "" none) as the backend's create_owned. */
	int (*create)(void *be, const char *id, bool temporary,
	    const char *principal, const struct cloud_snap_rec *rec,
	    Msc__V1__Computer *out, char *err, size_t errlen);
};

/*
 * Records of a listing at most (a hostile or broken provider's flood is
 * refused, not read into memory): --max-snapshots a few times over, with
 * room for other records a listing may hold (E2B: the team's others).
 */
#define CLOUD_SNAP_LIST_MAX 5000

/* A snapshot saved here that no listing of the provider has shown yet. */
struct cloud_snap_unseen {
	TAILQ_ENTRY(cloud_snap_unseen) link;
	char id[MSC_SNAPSHOT_ID_LEN + 1];
	char owner[MSC_PRINCIPAL_TAG_LEN + 1];
};
TAILQ_HEAD(cloud_snap_unseen_q, cloud_snap_unseen);

struct cloud_snap {
	const struct cloud_snap_ops *ops;
	void *be;
	const struct msc_cfg *cfg;
	struct msc_snap_pins *pins;
	/*
	 * The quota's count: held from a take's listing to its reservation,
	 * and while a finished take turns its reservation into an unseen
	 * record, so that no snapshot is ever counted nowhere; the unseen
	 * ones (a provider whose listing lags behind its saves) count until
	 * a listing shows them or they are deleted.
	 */
	pthread_mutex_t quota_mu;
	struct cloud_snap_unseen_q unseen;
};

int cloud_snap_init(struct cloud_snap *s, const struct cloud_snap_ops *ops,
    void *be, const struct msc_cfg *cfg);
void cloud_snap_fini(struct cloud_snap *s);

/* The msc_driver_ops snapshot calls over s (msc_driver.h). */
int cloud_snap_take(struct cloud_snap *s, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen);
int cloud_snap_restore(struct cloud_snap *s,
    const Msc__V1__SnapshotRequest *req, Msc__V1__Computer *out, char *err,
    size_t errlen);
int cloud_snap_list(struct cloud_snap *s, const Msc__V1__SnapshotRequest *req,
    Msc__V1__SnapshotList *out, char *err, size_t errlen);
int cloud_snap_delete(struct cloud_snap *s,
    const Msc__V1__SnapshotRequest *req, char *err, size_t errlen);
int cloud_snap_create_from(struct cloud_snap *s,
    const Msc__V1__CreateRequest *req, Msc__V1__Computer *out, char *err,
    size_t errlen);

/*
 * Defines static wrappers VAR_snapshot, _restore, _snapshots, _delete and
 * _create_from with msc_driver_ops' signatures over the cloud_snap member
 * `snap` of a backend struct TYPE, and VAR_fill(ops), which sets them.
 */
#define CLOUD_SNAP_OPS(var, type)                                             \
	static int var##_snapshot(void *be,                                   \
	    const Msc__V1__SnapshotRequest *req, Msc__V1__Snapshot *out,      \
	    char *err, size_t errlen)                                         \
	{                                                                     \
		return cloud_snap_take(&((type *)be)->snap, req, out, err,    \
		    errlen);                                                  \
	}                                                                     \
	static int var##_restore(void *be,                                    \
	    const Msc__V1__SnapshotRequest *req, Msc__V1__Computer *out,      \
	    char *err, size_t errlen)                                         \
	{                                                                     \
		return cloud_snap_restore(&((type *)be)->snap, req, out, err, \
		    errlen);                                                  \
	}                                                                     \
	static int var##_snapshots(void *be,                                  \
	    const Msc__V1__SnapshotRequest *req, Msc__V1__SnapshotList *out,  \
	    char *err, size_t errlen)                                         \
	{                                                                     \
		return cloud_snap_list(&((type *)be)->snap, req, out, err,    \
		    errlen);                                                  \
	}                                                                     \
	static int var##_delete(void *be,                                     \
	    const Msc__V1__SnapshotRequest *req, char *err, size_t errlen)    \
	{                                                                     \
		return cloud_snap_delete(&((type *)be)->snap, req, err,       \
		    errlen);                                                  \
	}                                                                     \
	static int var##_create_from(void *be,                                \
	    const Msc__V1__CreateRequest *req, Msc__V1__Computer *out,        \
	    char *err, size_t errlen)                                         \
	{                                                                     \
		return cloud_snap_create_from(&((type *)be)->snap, req, out,  \
		    err, errlen);                                             \
	}                                                                     \
	static void var##_fill(struct msc_driver_ops *ops)                    \
	{                                                                     \
		ops->snapshot = var##_snapshot;                               \
		ops->restore = var##_restore;                                 \
		ops->snapshots = var##_snapshots;                             \
		ops->snapshot_delete = var##_delete;                          \
		ops->create_from = var##_create_from;                         \
	}

/* Whether s is a principal's tag as a record keeps it ("" or 32 hex). */
bool cloud_snap_owner_ok(const char *s);

#endif /* CLOUD_SNAP_H */
