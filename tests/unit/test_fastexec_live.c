/*
 * test_fastexec_live.c - the exec helper run directly on the host (no
 * Docker) in a temporary folder, driven through the driver-side client
 * (docker_fastexec.h); plus fake helpers that misbehave.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker_fastexec.h"
#include "docker_fxloop.h"
#include "fastexec_wire.h"

static char dir[128];
static pid_t helper;

static int64_t
ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
setup(void **state)
{
	char sock[200];

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "/tmp/fxlive.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	if ((helper = fork()) == 0) {
		execl(FX_HELPER_PATH, "msc-exec-helper", sock, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && dock_fx_probe(dir) != 0; i++)
		usleep(2000);
	return dock_fx_probe(dir);
}

static int
teardown(void **state)
{
	char cmd[300];

	(void)state;
	kill(helper, SIGTERM);
	waitpid(helper, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
sh(const char *cmd, int timeout_ms, size_t limit, struct dock_exec_res *res)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct dock_exec_req req = { .argv = argv, .timeout_ms = timeout_ms,
		.output_limit = limit };
	char err[256];

	return dock_fx_run(dir, &req, res, err, sizeof(err));
}

/* Whether pid (read from file) is gone within 3 s. */
static int
gone(const char *file)
{
	char path[300], buf[32] = "";
	FILE *f;
	pid_t p;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	if ((p = atoi(buf)) <= 1)
		return 0;
	for (int i = 0; i < 300; i++) {
		if (kill(p, 0) != 0 && errno == ESRCH)
			return 1;
		usleep(10000);
	}
	kill(p, SIGKILL);
	return 0;
}

static void
test_echo_and_codes(void **state)
{
	struct dock_exec_res r;

	(void)state;
	assert_int_equal(sh("echo hi; echo err >&2", 5000, 1 << 20, &r), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.out, "hi\n");
	assert_string_equal(r.err, "err\n");
	dock_exec_res_fini(&r);
	assert_int_equal(sh("exit 3", 5000, 1 << 20, &r), 0);
	assert_int_equal(r.exit_code, 3);
	dock_exec_res_fini(&r);
	assert_int_equal(sh("kill -9 $$", 5000, 1 << 20, &r), 0);
	assert_int_equal(r.exit_code, 137);
	dock_exec_res_fini(&r);
	{
		const char *argv[] = { "no-such-command-x", NULL };
		struct dock_exec_req req = { .argv = argv, .timeout_ms = 5000,
			.output_limit = 4096 };
		char err[256];

		assert_int_equal(dock_fx_run(dir, &req, &r, err, sizeof(err)), 0);
		assert_int_equal(r.exit_code, 126);
		assert_non_null(strstr(r.out, "executable file not found in "
		    "$PATH"));
		dock_exec_res_fini(&r);
	}
}

