/*
 * docker_preview_proxy.c - the preview listener (issue 30): one thread,
 * one poll(2) loop over every connection, no thread per connection.
 *
 * Each request head is read whole (at most HEAD_MAX bytes, within
 * HEAD_MS), checked by the same strict rules as the MCP listener's
 * (one Host; no Content-Length with Transfer-Encoding, none twice or
 * not a number; only "chunked"; no folded lines, no bare LF, no space
 * before a colon), and routed by its own Host, `<capability>.<domain>`:
 * an unknown or revoked capability is answered 404 without any engine
 * call or connection. Otherwise a new connection to the computer's
 * address (kept a second, else asked of the engine by the resolver's
 * thread, docker_preview_resolve.c, so that this loop never waits on the
 * engine) and its exposed port carries this one
 * request ("Connection: close" upstream); the answer goes back with the
 * client's connection kept alive when the client can tell where the
 * answer ends. A request with a chunked body ends the client's
 * connection after its answer (its end is not parsed here). An upgrade
 * (WebSocket) answered 101 becomes a two-way tunnel. Buffers are
 * BUF_MAX each way, read only while there is room (a slow reader slows
 * the writer); a connection that moves nothing for IDLE_MS ends.
 */
#include "docker_preview.h"
#include "docker_preview_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_time.h"

#define HEAD_MAX 16384
#define BUF_MAX 65536
#define CONNS_MAX 512
#define HEAD_MS 10000           /* a request head's whole arrival */
#define KEEP_MS 60000           /* an idle kept-alive connection */
#define CONNECT_MS 5000
#define RESOLVE_MS 30000        /* the engine's answer (its calls' deadline) */
#define IDLE_MS 300000          /* nothing moved either way */
#define ACCEPT_PAUSE_MS 100     /* accept(2) out of descriptors */
#define SWEEP_MS 1000           /* revoked URLs' connections looked for */

/* ST_RESOLVE: the engine is asked where the computer is (the resolver). */
enum st { ST_HEAD, ST_RESOLVE, ST_CONNECT, ST_EXCHANGE, ST_TUNNEL, ST_FLUSH };

struct buf {
	char d[BUF_MAX];
	size_t len;
};

struct conn {
	LIST_ENTRY(conn) link;
	int cfd, ufd;
	enum st st;
	char cap[DOCK_PREVIEW_CAP_LEN + 1];
	struct buf in;          /* from the client: heads, body */
	struct buf up;          /* to the computer */
	struct buf uin;         /* from the computer, its head */
	struct buf down;        /* to the client */
	long long body_left;    /* request body bytes still to pass; -1 all */
	long long resp_left;    /* answer body bytes still to pass; -1 all */
	bool resp_head_done;
	bool keep;              /* the client's connection stays after */
	bool head_req;          /* HEAD: no body in the answer */
	bool upgrade;           /* the request asks to upgrade */
	bool client_eof, up_eof;
	bool fresh_tried;       /* connect failed once: address asked again */
	uint64_t serial;        /* its question to the resolver */
	uint64_t since;         /* the state's start or last progress */
	char ip[64];
	uint16_t port;
};

LIST_HEAD(conns, conn);

struct dock_proxy_loop {
	struct dock_preview *p;
	char domain[256];
	int lfd;
	int wake[2];
	pthread_t thread;
	struct conns conns;
	size_t n;
	struct dock_resolver *res;
	uint64_t serial;        /* the last question's */
	uint64_t accept_after;  /* accept(2) failed (EMFILE): paused till */
};

static void
conn_close(struct dock_proxy_loop *l, struct conn *c)
{
	LIST_REMOVE(c, link);
	l->n--;
	close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	free(c);
}

static void
put(struct buf *b, const char *s, size_t n)
{
	if (n > BUF_MAX - b->len)
		n = BUF_MAX - b->len;
	memcpy(b->d + b->len, s, n);
	b->len += n;
}

static void
puts_buf(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* A short answer, then the connection ends. */
static void
answer(struct conn *c, int code, const char *reason, const char *text)
{
	char head[256];

	snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: "
	    "text/plain; charset=utf-8\r\nContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", code, reason, strlen(text));
	c->down.len = 0;
	puts_buf(&c->down, head);
	puts_buf(&c->down, text);
	if (c->ufd >= 0) {
		close(c->ufd);
		c->ufd = -1;
	}
	c->keep = false;
	c->st = ST_FLUSH;
	c->since = msc_now_ms();
}

