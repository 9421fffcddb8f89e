/* test_rpc_roles.c - cluster links authorise by role: over tls+tcp:// a
 * caller's certificate (scripts/make-certs) names its role, and a service
 * answers PERMISSION_DENIED to a role that may not call the method, before
 * dispatch; a client refuses a server whose certificate names another
 * role; plain tcp:// needs --allow-plain-tcp, other schemes are refused;
 * an ipc:// socket file is 0600. The attacks: the internet-facing edge's
 * key calling Driver/Exec and Driver/Create, the inventory's calling
 * Session/Open, the edge's key posing as the inventory to the session
 * service, a CA-signed certificate naming no role. One process plays
 * every host: msc_tls_setup() loads the certificate that the next server
 * or client takes. argv[1] is scripts/make-certs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cmocka.h>

#include <nng/nng.h>

#include "driver.pb-c.h"
#include "msc_driver.h"
#include "msc_rpc.h"
#include "msc_tls.h"
#include "session.pb-c.h"

static char dir[] = "/tmp/msc-roles-XXXXXX";
static int backend_calls;       /* driver operations that ran */
static int session_calls;       /* Session/Open handlers that ran */

/* The certificate DIR/NAME.pem for the servers and clients made next. */
static void
use_cert(const char *name)
{
	char ca[128], cert[128], err[256] = "";

	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/%s.pem", dir, name);
	if (msc_tls_setup(ca, cert, err, sizeof(err)) != 0)
		fail_msg("%s: %s", cert, err);
}

/* A free loopback port's tls+tcp:// url. */
static void
free_url(char *url, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(url, len, "tls+tcp://127.0.0.1:%d", ntohs(a.sin_port));
	close(fd);
}

static int
fake_create(void *be, const char *id, bool temporary, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	(void)be;
	(void)temporary;
	(void)err;
	(void)errlen;
	__atomic_add_fetch(&backend_calls, 1, __ATOMIC_SEQ_CST);
	out->computer_id = strdup(id);
	return out->computer_id != NULL ? 0 : -ENOMEM;
}