static void
test_stdin_cwd_env(void **state)
{
	const char *argv[] = { "/bin/sh", "-c",
		"pwd; echo $FOO; printf %s \"$KILNTAINERS_EXEC\" | wc -c; "
		"wc -c", NULL };
	const char *env[] = { "FOO=bar", NULL };
	size_t n = 300000;
	char *in = malloc(n), err[256], want[400];
	struct dock_exec_req req = { .argv = argv, .env = env,
		.workdir = "/tmp", .has_stdin = true, .stdin_data = in,
		.stdin_len = n, .timeout_ms = 10000, .output_limit = 1 << 20 };
	struct dock_exec_res r;

	(void)state;
	memset(in, 'x', n);
	assert_int_equal(dock_fx_run(dir, &req, &r, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "/tmp\nbar\n32\n%zu\n", n);
	assert_string_equal(r.out, want);
	assert_int_equal(r.exit_code, 0);
	dock_exec_res_fini(&r);
	/* A working directory that does not exist: runc's message, 126. */
	req.workdir = "/no/such/dir";
	req.has_stdin = false;
	assert_int_equal(dock_fx_run(dir, &req, &r, err, sizeof(err)), 0);
	assert_int_equal(r.exit_code, 126);
	assert_non_null(strstr(r.out, "chdir to cwd (\"/no/such/dir\")"));
	dock_exec_res_fini(&r);
	/* Binary stdin comes back byte exact, a command ignoring stdin too. */
	for (size_t i = 0; i < n; i++)
		in[i] = (char)(i * 7 + i / 256);
	argv[2] = "cat";
	req.workdir = NULL;
	req.has_stdin = true;
	assert_int_equal(dock_fx_run(dir, &req, &r, err, sizeof(err)), 0);
	assert_int_equal(r.out_len, n);
	assert_memory_equal(r.out, in, n);
	dock_exec_res_fini(&r);
	argv[2] = "exec 0<&-; echo closed";
	assert_int_equal(dock_fx_run(dir, &req, &r, err, sizeof(err)), 0);
	assert_string_equal(r.out, "closed\n");
	dock_exec_res_fini(&r);
	free(in);
}

static void
test_binary_output(void **state)
{
	struct dock_exec_res r;
	char cmd[300], path[300];
	char *want;
	FILE *f;

	(void)state;
	snprintf(cmd, sizeof(cmd), "head -c 200000 /dev/urandom | tee %s/bin",
	    dir);
	assert_int_equal(sh(cmd, 5000, 1 << 20, &r), 0);
	assert_int_equal(r.out_len, 200000);
	snprintf(path, sizeof(path), "%s/bin", dir);
	want = malloc(200000);
	f = fopen(path, "rb");
	assert_int_equal(fread(want, 1, 200000, f), 200000);
	fclose(f);
	assert_memory_equal(r.out, want, 200000);
	free(want);
	dock_exec_res_fini(&r);
}

static void
test_timeout_kills_group_and_escapees(void **state)
{
	struct dock_exec_res r;
	char cmd[600];
	int64_t t0 = ms();

	(void)state;
	snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > %s/p1; "
	    "setsid sleep 31 & echo $! > %s/p2; echo partial; sleep 30", dir,
	    dir);
	assert_int_equal(sh(cmd, 500, 1 << 20, &r), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_TIMEOUT);
	assert_int_equal(r.exit_code, -1);
	assert_true(ms() - t0 < 2500);
	dock_exec_res_fini(&r);
	assert_true(gone("p1"));
	assert_true(gone("p2"));
}

static void
test_output_limit(void **state)
{
	struct dock_exec_res r;
	char cmd[300];
	int64_t t0 = ms();

	(void)state;
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/p3; head -c 1000000000 "
	    "/dev/zero; sleep 30", dir);
	assert_int_equal(sh(cmd, 20000, 1 << 20, &r), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_LIMIT);
	assert_true(r.out_len + r.err_len <= (1 << 20) + FX_DATA_MAX);
	assert_true(ms() - t0 < 5000);
	dock_exec_res_fini(&r);
	assert_true(gone("p3"));
	/* Exactly at the limit is fine. */
	assert_int_equal(sh("head -c 1000 /dev/zero", 5000, 1000, &r), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(r.out_len, 1000);
	dock_exec_res_fini(&r);
}

static void
test_daemon_child(void **state)
{
	struct dock_exec_res r;
	char cmd[400];
	int64_t t0 = ms();

	(void)state;
	/* A background child holding the pipes: returns, child killed. */
	snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > %s/p4; echo started",
	    dir);
	assert_int_equal(sh(cmd, 20000, 1 << 20, &r), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_EXITED);
	assert_int_equal(r.exit_code, 0);
	assert_string_equal(r.out, "started\n");
	assert_true(ms() - t0 < 2000);
	dock_exec_res_fini(&r);
	assert_true(gone("p4"));
	/* A proper daemon (output redirected) is left running. */
	snprintf(cmd, sizeof(cmd), "setsid sleep 30 >/dev/null 2>&1 "
	    "</dev/null & echo $! > %s/p5", dir);
	assert_int_equal(sh(cmd, 20000, 1 << 20, &r), 0);
	assert_int_equal(r.exit_code, 0);
	dock_exec_res_fini(&r);
	{
		char path[300], buf[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "%s/p5", dir);
		f = fopen(path, "r");
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		assert_int_equal(kill(atoi(buf), 0), 0);
		kill(atoi(buf), SIGKILL);
	}
}

