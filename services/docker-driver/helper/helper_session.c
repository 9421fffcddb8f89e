/*
 * helper_session.c - one exec on one connection, in a process forked by
 * the helper for it.
 *
 * The command runs in its own session and process group (setsid) with
 * KILNTAINERS_EXEC=<marker> first in its environment. Its stdout and
 * stderr go back as frames; its stdin comes from STDIN frames. The exec
 * ends when:
 *   - the command exited and both pipes reached EOF (EXITED);
 *   - the command exited and the pipes stayed open but idle for
 *     HX_IDLE_MS (a background child holds them): the process group is
 *     killed and the result is EXITED with the command's status;
 *   - the timeout passed (TIMEOUT) or combined output passed the limit
 *     (LIMIT): the group and every marked process are killed;
 *   - the driver sent KILL or went away: the same kill, no reply.
 * Memory is bounded: at most HX_OUTQ_MAX bytes queued towards the driver
 * (the pipes are not read while it is full) and HX_INQ_MAX of stdin.
 */
#include "helper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fastexec_wire.h"

#define HX_REQ_WAIT_MS	10000
#define HX_FLUSH_MS	5000
#define HX_IDLE_MS	250
#define HX_OUTQ_MAX	(256 * 1024)
#define HX_INQ_MAX	(1024 * 1024)

extern char **environ;

struct buf {
	uint8_t *p;
	size_t len, off;
};

struct sess {
	int conn, sfd, in_fd, out_fd, err_fd;
	struct fx_parser ps;
	struct buf outq, inq;
	bool in_eof;
	pid_t pid;
	bool exited;
	int status;
	uint64_t total, limit;
	int64_t deadline, idle_until;
	const char *marker;
};

