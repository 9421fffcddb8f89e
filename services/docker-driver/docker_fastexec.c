/*
 * docker_fastexec.c - dock_fx_run(): one exec through the in-container
 * helper; see docker_fastexec.h.
 */
#include "docker_fastexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fastexec_wire.h"
#include "msc_driver_live.h"
#include "msc_hop.h"
#include "msc_principal.h"
#include "msc_time.h"

#define FX_REQ_SEND_MS	5000

struct fxbuf {
	char *p;
	size_t len, cap;
};

struct dock_fx {
	int fd;
	int64_t deadline;
	/* The frame being sent: header + up to FX_DATA_MAX of stdin. */
	uint8_t *sp;
	size_t slen, soff;
	size_t in_off;
	bool in_done;
	struct fx_parser ps;
	struct fxbuf out, err;
	size_t limit;
	int cancel_fd;          /* readable: cancelled; -1 none */
	bool live;              /* report output (msc_driver_live.h) */
	const uint8_t *in;      /* the stdin to send (borrowed) */
	size_t in_len;
	bool has_stdin;
	void (*on_output)(void *arg, const void *p, size_t n);
	void *out_arg;
	struct dock_fx_budget *budget;  /* NULL: none */
	struct dock_fx_charge charge;   /* against budget; res's at the end */
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];
};

static int
fxbuf_add(struct fxbuf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *np;

		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int
dock_fx_connect(const char *dir, const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int dfd, pfd = -1, fd = -1, rc = -ENOTCONN;

	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -ENOTCONN;
	pfd = openat(dfd, sock, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) != 0 || !S_ISSOCK(st.st_mode))
		goto out;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto out;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		fd = -1;
		goto out;
	}
	rc = fd;
out:
	if (pfd >= 0)
		close(pfd);
	close(dfd);
	return rc;
}

int
dock_fx_probe(const char *dir)
{
	int fd = dock_fx_connect(dir, DOCK_FX_SOCK_NAME);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * Waits for events until the deadline: 0 with *rev, -ETIMEDOUT, or
 * -ECANCELED when cancel_fd (-1: none) is readable.
 */
static int
fx_wait(int fd, int cancel_fd, short events, int64_t deadline, short *rev)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = events },
			{ .fd = cancel_fd, .events = POLLIN } };
		int64_t left = deadline - (int64_t)msc_now_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(p, 2, left > 1000000 ? 1000000 : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (p[1].revents != 0)
			return -ECANCELED;
		if (n == 0)
			continue;
		*rev = p[0].revents;
		return 0;
	}
}

