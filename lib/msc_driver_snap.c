/*
 * msc_driver_snap.c - the driver skeleton's snapshot calls (issue 31):
 * Snapshot, Restore, ListSnapshots and DeleteSnapshot, run on a worker
 * against the backend's optional ops. A snapshot id or name that is not
 * well formed never reaches a backend, whoever calls.
 */
#include "msc_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_snapshot.h"

/* Oldest first, then by id: every backend's list in one order. */
static int
by_created(const void *a, const void *b)
{
	const Msc__V1__Snapshot *const *x = a, *const *y = b;
	int c = strcmp((*x)->created_at, (*y)->created_at);

	return c != 0 ? c : strcmp((*x)->snapshot_id, (*y)->snapshot_id);
}

static void
free_str(char *s)
{
	if (s != NULL && s != protobuf_c_empty_string)
		free(s);
}

void
msc_snapshot_fini(Msc__V1__Snapshot *s)
{
	free_str(s->snapshot_id);
	free_str(s->name);
	free_str(s->computer_id);
	free_str(s->principal);
	free_str(s->created_at);
	free_str(s->backend);
	free_str(s->driver);
	*s = (Msc__V1__Snapshot)MSC__V1__SNAPSHOT__INIT;
}

void
msc_snapshot_list_fini(Msc__V1__SnapshotList *l)
{
	for (size_t i = 0; i < l->n_snapshots; i++) {
		msc_snapshot_fini(l->snapshots[i]);
		free(l->snapshots[i]);
	}
	free(l->snapshots);
	l->snapshots = NULL;
	l->n_snapshots = 0;
}

void
msc_preview_fini(Msc__V1__Preview *p)
{
	free_str(p->url);       /* INIT's are protobuf_c_empty_string */
	free_str(p->computer_id);
	free_str(p->note);
	free(p->ports);
	*p = (Msc__V1__Preview)MSC__V1__PREVIEW__INIT;
}

/* ExposePort (issue 30): the principal checked, then the backend's. */
static void
run_expose(struct job *j, char *err)
{
	const struct msc_driver_ops *ops = j->d->ops;
	const Msc__V1__SnapshotRequest *r = (const void *)j->req;
	Msc__V1__Preview p = MSC__V1__PREVIEW__INIT;
	int rv;

	if (ops->expose_port == NULL) {
		/* The backend's refusal is the agent's text (an invalid
		 * argument's passes on as is). */
		if (ops->preview_refusal != NULL)
			msc_call_fail(j->call, MSC__V1__CODE__INVALID_ARGUMENT,
			    "%s", ops->preview_refusal);
		else
			msc_call_fail(j->call, MSC__V1__CODE__UNIMPLEMENTED,
			    "this backend has no preview URLs");
		return;
	}
	if (r->port < 1 || r->port > 65535) {
		msc_call_fail(j->call, MSC__V1__CODE__INVALID_ARGUMENT,
		    "port must be a whole number from 1 to 65535");
		return;
	}
	if (!msc_job_principal_may(j, r->computer_id, r->principal, err))
		return;
	if ((rv = ops->expose_port(j->d->be, r, &p, err,
	    MSC_DRIVER_ERRLEN)) == 0)
		msc_call_reply(j->call, &p.base);
	else
		msc_job_fail(j, rv, err);
	msc_preview_fini(&p);
}

/* Refuses what no backend may see; 0 when req may go on. */
static int
check(struct job *j, const Msc__V1__SnapshotRequest *r, char *err)
{
	const struct msc_driver_ops *ops = j->d->ops;

	if (ops->snapshot == NULL || ops->restore == NULL ||
	    ops->snapshots == NULL || ops->snapshot_delete == NULL) {
		snprintf(err, MSC_DRIVER_ERRLEN, "%s keeps no snapshots",
		    ops->name);
		return -ENOSYS;
	}
	if ((j->kind == JOB_RESTORE || j->kind == JOB_SNAPSHOT_DELETE) &&
	    !msc_snapshot_id_valid(r->snapshot_id)) {
		snprintf(err, MSC_DRIVER_ERRLEN, "%s", MSC_SNAPSHOT_ID_ERROR);
		return -EINVAL;
	}
	if (j->kind == JOB_SNAPSHOT && !msc_snapshot_name_valid(r->name)) {
		snprintf(err, MSC_DRIVER_ERRLEN, "%s", MSC_SNAPSHOT_NAME_ERROR);
		return -EINVAL;
	}
	return 0;
}

bool
msc_job_run_snapshot(struct job *j, char *err)
{
	const struct msc_driver_ops *ops = j->d->ops;
	const Msc__V1__SnapshotRequest *r = (const void *)j->req;
	Msc__V1__Snapshot s = MSC__V1__SNAPSHOT__INIT;
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	Msc__V1__SnapshotList l = MSC__V1__SNAPSHOT_LIST__INIT;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	int rv;

	if (j->kind == JOB_EXPOSE) {
		run_expose(j, err);
		return true;
	}
	if (j->kind != JOB_SNAPSHOT && j->kind != JOB_RESTORE &&
	    j->kind != JOB_SNAPSHOTS && j->kind != JOB_SNAPSHOT_DELETE)
		return false;
	if ((rv = check(j, r, err)) != 0) {
		if (rv == -ENOSYS)
			msc_call_fail(j->call, MSC__V1__CODE__UNIMPLEMENTED,
			    "%s", err);
		else
			msc_job_fail(j, rv, err);
		return true;
	}
	/* Only its principal saves or restores a computer it records. */
	if ((j->kind == JOB_SNAPSHOT || j->kind == JOB_RESTORE) &&
	    !msc_job_principal_may(j, r->computer_id, r->principal, err))
		return true;
	switch (j->kind) {
	case JOB_SNAPSHOT:
		if ((rv = ops->snapshot(j->d->be, r, &s, err,
		    MSC_DRIVER_ERRLEN)) == 0)
			msc_call_reply(j->call, &s.base);
		msc_snapshot_fini(&s);
		break;
	case JOB_RESTORE:
		if ((rv = ops->restore(j->d->be, r, &c, err,
		    MSC_DRIVER_ERRLEN)) == 0)
			msc_call_reply(j->call, &c.base);
		msc_computer_fini(&c);
		break;
	case JOB_SNAPSHOTS:
		if ((rv = ops->snapshots(j->d->be, r, &l, err,
		    MSC_DRIVER_ERRLEN)) == 0) {
			if (l.n_snapshots > 1)
				qsort(l.snapshots, l.n_snapshots,
				    sizeof(*l.snapshots), by_created);
			msc_call_reply(j->call, &l.base);
		}
		msc_snapshot_list_fini(&l);
		break;
	default:
		if ((rv = ops->snapshot_delete(j->d->be, r, err,
		    MSC_DRIVER_ERRLEN)) == 0)
			msc_call_reply(j->call, &e.base);
		break;
	}
	if (rv != 0)
		msc_job_fail(j, rv, err);
	return true;
}
