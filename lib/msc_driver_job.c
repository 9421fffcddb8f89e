/*
 * msc_driver_job.c - what every kind of job (msc_driver_int.h) shares
 * when it runs against the backend: failing its call with the backend's
 * error, and whether a principal may act on a computer the backend
 * records an owner of. The skeleton (msc_driver.c), the Exec jobs
 * (msc_driver_exec.c) and the snapshot jobs (msc_driver_snap.c) call
 * down into these; they call only the backend's ops and its codes
 * (msc_driver_results.c).
 */
#include "msc_driver_int.h"

#include <errno.h>

#include "msc_principal.h"

void
msc_job_fail(struct job *j, int rv, const char *err)
{
	Msc__V1__Code code = j->d->ops->code(rv);

	msc_call_fail_reason(j->call, code, msc_driver_backend_reason(code),
	    "%s", err);
}

/*
 * Whether `principal` may act on computer `id` (a backend that keeps no
 * owner: always); else fails the call. A computer the backend cannot
 * find is left to the operation, which says so its own way.
 */
bool
msc_job_principal_may(struct job *j, const char *id, const char *principal,
    char *err)
{
	char tag[MSC_PRINCIPAL_TAG_LEN + 1] = "";
	int rv;

	if (j->d->ops->owner == NULL || principal[0] == '\0')
		return true;    /* no owner kept, or the operator asks */
	rv = j->d->ops->owner(j->d->be, id, tag, sizeof(tag), err,
	    MSC_DRIVER_ERRLEN);
	if (rv == -ENOENT || (rv == 0 && msc_principal_may(tag, principal)))
		return true;
	if (rv != 0)
		msc_job_fail(j, rv, err);
	else
		msc_call_fail(j->call, MSC__V1__CODE__FAILED_PRECONDITION,
		    MSC_PRINCIPAL_NOT_YOURS, id);
	return false;
}
