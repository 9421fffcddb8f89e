/*
 * docker_stream.c - POST /exec/{id}/start on a hijacked connection.
 *
 * libcurl only connects (CURLOPT_CONNECT_ONLY); we write the request with
 * curl_easy_send(), read the reply headers with curl_easy_recv(), then send
 * stdin (only now: bytes sent before the headers are lost by the daemon),
 * half-close, and demultiplex the 8-byte-header frames until EOF. The
 * part after the headers goes in steps (dock_stream_step), so that one
 * thread may wait for many streams (docker_fxloop.h); dock_stream_run
 * takes the steps itself, blocking.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "docker_api.h"
#include "docker_api_int.h"
#include "docker_fastexec.h"
#include "msc_driver_live.h"
#include "msc_http.h"
#include "wire32.h"

#define DOCK_HDR_MAX		16384
#define DOCK_READ_CHUNK		32768
#define DOCK_SEND_CHUNK		65536
#define DOCK_SYSERR_MAX		4096
#define DOCK_ERRBODY_MAX	65536

struct dock_conn {
	CURL		*h;
	curl_socket_t	 fd;
	int64_t		 deadline;
	int		 cancel_fd;	/* readable: cancelled; -1 none */
};

/* The demultiplexer: the header being read, then a payload's remainder. */
struct dock_demux {
	unsigned char	hdr[8];
	size_t		hdr_have;
	int		type;
	uint32_t	left;
};

/*
 * Waits for `events` on the connection; 0, -ETIMEDOUT, -ECANCELED (the
 * cancel fd is readable) or -EIO.
 */
static int
dock_conn_wait(struct dock_conn *c, short events, short *revents)
{
	struct pollfd	pfd[2];
	int64_t		left;
	int		n;

	for (;;) {
		left = c->deadline - (int64_t)msc_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		pfd[0].fd = c->fd;
		pfd[0].events = events;
		pfd[0].revents = 0;
		pfd[1].fd = c->cancel_fd;       /* -1: ignored by poll */
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		n = poll(pfd, 2, left > 1000000 ? 1000000 : (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EIO;
		if (pfd[1].revents != 0)
			return -ECANCELED;
		if (n == 0)
			continue;
		*revents = pfd[0].revents;
		return 0;
	}
}

static int
dock_conn_send_all(struct dock_conn *c, const char *p, size_t n)
{
	CURLcode	cc;
	size_t		sent;
	short		rev;
	int		rc;

	while (n > 0) {
		cc = curl_easy_send(c->h, p, n, &sent);
		if (cc == CURLE_AGAIN) {
			if ((rc = dock_conn_wait(c, POLLOUT, &rev)) < 0)
				return rc;
			continue;
		}
		if (cc != CURLE_OK)
			return -EIO;
		p += sent;
		n -= sent;
	}
	return 0;
}

/* Reads what is available: >0 bytes, 0 on EOF, -EAGAIN, -EIO. */
static ssize_t
dock_conn_recv(struct dock_conn *c, char *buf, size_t len)
{
	CURLcode	cc;
	size_t		n = 0;

	cc = curl_easy_recv(c->h, buf, len, &n);
	if (cc == CURLE_AGAIN)
		return -EAGAIN;
	if (cc != CURLE_OK)
		return -EIO;
	return (ssize_t)n;
}

static int
dock_conn_open(struct dock_engine *e, struct dock_conn *c, char *err,
    size_t errlen)
{
	CURLcode	cc;
	int64_t		left;

	if ((c->h = curl_easy_init()) == NULL)
		return -ENOMEM;
	curl_easy_setopt(c->h, CURLOPT_URL, e->base_url);
	if (e->sock_path != NULL)
		curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, e->sock_path);
	curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->h, CURLOPT_CONNECT_ONLY, 1L);
	left = c->deadline - (int64_t)msc_now_ms();
	if (left < 1000)
		left = 1000;
	if (left > DOCK_CTL_TIMEOUT_MS)
		left = DOCK_CTL_TIMEOUT_MS;
	curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, (long)left);
	if ((cc = curl_easy_perform(c->h)) != CURLE_OK) {
		dock_seterr(err, errlen, "exec start: %s",
		    curl_easy_strerror(cc));
		return msc_http_curl_errno(cc, -ECONNREFUSED);
	}
	if (curl_easy_getinfo(c->h, CURLINFO_ACTIVESOCKET, &c->fd) !=
	    CURLE_OK || c->fd == CURL_SOCKET_BAD) {
		dock_seterr(err, errlen, "exec start: no socket");
		return -EIO;
	}
	return 0;
}