static int
connect_to(const char *ip, uint16_t port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, ip, &((struct sockaddr_in *)&ss)->sin_addr) ==
	    1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, ip,
	    &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		sl = sizeof(struct sockaddr_in6);
	} else
		return -EINVAL;
	if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, sl) != 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* The computer's address is in c->ip: connect (without waiting). */
static void
start_connect(struct conn *c)
{
	if ((c->ufd = connect_to(c->ip, c->port)) < 0) {
		c->ufd = -1;
		answer(c, 502, "Bad Gateway", "Nothing listens on that port "
		    "of the computer.\n");
		return;
	}
	c->st = ST_CONNECT;
	c->since = msc_now_ms();
}

/* Asks the resolver where c's computer is (fresh: not the kept address). */
static void
ask(struct dock_proxy_loop *l, struct conn *c, bool fresh)
{
	c->serial = ++l->serial;
	if (!dock_resolver_ask(l->res, c->serial, c->cap, fresh)) {
		answer(c, 503, "Service Unavailable", "Too many requests wait "
		    "for the engine: try again.\n");
		return;
	}
	c->st = ST_RESOLVE;
	c->since = msc_now_ms();
}

/* A request head is in c->in: route it. */
static void
on_request(struct dock_proxy_loop *l, struct conn *c, size_t head_len)
{
	struct dock_http_hdr hs[DOCK_HTTP_HEADERS_MAX];
	size_t nh, first_len, nhost = 0, ncl = 0, nte = 0;
	const struct dock_http_hdr *host = NULL;
	long long cl = 0;
	bool chunked = false, close_asked = false, http11;
	const char *sp1, *sp2;
	int rv;

	if (dock_http_split(c->in.d, head_len, &first_len, hs, &nh) != 0) {
		answer(c, 400, "Bad Request", "Malformed request head.\n");
		return;
	}
	sp1 = memchr(c->in.d, ' ', first_len);
	sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', first_len -
	    (size_t)(sp1 + 1 - c->in.d)) : NULL;
	if (sp1 == NULL || sp2 == NULL || sp1 == c->in.d ||
	    (size_t)(c->in.d + first_len - sp2) != 9 ||
	    strncmp(sp2 + 1, "HTTP/1.", 7) != 0 || (sp2[8] != '0' &&
		sp2[8] != '1')) {
		answer(c, 400, "Bad Request", "Malformed request line.\n");
		return;
	}
	for (const char *q = c->in.d; q < sp1; q++)
		if (!dock_http_tchar(*q)) {
			answer(c, 400, "Bad Request", "Malformed method.\n");
			return;
		}
	http11 = sp2[8] == '1';
	c->head_req = sp1 - c->in.d == 4 && strncmp(c->in.d, "HEAD", 4) == 0;
	c->upgrade = false;
	for (size_t i = 0; i < nh; i++) {
		if (dock_http_is(&hs[i], "host")) {
			host = &hs[i];
			nhost++;
		} else if (dock_http_is(&hs[i], "content-length")) {
			ncl++;
			cl = 0;
			if (hs[i].vl == 0 || hs[i].vl > 15)
				ncl = 99;
			for (size_t k = 0; k < hs[i].vl; k++) {
				if (hs[i].v[k] < '0' || hs[i].v[k] > '9')
					ncl = 99;
				cl = cl * 10 + (hs[i].v[k] - '0');
			}
		} else if (dock_http_is(&hs[i], "transfer-encoding")) {
			nte++;
			chunked = hs[i].vl == 7 &&
			    strncasecmp(hs[i].v, "chunked", 7) == 0;
		} else if (dock_http_is(&hs[i], "connection")) {
			close_asked |= dock_http_has(&hs[i], "close");
			c->upgrade |= dock_http_has(&hs[i], "upgrade");
		}
	}
	if (nhost != 1 || ncl > 1 || nte > 1 || (ncl && nte) ||
	    (nte && !chunked) || (nte && !http11)) {
		answer(c, 400, "Bad Request", "Refused: the request's Host, "
		    "Content-Length or Transfer-Encoding is ambiguous.\n");
		return;
	}
	if (!dock_http_host_cap(l->domain, host->v, host->vl, c->cap) ||
	    !dock_preview_known(l->p, c->cap)) {
		answer(c, 404, "Not Found", "No such preview.\n");
		return;
	}
	c->keep = http11 && !close_asked && !chunked && !c->upgrade;
	c->body_left = chunked || c->upgrade ? -1 : cl;
	/* The head again, hop-by-hop headers replaced. */
	c->up.len = 0;
	put(&c->up, c->in.d, first_len + 2);
	for (size_t i = 0; i < nh; i++) {
		if (dock_http_hop_by_hop(&hs[i]) && !(c->upgrade && dock_http_is(&hs[i],
		    "upgrade")))
			continue;
		put(&c->up, hs[i].n, (size_t)(hs[i].v + hs[i].vl - hs[i].n));
		puts_buf(&c->up, "\r\n");
	}
	puts_buf(&c->up, c->upgrade ? "Connection: Upgrade\r\n\r\n" :
	    "Connection: close\r\n\r\n");
	memmove(c->in.d, c->in.d + head_len, c->in.len - head_len);
	c->in.len -= head_len;
	c->uin.len = 0;
	c->resp_head_done = false;
	c->resp_left = -1;
	c->up_eof = false;
	c->fresh_tried = false;
	/* Where the computer is: kept, else asked of the engine off the loop. */
	rv = dock_preview_kept(l->p, c->cap, c->ip, sizeof(c->ip), &c->port);
	if (rv == -ENOENT)
		answer(c, 404, "Not Found", "No such preview.\n");
	else if (rv == 0)
		start_connect(c);
	else
		ask(l, c, false);
}