static void
test_closed_stdout(void **state)
{
	struct dock_exec_res r;
	int64_t t0 = ms();

	(void)state;
	assert_int_equal(sh("exec >&- 2>&-; sleep 30", 700, 1 << 20, &r), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_TIMEOUT);
	assert_true(ms() - t0 >= 650 && ms() - t0 < 2500);
	dock_exec_res_fini(&r);
}

static void
test_helper_killed_mid_command(void **state)
{
	struct dock_exec_res r;
	char cmd[300];

	(void)state;
	/* The session process serving this exec is the shell's parent. */
	snprintf(cmd, sizeof(cmd), "sleep 30 & echo $! > %s/p6; "
	    "echo partial; kill -9 $PPID; sleep 30", dir);
	assert_int_equal(sh(cmd, 20000, 1 << 20, &r), -ECONNRESET);
	/* The helper's main process killed what the exec left. */
	assert_true(gone("p6"));
	/* The next call is served normally. */
	assert_int_equal(sh("echo again", 5000, 1 << 20, &r), 0);
	assert_string_equal(r.out, "again\n");
	dock_exec_res_fini(&r);
}

static void
test_unreachable(void **state)
{
	struct dock_exec_res r;
	const char *argv[] = { "true", NULL };
	struct dock_exec_req req = { .argv = argv, .timeout_ms = 1000,
		.output_limit = 10 };
	char other[200], link[300], err[256];

	(void)state;
	snprintf(other, sizeof(other), "%s/none", dir);
	mkdir(other, 0700);
	assert_int_equal(dock_fx_run(other, &req, &r, err, sizeof(err)),
	    -ENOTCONN);
	assert_int_equal(dock_fx_run("/nonexistent/x", &req, &r, err,
	    sizeof(err)), -ENOTCONN);
	/* A symlink where the socket should be is not followed. */
	snprintf(link, sizeof(link), "%s/sock", other);
	snprintf(err, sizeof(err), "%s/sock", dir);
	assert_int_equal(symlink(err, link), 0);
	assert_int_equal(dock_fx_run(other, &req, &r, err, sizeof(err)),
	    -ENOTCONN);
}

/* A fake helper: answers one connection with `script`, then waits. */
struct fake {
	char dir[64];
	int lfd;
	const uint8_t *script;
	size_t len;
	bool endless;		/* repeat the script forever */
	int hold_ms;
	pthread_t t;
};

static void *
fake_main(void *arg)
{
	struct fake *fk = arg;
	char junk[65536];
	int c = accept(fk->lfd, NULL, NULL);

	if (c < 0)
		return NULL;
	usleep(20000);
	(void)!recv(c, junk, sizeof(junk), MSG_DONTWAIT);
	do {
		if (send(c, fk->script, fk->len, MSG_NOSIGNAL) < 0)
			break;
	} while (fk->endless);
	usleep((useconds_t)fk->hold_ms * 1000);
	close(c);
	return NULL;
}

static int
fake_run(const uint8_t *script, size_t len, bool endless, int hold_ms,
    int timeout_ms, struct dock_exec_res *r, char *err, size_t errlen)
{
	struct fake fk = { .script = script, .len = len, .endless = endless,
		.hold_ms = hold_ms };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *argv[] = { "true", NULL };
	struct dock_exec_req req = { .argv = argv, .timeout_ms = timeout_ms,
		.output_limit = 1 << 20 };
	int rc;

	snprintf(fk.dir, sizeof(fk.dir), "%.40s/fake", dir);
	mkdir(fk.dir, 0700);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", fk.dir);
	unlink(sa.sun_path);
	fk.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fk.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fk.lfd, 4), 0);
	pthread_create(&fk.t, NULL, fake_main, &fk);
	rc = dock_fx_run(fk.dir, &req, r, err, errlen);
	pthread_join(fk.t, NULL);
	close(fk.lfd);
	return rc;
}

