/*
 * test_lease_live.c - the lease of a temporary computer (lease_wire.h):
 * the message codec, and the exec helper run on the host with a short
 * --lease-ms: it ends by itself without renewals, renewals keep it, the
 * latest renewal wins, and a helper frozen past its lease (SIGSTOP, as
 * docker pause does) gets one lease more when it thaws.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker_fastexec.h"
#include "lease_wire.h"

static char dir[128];

static int64_t
ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
sleep_ms(int n)
{
	struct timespec ts = { n / 1000, (long)(n % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Starts the helper in a fresh folder with `lease` ("" for none). */
static pid_t
start_helper(const char *lease)
{
	char sock[200];
	pid_t pid;

	snprintf(dir, sizeof(dir), "/tmp/leaselive.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	if ((pid = fork()) == 0) {
		if (*lease != '\0')
			execl(FX_HELPER_PATH, "msc-exec-helper", sock,
			    "--lease-ms", lease, (char *)NULL);
		else
			execl(FX_HELPER_PATH, "msc-exec-helper", sock,
			    (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && dock_fx_probe(dir) != 0; i++)
		sleep_ms(2);
	assert_int_equal(dock_fx_probe(dir), 0);
	return pid;
}

static void
end_helper(pid_t pid)
{
	char cmd[300];

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* One request; 0 with *r, or a negative errno (no reply). */
static int
lease_call(int op, uint32_t lease_ms, struct lw_reply *r)
{
	uint8_t out[LW_MSG_LEN], in[LW_MSG_LEN];
	struct pollfd p = { .events = POLLIN };
	size_t got = 0;
	int fd = dock_fx_connect(dir, LW_SOCK_NAME);

	if (fd < 0)
		return fd;
	lw_request_encode(out, op, lease_ms);
	if (send(fd, out, sizeof(out), MSG_NOSIGNAL) != (ssize_t)sizeof(out)) {
		close(fd);
		return -EPIPE;
	}
	p.fd = fd;
	while (got < sizeof(in) && poll(&p, 1, 1000) == 1) {
		ssize_t n = recv(fd, in + got, sizeof(in) - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != sizeof(in))
		return -EIO;
	return lw_reply_decode(in, r);
}

/* Waits up to `ms_max` for pid to exit: its wait status, or -1. */
static int
wait_exit(pid_t pid, int ms_max)
{
	int st;

	for (int waited = 0; waited <= ms_max; waited += 10) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		sleep_ms(10);
	}
	return -1;
}

static void
test_wire(void **state)
{
	uint8_t m[LW_MSG_LEN];
	struct lw_reply r = { .op = LW_QUERY, .state = LW_HELD,
		.left_ms = 1234, .lease_ms = 3000 }, back;
	int op;
	uint32_t v;

	(void)state;
	lw_request_encode(m, LW_RENEW, 30000);
	assert_int_equal(lw_request_decode(m, &op, &v), 0);
	assert_int_equal(op, LW_RENEW);
	assert_int_equal(v, 30000);
	m[0] = 'X';
	assert_int_equal(lw_request_decode(m, &op, &v), -EPROTO);
	lw_request_encode(m, LW_RENEW, 1);
	m[5] = 9;                       /* unknown op */
	assert_int_equal(lw_request_decode(m, &op, &v), -EPROTO);
	lw_request_encode(m, LW_RENEW, 1);
	m[4] = 2;                       /* unknown version */
	assert_int_equal(lw_request_decode(m, &op, &v), -EPROTO);
	lw_request_encode(m, LW_RENEW, 1);
	m[13] = 1;                      /* reserved bytes */
	assert_int_equal(lw_request_decode(m, &op, &v), -EPROTO);
	lw_reply_encode(m, &r);
	assert_int_equal(lw_reply_decode(m, &back), 0);
	assert_int_equal(back.op, LW_QUERY);
	assert_int_equal(back.state, LW_HELD);
	assert_int_equal(back.left_ms, 1234);
	assert_int_equal(back.lease_ms, 3000);
	m[6] = 7;                       /* unknown state */
	assert_int_equal(lw_reply_decode(m, &back), -EPROTO);
}

static void
test_lapses_without_renewal(void **state)
{
	int64_t t0;
	pid_t pid;
	int st;

	(void)state;
	t0 = ms();
	pid = start_helper("400");
	st = wait_exit(pid, 3000);
	assert_true(st != -1);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 128 + SIGTERM);
	assert_true(ms() - t0 >= 380);
	end_helper(pid);
}

static void
test_renewals_keep_it(void **state)
{
	struct lw_reply r;
	pid_t pid;

	(void)state;
	pid = start_helper("300");
	for (int i = 0; i < 15; i++) {
		assert_int_equal(lease_call(LW_RENEW, 300, &r), 0);
		assert_int_equal(r.state, LW_HELD);
		assert_int_equal(r.lease_ms, 300);
		assert_true(r.left_ms > 200 && r.left_ms <= 300);
		sleep_ms(100);
	}
	/* 1.5 s later, past five leases, still there. */
	assert_int_equal(wait_exit(pid, 0), -1);
	/* The latest renewal wins: a shorter one does not cut a longer. */
	assert_int_equal(lease_call(LW_RENEW, 2000, &r), 0);
	assert_int_equal(lease_call(LW_RENEW, 100, &r), 0);
	assert_true(r.left_ms > 1800);
	assert_int_equal(lease_call(LW_QUERY, 0, &r), 0);
	assert_int_equal(r.op, LW_QUERY);
	assert_true(r.left_ms > 1800 && r.left_ms <= 2000);
	/* Renewals stop: it ends. */
	assert_true(wait_exit(pid, 4000) != -1);
	end_helper(pid);
}

static void
test_frozen_gets_one_lease_more(void **state)
{
	struct lw_reply r;
	pid_t pid;

	(void)state;
	pid = start_helper("500");
	assert_int_equal(lease_call(LW_RENEW, 500, &r), 0);
	kill(pid, SIGSTOP);
	sleep_ms(3000);                 /* frozen well past its lease */
	/* A renewal queued while it is frozen is served when it thaws. */
	kill(pid, SIGCONT);
	assert_int_equal(lease_call(LW_RENEW, 500, &r), 0);
	assert_int_equal(r.state, LW_HELD);
	assert_int_equal(wait_exit(pid, 0), -1);
	/* And without renewals it ends one lease later. */
	assert_true(wait_exit(pid, 3000) != -1);
	end_helper(pid);
}

static void
test_no_lease_no_end(void **state)
{
	pid_t pid;

	(void)state;
	/* A permanent computer: no lease socket, never ends by itself. */
	pid = start_helper("");
	assert_true(dock_fx_connect(dir, LW_SOCK_NAME) < 0);
	sleep_ms(600);
	assert_int_equal(wait_exit(pid, 0), -1);
	end_helper(pid);
	/* A malformed lease is no lease (ending by mistake is worse). */
	pid = start_helper("12x");
	assert_true(dock_fx_connect(dir, LW_SOCK_NAME) < 0);
	sleep_ms(600);
	assert_int_equal(wait_exit(pid, 0), -1);
	end_helper(pid);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_lapses_without_renewal),
		cmocka_unit_test(test_renewals_keep_it),
		cmocka_unit_test(test_frozen_gets_one_lease_more),
		cmocka_unit_test(test_no_lease_no_end),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
