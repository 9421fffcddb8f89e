/*
 * mcp_stdio.c - the stdio transport: a poll loop over stdin and a signal
 * pipe, line framing with a length bound, and serialized writes.
 */
#include "mcp_stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "msc_hop.h"
#include "msc_log.h"

static int signal_pipe[2] = { -1, -1 };
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void
on_signal(int sig)
{
	int saved = errno;
	unsigned char b = (unsigned char)sig;

	if (write(signal_pipe[1], &b, 1) < 0) {
		/* Nothing to do: the pipe is full, a stop is already due. */
	}
	errno = saved;
}

static void
write_all(const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(STDOUT_FILENO, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;         /* the client went away */
		}
		buf += n;
		len -= (size_t)n;
	}
}

static void
send_line(void *ctx, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);

	(void)ctx;
	if (text == NULL) {
		msc_log_err("cannot encode a reply");
		return;
	}
	pthread_mutex_lock(&out_mu);
	write_all(text, strlen(text));
	write_all("\n", 1);
	MSC_HOP("edge_reply_json_write");
	MSC_HOP_DUMP();
	pthread_mutex_unlock(&out_mu);
	free(text);
}

struct line_buf {
	char *data;
	size_t len, cap;
	bool discarding;        /* inside a line past the limit */
};

/* Feeds complete lines of lb to the connection; keeps the partial tail. */
static void
feed(struct mcp_conn *c, struct line_buf *lb, const char *in, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(in, '\n', n);
		size_t take = nl ? (size_t)(nl - in) : n;

		if (!lb->discarding && lb->len + take > EDGE_STDIO_MAX_LINE) {
			lb->discarding = true;
			lb->len = 0;
		}
		if (!lb->discarding) {
			if (lb->len + take > lb->cap) {
				size_t cap = lb->cap ? lb->cap : 65536;
				char *grown;

				while (cap < lb->len + take)
					cap *= 2;
				if ((grown = realloc(lb->data, cap)) == NULL) {
					lb->discarding = true;
					lb->len = 0;
					goto next;
				}
				lb->data = grown;
				lb->cap = cap;
			}
			memcpy(lb->data + lb->len, in, take);
			lb->len += take;
		}
next:
		if (nl == NULL)
			return;
		if (lb->discarding)
			mcp_conn_reject_oversized(c, EDGE_STDIO_MAX_LINE);
		else if (lb->len > 0 &&
		    !(lb->len == 1 && lb->data[0] == '\r'))
			mcp_conn_handle(c, lb->data, lb->len);
		lb->discarding = false;
		lb->len = 0;
		if (lb->cap > 4 * 65536) {      /* give back a big buffer */
			free(lb->data);
			lb->data = NULL;
			lb->cap = 0;
		}
		in = nl + 1;
		n -= take + 1;
	}
}

static void
wait_idle(struct mcp_conn *c)
{
	for (;;) {
		struct pollfd pfd = { signal_pipe[0], POLLIN, 0 };

		pthread_mutex_lock(&c->mu);
		int busy = c->inflight;
		pthread_mutex_unlock(&c->mu);
		if (busy == 0 || poll(&pfd, 1, 50) > 0)
			return;
	}
}

int
edge_stdio_run(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc *desc)
{
	static struct mcp_conn conn;
	struct line_buf lb = { 0 };
	struct sigaction sa;
	char buf[65536];
	int status = 0;

	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		msc_log_err("pipe: %s", strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	mcp_conn_init(&conn, cfg, session, NULL, send_line, NULL);
	conn.desc = desc;
	conn.stdio = true;
	for (;;) {
		struct pollfd fds[2] = { { STDIN_FILENO, POLLIN, 0 },
			{ signal_pipe[0], POLLIN, 0 } };
		ssize_t n;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			msc_log_err("poll: %s", strerror(errno));
			status = 1;
			break;
		}
		if (fds[1].revents != 0) {
			msc_log_info("signal received; shutting down");
			break;
		}
		if (fds[0].revents == 0)
			continue;
		n = read(STDIN_FILENO, buf, sizeof(buf));
		MSC_HOP_RESET();
		MSC_HOP("t0");
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			/* End of input: answer what is in flight first,
			 * unless a signal says to stop now. */
			wait_idle(&conn);
			break;
		}
		feed(&conn, &lb, buf, (size_t)n);
	}
	free(lb.data);
	mcp_conn_fini(&conn, 30000);
	return status;
}
