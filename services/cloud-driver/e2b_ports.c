/*
 * e2b_ports.c - preview URLs on E2B (issue 30): E2B serves every port of
 * a sandbox at its own host, https://<port>-<sandbox id>.<domain>/, the
 * domain the sandbox's (its create or connect reply), else E2B_DOMAIN's.
 * No proxy of ours; the table of exposed ports is cloud_ports.c's.
 */
#include "e2b_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cloud_ports.h"

#define E2B_PORT_NOTE "E2B serves every port of the sandbox at its own " \
	"host while a server listens on it, exposed or not: " \
	"computer_unexpose_port forgets the URL here but does not close it. " \
	"A reset (a new sandbox) changes the URL."

/* One try on the sandbox e2b_lookup names now. */
static int
expose_once(struct e2b_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Preview *out, char *err, size_t errlen)
{
	struct e2b_known k;
	char url[512];
	int rv, n;

	if ((rv = e2b_lookup(d, req->computer_id, &k, err, errlen)) != 0)
		return rv;
	n = snprintf(url, sizeof(url), "https://%u-%s.%s/", req->port, k.sbx,
	    k.domain);
	explicit_bzero(k.token, sizeof(k.token));
	if (n < 0 || (size_t)n >= sizeof(url) || k.sbx[0] == '\0' ||
	    k.domain[0] == '\0') {
		snprintf(err, errlen, "E2B gave computer '%s' no sandbox host",
		    req->computer_id);
		return -EPROTO;
	}
	return cloud_ports_set(d->ports, req, k.sbx, url, E2B_PORT_NOTE, out,
	    err, errlen);
}

int
e2b_expose_port(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Preview *out, char *err, size_t errlen)
{
	struct e2b_driver *d = be;
	int rv;

	/* As Docker: a computer without network serves no preview. */
	if (!req->unexpose && !d->cfg->network) {
		snprintf(err, errlen, "Computer '%s' has no network "
		    "(--no-network): its ports cannot be previewed.",
		    req->computer_id);
		return -EINVAL;
	}
	/* Not on the computer's lane: a reset may end the sandbox looked
	 * up meanwhile (-ESTALE); once more with the one it made. */
	if ((rv = expose_once(d, req, out, err, errlen)) == -ESTALE)
		rv = expose_once(d, req, out, err, errlen);
	return rv;
}