/* Feeds raw stream bytes to the demultiplexer. */
static int
dock_demux_feed(struct dock_demux *d, struct dock_stream *s,
    const unsigned char *p, size_t n)
{
	struct dock_buf	*dst;
	size_t		 k;
	int		 rc;

	while (n > 0) {
		if (d->hdr_have < 8) {
			k = 8 - d->hdr_have;
			if (k > n)
				k = n;
			memcpy(d->hdr + d->hdr_have, p, k);
			d->hdr_have += k;
			p += k;
			n -= k;
			if (d->hdr_have < 8)
				break;
			if (d->hdr[0] > 3)
				return -EPROTO;
			d->type = d->hdr[0];
			d->left = wire_get32(d->hdr + 4);
			if (d->left == 0)
				d->hdr_have = 0;
			continue;
		}
		k = d->left < n ? d->left : n;
		if (d->type == 3) {
			dst = &s->syserr;
			if (dst->len + k > DOCK_SYSERR_MAX)
				k = dst->len < DOCK_SYSERR_MAX ?
				    DOCK_SYSERR_MAX - dst->len : 0;
			rc = dock_buf_append(dst, p, k);
			k = d->left < n ? d->left : n;
		} else {
			dst = d->type == 2 ? &s->err : &s->out;
			if (s->budget != NULL && dock_fx_charge_add(s->budget,
			    s->principal, &s->charge, k, s->budget_err,
			    sizeof(s->budget_err)) != 0)
				return -ENOBUFS;
			rc = dock_buf_append(dst, p, k);
			if (s->on_output != NULL)
				s->on_output(s->out_arg, p, k);
			else if (s->live)
				msc_driver_output(p, k);
		}
		if (rc < 0)
			return rc;
		p += k;
		n -= k;
		d->left -= (uint32_t)k;
		if (d->left == 0)
			d->hdr_have = 0;
	}
	return 0;
}

/* Reads the error body of a refused start (bounded) for its message. */
static int
dock_start_refused(struct dock_conn *c, long status, const char *hdrs,
    const char *rest, size_t restlen, char *err, size_t errlen)
{
	struct dock_http_res	 res;
	const char		*cl;
	char			 buf[4096];
	size_t			 want = DOCK_ERRBODY_MAX;
	ssize_t			 n;
	short			 rev;
	int			 rc;

	memset(&res, 0, sizeof(res));
	res.status = status;
	res.body.max = DOCK_ERRBODY_MAX;
	if ((cl = strcasestr(hdrs, "\r\nContent-Length:")) != NULL)
		want = strtoul(cl + 17, NULL, 10);
	if (want > DOCK_ERRBODY_MAX)
		want = DOCK_ERRBODY_MAX;
	if (restlen > want)
		restlen = want;
	dock_buf_append(&res.body, rest, restlen);
	c->deadline = (int64_t)msc_now_ms() + 2000;
	while (res.body.len < want) {
		n = dock_conn_recv(c, buf, sizeof(buf));
		if (n == -EAGAIN) {
			if (dock_conn_wait(c, POLLIN, &rev) < 0)
				break;
			continue;
		}
		if (n <= 0 || dock_buf_append(&res.body, buf, (size_t)n) < 0)
			break;
	}
	rc = dock_http_status_err(&res, -EBUSY, "exec start", err, errlen);
	dock_http_res_fini(&res);
	return rc;
}