static void
test_forged_replies(void **state)
{
	struct dock_exec_res r;
	uint8_t s[64];
	char err[256];
	int64_t t0;

	(void)state;
	/* Garbage. */
	memcpy(s, "HTTP/1.1 200 OK\r\n\r\n", 19);
	assert_int_equal(fake_run(s, 19, false, 0, 5000, &r, err,
	    sizeof(err)), -EPROTO);
	/* A 4 GiB frame claim. */
	memset(s, 0xff, 8);
	s[0] = FX_STDOUT;
	s[1] = s[2] = s[3] = 0;
	assert_int_equal(fake_run(s, 8, false, 0, 5000, &r, err,
	    sizeof(err)), -EPROTO);
	/* An exit status out of range. */
	fx_hdr_encode(s, FX_EXIT, 8);
	fx_exit_encode(s + 8, FX_EXITED, 999);
	assert_int_equal(fake_run(s, 16, false, 0, 5000, &r, err,
	    sizeof(err)), -EPROTO);
	/* A forged but well-formed reply is just a result. */
	fx_exit_encode(s + 8, FX_EXITED, 7);
	assert_int_equal(fake_run(s, 16, false, 0, 5000, &r, err,
	    sizeof(err)), 0);
	assert_int_equal(r.exit_code, 7);
	dock_exec_res_fini(&r);
	/* An ERROR text with control bytes is made printable. */
	fx_hdr_encode(s, FX_ERROR, 4);
	memcpy(s + 8, "a\x1b[b", 4);
	assert_int_equal(fake_run(s, 12, false, 0, 5000, &r, err,
	    sizeof(err)), -EPROTO);
	assert_null(strchr(err, '\x1b'));
	/* Closing mid-command. */
	fx_hdr_encode(s, FX_STDOUT, 2);
	memcpy(s + 8, "ab", 2);
	assert_int_equal(fake_run(s, 10, false, 0, 5000, &r, err,
	    sizeof(err)), -ECONNRESET);
	/* Endless output: stops at the limit, memory bounded. */
	assert_int_equal(fake_run(s, 10, true, 0, 5000, &r, err,
	    sizeof(err)), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_LIMIT);
	assert_true(r.out_len <= (1 << 20) + FX_DATA_MAX);
	dock_exec_res_fini(&r);
	/* Silence: given up at timeout + grace. */
	t0 = ms();
	assert_int_equal(fake_run(s, 0, false, 4000, 200, &r, err,
	    sizeof(err)), 0);
	assert_int_equal(r.outcome, DOCK_EXEC_TIMEOUT);
	assert_true(ms() - t0 >= 200 + DOCK_FX_GRACE_MS - 50);
	dock_exec_res_fini(&r);
}

/* The ends of the commands a loop watches. */
static struct {
	pthread_mutex_t mu;
	int ended, nobufs;
	char err[512];
} ends = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void
ended(void *arg, int rv, struct dock_exec_res *res, const char *err)
{
	(void)arg;
	pthread_mutex_lock(&ends.mu);
	ends.ended++;
	if (rv == -ENOBUFS) {
		ends.nobufs++;
		snprintf(ends.err, sizeof(ends.err), "%s", err);
	}
	pthread_mutex_unlock(&ends.mu);
	dock_exec_res_fini(res);
}

/*
 * Waiting commands' output is bounded over all of them: with a bound of
 * 1 MiB, four commands that each write 400 KB (under their own 2 MiB
 * limit) and then wait: two fit, the two whose output would pass the
 * bound are killed with -ENOBUFS and an error naming the flag, the two
 * others still run until the loop stops. (Unbounded, the loop held all
 * four: a driver's 1,024 waiting commands could hold 1,024 limits.)
 */
