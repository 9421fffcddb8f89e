/* wasm_harness.c - see wasm_harness.h. */
#include "wasm_harness.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wasm_compile.h"

#define RUN_DEADLINE_MS 60000

int wh_failures;
static char cleanup_dir[256];

extern char **environ;

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void
append(char **buf, size_t *len, const char *data, size_t n)
{
	char *p = realloc(*buf, *len + n + 1);

	if (p == NULL) {
		perror("realloc");
		exit(2);
	}
	memcpy(p + *len, data, n);
	*len += n;
	p[*len] = '\0';
	*buf = p;
}

/* Reads what is ready on *fd into buf; closes it at EOF. */
static void
drain(int *fd, char **buf, size_t *len)
{
	char chunk[65536];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n > 0) {
		append(buf, len, chunk, (size_t)n);
	} else if (n == 0 || errno != EINTR) {
		close(*fd);
		*fd = -1;
	}
}

/*
 * Sends a spare its command line, as the driver does (wasm_runner.c): a
 * 32-bit length, then argv's strings with their NULs; closes req.
 */
static int
spare_send(int req, const char *const argv[])
{
	char *buf = NULL;
	size_t len = 0;
	uint32_t n;
	int rv = 0;

	append(&buf, &len, "\0\0\0\0", 4);
	for (int i = 0; argv[i] != NULL; i++)
		append(&buf, &len, argv[i], strlen(argv[i]) + 1);
	n = (uint32_t)(len - 4);
	memcpy(buf, &n, sizeof(n));
	for (size_t off = 0; off < len;) {
		ssize_t w = write(req, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rv = -1;
			break;
		}
		off += (size_t)w;
	}
	free(buf);
	close(req);
	return rv;
}

/* wh_spawn, and wh_spawn_spare when ready_ms >= 0. */
static int
spawn_run(struct wh_run *r, const char *const argv[], const char *in,
    size_t inlen, int ready_ms)
{
	int pin[2], pout[2], perr[2], pst[2], sv[2] = { -1, -1 }, status = 0;
	const char *spare[] = { argv[0], "--spare-fd", "4", NULL };
	posix_spawn_file_actions_t fa;
	char *st = NULL;
	size_t stlen = 0, sent = 0;
	double start = now_ms();
	struct rusage ru;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
	    pipe2(perr, O_CLOEXEC) || pipe2(pst, O_CLOEXEC))
		return -1;
	if (ready_ms >= 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
		0, sv) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
	posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
	posix_spawn_file_actions_adddup2(&fa, perr[1], 2);
	posix_spawn_file_actions_adddup2(&fa, pst[1], 3);
	if (ready_ms >= 0)
		posix_spawn_file_actions_adddup2(&fa, sv[1], 4);
	if (posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)(ready_ms >=
		0 ? spare : argv), environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	close(pst[1]);
	if (ready_ms >= 0) {
		close(sv[1]);
		usleep((useconds_t)ready_ms * 1000);
		start = now_ms();
		if (spare_send(sv[0], argv) != 0)
			kill(pid, SIGKILL);
	}
	fcntl(pin[1], F_SETFL, O_NONBLOCK);
	if (in == NULL || inlen == 0) {
		close(pin[1]);
		pin[1] = -1;
	}
	while (pout[0] >= 0 || perr[0] >= 0 || pst[0] >= 0) {
		struct pollfd p[4] = { { pout[0], POLLIN, 0 },
			{ perr[0], POLLIN, 0 }, { pst[0], POLLIN, 0 },
			{ pin[1], POLLOUT, 0 } };
		double left = start + RUN_DEADLINE_MS - now_ms();

		if (left <= 0 || poll(p, 4, (int)left) == 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (p[0].revents)
			drain(&pout[0], &r->out, &r->olen);
		if (p[1].revents)
			drain(&perr[0], &r->err, &r->elen);
		if (p[2].revents)
			drain(&pst[0], &st, &stlen);
		if (p[3].revents) {
			ssize_t n = write(pin[1], in + sent, inlen - sent);

			if (n > 0)
				sent += (size_t)n;
			if (n < 0 || sent == inlen) {
				close(pin[1]);
				pin[1] = -1;
			}
		}
	}
	{
		int fds[] = { pout[0], perr[0], pst[0], pin[1] };

		for (int j = 0; j < 4; j++)
			if (fds[j] >= 0)
				close(fds[j]);
	}
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	r->ms = now_ms() - start;
	r->maxrss_kb = ru.ru_maxrss;
	r->code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
	if (st != NULL) {
		st[strcspn(st, "\n")] = '\0';
		snprintf(r->status, sizeof(r->status), "%s", st);
		free(st);
	}
	if (r->out == NULL)
		append(&r->out, &r->olen, "", 0);
	if (r->err == NULL)
		append(&r->err, &r->elen, "", 0);
	return 0;
}

int
wh_spawn(struct wh_run *r, const char *const argv[], const char *in,
    size_t inlen)
{
	return spawn_run(r, argv, in, inlen, -1);
}

int
wh_spawn_spare(struct wh_run *r, const char *const argv[], const char *in,
    size_t inlen, int ready_ms)
{
	return spawn_run(r, argv, in, inlen, ready_ms < 0 ? 0 : ready_ms);
}

int
wh_guest(struct wh *w, struct wh_run *r, const char *const opts[],
    const char *const args[], const char *in)
{
	const char *argv[64];
	int n = 0;

	argv[n++] = w->runner;
	argv[n++] = "--root";
	argv[n++] = w->root;
	argv[n++] = "--module";
	argv[n++] = w->module;
	argv[n++] = "--status-fd";
	argv[n++] = "3";
	for (int i = 0; opts != NULL && opts[i] != NULL && n < 40; i++)
		argv[n++] = opts[i];
	argv[n++] = "--";
	argv[n++] = "probe";
	for (int i = 0; args != NULL && args[i] != NULL && n < 62; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return wh_spawn(r, argv, in, in != NULL ? strlen(in) : 0);
}

void
wh_run_free(struct wh_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static void
remove_base(void)
{
	const char *argv[] = { "/bin/rm", "-rf", cleanup_dir, NULL };
	struct wh_run r;

	if (cleanup_dir[0] != '\0' && wh_spawn(&r, argv, NULL, 0) == 0)
		wh_run_free(&r);
}

int
wh_setup(struct wh *w, const char *runner, const char *module)
{
	const char *tmp = getenv("TMPDIR");

	w->runner = runner;
	w->module = module;
	snprintf(w->base, sizeof(w->base), "%s/wasihost-test-XXXXXX",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(w->base) == NULL)
		return -1;
	snprintf(cleanup_dir, sizeof(cleanup_dir), "%s", w->base);
	atexit(remove_base);
	snprintf(w->root, sizeof(w->root), "%s/root", w->base);
	return mkdir(w->root, 0755);
}

char *
wh_compile(const char *wasm, const char *cache, double *ms)
{
	char err[1024], *so = NULL;
	double t0 = now_ms();

	if (wasm_compile_module(wasm, cache, &so, err, sizeof(err)) != 0) {
		fprintf(stderr, "compile failed: %s\n", err);
		exit(1);
	}
	if (ms != NULL)
		*ms = now_ms() - t0;
	return so;
}

void
wh_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

char *
wh_read(const char *path)
{
	char *buf = NULL;
	size_t len = 0, n;
	char chunk[4096];
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		append(&buf, &len, chunk, n);
	fclose(f);
	if (buf == NULL)
		append(&buf, &len, "", 0);
	return buf;
}

bool
wh_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}
