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

/*
 * A certificate names its holder's role in the cluster with a URI
 * subjectAltName MSC_TLS_ROLE_URI "<role>": edge, session, inventory,
 * operator (the command line), or driver:<driver id> (scripts/make-certs).
 */
#define MSC_TLS_ROLE_URI "msc-role:"
#define MSC_TLS_ROLE_MAX 96

/*
 * Loads the cluster CA and this service's certificate+key (one PEM file)
 * for every tls+tcp:// listener and dialer of this process. Call once,
 * before any server or client starts. Returns 0, or -EINVAL with a
 * message in err.
 */
int msc_tls_setup(const char *ca_file, const char *cert_key_file, char *err,
    size_t errlen);

/*
 * Checks a service address: inproc:// and ipc:// (this host; the socket
 * file is 0600) pass; tls+tcp:// needs msc_tls_setup() first; tcp://,
 * loopback included, needs `allow_plain` (no certificate, so no role: a
 * peer that reaches it may call anything); any other scheme (ws://, wss://,
 * ...) is refused. Returns 0 or -EINVAL with a message in err.
 */
int msc_tls_check_url(const char *url, bool allow_plain, char *err,
    size_t errlen);

/* Whether url is tls+tcp:// (tls+tcp4://, tls+tcp6://). */
bool msc_tls_url(const char *url);

/*
 * Secures a listener before it starts: the TLS material for tls+tcp://,
 * mode 0600 for an ipc:// socket file; else a no-op. Returns 0 or an NNG
 * error.
 */
int msc_tls_listener(nng_listener l, const char *url);

/*
 * Applies the TLS material to a dialer of a tls+tcp:// url (else a no-op):
 * the server must hold a certificate of the cluster CA naming `peer_role`
 * (required for tls+tcp://). Returns 0 or an NNG error.
 */
int msc_tls_dialer(nng_dialer d, const char *url, const char *peer_role);

/*
 * The role that the certificate of a tls+tcp:// pipe's peer names, into
 * role[len]. Returns 0, NNG_EPEERAUTH when the peer is not verified or its
 * certificate names no role, or another NNG error (not a TLS pipe, gone).
 */
int msc_tls_pipe_role(nng_pipe p, char *role, size_t len);

/*
 * Puts this process's TLS engine (msc_tls_engine.c: NNG's handshake on
 * mbed TLS, plus the peer's role) in place of NNG's own. msc_tls_setup
 * calls it. Returns 0 or an NNG error.
 */
int msc_tls_engine_register(void);

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