static void
test_loop_output_bound(void **state)
{
	const char *argv[] = { "/bin/sh", "-c",
		"head -c 400000 /dev/zero; sleep 30", NULL };
	struct dock_exec_req req = { .argv = argv, .timeout_ms = 20000,
		.output_limit = 2 << 20 };
	struct dock_fxloop *l;
	char err[256];
	int n = 0;

	(void)state;
	memset(&ends.ended, 0, sizeof(ends) - offsetof(typeof(ends), ended));
	assert_int_equal(dock_fxloop_start(1 << 20, &l), 0);
	for (int i = 0; i < 4; i++) {
		struct dock_fx *c;

		assert_int_equal(dock_fx_begin(dir, &req, &c, err,
				     sizeof(err)), 0);
		dock_fxloop_add(l, c, -1, ended, NULL);
	}
	for (int i = 0; i < 500 && n < 2; i++) {
		pthread_mutex_lock(&ends.mu);
		n = ends.ended;
		pthread_mutex_unlock(&ends.mu);
		usleep(10000);
	}
	usleep(500000);         /* the two others wrote all theirs by now */
	pthread_mutex_lock(&ends.mu);
	assert_int_equal(ends.ended, 2);
	assert_int_equal(ends.nobufs, 2);
	assert_non_null(strstr(ends.err, "--driver-output-buffer"));
	assert_non_null(strstr(ends.err, "1 MiB"));
	pthread_mutex_unlock(&ends.mu);
	dock_fxloop_stop(l);
	assert_int_equal(ends.ended, 4);
	assert_int_equal(ends.nobufs, 2);
}

/* One command a loop watches, for the budget's tests. */
struct watched {
	pthread_mutex_t mu;
	size_t bytes;           /* output seen */
	bool ended, keep;       /* keep: its result is held, as deferred */
	int rv;
	char err[512];
	struct dock_exec_res res;
};

static void
watched_output(void *arg, const void *p, size_t n)
{
	struct watched *w = arg;

	(void)p;
	pthread_mutex_lock(&w->mu);
	w->bytes += n;
	pthread_mutex_unlock(&w->mu);
}

static void
watched_end(void *arg, int rv, struct dock_exec_res *res, const char *err)
{
	struct watched *w = arg;

	pthread_mutex_lock(&w->mu);
	w->ended = true;
	w->rv = rv;
	snprintf(w->err, sizeof(w->err), "%s", err);
	w->res = *res;
	if (!w->keep)
		dock_exec_res_fini(&w->res);
	pthread_mutex_unlock(&w->mu);
}

/* Starts `script` in the loop as principal's command (keep: as w->keep). */
static void
watch_start(struct dock_fxloop *l, const char *principal, const char *script,
    bool keep, struct watched *w)
{
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct dock_exec_req req = { .argv = argv, .timeout_ms = 20000,
		.output_limit = 2 << 20 };
	struct dock_fx *c;
	char err[256];

	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	w->keep = keep;
	assert_int_equal(dock_fx_begin(dir, &req, &c, err, sizeof(err)), 0);
	dock_fx_on_output(c, watched_output, w);
	dock_fx_for_principal(c, principal);
	dock_fxloop_add(l, c, -1, watched_end, w);
}

/* Waits up to 10 s until w ended (end) or printed `bytes`. */
static void
watch_until(struct watched *w, bool end, size_t bytes)
{
	for (int i = 0; i < 1000; i++) {
		bool done;

		pthread_mutex_lock(&w->mu);
		done = end ? w->ended : w->bytes >= bytes;
		pthread_mutex_unlock(&w->mu);
		if (done)
			return;
		usleep(10000);
	}
	fail_msg("the command did not %s in 10 s", end ? "end" : "print");
}

static bool
watch_ended(struct watched *w)
{
	bool ended;

	pthread_mutex_lock(&w->mu);
	ended = w->ended;
	pthread_mutex_unlock(&w->mu);
	return ended;
}

/*
 * A result kept after its command ended (the driver defers the end of
 * one that may have lost its container, to ask the engine on a worker)
 * still counts against the bound until it is freed: with 1 MiB, one
 * command ends with 600 KB held; another printing 600 KB is killed;
 * once the first's result is freed, a third printing 600 KB runs.
 * (Before, the bound forgot a command's output as it ended.)
 */
