#include "msc_tls.h"

#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/supplemental/tls/tls.h>

static char tls_ca[4096];
static char tls_cert[4096];

bool
msc_tls_url(const char *url)
{
	return strncmp(url, "tls+tcp://", 10) == 0 ||
	    strncmp(url, "tls+tcp4://", 11) == 0 ||
	    strncmp(url, "tls+tcp6://", 11) == 0;
}

/* A config for one endpoint; both sides verify the peer. */
static int
config_new(nng_tls_mode mode, const char *server_name, nng_tls_config **cp)
{
	nng_tls_config *c;
	int rv;

	if ((rv = nng_tls_config_alloc(&c, mode)) != 0)
		return rv;
	if ((rv = nng_tls_config_ca_file(c, tls_ca)) != 0 ||
	    (rv = nng_tls_config_cert_key_file(c, tls_cert, NULL)) != 0 ||
	    (rv = nng_tls_config_auth_mode(c, NNG_TLS_AUTH_MODE_REQUIRED)) !=
		0 ||
	    (server_name != NULL &&
		(rv = nng_tls_config_server_name(c, server_name)) != 0)) {
		nng_tls_config_free(c);
		return rv;
	}
	*cp = c;
	return 0;
}

int
msc_tls_setup(const char *ca_file, const char *cert_key_file, char *err,
    size_t errlen)
{
	static bool registered;
	nng_tls_config *probe;
	int rv;

	if (ca_file == NULL || cert_key_file == NULL) {
		snprintf(err, errlen, "TLS needs both --tls-ca and --tls-cert");
		return -EINVAL;
	}
	if (!registered && (rv = msc_tls_engine_register()) != 0) {
		snprintf(err, errlen, "cannot install the TLS engine: %s",
		    nng_strerror(rv));
		return -EINVAL;
	}
	registered = true;
	snprintf(tls_ca, sizeof(tls_ca), "%s", ca_file);
	snprintf(tls_cert, sizeof(tls_cert), "%s", cert_key_file);
	/* Load once now so that a bad file is a startup error. */
	if ((rv = config_new(NNG_TLS_MODE_SERVER, NULL, &probe)) != 0) {
		snprintf(err, errlen, "cannot load --tls-ca '%s' or --tls-cert "
		    "'%s': %s", ca_file, cert_key_file, nng_strerror(rv));
		tls_ca[0] = tls_cert[0] = '\0';
		return -EINVAL;
	}
	nng_tls_config_free(probe);
	return 0;
}

/* Whether url begins with one of the NULL-terminated schemes. */
static bool
has_scheme(const char *url, const char *const schemes[])
{
	for (int i = 0; schemes[i] != NULL; i++)
		if (strncmp(url, schemes[i], strlen(schemes[i])) == 0)
			return true;
	return false;
}

int
msc_tls_check_url(const char *url, bool allow_plain, char *err,
    size_t errlen)
{
	static const char *const local[] = { "inproc://", "ipc://", NULL };
	static const char *const plain[] = { "tcp://", "tcp4://", "tcp6://",
		NULL };

	if (msc_tls_url(url)) {
		if (tls_ca[0] == '\0') {
			snprintf(err, errlen, "%s needs --tls-ca and --tls-cert "
			    "(see scripts/make-certs)", url);
			return -EINVAL;
		}
		return 0;
	}
	if (has_scheme(url, local))
		return 0;
	if (has_scheme(url, plain)) {
		if (allow_plain)
			return 0;
		snprintf(err, errlen, "%s is plain TCP (no authentication, "
		    "loopback included): use tls+tcp:// with "
		    "--tls-ca/--tls-cert, or pass --allow-plain-tcp on a "
		    "trusted network", url);
		return -EINVAL;
	}
	snprintf(err, errlen, "%s: a service address must be tls+tcp://, "
	    "ipc:// or inproc:// (or tcp:// with --allow-plain-tcp)", url);
	return -EINVAL;
}