static int
fake_exec(void *be, const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *out,
    char *err, size_t errlen)
{
	(void)be;
	(void)req;
	(void)out;
	(void)err;
	(void)errlen;
	__atomic_add_fetch(&backend_calls, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static const struct msc_driver_ops fake_ops = {
	.name = "fake-driver",
	.create = fake_create,
	.exec = fake_exec,
	.code = msc_driver_code,
};

/* Calls Driver/method as the holder of cert `as`; returns the code. */
static Msc__V1__Code
driver_call(const char *url, const char *as, const char *method,
    char *msg, size_t msglen)
{
	Msc__V1__ExecRequest er = MSC__V1__EXEC_REQUEST__INIT;
	Msc__V1__CreateRequest cr = MSC__V1__CREATE_REQUEST__INIT;
	struct msc_client *cli;
	Msc__V1__Code code;

	er.computer_id = cr.computer_id = "box-1";
	er.command = "true";
	use_cert(as);
	assert_int_equal(msc_client_open(url, "driver:docker-1", &cli), 0);
	code = msc_client_call_sync(cli, &msc__v1__driver__descriptor, method,
	    strcmp(method, "Exec") == 0 ? &er.base : &cr.base, 5000, NULL, msg,
	    msglen);
	msc_client_close(cli);
	return code;
}

/* Exec only from the session service (and the operator), Create only
 * from the inventory (the operator may call both); the edge's key gets
 * neither. */
static void
driver_methods_by_role(void **state)
{
	struct {
		const char *as, *method;
		Msc__V1__Code want;
	} cases[] = {
		{ "edge", "Exec", MSC__V1__CODE__PERMISSION_DENIED },
		{ "edge", "Create", MSC__V1__CODE__PERMISSION_DENIED },
		{ "inventory", "Exec", MSC__V1__CODE__PERMISSION_DENIED },
		{ "session", "Create", MSC__V1__CODE__PERMISSION_DENIED },
		{ "docker-2", "Exec", MSC__V1__CODE__PERMISSION_DENIED },
		{ "norole", "Exec", MSC__V1__CODE__PERMISSION_DENIED },
		{ "tworoles", "Exec", MSC__V1__CODE__PERMISSION_DENIED },
		{ "session", "Exec", MSC__V1__CODE__OK },
		{ "operator", "Exec", MSC__V1__CODE__OK },
		{ "inventory", "Create", MSC__V1__CODE__OK },
		{ "operator", "Create", MSC__V1__CODE__OK },
	};
	struct msc_driver *drv;
	char url[64], msg[512];
	int allowed = 0;

	(void)state;
	backend_calls = 0;
	free_url(url, sizeof(url));
	use_cert("docker-1");
	assert_int_equal(msc_driver_start(url, &fake_ops, NULL, 4, &drv), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		Msc__V1__Code code = driver_call(url, cases[i].as,
		    cases[i].method, msg, sizeof(msg));

		if (code != cases[i].want)
			fail_msg("Driver/%s as %s: %d (%s), want %d",
			    cases[i].method, cases[i].as, code, msg,
			    cases[i].want);
		if (code == MSC__V1__CODE__OK)
			allowed++;
		else
			assert_non_null(strstr(msg, "refused"));
	}
	assert_int_equal(backend_calls, allowed);
	assert_true(msc_driver_stop(drv));
}

static void
h_open(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;

	(void)state;
	(void)req;
	__atomic_add_fetch(&session_calls, 1, __ATOMIC_SEQ_CST);
	ref.session_id = "s1";
	msc_call_reply(call, &ref.base);
}

static const struct msc_method session_methods[] = {
	{ "Open", h_open },
	{ NULL, NULL },
};

/* Serves Session/Open with cert `server_cert`; calls it as `as`,
 * expecting the server to be `peer_role`. */
static Msc__V1__Code
session_open(const char *server_cert, const char *as, const char *peer_role,
    char *msg, size_t msglen)
{
	Msc__V1__OpenRequest req = MSC__V1__OPEN_REQUEST__INIT;
	struct msc_server *srv;
	struct msc_client *cli;
	Msc__V1__Code code;
	char url[64];

	free_url(url, sizeof(url));
	use_cert(server_cert);
	assert_int_equal(msc_server_start(url, &msc__v1__session__descriptor,
			     session_methods, NULL, 16, &srv), 0);
	use_cert(as);
	assert_int_equal(msc_client_open(url, peer_role, &cli), 0);
	code = msc_client_call_sync(cli, &msc__v1__session__descriptor, "Open",
	    &req.base, 5000, NULL, msg, msglen);
	msc_client_close(cli);
	msc_server_stop(srv);
	return code;
}

/* Only the edge may call the session service. */
static void
session_only_from_the_edge(void **state)
{
	char msg[512];

	(void)state;
	session_calls = 0;
	assert_int_equal(session_open("session", "inventory", "session", msg,
			     sizeof(msg)), MSC__V1__CODE__PERMISSION_DENIED);
	assert_non_null(strstr(msg, "role 'inventory' may not call it"));
	assert_int_equal(session_open("session", "docker-1", "session", msg,
			     sizeof(msg)), MSC__V1__CODE__PERMISSION_DENIED);
	assert_int_equal(session_calls, 0);
	assert_int_equal(session_open("session", "edge", "session", msg,
			     sizeof(msg)), MSC__V1__CODE__OK);
	assert_int_equal(session_calls, 1);
}

/* The edge's key serving where the session service expects the
 * inventory: the client refuses it in the handshake, nothing is sent. */
static void
client_refuses_a_server_of_another_role(void **state)
{
	char msg[512];

	(void)state;
	session_calls = 0;
	assert_int_equal(session_open("edge", "edge", "inventory", msg,
			     sizeof(msg)), MSC__V1__CODE__UNAVAILABLE);
	assert_int_equal(session_open("norole", "edge", "inventory", msg,
			     sizeof(msg)), MSC__V1__CODE__UNAVAILABLE);
	assert_int_equal(session_calls, 0);
	assert_int_equal(session_open("inventory", "edge", "inventory", msg,
			     sizeof(msg)), MSC__V1__CODE__OK);
	assert_int_equal(session_calls, 1);
}

/* tcp:// needs the flag (loopback too); ws://, wss:// and unknown
 * schemes are refused even with it; local transports pass. */
static void
transport_rules(void **state)
{
	const char *refused[] = { "ws://127.0.0.1:5555", "wss://10.0.0.1:5555",
		"tls+ws://127.0.0.1:5555", "udp://127.0.0.1:5555",
		"zt://x.y:1", "127.0.0.1:5555" };
	char err[256];

	(void)state;
	use_cert("session");
	assert_int_equal(msc_tls_check_url("tcp://127.0.0.1:5555", false, err,
			     sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--allow-plain-tcp"));
	assert_int_equal(msc_tls_check_url("tcp://localhost:5555", false, err,
			     sizeof(err)), -EINVAL);
	assert_int_equal(msc_tls_check_url("tcp://10.1.2.3:5555", false, err,
			     sizeof(err)), -EINVAL);
	assert_int_equal(msc_tls_check_url("tcp://127.0.0.1:5555", true, err,
			     sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
		for (int allow = 0; allow < 2; allow++)
			if (msc_tls_check_url(refused[i], allow, err,
				sizeof(err)) != -EINVAL)
				fail_msg("%s passed", refused[i]);
	assert_int_equal(msc_tls_check_url("tls+tcp://10.1.2.3:5555", false,
			     err, sizeof(err)), 0);
	assert_int_equal(msc_tls_check_url("ipc:///run/msc/x.sock", false, err,
			     sizeof(err)), 0);
	assert_int_equal(msc_tls_check_url("inproc://x", false, err,
			     sizeof(err)), 0);
}

/* An ipc:// socket file is for its owner only. */
static void
ipc_socket_is_private(void **state)
{
	struct msc_server *srv;
	char url[128];
	struct stat st;

	(void)state;
	snprintf(url, sizeof(url), "ipc://%s/s.sock", dir);
	umask(022);
	assert_int_equal(msc_server_start(url, &msc__v1__session__descriptor,
			     session_methods, NULL, 4, &srv), 0);
	assert_int_equal(stat(url + 6, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	msc_server_stop(srv);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver_methods_by_role),
		cmocka_unit_test(session_only_from_the_edge),
		cmocka_unit_test(client_refuses_a_server_of_another_role),
		cmocka_unit_test(transport_rules),
		cmocka_unit_test(ipc_socket_is_private),
	};
	char cmd[2048];
	int rv, gone;

	if (argc < 2 || mkdtemp(dir) == NULL)
		return 2;
	/* norole: signed by the cluster CA, naming no role (as make-certs made
	 * them before roles); tworoles: naming two, which counts as none. */
	snprintf(cmd, sizeof(cmd),
	    "%s %s session inventory edge operator docker-1 docker-2 "
	    ">/dev/null 2>&1 && cd %s && "
	    "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
	    "-keyout k.pem -out r.pem -subj /CN=norole 2>/dev/null && "
	    "printf 'subjectAltName=DNS:mcp-sandbox-computer\\n"
	    "extendedKeyUsage=serverAuth,clientAuth\\n' >e.cnf && "
	    "openssl x509 -req -in r.pem -CA ca.pem -CAkey ca.key "
	    "-CAcreateserial -days 2 -extfile e.cnf -out c.pem 2>/dev/null && "
	    "cat c.pem k.pem >norole.pem && "
	    "printf 'subjectAltName=URI:msc-role:session,URI:msc-role:inventory"
	    "\\n' >e2.cnf && "
	    "openssl x509 -req -in r.pem -CA ca.pem -CAkey ca.key "
	    "-CAcreateserial -days 2 -extfile e2.cnf -out c2.pem 2>/dev/null && "
	    "cat c2.pem k.pem >tworoles.pem", argv[1], dir, dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_rpc_roles: cannot make certificates\n");
		return 1;
	}
	rv = cmocka_run_group_tests(tests, NULL, NULL);
	nng_fini();     /* NNG frees closed connections later: now */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	gone = system(cmd);
	return rv != 0 ? rv : gone != 0;
}