static void
test_loop_output_bound_kept(void **state)
{
	struct dock_fxloop *l;
	struct watched *w = calloc(3, sizeof(*w));

	(void)state;
	assert_non_null(w);
	assert_int_equal(dock_fxloop_start(1 << 20, &l), 0);
	watch_start(l, "", "head -c 600000 /dev/zero; exit 137", true, &w[0]);
	watch_until(&w[0], true, 0);
	assert_int_equal(w[0].rv, 0);
	assert_int_equal(w[0].res.out_len, 600000);
	watch_start(l, "", "head -c 600000 /dev/zero; sleep 30", false,
	    &w[1]);
	watch_until(&w[1], true, 0);
	assert_int_equal(w[1].rv, -ENOBUFS);
	assert_non_null(strstr(w[1].err, "--driver-output-buffer"));
	dock_exec_res_fini(&w[0].res);
	watch_start(l, "", "head -c 600000 /dev/zero; sleep 30", false,
	    &w[2]);
	watch_until(&w[2], false, 600000);
	usleep(200000);
	assert_false(watch_ended(&w[2]));
	dock_fxloop_stop(l);
	assert_true(watch_ended(&w[2]));
	for (int i = 0; i < 3; i++)
		pthread_mutex_destroy(&w[i].mu);
	free(w);
}

/*
 * One principal's waiting commands cannot take the bound from another's
 * (the attack: A's commands fill it, then B's printing a little is
 * killed): with 1 MiB, A holds 500 KB; A's next 200 KB passes its share
 * (half, alone: an even split with one more) and is killed, naming it;
 * B's 150 KB still runs. (Before shares, A's second fitted and B's was
 * killed.)
 */
static void
test_loop_output_bound_shares(void **state)
{
	struct dock_fxloop *l;
	struct watched *w = calloc(3, sizeof(*w));

	(void)state;
	assert_non_null(w);
	assert_int_equal(dock_fxloop_start(1 << 20, &l), 0);
	watch_start(l, "aaaa", "head -c 500000 /dev/zero; sleep 30", false,
	    &w[0]);
	watch_until(&w[0], false, 500000);
	watch_start(l, "aaaa", "head -c 200000 /dev/zero; sleep 30", false,
	    &w[1]);
	watch_until(&w[1], true, 0);
	assert_int_equal(w[1].rv, -ENOBUFS);
	assert_non_null(strstr(w[1].err, "your share"));
	assert_non_null(strstr(w[1].err, "--driver-output-buffer"));
	watch_start(l, "bbbb", "head -c 150000 /dev/zero; sleep 30", false,
	    &w[2]);
	watch_until(&w[2], false, 150000);
	usleep(200000);
	assert_false(watch_ended(&w[0]));
	assert_false(watch_ended(&w[2]));
	dock_fxloop_stop(l);
	for (int i = 0; i < 3; i++)
		pthread_mutex_destroy(&w[i].mu);
	free(w);
}

static void
test_concurrent(void **state)
{
	struct dock_exec_res r[4];
	pid_t kids[4];

	(void)state;
	(void)r;
	for (int i = 0; i < 4; i++) {
		if ((kids[i] = fork()) == 0) {
			struct dock_exec_res x;
			int ok = 1;

			for (int k = 0; k < 50 && ok; k++) {
				ok = sh("echo $$", 5000, 4096, &x) == 0 &&
				    x.exit_code == 0 && x.out_len > 1;
				dock_exec_res_fini(&x);
			}
			_exit(ok ? 0 : 1);
		}
	}
	for (int i = 0; i < 4; i++) {
		int st;

		waitpid(kids[i], &st, 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_and_codes),
		cmocka_unit_test(test_stdin_cwd_env),
		cmocka_unit_test(test_binary_output),
		cmocka_unit_test(test_timeout_kills_group_and_escapees),
		cmocka_unit_test(test_output_limit),
		cmocka_unit_test(test_daemon_child),
		cmocka_unit_test(test_closed_stdout),
		cmocka_unit_test(test_helper_killed_mid_command),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_forged_replies),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_loop_output_bound),
		cmocka_unit_test(test_loop_output_bound_kept),
		cmocka_unit_test(test_loop_output_bound_shares),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
