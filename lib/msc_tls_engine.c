/*
 * msc_tls_engine.c - the TLS engine (mbed TLS) under every tls+tcp://
 * link of this process, in place of NNG's own: the same handshake and
 * checks, plus the cluster role that the peer's certificate names (a URI
 * subjectAltName "msc-role:<role>", scripts/make-certs).
 *
 * NNG 1.5 gives a pipe's owner nothing of the peer's certificate but
 * NNG_OPT_TLS_VERIFIED, which it answers by calling the engine's
 * verified() on the connection of that pipe, in the asking thread (NNG
 * 1.5.2 tls_common.c tls_get_verified). So verified() also leaves the
 * connection's role in a thread-local buffer, and msc_tls_pipe_role()
 * asks for NNG_OPT_TLS_VERIFIED and reads it right after.
 *
 * A client config whose server name is "msc-role:<role>" requires that
 * role of the server instead of a DNS name: a certificate without it
 * fails the handshake, as one from another CA does.
 */
#include "msc_tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/types.h>

#include <mbedtls/asn1.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

#include <nng/supplemental/tls/engine.h>

#include "msc_log.h"

/* A URI subjectAltName, as mbed TLS keeps it (context tag 6). */
#define SAN_URI (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 6)

struct own_cert {
	mbedtls_x509_crt crt;
	mbedtls_pk_context key;
	SLIST_ENTRY(own_cert) link;     /* in the config's own */
};

struct nng_tls_engine_config {
	mbedtls_ssl_config ssl;
	mbedtls_x509_crt ca;
	mbedtls_x509_crl crl;
	SLIST_HEAD(, own_cert) own;
	char *server_name;      /* client: a DNS name, or MSC_TLS_ROLE_URI.. */
	bool is_client;
};

struct nng_tls_engine_conn {
	mbedtls_ssl_context ssl;
	const struct nng_tls_engine_config *cfg;
	bool done;                      /* handshake completed */
	char role[MSC_TLS_ROLE_MAX];    /* the peer's; "" when it names none */
};

/* Set by verified(), read by msc_tls_pipe_role() in the same thread. */
static _Thread_local char asked_role[MSC_TLS_ROLE_MAX];
static _Thread_local bool asked;