/* Sends the request and reads the reply headers; leftover bytes demuxed. */
static int
dock_start_handshake(struct dock_engine *e, struct dock_conn *c,
    const char *exec_id, struct dock_demux *d, struct dock_stream *s,
    char *err, size_t errlen)
{
	static const char	 body[] = "{\"Detach\":false,\"Tty\":false}";
	char			 req[DOCK_PATH_MAX], hdr[DOCK_HDR_MAX + 1];
	char			*end;
	size_t			 have = 0, hlen;
	ssize_t			 n;
	long			 status;
	short			 rev;
	int			 rc, minor, len;

	if ((minor = dock_negotiate(e, DOCK_CTL_TIMEOUT_MS, err, errlen)) < 0)
		return minor;
	len = snprintf(req, sizeof(req),
	    "POST /v1.%d/exec/%s/start HTTP/1.1\r\n"
	    "Host: docker\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %zu\r\n"
	    "Connection: Upgrade\r\n"
	    "Upgrade: tcp\r\n"
	    "\r\n%s", minor, exec_id, sizeof(body) - 1, body);
	if (len < 0 || (size_t)len >= sizeof(req))
		return -ENAMETOOLONG;
	if ((rc = dock_conn_send_all(c, req, (size_t)len)) < 0)
		goto io;
	for (;;) {
		if (have >= DOCK_HDR_MAX) {
			dock_seterr(err, errlen,
			    "exec start: headers too long");
			return -EPROTO;
		}
		n = dock_conn_recv(c, hdr + have, DOCK_HDR_MAX - have);
		if (n == -EAGAIN) {
			if ((rc = dock_conn_wait(c, POLLIN, &rev)) < 0)
				goto io;
			continue;
		}
		if (n <= 0) {
			rc = -EIO;
			goto io;
		}
		have += (size_t)n;
		hdr[have] = '\0';
		if ((end = strstr(hdr, "\r\n\r\n")) != NULL)
			break;
	}
	hlen = (size_t)(end - hdr) + 4;
	if (sscanf(hdr, "HTTP/%*d.%*d %ld", &status) != 1) {
		dock_seterr(err, errlen, "exec start: malformed reply");
		return -EPROTO;
	}
	if (status != 101 && status != 200) {
		end[2] = '\0';
		return dock_start_refused(c, status, hdr, hdr + hlen,
		    have - hlen, err, errlen);
	}
	return dock_demux_feed(d, s, (unsigned char *)hdr + hlen, have - hlen);
io:
	if (rc == -ETIMEDOUT || rc == -ECANCELED)
		return rc;
	dock_seterr(err, errlen, "exec start: connection to %s failed",
	    e->name);
	return rc;
}

/* A started exec's stream, between dock_stream_begin and _close. */
struct dock_xstream {
	struct dock_conn	 c;
	struct dock_demux	 d;
	struct dock_stream	*s;		/* borrowed */
	unsigned char		*buf;
	size_t			 in_off;
	bool			 sending;
};

/* Whether the output passed the limit: then the stream ended so. */
static bool
dock_stream_over(struct dock_xstream *x)
{
	if (x->s->out.len + x->s->err.len > x->s->limit) {
		x->s->outcome = DOCK_EXEC_LIMIT;
		return true;
	}
	return false;
}

void
dock_stream_close(struct dock_xstream *x)
{
	if (x == NULL)
		return;
	free(x->buf);
	if (x->c.h != NULL)
		curl_easy_cleanup(x->c.h);
	free(x);
}