static int
buf_add(struct buf *b, const void *p, size_t n)
{
	uint8_t *np;

	if (b->off > 0 && b->off == b->len)
		b->off = b->len = 0;
	if ((np = realloc(b->p, b->len + n + 1)) == NULL)
		return -ENOMEM;
	b->p = np;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static int
queue_frame(struct sess *s, int type, const void *p, size_t n)
{
	uint8_t hdr[FX_HDR_LEN];

	if (fx_hdr_encode(hdr, type, (uint32_t)n) != 0)
		return -EINVAL;
	if (buf_add(&s->outq, hdr, sizeof(hdr)) != 0 ||
	    buf_add(&s->outq, p, n) != 0)
		return -ENOMEM;
	return 0;
}

/* Writes what it can of the out queue; -EPIPE when the driver is gone. */
static int
flush_some(struct sess *s)
{
	while (s->outq.off < s->outq.len) {
		ssize_t n = write(s->conn, s->outq.p + s->outq.off,
		    s->outq.len - s->outq.off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -EPIPE;
		s->outq.off += (size_t)n;
	}
	s->outq.off = s->outq.len = 0;
	return 0;
}

/* Blocks (bounded) until the out queue is written; best effort. */
static void
flush_all(struct sess *s)
{
	int64_t until = hx_now_ms() + HX_FLUSH_MS;

	while (s->outq.off < s->outq.len && hx_now_ms() < until) {
		struct pollfd p = { .fd = s->conn, .events = POLLOUT };

		if (flush_some(s) != 0)
			return;
		if (s->outq.off < s->outq.len)
			(void)poll(&p, 1, 100);
	}
}

/* Reads the REQ frame, waiting at most HX_REQ_WAIT_MS. */
static int
read_req(struct sess *s, struct fx_req_dec *req)
{
	int64_t until = hx_now_ms() + HX_REQ_WAIT_MS;
	uint8_t chunk[16384];
	struct fx_frame f;

	for (;;) {
		struct pollfd p = { .fd = s->conn, .events = POLLIN };
		int64_t left = until - hx_now_ms();
		size_t used = 0, off = 0, want;
		ssize_t n;
		int rc = 0;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -ETIMEDOUT;
		/* Never read past the REQ frame: STDIN frames follow it. */
		want = sizeof(chunk);
		if (s->ps.hdr_have < FX_HDR_LEN)
			want = FX_HDR_LEN - s->ps.hdr_have;
		else if (s->ps.len - s->ps.got < want)
			want = s->ps.len - s->ps.got;
		n = read(s->conn, chunk, want);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -EPIPE;
		while (off < (size_t)n &&
		    (rc = fx_parse(&s->ps, chunk + off, (size_t)n - off, &used,
			&f)) == 0)
			off += used;
		if (rc < 0)
			return rc;
		if (rc == 1) {
			if (f.type != FX_REQ)
				return -EPROTO;
			return fx_req_decode(f.p, f.len, req);
		}
	}
}

/* What runc would say; written as the command's stdout, exit 126. */
static void
start_error(struct sess *s, const char *stage, const char *what, int err)
{
	char msg[1024], reason[256];
	const char *hint = "";

	snprintf(reason, sizeof(reason), "%s", strerror(err));
	if (reason[0] >= 'A' && reason[0] <= 'Z' && reason[1] >= 'a')
		reason[0] = (char)(reason[0] - 'A' + 'a');
	if (strcmp(stage, "chdir") == 0) {
		if (err == ENOTDIR)
			hint = ": Are you trying to mount a directory onto a "
			       "file (or vice-versa)? Check if the specified "
			       "host path exists and is the expected type";
		snprintf(msg, sizeof(msg), "OCI runtime exec failed: exec "
		    "failed: unable to start container process: chdir to cwd "
		    "(\"%s\") set in config.json failed: %s: unknown%s\r\n",
		    what, reason, hint);
	} else if (err == ENOENT && strchr(what, '/') == NULL)
		snprintf(msg, sizeof(msg), "OCI runtime exec failed: exec "
		    "failed: unable to start container process: exec: \"%s\": "
		    "executable file not found in $PATH: unknown\r\n", what);
	else if (err == ENOENT)
		snprintf(msg, sizeof(msg), "OCI runtime exec failed: exec "
		    "failed: unable to start container process: exec: \"%s\": "
		    "stat %s: %s: unknown\r\n", what, what, reason);
	else
		snprintf(msg, sizeof(msg), "OCI runtime exec failed: exec "
		    "failed: unable to start container process: exec: \"%s\": "
		    "%s: unknown\r\n", what, reason);
	(void)queue_frame(s, FX_STDOUT, msg, strlen(msg));
}

/* Whether the request sets variable `kv`'s name itself (as Docker's exec Env). */
static bool
overridden(const struct fx_req *r, const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (size_t i = 0; r->env != NULL && r->env[i] != NULL; i++)
		if (strncmp(r->env[i], kv, n + 1) == 0)
			return true;
	return false;
}

/* In the child: never returns. Reports a failure on `rep` (CLOEXEC). */
static void
child(const struct fx_req *r, const char *marker, int in, int out, int err,
    int rep)
{
	char mvar[64];
	char **env;
	size_t n = 0, i, k;
	sigset_t all;
	int fail[2];

	setsid();
	sigemptyset(&all);
	for (int sig = 1; sig < NSIG; sig++)
		(void)signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(126);
	for (; environ != NULL && environ[n] != NULL; n++)
		;
	for (i = 0; r->env != NULL && r->env[i] != NULL; i++)
		;
	if ((env = calloc(n + i + 2, sizeof(*env))) == NULL)
		_exit(126);
	snprintf(mvar, sizeof(mvar), "%s=%s", FX_MARKER_VAR, marker);
	k = 0;
	env[k++] = mvar;
	for (i = 0; environ != NULL && environ[i] != NULL; i++)
		if (strncmp(environ[i], FX_MARKER_VAR "=",
		    sizeof(FX_MARKER_VAR)) != 0 && !overridden(r, environ[i]))
			env[k++] = environ[i];
	for (i = 0; r->env != NULL && r->env[i] != NULL; i++)
		env[k++] = (char *)r->env[i];
	env[k] = NULL;
	if (r->workdir != NULL && chdir(r->workdir) != 0) {
		fail[0] = 0;
		fail[1] = errno;
		(void)!write(rep, fail, sizeof(fail));
		_exit(126);
	}
	environ = env;
	execvp(r->argv[0], (char *const *)r->argv);
	fail[0] = 1;
	fail[1] = errno;
	(void)!write(rep, fail, sizeof(fail));
	_exit(126);
}

static int
spawn(struct sess *s, const struct fx_req *r)
{
	int in[2] = { -1, -1 }, out[2], err[2], rep[2], fail[2];
	ssize_t n;

	if (r->flags & FX_F_STDIN) {
		if (pipe2(in, O_CLOEXEC) != 0)
			return -errno;
	} else if ((in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		/* No /dev/null: an empty pipe. */
		if (pipe2(in, O_CLOEXEC) != 0)
			return -errno;
		close(in[1]);
		in[1] = -1;
	}
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
	    pipe2(rep, O_CLOEXEC) != 0)
		return -errno;
	if ((s->pid = fork()) < 0)
		return -errno;
	if (s->pid == 0)
		child(r, s->marker, in[0], out[1], err[1], rep[1]);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	close(rep[1]);
	s->in_fd = in[1];
	s->out_fd = out[0];
	s->err_fd = err[0];
	do
		n = read(rep[0], fail, sizeof(fail));
	while (n < 0 && errno == EINTR);
	close(rep[0]);
	if (n == (ssize_t)sizeof(fail))
		start_error(s, fail[0] == 0 ? "chdir" : "exec",
		    fail[0] == 0 ? r->workdir : r->argv[0], fail[1]);
	if (s->in_fd >= 0)
		fcntl(s->in_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Handles frames from the driver; 1 when it asked to stop or left. */
static int
on_conn(struct sess *s)
{
	uint8_t chunk[65536];
	struct fx_frame f;
	size_t off = 0, used;
	ssize_t n = read(s->conn, chunk, sizeof(chunk));
	int rc;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		return 1;
	while (off < (size_t)n) {
		rc = fx_parse(&s->ps, chunk + off, (size_t)n - off, &used, &f);
		off += used;
		if (rc < 0)
			return 1;
		if (rc == 0)
			break;
		if (f.type == FX_KILL || f.type == FX_REQ)
			return 1;
		if (f.type == FX_STDIN_EOF)
			s->in_eof = true;
		else if (f.type == FX_STDIN && s->in_fd >= 0 && !s->in_eof &&
		    buf_add(&s->inq, f.p, f.len) != 0)
			return 1;
	}
	return 0;
}

static void
on_stdin(struct sess *s)
{
	ssize_t n = write(s->in_fd, s->inq.p + s->inq.off,
	    s->inq.len - s->inq.off);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n < 0) {
		/* The command closed its stdin: drop the rest. */
		close_fd(&s->in_fd);
		s->inq.off = s->inq.len = 0;
		return;
	}
	s->inq.off += (size_t)n;
}

/* Reads one pipe; 1 when the output limit was passed. */
static int
on_pipe(struct sess *s, int *fd, int type)
{
	uint8_t chunk[FX_DATA_MAX];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		close_fd(fd);
		return 0;
	}
	s->total += (uint64_t)n;
	if (s->total > s->limit)
		return 1;
	if (s->exited)
		s->idle_until = hx_now_ms() + HX_IDLE_MS;
	return queue_frame(s, type, chunk, (size_t)n) != 0;
}

static void
on_child(struct sess *s)
{
	struct signalfd_siginfo si;
	int st;

	while (read(s->sfd, &si, sizeof(si)) > 0)
		;
	if (!s->exited && waitpid(s->pid, &st, WNOHANG) == s->pid) {
		s->exited = true;
		s->status = WIFEXITED(st) ? WEXITSTATUS(st)
		    : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
		s->idle_until = hx_now_ms() + HX_IDLE_MS;
	}
}

/* The event loop; returns the outcome, or -1 when the driver left. */
/*
 * The command ended but its background children hold its output: they
 * are stopped (the call returns), and stderr says so (issue 28).
 */
static void
stop_holders(struct sess *s)
{
	int n = hx_count_group(s->pid);
	char note[256];

	hx_kill_exec(NULL, s->pid);
	if (n <= 0)
		return;
	snprintf(note, sizeof(note), "\n[kilntainers: %d background "
	    "process%s stopped: %s the command's output when it ended; "
	    "terminal_execute's background: true keeps a process running]\n",
	    n, n == 1 ? " was" : "es were", n == 1 ? "it held" : "they held");
	(void)queue_frame(s, FX_STDERR, note, strlen(note));
}

static int
run(struct sess *s)
{
	for (;;) {
		struct pollfd p[5];
		int64_t now = hx_now_ms(), wake = -1;
		int np = 0, ci = -1, ii = -1, oi = -1, ei = -1;
		bool room = s->outq.len - s->outq.off < HX_OUTQ_MAX;

		if (s->exited && s->out_fd < 0 && s->err_fd < 0)
			return FX_EXITED;
		if (s->deadline > 0 && now >= s->deadline)
			return FX_TIMEOUT;
		if (s->exited && now >= s->idle_until) {
			stop_holders(s);
			return FX_EXITED;
		}
		if (s->in_fd >= 0 && s->in_eof && s->inq.off == s->inq.len)
			close_fd(&s->in_fd);
		p[np] = (struct pollfd){ .fd = s->sfd, .events = POLLIN };
		np++;
		ci = np;
		p[np++] = (struct pollfd){ .fd = s->conn,
			.events = (short)((s->inq.len - s->inq.off < HX_INQ_MAX ?
			    POLLIN : 0) | (s->outq.off < s->outq.len ?
			    POLLOUT : 0)) };
		if (s->in_fd >= 0 && s->inq.off < s->inq.len) {
			ii = np;
			p[np++] = (struct pollfd){ .fd = s->in_fd,
				.events = POLLOUT };
		}
		if (s->out_fd >= 0 && room) {
			oi = np;
			p[np++] = (struct pollfd){ .fd = s->out_fd,
				.events = POLLIN };
		}
		if (s->err_fd >= 0 && room) {
			ei = np;
			p[np++] = (struct pollfd){ .fd = s->err_fd,
				.events = POLLIN };
		}
		if (s->deadline > 0)
			wake = s->deadline - now;
		if (s->exited && (wake < 0 || s->idle_until - now < wake))
			wake = s->idle_until - now;
		if (poll(p, (nfds_t)np, wake > 1000000 ? 1000000 : (int)wake) <
		    0 && errno != EINTR)
			return -1;
		if (p[0].revents)
			on_child(s);
		if ((p[ci].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    on_conn(s) != 0)
			return -1;
		if ((p[ci].revents & POLLOUT) && flush_some(s) != 0)
			return -1;
		if (ii >= 0 && p[ii].revents)
			on_stdin(s);
		if (oi >= 0 && p[oi].revents &&
		    on_pipe(s, &s->out_fd, FX_STDOUT) != 0)
			return FX_LIMIT;
		if (ei >= 0 && p[ei].revents &&
		    on_pipe(s, &s->err_fd, FX_STDERR) != 0)
			return FX_LIMIT;
	}
}

int
hx_session(int conn, const char *marker)
{
	struct sess s = { .conn = conn, .in_fd = -1, .out_fd = -1,
		.err_fd = -1, .marker = marker };
	struct fx_req_dec req = { 0 };
	uint8_t ex[FX_EXIT_LEN];
	sigset_t set;
	int rc, outcome;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_SETMASK, &set, NULL);
	if ((s.sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		return 1;
	fx_parser_init(&s.ps, false);
	if ((rc = read_req(&s, &req)) != 0) {
		const char *m = rc == -ETIMEDOUT ? "no request in time"
						 : "malformed request";

		(void)queue_frame(&s, FX_ERROR, m, strlen(m));
		flush_all(&s);
		return 0;
	}
	fcntl(conn, F_SETFL, O_NONBLOCK);
	s.limit = req.req.output_limit;
	if (req.req.timeout_ms > 0)
		s.deadline = hx_now_ms() + req.req.timeout_ms;
	if ((rc = spawn(&s, &req.req)) != 0) {
		char m[128];

		snprintf(m, sizeof(m), "cannot start the command: %s",
		    strerror(-rc));
		(void)queue_frame(&s, FX_ERROR, m, strlen(m));
		flush_all(&s);
		return 0;
	}
	outcome = run(&s);
	if (outcome != FX_EXITED)
		hx_kill_exec(marker, s.pid);
	if (outcome < 0)
		return 0;
	fx_exit_encode(ex, outcome, outcome == FX_EXITED ? s.status : 0);
	(void)queue_frame(&s, FX_EXIT, ex, sizeof(ex));
	flush_all(&s);
	return 0;
}