/* An answer of the resolver: the connection that asked goes on. */
static void
resolved(struct dock_proxy_loop *l, const struct dock_resolved *a)
{
	struct conn *c;

	LIST_FOREACH(c, &l->conns, link)
		if (c->st == ST_RESOLVE && c->serial == a->serial)
			break;
	if (c == NULL)
		return;                 /* closed meanwhile */
	if (a->rv == -ENOENT)
		answer(c, 404, "Not Found", "No such preview.\n");
	else if (a->rv != 0)
		answer(c, 502, "Bad Gateway", c->fresh_tried ? "Nothing listens "
		    "on that port of the computer.\n" : "The computer is not "
		    "running or has no network.\n");
	else {
		snprintf(c->ip, sizeof(c->ip), "%s", a->ip);
		c->port = a->port;
		start_connect(c);
	}
}

/* Body bytes already read go upstream (no more than the body). */
static void
move_body(struct conn *c)
{
	size_t n = c->in.len, room = BUF_MAX - c->up.len;

	if (c->body_left >= 0 && (long long)n > c->body_left)
		n = (size_t)c->body_left;
	if (n > room)
		n = room;
	if (n == 0)
		return;
	put(&c->up, c->in.d, n);
	memmove(c->in.d, c->in.d + n, c->in.len - n);
	c->in.len -= n;
	if (c->body_left > 0)
		c->body_left -= (long long)n;
}

/*
 * The computer's answer head is in c->uin: checked, then passed on.
 * Its framing is enforced here (whatever a front proxy shared by other
 * users would believe): one Content-Length, a number; no body after
 * HEAD, 204 or 304; a 101 only to an upgrade asked for; nothing past
 * the body relayed. The client's connection stays only when the end of
 * the answer is known here (Content-Length, or no body).
 */
