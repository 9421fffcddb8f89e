/*
 * modal_ports.c - preview URLs on Modal (issue 30) through its tunnels:
 * Modal opens a sandbox's tunnels only when it is created, for the ports
 * its definition names (open_ports), so each new sandbox gets the ports
 * of --modal-ports, and computer_expose_port answers the tunnel of a
 * port with SandboxGetTunnels (https://HOST[:PORT]/, as Modal's clients
 * write it); a port without a tunnel is a clear error. No proxy of ours;
 * the table of exposed ports is cloud_ports.c's.
 */
#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define T_TUNNELS_MS 30000
#define TUNNELS_WAIT_S 10       /* Modal's own wait for the tunnels */
#define TUNNELS_TIMEOUT \
	MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TIMEOUT

#define MODAL_PORT_NOTE "Modal keeps the tunnel of this port open for the " \
	"sandbox's life: computer_unexpose_port forgets the URL here but " \
	"does not close it. A restart or reset (a new sandbox) changes the " \
	"URL: expose the port again."

void
modal_ports_open(struct modal_driver *d, Modal__Client__Sandbox *def,
    Modal__Client__PortSpecs *specs, Modal__Client__PortSpec *spec,
    Modal__Client__PortSpec **specp)
{
	if (d->n_ports == 0)
		return;
	for (size_t i = 0; i < d->n_ports; i++) {
		modal__client__port_spec__init(&spec[i]);
		spec[i].port = d->ports[i];     /* encrypted: TLS at Modal */
		specp[i] = &spec[i];
	}
	specs->ports = specp;
	specs->n_ports = d->n_ports;
	def->open_ports = specs;
}

/* The --modal-ports, as words ("none" when empty). */
static void
ports_words(const struct modal_driver *d, char *buf, size_t len)
{
	size_t n = 0;

	snprintf(buf, len, "none");
	for (size_t i = 0; i < d->n_ports && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%u", i ? ", " : "",
		    d->ports[i]);
}

/* The URL of sandbox sbx's tunnel of `port` into url. */
static int
tunnel_url(struct modal_driver *d, const char *id, const char *sbx,
    uint32_t port, char *url, size_t urllen, char *err, size_t errlen)
{
	Modal__Client__SandboxGetTunnelsRequest req =
	    MODAL__CLIENT__SANDBOX_GET_TUNNELS_REQUEST__INIT;
	Modal__Client__SandboxGetTunnelsResponse *resp = NULL;
	const Modal__Client__TunnelData *t = NULL;
	char words[128];
	int rv;

	req.sandbox_id = (char *)sbx;
	req.timeout = TUNNELS_WAIT_S;
	if ((rv = modal_call(d, "SandboxGetTunnels", &req.base,
		 &modal__client__sandbox_get_tunnels_response__descriptor,
		 (ProtobufCMessage **)&resp, T_TUNNELS_MS, true, err,
		 errlen)) != 0)
		return rv;
	if (resp->result != NULL && resp->result->status == TUNNELS_TIMEOUT) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		snprintf(err, errlen, "The tunnels of computer '%s' were not "
		    "ready within %d s: try again.", id, TUNNELS_WAIT_S);
		return -EAGAIN;
	}
	for (size_t i = 0; i < resp->n_tunnels; i++)
		if (resp->tunnels[i]->container_port == port)
			t = resp->tunnels[i];
	if (t != NULL && !cloud_ports_host_ok(t->host)) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		snprintf(err, errlen, "Modal gave port %u of computer '%s' a "
		    "tunnel host that is not a host name", port, id);
		return -EPROTO;
	}
	if (t == NULL) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		ports_words(d, words, sizeof(words));
		snprintf(err, errlen, "Port %u of computer '%s' has no Modal "
		    "tunnel: Modal opens tunnels only when a sandbox is "
		    "created, for the ports of --modal-ports (this server: "
		    "%s). Start the server with the port in --modal-ports; a "
		    "computer made before gets it at its next reset or "
		    "restart.", port, id, words);
		return -EINVAL;
	}
	if (t->port == 443 || t->port == 0)
		rv = snprintf(url, urllen, "https://%s/", t->host);
	else
		rv = snprintf(url, urllen, "https://%s:%u/", t->host, t->port);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	if (rv < 0 || (size_t)rv >= urllen) {
		snprintf(err, errlen, "Modal's tunnel host is too long");
		return -EPROTO;
	}
	return 0;
}

/* One try on the sandbox modal_lookup names now. */
static int
expose_once(struct modal_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Preview *out, char *err, size_t errlen)
{
	struct modal_known k;
	char sbx[sizeof(k.sandbox_id)], url[600];
	int rv;

	if ((rv = modal_lookup(d, req->computer_id, &k, err, errlen)) != 0)
		return rv;
	snprintf(sbx, sizeof(sbx), "%s", k.sandbox_id);
	explicit_bzero(&k, sizeof(k));          /* the router's JWT */
	if (!req->unexpose && (rv = tunnel_url(d, req->computer_id, sbx,
	    req->port, url, sizeof(url), err, errlen)) != 0)
		return rv;
	return cloud_ports_set(d->exposed, req, sbx, req->unexpose ? NULL :
	    url, MODAL_PORT_NOTE, out, err, errlen);
}

int
modal_expose_port(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Preview *out, char *err, size_t errlen)
{
	struct modal_driver *d = be;
	int rv;

	/* Not on the computer's lane: a reset or restart may end the
	 * sandbox looked up meanwhile (-ESTALE); once more with the one it
	 * made. */
	if ((rv = expose_once(d, req, out, err, errlen)) == -ESTALE)
		rv = expose_once(d, req, out, err, errlen);
	return rv;
}