/* Sends what it can of the pending frame; -EPIPE when the helper left. */
static int
fx_send_some(struct dock_fx *c)
{
	while (c->soff < c->slen) {
		ssize_t n = send(c->fd, c->sp + c->soff, c->slen - c->soff,
		    MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			return -EPIPE;
		c->soff += (size_t)n;
	}
	return 0;
}

/* Queues the next stdin frame (or STDIN_EOF) once the last one is sent. */
static void
fx_next_stdin(struct dock_fx *c)
{
	size_t k = c->in_len - c->in_off;

	if (c->soff < c->slen || c->in_done)
		return;
	if (k > FX_DATA_MAX)
		k = FX_DATA_MAX;
	(void)fx_hdr_encode(c->sp, k > 0 ? FX_STDIN : FX_STDIN_EOF,
	    (uint32_t)k);
	if (k > 0)
		memcpy(c->sp + FX_HDR_LEN,
		    c->in + c->in_off, k);
	c->in_off += k;
	c->in_done = k == 0;
	c->slen = FX_HDR_LEN + k;
	c->soff = 0;
}

/* Printable ASCII of an ERROR frame, bounded. */
static void
fx_error_text(const uint8_t *p, size_t n, char *err, size_t errlen)
{
	char t[256];
	size_t i, k = 0;

	for (i = 0; i < n && k < sizeof(t) - 1; i++)
		t[k++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	t[k] = '\0';
	snprintf(err, errlen, "the exec helper refused the command: %s", t);
}

/*
 * Handles one frame: 0 to go on, 1 with the outcome set (EXIT, or the
 * limit passed), or a negative errno with err set.
 */
static int
fx_frame(struct dock_fx *c, const struct fx_frame *f, struct dock_exec_res *res,
    char *err, size_t errlen)
{
	int outcome, code, rc;

	switch (f->type) {
	case FX_STDOUT:
	case FX_STDERR:
		if (c->budget != NULL && (rc = dock_fx_charge_add(c->budget,
		    c->principal, &c->charge, f->len, err, errlen)) != 0)
			return rc;
		if (fxbuf_add(f->type == FX_STDOUT ? &c->out : &c->err, f->p,
		    f->len) != 0) {
			snprintf(err, errlen, "exec: out of memory");
			return -ENOMEM;
		}
		if (c->live)
			msc_driver_output(f->p, f->len);
		if (c->on_output != NULL)
			c->on_output(c->out_arg, f->p, f->len);
		if (c->out.len + c->err.len > c->limit) {
			res->outcome = DOCK_EXEC_LIMIT;
			return 1;
		}
		return 0;
	case FX_EXIT:
		if (fx_exit_decode(f->p, f->len, &outcome, &code) != 0) {
			snprintf(err, errlen, "the exec helper sent an invalid "
			    "exit status");
			return -EPROTO;
		}
		res->outcome = (enum dock_exec_outcome)outcome;
		res->exit_code = outcome == FX_EXITED ? code : -1;
		return 1;
	case FX_ERROR:
		fx_error_text(f->p, f->len, err, errlen);
		return -EPROTO;
	default:
		snprintf(err, errlen, "the exec helper sent an unexpected "
		    "frame");
		return -EPROTO;
	}
}

/* Reads what is there and handles each frame; as fx_frame(), or EOF. */
static int
fx_read(struct dock_fx *c, struct dock_exec_res *res, char *err, size_t errlen)
{
	uint8_t chunk[65536];
	size_t off = 0, used;
	struct fx_frame f;
	ssize_t n = recv(c->fd, chunk, sizeof(chunk), 0);
	int rc;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		snprintf(err, errlen, "the exec helper closed the connection "
		    "before the command finished (it was killed, replaced or "
		    "the computer stopped)");
		return -ECONNRESET;
	}
	while (off < (size_t)n) {
		rc = fx_parse(&c->ps, chunk + off, (size_t)n - off, &used, &f);
		off += used;
		if (rc == -EPROTO) {
			snprintf(err, errlen, "the exec helper sent a malformed "
			    "frame");
			return rc;
		}
		if (rc < 0) {
			snprintf(err, errlen, "exec: out of memory");
			return rc;
		}
		if (rc == 0)
			break;
		if ((rc = fx_frame(c, &f, res, err, errlen)) != 0)
			return rc;
	}
	return 0;
}

/* Sends the whole REQ frame; -ENOTCONN when it cannot be delivered. */
static int
fx_send_req(struct dock_fx *c, const struct dock_exec_req *req, char *err,
    size_t errlen)
{
	struct fx_req r = { .argv = req->argv, .env = req->env,
		.workdir = req->workdir, .output_limit = req->output_limit,
		.flags = req->has_stdin ? FX_F_STDIN : 0 };
	int64_t until = (int64_t)msc_now_ms() + FX_REQ_SEND_MS;
	short rev;
	int rc;

	r.timeout_ms = req->timeout_ms > 0 ? (uint32_t)req->timeout_ms : 0;
	if ((rc = fx_req_encode(&r, &c->sp, &c->slen)) != 0) {
		snprintf(err, errlen, "exec: the command is too large for the "
		    "exec helper");
		return rc == -ENOMEM ? rc : -E2BIG;
	}
	c->soff = 0;
	while (c->soff < c->slen) {
		if (fx_send_some(c) != 0 ||
		    (c->soff < c->slen &&
			fx_wait(c->fd, -1, POLLOUT, until, &rev) != 0)) {
			snprintf(err, errlen, "the exec helper did not take "
			    "the request");
			return -ENOTCONN;
		}
	}
	free(c->sp);
	if ((c->sp = malloc(FX_HDR_LEN + FX_DATA_MAX)) == NULL)
		return -ENOMEM;
	c->slen = c->soff = 0;
	c->in_done = !req->has_stdin;
	return 0;
}

short
dock_fx_events(struct dock_fx *c)
{
	if (c->has_stdin)
		fx_next_stdin(c);
	return (short)(POLLIN | (c->soff < c->slen ? POLLOUT : 0));
}

int
dock_fx_fd(const struct dock_fx *c)
{
	return c->fd;
}

int64_t
dock_fx_deadline(const struct dock_fx *c)
{
	return c->deadline;
}

void
dock_fx_on_output(struct dock_fx *c, void (*fn)(void *arg, const void *p,
    size_t n), void *arg)
{
	c->on_output = fn;
	c->out_arg = arg;
}

int
dock_fx_step(struct dock_fx *c, short rev, struct dock_exec_res *res,
    char *err, size_t errlen)
{
	bool sending = c->soff < c->slen;
	int rc;

	if (rev & (POLLIN | POLLHUP | POLLERR)) {
		if ((rc = fx_read(c, res, err, errlen)) != 0)
			return rc;
	}
	/* A command that stops reading stdin early is fine. */
	if (sending && (rev & POLLOUT) && fx_send_some(c) != 0) {
		c->in_done = true;
		c->slen = c->soff = 0;
	}
	return 0;
}

static int
fx_loop(struct dock_fx *c, struct dock_exec_res *res, char *err,
    size_t errlen)
{
	short rev = 0;
	int rc;

	for (;;) {
		rc = fx_wait(c->fd, c->cancel_fd, dock_fx_events(c),
		    c->deadline, &rev);
		if (rc == -ETIMEDOUT) {
			res->outcome = DOCK_EXEC_TIMEOUT;
			return 1;
		}
		if (rc == -ECANCELED) {
			res->outcome = DOCK_EXEC_CANCELLED;
			return 1;
		}
		if (rc < 0) {
			snprintf(err, errlen, "exec: poll: %s", strerror(-rc));
			return rc;
		}
		if ((rc = dock_fx_step(c, rev, res, err, errlen)) != 0)
			return rc;
	}
}

static void
fx_free(struct dock_fx *c)
{
	dock_fx_charge_release(&c->charge);
	free(c->sp);
	free(c->out.p);
	free(c->err.p);
	fx_parser_fini(&c->ps);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

int
dock_fx_begin(const char *dir, const struct dock_exec_req *req,
    struct dock_fx **cp, char *err, size_t errlen)
{
	struct dock_fx *c;
	int rc;

	*cp = NULL;
	if (req->argv == NULL || req->argv[0] == NULL ||
	    (req->workdir != NULL && req->workdir[0] != '/')) {
		snprintf(err, errlen, "exec: bad request");
		return -EINVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		snprintf(err, errlen, "exec: out of memory");
		return -ENOMEM;
	}
	c->cancel_fd = -1;
	fx_parser_init(&c->ps, true);
	MSC_HOP("driver_prepare");
	if ((c->fd = dock_fx_connect(dir, DOCK_FX_SOCK_NAME)) < 0) {
		snprintf(err, errlen, "no exec helper listens in %s", dir);
		fx_free(c);
		return -ENOTCONN;
	}
	MSC_HOP("helper_connect");
	c->limit = req->output_limit;
	c->live = req->live;
	c->cancel_fd = req->live ? msc_driver_cancel_fd() : -1;
	c->in = req->stdin_data;
	c->in_len = req->has_stdin ? req->stdin_len : 0;
	c->has_stdin = req->has_stdin;
	if ((rc = fx_send_req(c, req, err, errlen)) != 0) {
		fx_free(c);
		return rc;
	}
	c->deadline = (int64_t)msc_now_ms() + (req->timeout_ms > 0 ?
	    (int64_t)req->timeout_ms + DOCK_FX_GRACE_MS : (int64_t)1 << 50);
	MSC_HOP("helper_send_req");
	*cp = c;
	return 0;
}

void
dock_fx_set_budget(struct dock_fx *c, struct dock_fx_budget *b)
{
	c->budget = b;
}

void
dock_fx_for_principal(struct dock_fx *c, const char *principal)
{
	snprintf(c->principal, sizeof(c->principal), "%s", principal);
}

int
dock_fx_end(struct dock_fx *c, int rc, struct dock_exec_res *res, char *err,
    size_t errlen)
{
	if (rc < 0)
		goto out;
	if (res->outcome != DOCK_EXEC_EXITED) {
		/* Ask the helper to kill now; closing also does. */
		uint8_t k[FX_HDR_LEN];

		(void)fx_hdr_encode(k, FX_KILL, 0);
		(void)send(c->fd, k, sizeof(k), MSG_NOSIGNAL | MSG_DONTWAIT);
		res->exit_code = -1;
	}
	if ((rc = fxbuf_add(&c->out, "", 0)) != 0 ||
	    (rc = fxbuf_add(&c->err, "", 0)) != 0) {
		snprintf(err, errlen, "exec: out of memory");
		goto out;
	}
	res->out = c->out.p;
	res->out_len = c->out.len;
	res->err = c->err.p;
	res->err_len = c->err.len;
	c->out.p = c->err.p = NULL;
	res->charge = c->charge;        /* held while res holds the output */
	memset(&c->charge, 0, sizeof(c->charge));
	rc = 0;
out:
	fx_free(c);
	return rc;
}

int
dock_fx_run(const char *dir, const struct dock_exec_req *req,
    struct dock_exec_res *res, char *err, size_t errlen)
{
	struct dock_fx *c;
	int rc;

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	if ((rc = dock_fx_begin(dir, req, &c, err, errlen)) != 0)
		return rc;
	rc = fx_loop(c, res, err, errlen);
	MSC_HOP("helper_run_command");
	return dock_fx_end(c, rc, res, err, errlen);
}