static void
on_response(struct conn *c, size_t head_len)
{
	struct dock_http_hdr hs[DOCK_HTTP_HEADERS_MAX];
	size_t nh, first_len, ncl = 0, nte = 0;
	long long cl = 0;
	bool bad = false;
	int status;

	if (dock_http_split(c->uin.d, head_len, &first_len, hs, &nh) != 0 ||
	    first_len < 12 || strncmp(c->uin.d, "HTTP/1.", 7) != 0 ||
	    c->uin.d[8] != ' ' || (first_len > 12 && c->uin.d[12] != ' ') ||
	    c->uin.d[9] < '1' || c->uin.d[9] > '5' || c->uin.d[10] < '0' ||
	    c->uin.d[10] > '9' || c->uin.d[11] < '0' || c->uin.d[11] > '9') {
		answer(c, 502, "Bad Gateway", "The computer's server answered "
		    "something else than HTTP/1.1.\n");
		return;
	}
	status = (c->uin.d[9] - '0') * 100 + (c->uin.d[10] - '0') * 10 +
	    (c->uin.d[11] - '0');
	for (size_t i = 0; i < nh; i++) {
		if (dock_http_is(&hs[i], "content-length")) {
			ncl++;
			cl = 0;
			if (hs[i].vl == 0 || hs[i].vl > 15)
				bad = true;
			for (size_t k = 0; k < hs[i].vl && !bad; k++) {
				if (hs[i].v[k] < '0' || hs[i].v[k] > '9')
					bad = true;
				cl = cl * 10 + (hs[i].v[k] - '0');
			}
		} else if (dock_http_is(&hs[i], "transfer-encoding"))
			nte++;
	}
	if (bad || ncl > 1 || (ncl && nte) || (status == 101 && !c->upgrade)) {
		answer(c, 502, "Bad Gateway", "The computer's server answered "
		    "with an ambiguous length or an upgrade nobody asked "
		    "for.\n");
		return;
	}
	if (status >= 100 && status < 200 && status != 101)
		c->resp_left = 0;       /* interim: the final one follows */
	else if (status == 204 || status == 304 || c->head_req)
		c->resp_left = 0;
	else if (ncl == 1 && status != 101)
		c->resp_left = cl;
	else {
		c->resp_left = -1;      /* chunked, or until the end */
		c->keep = false;
	}
	put(&c->down, c->uin.d, first_len + 2);
	for (size_t i = 0; i < nh; i++) {
		if ((dock_http_hop_by_hop(&hs[i]) && !(status == 101 &&
		    dock_http_is(&hs[i], "upgrade"))) ||
		    dock_http_is(&hs[i], "referrer-policy"))
			continue;
		put(&c->down, hs[i].n, (size_t)(hs[i].v + hs[i].vl - hs[i].n));
		puts_buf(&c->down, "\r\n");
	}
	/* A preview's URL holds its capability: never sent on as a Referer. */
	if (status >= 200)
		puts_buf(&c->down, "Referrer-Policy: no-referrer\r\n");
	if (status == 101) {
		puts_buf(&c->down, "Connection: Upgrade\r\n\r\n");
		c->st = ST_TUNNEL;
		c->resp_left = -1;
	} else
		puts_buf(&c->down, c->keep ? "\r\n" : "Connection: close\r\n\r\n");
	memmove(c->uin.d, c->uin.d + head_len, c->uin.len - head_len);
	c->uin.len -= head_len;
	if (status >= 100 && status < 200 && status != 101) {
		/* An interim answer: the final one follows. */
		return;
	}
	c->resp_head_done = true;
	if (c->resp_left >= 0 && (long long)c->uin.len > c->resp_left)
		c->uin.len = (size_t)c->resp_left;      /* past the body: dropped */
	put(&c->down, c->uin.d, c->uin.len);
	if (c->resp_left > 0)
		c->resp_left -= (long long)c->uin.len;
	c->uin.len = 0;
}

static size_t
head_end(const struct buf *b)
{
	const char *e = memmem(b->d, b->len, "\r\n\r\n", 4);

	return e == NULL ? 0 : (size_t)(e - b->d) + 4;
}

/* A LF without its CR before the head's end: refused at once rather
 * than waited on (the head's end is looked for as CRLF CRLF). */
static bool
bare_lf(const struct buf *b)
{
	size_t end = head_end(b);

	if (end == 0)
		end = b->len;
	for (size_t i = 0; i < end; i++)
		if (b->d[i] == '\n' && (i == 0 || b->d[i - 1] != '\r'))
			return true;
	return false;
}

