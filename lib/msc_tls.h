/*
 * msc_tls.h - how services reach each other: tls+tcp:// with mutual
 * authentication against the cluster's CA (a peer without a certificate
 * from that CA is refused), ipc:// and inproc:// on one host, and plain
 * tcp:// only to loopback unless explicitly allowed.
 */
#ifndef MSC_TLS_H
#define MSC_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <nng/nng.h>

/* The DNS name every certificate of a cluster carries (scripts/make-certs). */
#define MSC_TLS_PEER_NAME "mcp-sandbox-computer"

/*
 * Loads the cluster CA and this service's certificate+key (one PEM file)
 * for every tls+tcp:// listener and dialer of this process. Call once,
 * before any server or client starts. Returns 0, or -EINVAL with a
 * message in err.
 */
int msc_tls_setup(const char *ca_file, const char *cert_key_file, char *err,
    size_t errlen);

/*
 * Checks a service address: tls+tcp:// needs msc_tls_setup() first;
 * tcp:// to a host other than loopback needs `allow_plain`. Returns 0 or
 * -EINVAL with a message in err.
 */
int msc_tls_check_url(const char *url, bool allow_plain, char *err,
    size_t errlen);

/* Applies the TLS material to an endpoint of a tls+tcp:// url (else no-op). */
int msc_tls_listener(nng_listener l, const char *url);
int msc_tls_dialer(nng_dialer d, const char *url);

/* A TCP peer that acknowledges nothing for this long is cut off. */
#define MSC_TLS_DEAD_PEER_MS 5000

/*
 * Makes a tcp:// or tls+tcp:// connection fail when its peer stops
 * acknowledging for MSC_TLS_DEAD_PEER_MS (host gone, link down, a
 * partition), idle or not, instead of at the kernel's limits (minutes):
 * the calls on it end and the dialer reconnects. A peer that is alive but
 * slow still acknowledges and is kept. Call from an NNG_PIPE_EV_ADD_POST
 * callback; other transports are left alone.
 */
void msc_tls_pipe_watch(nng_pipe p);

#endif /* MSC_TLS_H */
