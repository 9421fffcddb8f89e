/*
 * modal_lease.c - the watch loop of temporary Modal sandboxes and the
 * renewal of their leases; see modal_lease.h.
 */
#include "modal_lease.h"

#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>

#include "msc_lease_renewer.h"

/* One round (msc_lease_renewer.h): touches each sandbox's lease file. */
static void
renew(void *arg, struct msc_lease_item *items, size_t n)
{
	static const char *const argv[] = { "touch", MSC_LEASE_FILE, NULL };
	struct modal_driver *d = arg;

	for (size_t i = 0; i < n; i++) {
		struct msc_lease_item *it = &items[i];
		char err[MODAL_ERRLEN];
		struct modal_known k;
		struct modal_run r = { 0 };
		int rv = modal_lookup(d, it->id, &k, err, sizeof(err));

		if (rv == 0)
			rv = modal_exec_argv(d, &k, argv, 2, 5, &r, err,
			    sizeof(err));
		modal_run_fini(&r);
		it->outcome = rv == 0 ? MSC_LEASE_RENEWED : rv == -ENOENT ?
		    MSC_LEASE_GONE : MSC_LEASE_FAILED;
		if (rv != 0)
			snprintf(it->err, sizeof(it->err), "%.159s", err);
	}
}

int
modal_lease_start(struct modal_driver *d)
{
	return msc_lease_renewer_start(&d->lease, "modal",
	    (uint32_t)d->cfg->lease_timeout * 1000u, renew, d);
}

void
modal_lease_entrypoint(const struct modal_driver *d, bool temporary,
    struct modal_lease_entry *e, Modal__Client__Sandbox *def)
{
	if (!temporary)
		return;         /* none: it idles until its timeout */
	snprintf(e->secs, sizeof(e->secs), "%ld", d->cfg->lease_timeout);
	e->argv[0] = "/bin/sh";
	e->argv[1] = "-c";
	e->argv[2] = (char *)msc_lease_watch_sh;
	e->argv[3] = "msc-lease";
	e->argv[4] = e->secs;
	def->entrypoint_args = e->argv;
	def->n_entrypoint_args = 5;
}

uint32_t
modal_lease_idle_s(const struct modal_driver *d, bool temporary)
{
	return temporary ? (uint32_t)d->cfg->lease_timeout : 0;
}