/* Writes what b holds to fd; false on a broken connection. */
static bool
flush(int fd, struct buf *b, bool *moved)
{
	ssize_t n;

	if (b->len == 0)
		return true;
	n = send(fd, b->d, b->len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	memmove(b->d, b->d + n, b->len - (size_t)n);
	b->len -= (size_t)n;
	*moved = *moved || n > 0;
	return true;
}

/* Reads into b at most `most` bytes: the count, 0 at EOF, -1 none now,
 * -2 broken. */
static ssize_t
fill(int fd, struct buf *b, size_t most)
{
	size_t room = BUF_MAX - b->len;
	ssize_t n;

	if (most < room)
		room = most;
	if (room == 0)
		return -1;
	n = recv(fd, b->d + b->len, room, 0);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? -1 : -2;
	b->len += (size_t)n;
	return n;
}

/* One connection's turn after poll; false: close it. */
static bool
step(struct dock_proxy_loop *l, struct conn *c, short cre, short ure)
{
	bool moved = false;
	ssize_t n;

	/* The client is gone (or broken), whatever the state: polling it
	 * again would return at once, forever. */
	if (cre & (POLLERR | POLLHUP | POLLNVAL))
		return false;
	if (cre & POLLOUT) {
		if (!flush(c->cfd, &c->down, &moved))
			return false;
	}
	switch (c->st) {
	case ST_HEAD: {
		size_t he;

		if (c->down.len > 0)
			break;
		if ((cre & (POLLIN | POLLHUP)) &&
		    (n = fill(c->cfd, &c->in, HEAD_MAX - c->in.len)) != -1) {
			if (n <= 0)
				return false;
			moved = true;
		}
		if (bare_lf(&c->in))
			answer(c, 400, "Bad Request", "Malformed request head "
			    "(a line not ended by CRLF).\n");
		else if ((he = head_end(&c->in)) > 0)
			on_request(l, c, he);
		else if (c->in.len >= HEAD_MAX) {
			answer(c, 431, "Request Header Fields Too Large",
			    "The request head is too long.\n");
		}
		break;
	}
	case ST_CONNECT: {
		int err = 0;
		socklen_t el = sizeof(err);

		if (!(ure & (POLLOUT | POLLERR | POLLHUP)))
			break;
		if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 ||
		    err != 0) {
			close(c->ufd);
			c->ufd = -1;
			/* A restarted computer's new address: asked once. */
			if (!c->fresh_tried) {
				c->fresh_tried = true;
				ask(l, c, true);
				break;
			}
			answer(c, 502, "Bad Gateway", "Nothing listens on that "
			    "port of the computer.\n");
			break;
		}
		c->fresh_tried = false;
		c->st = ST_EXCHANGE;
		moved = true;
	}
	/* fallthrough */
	case ST_EXCHANGE:
	case ST_TUNNEL: {
		size_t he;

		/* client -> computer */
		move_body(c);
		if (c->body_left != 0 && !c->client_eof &&
		    (cre & (POLLIN | POLLHUP))) {
			size_t most = c->body_left > 0 ?
			    (size_t)c->body_left : BUF_MAX;

			n = fill(c->cfd, &c->in, most);
			if (n == 0 || n == -2)
				c->client_eof = true;
			if (n > 0)
				moved = true;
			move_body(c);
		}
		if (!flush(c->ufd, &c->up, &moved))
			return false;
		if (c->client_eof && c->up.len == 0 && c->in.len == 0) {
			if (c->st == ST_TUNNEL)
				shutdown(c->ufd, SHUT_WR);
			else if (!c->resp_head_done)
				return false;
		}
		/* computer -> client */
		if (!c->up_eof && (ure & (POLLIN | POLLHUP | POLLERR))) {
			struct buf *into = c->resp_head_done ? &c->down :
			    &c->uin;

			n = fill(c->ufd, into, !c->resp_head_done ?
			    HEAD_MAX - c->uin.len : c->resp_left >= 0 ?
			    (size_t)c->resp_left : BUF_MAX);
			if (n == 0 || n == -2)
				c->up_eof = true;
			if (n > 0) {
				moved = true;
				if (c->resp_head_done && c->resp_left > 0)
					c->resp_left -= n;
			}
		}
		while (!c->resp_head_done && c->st != ST_FLUSH &&
		    (he = head_end(&c->uin)) > 0)
			on_response(c, he);
		if (c->st == ST_FLUSH)
			break;
		if (!c->resp_head_done && (c->up_eof ||
		    c->uin.len >= HEAD_MAX)) {
			answer(c, 502, "Bad Gateway", "The computer's server "
			    "closed the connection without an answer.\n");
			break;
		}
		if (c->resp_head_done && (c->up_eof || (c->st == ST_EXCHANGE &&
		    c->resp_left == 0))) {
			/* The answer's end, or the computer's: an answer cut
			 * short ends the client's connection too. */
			if (c->resp_left != 0)
				c->keep = false;
			close(c->ufd);
			c->ufd = -1;
			c->st = ST_FLUSH;
		}
		if (c->st == ST_TUNNEL && c->client_eof && c->up_eof)
			c->st = ST_FLUSH;
		break;
	}
	case ST_RESOLVE:        /* the resolver's answer moves it */
	case ST_FLUSH:
		break;
	}
	if (c->st == ST_FLUSH && c->down.len == 0) {
		/* Not kept when the request's body was not all passed on: its
		 * rest is no next request (request smuggling). */
		if (!c->keep || c->client_eof || c->body_left != 0 ||
		    c->up.len != 0)
			return false;
		/* The answer is out: the next request, on its own Host. */
		c->st = ST_HEAD;
		c->since = msc_now_ms();
		moved = false;
		if (head_end(&c->in) > 0)
			return step(l, c, 0, 0);
	}
	if (moved)
		c->since = msc_now_ms();
	return true;
}

