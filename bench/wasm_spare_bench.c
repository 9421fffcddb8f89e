/*
 * wasm_spare_bench.c - the go_busybox runner alone, as the driver's spare
 * (services/wasm-driver/wasm_runner.c): starts RUNNER --spare-fd 4, lets it
 * get ready, sends it the command line of `busybox echo hi`, and times
 * from that send to the outcome (the status line read and every pipe at
 * EOF, what the driver waits for) and to the reap. Prints p50 and p90 of
 * both over N runs.
 *
 *   build/bench/wasm_spare_bench build/services/wasm-driver/host/msc-wasm-busybox [N]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define READY_US 30000          /* the spare's time to get ready */
#define RUN_DEADLINE_MS 10000

extern char **environ;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The command line as the driver sends it: a length, then NUL-ended
 * strings. Returns its size in buf, or 0 when it does not fit. */
static size_t
request(char *buf, size_t cap, const char *const argv[])
{
	uint32_t len = 0;

	for (int i = 0; argv[i] != NULL; i++) {
		size_t n = strlen(argv[i]) + 1;

		if (4 + len + n > cap)
			return 0;
		memcpy(buf + 4 + len, argv[i], n);
		len += (uint32_t)n;
	}
	memcpy(buf, &len, sizeof(len));
	return 4 + len;
}

/* One spare run: 0 with its times, or -1. */
static int
one(const char *runner, const char *root, double *outcome, double *reap)
{
	const char *spare[] = { runner, "--spare-fd", "4", NULL };
	const char *cmd[] = { runner, "--root", root, "--status-fd", "3",
		"--", "busybox", "echo", "hi", NULL };
	int pin[2], pout[2], perr[2], pst[2], sv[2], st = 0, open_fds = 3;
	posix_spawn_file_actions_t fa;
	char buf[4096], status[64] = "";
	size_t len = request(buf, sizeof(buf), cmd), slen = 0;
	double t0;
	pid_t pid;
	int fds[3];

	if (len == 0 || pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
	    pipe2(perr, O_CLOEXEC) || pipe2(pst, O_CLOEXEC) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
	posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
	posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
	posix_spawn_file_actions_adddup2(&fa, pst[1], 3);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 4);
	if (posix_spawn(&pid, runner, &fa, NULL, (char *const *)spare,
		environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(pin[0]);
	close(pin[1]);
	close(pout[1]);
	close(perr[1]);
	close(pst[1]);
	close(sv[1]);
	usleep(READY_US);
	t0 = now_ms();
	if (write(sv[0], buf, len) != (ssize_t)len)
		kill(pid, SIGKILL);
	close(sv[0]);
	fds[0] = pout[0];
	fds[1] = perr[0];
	fds[2] = pst[0];
	while (open_fds > 0) {
		struct pollfd p[3];
		int np = 0;

		for (int k = 0; k < 3; k++)
			if (fds[k] >= 0)
				p[np++] = (struct pollfd){ fds[k], POLLIN, 0 };
		if (poll(p, (nfds_t)np, RUN_DEADLINE_MS) <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		for (int k = 0; k < np; k++) {
			char chunk[4096];
			ssize_t n;

			if (p[k].revents == 0)
				continue;
			n = read(p[k].fd, chunk, sizeof(chunk));
			if (n > 0 && p[k].fd == pst[0] &&
			    slen + (size_t)n < sizeof(status)) {
				memcpy(status + slen, chunk, (size_t)n);
				slen += (size_t)n;
			}
			if (n == 0 || (n < 0 && errno != EINTR))
				for (int j = 0; j < 3; j++)
					if (fds[j] == p[k].fd) {
						close(fds[j]);
						fds[j] = -1;
						open_fds--;
					}
		}
	}
	*outcome = now_ms() - t0;
	for (int j = 0; j < 3; j++)
		if (fds[j] >= 0)
			close(fds[j]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*reap = now_ms() - t0;
	status[slen] = '\0';
	if (strcmp(status, "exit 0\n") != 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0) {
		fprintf(stderr, "wasm_spare_bench: status '%s', wait status "
		    "%#x\n", status, st);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	char root[] = "/tmp/wasm-spare-bench-XXXXXX";
	double *o, *r;
	int n = argc > 2 ? atoi(argv[2]) : 200, rc = 0;

	if (argc < 2 || n < 1) {
		fprintf(stderr, "usage: %s RUNNER [N]\n", argv[0]);
		return 2;
	}
	if (mkdtemp(root) == NULL || (o = calloc((size_t)n, sizeof(*o))) ==
	    NULL || (r = calloc((size_t)n, sizeof(*r))) == NULL) {
		perror("wasm_spare_bench");
		return 2;
	}
	for (int i = 0; i < n && rc == 0; i++)
		if (one(argv[1], root, &o[i], &r[i]) != 0)
			rc = 1;
	rmdir(root);
	if (rc != 0)
		return rc;
	qsort(o, (size_t)n, sizeof(*o), cmp_double);
	qsort(r, (size_t)n, sizeof(*r), cmp_double);
	printf("%d spare runs of busybox echo hi: to the outcome p50 %.3f ms "
	    "p90 %.3f ms; to the reap p50 %.3f ms p90 %.3f ms\n", n,
	    o[n / 2], o[n * 9 / 10], r[n / 2], r[n * 9 / 10]);
	free(o);
	free(r);
	return 0;
}