int
msc_tls_listener(nng_listener l, const char *url)
{
	nng_tls_config *c;
	int rv;

	if (strncmp(url, "ipc://", 6) == 0)
		return nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, 0600);
	if (!msc_tls_url(url))
		return 0;
	if ((rv = config_new(NNG_TLS_MODE_SERVER, NULL, &c)) != 0)
		return rv;
	rv = nng_listener_set_ptr(l, NNG_OPT_TLS_CONFIG, c);
	nng_tls_config_free(c);        /* the listener holds its own ref */
	return rv;
}

int
msc_tls_dialer(nng_dialer d, const char *url, const char *peer_role)
{
	char want[sizeof(MSC_TLS_ROLE_URI) + MSC_TLS_ROLE_MAX];
	nng_tls_config *c;
	int rv;

	if (!msc_tls_url(url))
		return 0;
	if (peer_role == NULL || *peer_role == '\0')
		return NNG_EINVAL;
	/*
	 * What proves a peer is the cluster CA's signature on a certificate
	 * naming the role we dial (our engine checks it for this "server
	 * name"); mbed TLS 2 cannot match IP addresses anyway.
	 */
	snprintf(want, sizeof(want), "%s%s", MSC_TLS_ROLE_URI, peer_role);
	if ((rv = config_new(NNG_TLS_MODE_CLIENT, want, &c)) != 0)
		return rv;
	rv = nng_dialer_set_ptr(d, NNG_OPT_TLS_CONFIG, c);
	nng_tls_config_free(c);
	return rv;
}

/* Whether a kernel address is the NNG one. */
static bool
same_addr(const struct sockaddr_storage *k, const nng_sockaddr *n)
{
	const struct sockaddr_in *k4 = (const void *)k;
	const struct sockaddr_in6 *k6 = (const void *)k;

	if (k->ss_family == AF_INET && n->s_family == NNG_AF_INET)
		return k4->sin_port == n->s_in.sa_port &&
		    k4->sin_addr.s_addr == n->s_in.sa_addr;
	if (k->ss_family == AF_INET6 && n->s_family == NNG_AF_INET6)
		return k6->sin6_port == n->s_in6.sa_port &&
		    memcmp(&k6->sin6_addr, n->s_in6.sa_addr, 16) == 0;
	return false;
}

/* Keepalive probes while idle, a user timeout while data is in flight. */
static void
set_dead_peer_limits(int fd)
{
	unsigned int user_ms = MSC_TLS_DEAD_PEER_MS;
	int on = 1, idle = 1, intvl = 1;
	int cnt = MSC_TLS_DEAD_PEER_MS / 1000;

	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl,
	    sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms,
	    sizeof(user_ms));
}

void
msc_tls_pipe_watch(nng_pipe p)
{
	struct sockaddr_storage k;
	nng_sockaddr loc, rem;
	struct dirent *e;
	socklen_t len;
	DIR *d;

	if (nng_pipe_get_addr(p, NNG_OPT_LOCADDR, &loc) != 0 ||
	    nng_pipe_get_addr(p, NNG_OPT_REMADDR, &rem) != 0 ||
	    (loc.s_family != NNG_AF_INET && loc.s_family != NNG_AF_INET6))
		return;
	/*
	 * NNG 1.5 does not give a pipe's descriptor out: find the socket
	 * with the pipe's two addresses (a TCP connection is unique by them).
	 */
	if ((d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || end == e->d_name || fd == dirfd(d))
			continue;
		len = sizeof(k);
		if (getsockname((int)fd, (struct sockaddr *)&k, &len) != 0 ||
		    !same_addr(&k, &loc))
			continue;
		len = sizeof(k);
		if (getpeername((int)fd, (struct sockaddr *)&k, &len) != 0 ||
		    !same_addr(&k, &rem))
			continue;
		set_dead_peer_limits((int)fd);
		break;
	}
	closedir(d);
}