static bool
expired(const struct conn *c, uint64_t now)
{
	uint64_t limit = c->st == ST_HEAD ? (c->in.len > 0 ? HEAD_MS :
	    KEEP_MS) : c->st == ST_CONNECT ? CONNECT_MS : c->st == ST_RESOLVE ?
	    RESOLVE_MS : IDLE_MS;

	return now > c->since && now - c->since > limit;
}

static void
accept_one(struct dock_proxy_loop *l)
{
	int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct conn *c;

	if (fd < 0) {
		/* Out of descriptors or memory: the pending connection stays
		 * queued and the listener readable; not polled for a while
		 * (else the loop spins). */
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			l->accept_after = msc_now_ms() + ACCEPT_PAUSE_MS;
			msc_log_warn("preview listener: accept: %s",
			    strerror(errno));
		}
		return;
	}
	if (l->n >= CONNS_MAX || (c = calloc(1, sizeof(*c))) == NULL) {
		static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
		    "Content-Length: 0\r\nConnection: close\r\n\r\n";

		(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL);
		close(fd);
		return;
	}
	c->cfd = fd;
	c->ufd = -1;
	c->st = ST_HEAD;
	c->since = msc_now_ms();
	LIST_INSERT_HEAD(&l->conns, c, link);
	l->n++;
}

static void *
loop_main(void *arg)
{
	struct dock_proxy_loop *l = arg;
	struct pollfd *fds = calloc(3 + 2 * CONNS_MAX, sizeof(*fds));
	struct conn **who = calloc(CONNS_MAX, sizeof(*who));
	uint64_t last_sweep = msc_now_ms();

	if (fds == NULL || who == NULL) {
		msc_log_err("preview listener: out of memory");
		free(fds);
		free(who);
		return NULL;
	}
	for (;;) {
		struct conn *c;
		size_t k = 0, nf = 3;
		uint64_t now;
		bool sweep, paused;

		fds[0] = (struct pollfd){ l->wake[0], POLLIN, 0 };
		paused = msc_now_ms() < l->accept_after;
		fds[1] = (struct pollfd){ paused ? -1 : l->lfd, POLLIN, 0 };
		fds[2] = (struct pollfd){ dock_resolver_fd(l->res), POLLIN, 0 };
		LIST_FOREACH(c, &l->conns, link) {
			short ce = 0, ue = 0;

			if (c->down.len > 0)
				ce |= POLLOUT;
			if (c->st == ST_HEAD && c->down.len == 0 &&
			    c->in.len < HEAD_MAX)
				ce |= POLLIN;
			if ((c->st == ST_EXCHANGE || c->st == ST_TUNNEL) &&
			    c->body_left != 0 && !c->client_eof &&
			    c->in.len < BUF_MAX && c->up.len < BUF_MAX)
				ce |= POLLIN;
			if (c->st == ST_CONNECT)
				ue |= POLLOUT;
			if ((c->st == ST_EXCHANGE || c->st == ST_TUNNEL) &&
			    !c->up_eof && c->down.len < BUF_MAX)
				ue |= POLLIN;
			if ((c->st == ST_EXCHANGE || c->st == ST_TUNNEL) &&
			    c->up.len > 0)
				ue |= POLLOUT;
			/* Waiting for the resolver: not polled (a hung-up
			 * client would wake the loop until the answer). */
			fds[nf++] = (struct pollfd){ c->st == ST_RESOLVE ? -1 :
			    c->cfd, ce, 0 };
			fds[nf++] = (struct pollfd){ c->ufd, ue, 0 };
			who[k++] = c;
		}
		if (poll(fds, nf, paused ? ACCEPT_PAUSE_MS : 1000) < 0 &&
		    errno != EINTR)
			break;
		if (fds[0].revents & POLLIN)
			break;
		now = msc_now_ms();
		/* Once a second, busy or not: a revoked URL, or its computer
		 * deleted, ends its exchanges and tunnels (not an answer
		 * being written: a 404 for an unknown one among them). */
		sweep = now - last_sweep >= SWEEP_MS;
		if (sweep)
			last_sweep = now;
		for (size_t i = 0; i < k; i++) {
			c = who[i];
			if (!step(l, c, fds[3 + 2 * i].revents,
			    c->ufd >= 0 ? fds[4 + 2 * i].revents : 0) ||
			    expired(c, now) || (sweep && c->st != ST_HEAD &&
				c->st != ST_FLUSH && c->cap[0] != '\0' &&
				!dock_preview_known(l->p, c->cap)))
				conn_close(l, c);
		}
		if (fds[1].revents & POLLIN)
			accept_one(l);
		if (fds[2].revents & POLLIN) {
			struct dock_resolved a;

			while (dock_resolver_answer(l->res, &a))
				resolved(l, &a);
		}
	}
	while (!LIST_EMPTY(&l->conns))
		conn_close(l, LIST_FIRST(&l->conns));
	free(fds);
	free(who);
	return NULL;
}