int
dock_stream_begin(struct dock_engine *e, const char *exec_id,
    struct dock_stream *s, struct dock_xstream **xp, char *err,
    size_t errlen)
{
	struct dock_xstream	*x;
	int			 rc;

	*xp = NULL;
	s->outcome = DOCK_EXEC_EXITED;
	if ((x = calloc(1, sizeof(*x))) == NULL)
		return -ENOMEM;
	x->s = s;
	x->c.fd = CURL_SOCKET_BAD;
	x->c.deadline = s->deadline;
	x->c.cancel_fd = s->cancel_fd;
	x->sending = s->has_stdin;
	if ((rc = dock_conn_open(e, &x->c, err, errlen)) < 0)
		goto out;
	rc = dock_start_handshake(e, &x->c, exec_id, &x->d, s, err, errlen);
	if (rc == -ETIMEDOUT || rc == -ECANCELED) {
		s->outcome = rc == -ETIMEDOUT ? DOCK_EXEC_TIMEOUT
					      : DOCK_EXEC_CANCELLED;
		rc = 1;
		goto out;
	}
	if (rc < 0)
		goto out;
	if ((x->buf = malloc(DOCK_READ_CHUNK)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if (x->sending && s->in_len == 0) {
		shutdown(x->c.fd, SHUT_WR);
		x->sending = false;
	}
	if (dock_stream_over(x)) {
		rc = 1;
		goto out;
	}
	*xp = x;
	return 0;
out:
	dock_stream_close(x);
	return rc;
}

int
dock_stream_fd(const struct dock_xstream *x)
{
	return x->c.fd;
}

short
dock_stream_events(const struct dock_xstream *x)
{
	return (short)(POLLIN | (x->sending ? POLLOUT : 0));
}

int
dock_stream_wait(struct dock_xstream *x, short *revents)
{
	return dock_conn_wait(&x->c, dock_stream_events(x), revents);
}

int
dock_stream_step(struct dock_xstream *x, short rev, char *err,
    size_t errlen)
{
	struct dock_stream	*s = x->s;
	size_t			 sent;
	ssize_t			 n;
	CURLcode		 cc;
	int			 rc;

	if (x->sending && (rev & (POLLOUT | POLLERR | POLLHUP))) {
		sent = 0;
		cc = curl_easy_send(x->c.h, (const char *)s->in + x->in_off,
		    s->in_len - x->in_off > DOCK_SEND_CHUNK ?
		    DOCK_SEND_CHUNK : s->in_len - x->in_off, &sent);
		if (cc == CURLE_OK)
			x->in_off += sent;
		/* A process that stops reading just loses the rest. */
		if ((cc != CURLE_OK && cc != CURLE_AGAIN) ||
		    x->in_off == s->in_len) {
			shutdown(x->c.fd, SHUT_WR);
			x->sending = false;
		}
	}
	if (!(rev & (POLLIN | POLLERR | POLLHUP)))
		return 0;
	n = dock_conn_recv(&x->c, (char *)x->buf, DOCK_READ_CHUNK);
	if (n == -EAGAIN)
		return 0;
	/*
	 * EOF; a reset (the daemon closing with stdin unread) comes only
	 * after all queued output, so it ends the stream too. Exec inspect
	 * tells whether the process really ended.
	 */
	if (n <= 0) {
		s->outcome = DOCK_EXEC_EXITED;
		return 1;
	}
	if ((rc = dock_demux_feed(&x->d, s, x->buf, (size_t)n)) < 0) {
		if (rc != -ENOBUFS)
			dock_seterr(err, errlen, "exec stream: %s",
			    rc == -EPROTO ? "bad frame header" : "no memory");
		else
			dock_seterr(err, errlen, "%s", s->budget_err);
		return rc;
	}
	return dock_stream_over(x) ? 1 : 0;
}

int
dock_stream_run(struct dock_engine *e, const char *exec_id,
    struct dock_stream *s, char *err, size_t errlen)
{
	struct dock_xstream	*x;
	short			 rev;
	int			 rc;

	if ((rc = dock_stream_begin(e, exec_id, s, &x, err, errlen)) != 0)
		return rc > 0 ? 0 : rc;
	for (;;) {
		rc = dock_stream_wait(x, &rev);
		if (rc == -ETIMEDOUT || rc == -ECANCELED) {
			s->outcome = rc == -ETIMEDOUT ? DOCK_EXEC_TIMEOUT
						      : DOCK_EXEC_CANCELLED;
			rc = 0;
			break;
		}
		if (rc < 0)
			break;
		if ((rc = dock_stream_step(x, rev, err, errlen)) != 0) {
			if (rc > 0)
				rc = 0;
			break;
		}
	}
	dock_stream_close(x);
	return rc;
}
