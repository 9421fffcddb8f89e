/* test_rpc_redial.c - a tls+tcp:// client whose peer dies while
 * connections are being set up (a listener that accepts and hangs up,
 * as a service killed with -9 does) reaches the service that listens
 * there afterwards. NNG 1.5's dialer gives up for good on such a hang-up;
 * the client dials anew. argv[1] is scripts/make-certs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_rpc.h"
#include "msc_tls.h"
#include "session.pb-c.h"

static const char *make_certs;
static char dir[] = "/tmp/msc-redial-XXXXXX";

static void
h_open(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;

	(void)state;
	(void)req;
	ref.session_id = "up";
	msc_call_reply(call, &ref.base);
}

static const struct msc_method methods[] = {
	{ "Open", h_open },
	{ NULL, NULL },
};

/* Accepts connections and hangs up on each after its first bytes. */
struct hangup {
	int fd;
	volatile int stop;
	int accepted;
};

static void *
hangup_run(void *arg)
{
	struct hangup *h = arg;
	char buf[64];

	while (!h->stop) {
		int c = accept(h->fd, NULL, NULL);

		if (c < 0)
			continue;
		h->accepted++;
		(void)recv(c, buf, sizeof(buf), 0);     /* the TLS hello */
		close(c);
	}
	return NULL;
}

static int
listen_any(int *portp)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct timeval tv = { 0, 100000 };

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
			  sizeof(one)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 16) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	*portp = ntohs(a.sin_port);
	return fd;
}

static void
comes_back_after_hangups(void **state)
{
	Msc__V1__OpenRequest req = MSC__V1__OPEN_REQUEST__INIT;
	struct hangup h = { 0 };
	struct msc_server *srv = NULL;
	struct msc_client *cli;
	pthread_t t;
	char url[64], msg[256];
	int port = 0, ok = 0;

	(void)state;
	assert_true((h.fd = listen_any(&port)) >= 0);
	snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%d", port);
	assert_int_equal(pthread_create(&t, NULL, hangup_run, &h), 0);
	assert_int_equal(msc_client_open(url, "edge", &cli), 0);
	for (int i = 0; i < 40 && h.accepted < 3; i++)
		usleep(50000);
	assert_true(h.accepted >= 1);
	h.stop = 1;
	pthread_join(t, NULL);
	close(h.fd);
	/* The service comes up where the hang-ups were. */
	assert_int_equal(msc_server_start(url, &msc__v1__session__descriptor,
			     methods, NULL, 16, &srv), 0);
	for (int i = 0; i < 100 && !ok; i++) {
		ProtobufCMessage *resp = NULL;

		ok = msc_client_call_sync(cli, &msc__v1__session__descriptor,
			 "Open", &req.base, 1000, &resp, msg,
			 sizeof(msg)) == MSC__V1__CODE__OK;
		if (resp != NULL)
			protobuf_c_message_free_unpacked(resp, NULL);
		if (!ok)
			usleep(100000);
	}
	assert_true(ok);
	assert_true(msc_client_up(cli));
	msc_client_close(cli);
	msc_server_stop(srv);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(comes_back_after_hangups),
	};
	char cmd[512], ca[128], cert[128], err[256] = "";
	int rv, gone;

	if (argc < 2)
		return 2;
	make_certs = argv[1];
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(cmd, sizeof(cmd), "%s %s edge >/dev/null 2>&1", make_certs,
	    dir);
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(cert, sizeof(cert), "%s/edge.pem", dir);
	if (system(cmd) != 0 || msc_tls_setup(ca, cert, err, sizeof(err)) != 0) {
		fprintf(stderr, "no certificates: %s\n", err);
		return 1;
	}
	rv = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	gone = system(cmd);
	return rv != 0 ? rv : gone != 0;
}