static int
dock_preview_listen(struct dock_preview *p, const char *where,
    const char *domain, struct dock_proxy_loop **lp, uint16_t *portp,
    char *err, size_t errlen)
{
	struct dock_proxy_loop *l;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai = NULL;
	char host[256], *colon;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int one = 1, rv;

	snprintf(host, sizeof(host), "%s", where);
	if ((colon = strrchr(host, ':')) == NULL || strlen(domain) >= 200) {
		snprintf(err, errlen, "--preview-listen wants HOST:PORT");
		return -EINVAL;
	}
	*colon = '\0';
	if (host[0] == '[' && colon > host + 1 && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	if ((rv = getaddrinfo(host, colon + 1, &hints, &ai)) != 0) {
		snprintf(err, errlen, "--preview-listen %s: %s", where,
		    gai_strerror(rv));
		return -EINVAL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		freeaddrinfo(ai);
		return -ENOMEM;
	}
	l->p = p;
	snprintf(l->domain, sizeof(l->domain), "%s", domain);
	LIST_INIT(&l->conns);
	l->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (l->lfd < 0 || setsockopt(l->lfd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) != 0 || bind(l->lfd, ai->ai_addr, ai->ai_addrlen) !=
	    0 || listen(l->lfd, 128) != 0 || getsockname(l->lfd,
	    (struct sockaddr *)&ss, &sl) != 0 || pipe2(l->wake, O_CLOEXEC) !=
	    0) {
		snprintf(err, errlen, "the preview listener cannot listen on "
		    "%s: %s", where, strerror(errno));
		if (l->lfd >= 0)
			close(l->lfd);
		freeaddrinfo(ai);
		free(l);
		return -EADDRNOTAVAIL;
	}
	freeaddrinfo(ai);
	*portp = ntohs(ss.ss_family == AF_INET ?
	    ((struct sockaddr_in *)&ss)->sin_port :
	    ((struct sockaddr_in6 *)&ss)->sin6_port);
	if ((rv = dock_resolver_start(p, &l->res)) != 0 ||
	    (rv = -pthread_create(&l->thread, NULL, loop_main, l)) != 0) {
		dock_resolver_stop(l->res);
		close(l->lfd);
		close(l->wake[0]);
		close(l->wake[1]);
		free(l);
		snprintf(err, errlen, "no thread for the preview listener");
		return rv;
	}
	msc_log_info("preview listener on %s (port %u), URLs "
	    "http://CAPABILITY.%s:%u/", where, *portp, domain, *portp);
	*lp = l;
	return 0;
}

static void
dock_preview_listen_stop(struct dock_proxy_loop *l)
{
	(void)!write(l->wake[1], "x", 1);
	pthread_join(l->thread, NULL);
	dock_resolver_stop(l->res);     /* after an engine call at most */
	close(l->lfd);
	close(l->wake[0]);
	close(l->wake[1]);
	free(l);
}

const struct dock_preview_listener dock_preview_proxy = {
	dock_preview_listen, dock_preview_listen_stop
};