static int
random_bytes(void *arg, unsigned char *buf, size_t len)
{
	(void)arg;
	while (len > 0) {
		ssize_t n = getrandom(buf, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
mbed_to_nng(int rv)
{
	switch (rv) {
	case MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE:
	case MBEDTLS_ERR_SSL_CA_CHAIN_REQUIRED:
	case MBEDTLS_ERR_SSL_PEER_VERIFY_FAILED:
	case MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE:
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
		return NNG_EPEERAUTH;
	case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
		return NNG_ECONNREFUSED;
	case MBEDTLS_ERR_SSL_ALLOC_FAILED:
		return NNG_ENOMEM;
	case MBEDTLS_ERR_SSL_TIMEOUT:
		return NNG_ETIMEDOUT;
	case MBEDTLS_ERR_SSL_CONN_EOF:
		return NNG_ECLOSED;
	default:
		return NNG_ECRYPTO;
	}
}

static int
bio_send(void *tls, const unsigned char *buf, size_t len)
{
	size_t n = len;

	switch (nng_tls_engine_send(tls, buf, &n)) {
	case 0:
		return (int)n;
	case NNG_EAGAIN:
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	default:
		return MBEDTLS_ERR_NET_SEND_FAILED;
	}
}

static int
bio_recv(void *tls, unsigned char *buf, size_t len)
{
	size_t n = len;

	switch (nng_tls_engine_recv(tls, buf, &n)) {
	case 0:
		return (int)n;
	case NNG_EAGAIN:
		return MBEDTLS_ERR_SSL_WANT_READ;
	default:
		return MBEDTLS_ERR_NET_RECV_FAILED;
	}
}

/* Copies the role a certificate names into out ("" for none). */
static void
cert_role(const mbedtls_x509_crt *crt, char *out, size_t len)
{
	const size_t plen = strlen(MSC_TLS_ROLE_URI);
	int found = 0;

	out[0] = '\0';
	for (const mbedtls_x509_sequence *s = crt ? &crt->subject_alt_names :
						   NULL;
	     s != NULL; s = s->next) {
		size_t n = s->buf.len;

		if (s->buf.tag != SAN_URI || n < plen ||
		    memcmp(s->buf.p, MSC_TLS_ROLE_URI, plen) != 0)
			continue;
		if (found++ == 0 && n - plen > 0 && n - plen < len &&
		    memchr(s->buf.p + plen, '\0', n - plen) == NULL) {
			memcpy(out, s->buf.p + plen, n - plen);
			out[n - plen] = '\0';
		}
	}
	/* Two roles in one certificate, or a bad one: trust none. */
	if (found != 1)
		out[0] = '\0';
}

static int
conn_init(nng_tls_engine_conn *ec, void *tls, nng_tls_engine_config *cfg)
{
	int rv;

	ec->cfg = cfg;
	mbedtls_ssl_init(&ec->ssl);
	mbedtls_ssl_set_bio(&ec->ssl, tls, bio_send, bio_recv, NULL);
	if ((rv = mbedtls_ssl_setup(&ec->ssl, &cfg->ssl)) != 0)
		return mbed_to_nng(rv);
	if (cfg->is_client && cfg->server_name != NULL &&
	    strncmp(cfg->server_name, MSC_TLS_ROLE_URI,
		strlen(MSC_TLS_ROLE_URI)) != 0 &&
	    (rv = mbedtls_ssl_set_hostname(&ec->ssl, cfg->server_name)) != 0)
		return mbed_to_nng(rv);
	return 0;
}

static void
conn_fini(nng_tls_engine_conn *ec)
{
	mbedtls_ssl_free(&ec->ssl);
}

static void
conn_close(nng_tls_engine_conn *ec)
{
	(void)mbedtls_ssl_close_notify(&ec->ssl);
}

static int
conn_io_result(int rv, size_t *szp)
{
	if (rv == MBEDTLS_ERR_SSL_WANT_READ || rv == MBEDTLS_ERR_SSL_WANT_WRITE)
		return NNG_EAGAIN;
	if (rv < 0)
		return mbed_to_nng(rv);
	*szp = (size_t)rv;
	return 0;
}

static int
conn_recv(nng_tls_engine_conn *ec, uint8_t *buf, size_t *szp)
{
	return conn_io_result(mbedtls_ssl_read(&ec->ssl, buf, *szp), szp);
}

static int
conn_send(nng_tls_engine_conn *ec, const uint8_t *buf, size_t *szp)
{
	return conn_io_result(mbedtls_ssl_write(&ec->ssl, buf, *szp), szp);
}

static int
conn_handshake(nng_tls_engine_conn *ec)
{
	int rv = mbedtls_ssl_handshake(&ec->ssl);

	if (rv == MBEDTLS_ERR_SSL_WANT_READ || rv == MBEDTLS_ERR_SSL_WANT_WRITE)
		return NNG_EAGAIN;
	if (rv != 0)
		return mbed_to_nng(rv);
	cert_role(mbedtls_ssl_get_peer_cert(&ec->ssl), ec->role,
	    sizeof(ec->role));
	ec->done = true;
	return 0;
}

/*
 * A client's check of the server's certificate, after the CA's: the leaf
 * must name the role the client dials, else the handshake fails there.
 */
static int
verify_role(void *arg, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	const char *want = (const char *)arg + strlen(MSC_TLS_ROLE_URI);
	char role[MSC_TLS_ROLE_MAX];

	if (depth != 0)
		return 0;
	cert_role(crt, role, sizeof(role));
	if (strcmp(role, want) != 0) {
		msc_log_err("tls: refused a server whose certificate has the "
		    "role '%s', not '%s' (scripts/make-certs --role)",
		    role[0] ? role : "(none)", want);
		*flags |= MBEDTLS_X509_BADCERT_OTHER;
	}
	return 0;
}

static bool
conn_verified(nng_tls_engine_conn *ec)
{
	bool ok = ec->done && mbedtls_ssl_get_verify_result(&ec->ssl) == 0;

	snprintf(asked_role, sizeof(asked_role), "%s", ok ? ec->role : "");
	asked = true;
	return ok;
}

static void
config_fini(nng_tls_engine_config *cfg)
{
	struct own_cert *o;

	mbedtls_ssl_config_free(&cfg->ssl);
	mbedtls_x509_crt_free(&cfg->ca);
	mbedtls_x509_crl_free(&cfg->crl);
	while ((o = SLIST_FIRST(&cfg->own)) != NULL) {
		SLIST_REMOVE_HEAD(&cfg->own, link);
		mbedtls_x509_crt_free(&o->crt);
		mbedtls_pk_free(&o->key);
		free(o);
	}
	free(cfg->server_name);
}

static int
config_init(nng_tls_engine_config *cfg, nng_tls_mode mode)
{
	int rv;

	cfg->is_client = mode == NNG_TLS_MODE_CLIENT;
	SLIST_INIT(&cfg->own);
	mbedtls_ssl_config_init(&cfg->ssl);
	mbedtls_x509_crt_init(&cfg->ca);
	mbedtls_x509_crl_init(&cfg->crl);
	rv = mbedtls_ssl_config_defaults(&cfg->ssl, cfg->is_client ?
	    MBEDTLS_SSL_IS_CLIENT : MBEDTLS_SSL_IS_SERVER,
	    MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (rv != 0) {
		config_fini(cfg);
		return mbed_to_nng(rv);
	}
	/* Mutual authentication unless asked otherwise; TLS 1.2. */
	mbedtls_ssl_conf_authmode(&cfg->ssl, MBEDTLS_SSL_VERIFY_REQUIRED);
	mbedtls_ssl_conf_min_version(&cfg->ssl, MBEDTLS_SSL_MAJOR_VERSION_3,
	    MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_max_version(&cfg->ssl, MBEDTLS_SSL_MAJOR_VERSION_3,
	    MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_rng(&cfg->ssl, random_bytes, NULL);
	return 0;
}

static int
config_server(nng_tls_engine_config *cfg, const char *name)
{
	char *dup = strdup(name);

	if (dup == NULL)
		return NNG_ENOMEM;
	free(cfg->server_name);
	cfg->server_name = dup;
	if (strncmp(dup, MSC_TLS_ROLE_URI, strlen(MSC_TLS_ROLE_URI)) == 0)
		mbedtls_ssl_conf_verify(&cfg->ssl, verify_role, dup);
	else
		mbedtls_ssl_conf_verify(&cfg->ssl, NULL, NULL);
	return 0;
}

static int
config_auth(nng_tls_engine_config *cfg, nng_tls_auth_mode mode)
{
	switch (mode) {
	case NNG_TLS_AUTH_MODE_NONE:
		mbedtls_ssl_conf_authmode(&cfg->ssl, MBEDTLS_SSL_VERIFY_NONE);
		return 0;
	case NNG_TLS_AUTH_MODE_OPTIONAL:
		mbedtls_ssl_conf_authmode(&cfg->ssl,
		    MBEDTLS_SSL_VERIFY_OPTIONAL);
		return 0;
	case NNG_TLS_AUTH_MODE_REQUIRED:
		mbedtls_ssl_conf_authmode(&cfg->ssl,
		    MBEDTLS_SSL_VERIFY_REQUIRED);
		return 0;
	}
	return NNG_EINVAL;
}

static int
config_ca_chain(nng_tls_engine_config *cfg, const char *certs,
    const char *crl)
{
	int rv;

	if ((rv = mbedtls_x509_crt_parse(&cfg->ca, (const uint8_t *)certs,
		 strlen(certs) + 1)) != 0)
		return mbed_to_nng(rv);
	if (crl != NULL && (rv = mbedtls_x509_crl_parse(&cfg->crl,
				(const uint8_t *)crl, strlen(crl) + 1)) != 0)
		return mbed_to_nng(rv);
	mbedtls_ssl_conf_ca_chain(&cfg->ssl, &cfg->ca, &cfg->crl);
	return 0;
}

static int
config_own_cert(nng_tls_engine_config *cfg, const char *cert,
    const char *key, const char *pass)
{
	struct own_cert *o = calloc(1, sizeof(*o));
	int rv;

	if (o == NULL)
		return NNG_ENOMEM;
	mbedtls_x509_crt_init(&o->crt);
	mbedtls_pk_init(&o->key);
	if ((rv = mbedtls_x509_crt_parse(&o->crt, (const uint8_t *)cert,
		 strlen(cert) + 1)) != 0 ||
	    (rv = mbedtls_pk_parse_key(&o->key, (const uint8_t *)key,
		 strlen(key) + 1, (const uint8_t *)pass,
		 pass != NULL ? strlen(pass) : 0)) != 0 ||
	    (rv = mbedtls_ssl_conf_own_cert(&cfg->ssl, &o->crt, &o->key)) !=
		0) {
		mbedtls_x509_crt_free(&o->crt);
		mbedtls_pk_free(&o->key);
		free(o);
		return mbed_to_nng(rv);
	}
	SLIST_INSERT_HEAD(&cfg->own, o, link);
	return 0;
}

static int
config_version(nng_tls_engine_config *cfg, nng_tls_version min,
    nng_tls_version max)
{
	(void)cfg;
	/* TLS 1.2 only: mbed TLS 2.28 has no 1.3, older ones are weak. */
	return min <= NNG_TLS_1_2 && max >= NNG_TLS_1_2 ? 0 : NNG_ENOTSUP;
}

static nng_tls_engine_config_ops config_ops = {
	.size = sizeof(nng_tls_engine_config),
	.init = config_init,
	.fini = config_fini,
	.server = config_server,
	.auth = config_auth,
	.ca_chain = config_ca_chain,
	.own_cert = config_own_cert,
	.version = config_version,
};

static nng_tls_engine_conn_ops conn_ops = {
	.size = sizeof(nng_tls_engine_conn),
	.init = conn_init,
	.fini = conn_fini,
	.close = conn_close,
	.handshake = conn_handshake,
	.recv = conn_recv,
	.send = conn_send,
	.verified = conn_verified,
};

static const nng_tls_engine engine = {
	.version = NNG_TLS_ENGINE_VERSION,
	.config_ops = &config_ops,
	.conn_ops = &conn_ops,
	.name = "msc-mbed",
	.description = "mcp-sandbox-computer roles on " MBEDTLS_VERSION_STRING,
	.fips_mode = false,
};

int
msc_tls_engine_register(void)
{
	int rv;

	/*
	 * nng_tls_engine_register() does not start NNG, and NNG's start
	 * registers its own engine: start it first (engine_name does).
	 */
	(void)nng_tls_engine_name();
	if ((rv = nng_tls_engine_register(&engine)) != 0)
		return rv;
	return strcmp(nng_tls_engine_name(), engine.name) == 0 ? 0 : NNG_ENOTSUP;
}

int
msc_tls_pipe_role(nng_pipe p, char *role, size_t len)
{
	bool verified = false;
	int rv;

	asked = false;
	asked_role[0] = '\0';
	if ((rv = nng_pipe_get_bool(p, NNG_OPT_TLS_VERIFIED, &verified)) != 0)
		return rv;
	if (!asked || !verified || asked_role[0] == '\0')
		return NNG_EPEERAUTH;
	if (strlen(asked_role) >= len)
		return NNG_EINVAL;
	snprintf(role, len, "%s", asked_role);
	return 0;
}
