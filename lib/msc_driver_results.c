/*
 * msc_driver_results.c - what every backend's answers share: freeing the
 * computers it filled, the status code of an errno, the text of a
 * computer that died under a command, the reason a status carries, and
 * the sweep of a command's processes (msc_driver.h).
 */
#include "msc_driver.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const char msc_driver_sweep_sh[] =
    "for e in /proc/[0-9]*/environ; do\n"
    "  if grep -qzx \"" MSC_DRIVER_MARKER_VAR "=$1\" \"$e\" 2>/dev/null; "
    "then\n"
    "    p=${e%/environ}; kill -9 \"${p#/proc/}\" 2>/dev/null\n"
    "  fi\n"
    "done\n"
    "exit 0\n";

static void
free_field(char *s)
{
	if (s != protobuf_c_empty_string)
		free(s);
}

void
msc_computer_fini(Msc__V1__Computer *c)
{
	free_field(c->computer_id);
	free_field(c->sandbox_id);
	free_field(c->image);
	free_field(c->state);
	free_field(c->created_at);
	free_field(c->backend);
	free_field(c->driver);
	free_field(c->network);
	free_field(c->disk);
	free_field(c->runtime);
	free_field(c->principal);
	free(c->exposed_ports);
	*c = (Msc__V1__Computer)MSC__V1__COMPUTER__INIT;
}

void
msc_computer_list_fini(Msc__V1__ComputerList *l)
{
	for (size_t i = 0; i < l->n_computers; i++) {
		msc_computer_fini(l->computers[i]);
		free(l->computers[i]);
	}
	free(l->computers);
	l->computers = NULL;
	l->n_computers = 0;
}

Msc__V1__Code
msc_driver_code(int rv)
{
	switch (rv) {
	case -ENOENT:
		return MSC__V1__CODE__NOT_FOUND;
	case -EEXIST:
		return MSC__V1__CODE__ALREADY_EXISTS;
	case -ECONNREFUSED:
	case -EAGAIN:
	case -ESHUTDOWN:        /* the driver stops */
		return MSC__V1__CODE__UNAVAILABLE;
	case -ETIMEDOUT:
		return MSC__V1__CODE__DEADLINE_EXCEEDED;
	case -EINVAL:
		return MSC__V1__CODE__INVALID_ARGUMENT;
	case -EPERM:
	case -EACCES:
		return MSC__V1__CODE__FAILED_PRECONDITION;
	case -ECONNABORTED:
		return MSC__V1__CODE__ABORTED;
	case -ECANCELED:
		return MSC__V1__CODE__CANCELLED;
	case -EDQUOT:           /* a quota of ours (--max-snapshots) */
	case -ENOSPC:           /* the engine's disk is full */
	case -ENOBUFS:          /* --driver-output-buffer */
		return MSC__V1__CODE__RESOURCE_EXHAUSTED;
	default:
		return MSC__V1__CODE__INTERNAL;
	}
}

int
msc_driver_died(char *err, size_t errlen, const char *id,
    const char *why_fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errlen, "Computer '%s' died during command "
	    "execution: ", id);
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, why_fmt);
		vsnprintf(err + n, errlen - (size_t)n, why_fmt, ap);
		va_end(ap);
	}
	return -ECONNABORTED;
}

Msc__V1__Code
msc_driver_code_cloud(int rv)
{
	return rv == -EIO ? MSC__V1__CODE__UNAVAILABLE : msc_driver_code(rv);
}

Msc__V1__Reason
msc_driver_reason(Msc__V1__Code code)
{
	switch (code) {
	case MSC__V1__CODE__ABORTED:
		return MSC__V1__REASON__REASON_COMPUTER_DIED;
	case MSC__V1__CODE__UNAVAILABLE:
		return MSC__V1__REASON__REASON_COMPUTER_UNAVAILABLE;
	case MSC__V1__CODE__RESOURCE_EXHAUSTED:
		return MSC__V1__REASON__REASON_OVERLOADED;
	case MSC__V1__CODE__INVALID_ARGUMENT:
		return MSC__V1__REASON__REASON_INVALID_ARGUMENT;
	case MSC__V1__CODE__CANCELLED:
		return MSC__V1__REASON__REASON_CANCELLED;
	default:
		return MSC__V1__REASON__REASON_UNSPECIFIED;
	}
}

Msc__V1__Reason
msc_driver_backend_reason(Msc__V1__Code code)
{
	switch (code) {
	case MSC__V1__CODE__INTERNAL:
	case MSC__V1__CODE__UNAVAILABLE:
	case MSC__V1__CODE__DEADLINE_EXCEEDED:
	case MSC__V1__CODE__FAILED_PRECONDITION:
	case MSC__V1__CODE__UNIMPLEMENTED:
		return MSC__V1__REASON__REASON_PROVIDER;
	default:
		return msc_driver_reason(code);
	}
}
