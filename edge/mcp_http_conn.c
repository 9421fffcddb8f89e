/*
 * mcp_http_conn.c - what MHD does not do for slow and abandoned clients:
 * an absolute deadline for a request's headers (MHD's own timeout only
 * counts inactivity, so a byte every few seconds would hold a connection
 * for ever), the same for a whole body, and the close of an idle
 * keep-alive connection. One thread checks the deadlines a few times a
 * second and shuts an overdue socket down; MHD then sees the end of the
 * stream and closes the connection itself.
 *
 * It also shares the connections out. Each counts in its client's share
 * (mcp_http_client.c says whose); past the share, or past the limit on
 * all of them, a new connection makes room: the oldest connection of that
 * client (or of anyone) that is waiting for a request's headers (new, or
 * idle between requests) is shut down, else the oldest whose body is
 * still arriving; only when every one has a request in flight is the new
 * one refused. A request in flight (a command running, a stream) is never
 * closed to make room. So a flood of half-open or idle connections, from
 * one address or many, cannot keep a new client out: it pushes out its
 * own oldest.
 *
 * The same thread drains: an answer sent before the request's body was
 * read makes MHD close the connection, and closing a socket with unread
 * data sends a reset that can destroy the answer on its way. So the
 * socket is duplicated first and the rest of the body is read and
 * dropped here until the client closes, for a bounded time and size.
 *
 * And it watches: a 2026-07-28 tools/call whose client closes the
 * connection before the reply is cancelled (http_conns_watch).
 *
 * A deadline is the client's, never the server's: a connection whose
 * whole request waits in the socket unread when its header deadline
 * comes (the machine too loaded for the http-loop thread to read it) is not
 * closed under it, new or kept alive; it waits for MHD, up to
 * HEADER_WAIT_MAX_MS in all. Only bytes MHD has not read count, and
 * only a whole header block: a slow sender, whose bytes MHD reads as
 * they come and whose headers never end, gains nothing.
 */
#include "mcp_http_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/tcp.h>          /* tcp_info's tcpi_bytes_received */
#include <netinet/in.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_time.h"

#define TICK_MS 200
#define DRAIN_MAX_FDS 128
#define DRAIN_BYTES (64u * 1024 * 1024)
#define DRAIN_IDLE_MS 1000
#define DRAIN_TOTAL_MS 10000
#define REPORT_MS 10000         /* closes to make room: one log line */
/* A whole request unread: its connection waits this long at most. */
#define HEADER_WAIT_MAX_MS HTTP_BODY_MS
#define PEEK_BYTES (32u * 1024)  /* MHD's memory per connection: headers fit */

enum conn_state {
	CONN_WAITING,           /* for a request's headers: new, or idle */
	CONN_RECEIVING,         /* a request's body is arriving */
	CONN_SERVING,           /* a request in flight: never made room of */
};

struct http_conn {
	int fd;                       /* MHD's; valid while listed */
	int64_t deadline;             /* 0: none */
	int64_t waiting_since;        /* CONN_WAITING: since when */
	enum conn_state state;
	bool closing;                 /* shut down here; MHD closes it */
	bool kept_alive;              /* a request was served on it */
	bool extended;                /* its header deadline moved once */
	bool rx_known;                /* rx_at_wait could be read */
	uint64_t rx_at_wait;          /* bytes received when it began waiting */
	char owner[HTTP_OWNER_MAX];   /* its share; "": a proxy's, none */
	TAILQ_ENTRY(http_conn) link;
};

TAILQ_HEAD(conn_list, http_conn);

enum { EV_DRAIN, EV_WATCH };

struct drain {
	int kind;                     /* EV_DRAIN: first, as in http_watch */
	int fd;                       /* ours (a dup) */
	uint64_t left;
	int64_t idle_until, until;
	struct drain *prev, *next;
};

/*
 * A watch is freed by the loop only: an event epoll_wait returned before
 * http_conns_unwatch may still name it, so unwatch marks it dead and the
 * loop frees it after the batch it was in (under mu).
 */
struct http_watch {
	int kind;                     /* EV_WATCH */
	int fd;                       /* ours (a dup) */
	void (*gone)(void *arg);
	void *arg;
	bool dead;                    /* under mu: unwatched, gone() not run */
	struct http_watch *next_dead;
};

struct http_conns {
	pthread_mutex_t mu;           /* guards all below */
	struct edge_http *h;
	/* Ordered by when each began to wait: the oldest first. */
	struct conn_list conns;
	unsigned nopen;               /* listed and not closing */
	unsigned limit;               /* open connections, all together */
	unsigned per_owner;           /* open connections in one share */
	unsigned evicted, refused;    /* since the last report */
	unsigned cut;                 /* new, closed at the header deadline */
	unsigned waited;              /* a whole request unread: waited */
	unsigned mid_read;            /* kept alive, MHD reading: waited */
	int64_t reported;
	int64_t reported_deadlines;   /* cut and waited */
	struct drain *drains;
	int ndrains;
	struct http_watch *dead;      /* unwatched, freed by the loop */
	int ep;
	bool stop;
	pthread_t thr;
};


static void
drain_end(struct http_conns *cs, struct drain *d)
{
	if (d->prev != NULL)
		d->prev->next = d->next;
	else
		cs->drains = d->next;
	if (d->next != NULL)
		d->next->prev = d->prev;
	cs->ndrains--;
	/* MHD's descriptor may still hold the socket: leave epoll first. */
	(void)epoll_ctl(cs->ep, EPOLL_CTL_DEL, d->fd, NULL);
	close(d->fd);
	free(d);
}

/* Reads and drops what is there; false when the drain is over. */
static bool
drain_read(struct drain *d)
{
	static char buf[65536];         /* only this thread reads into it */

	for (;;) {
		ssize_t n = read(d->fd, buf, sizeof(buf));

		if (n > 0) {
			if ((uint64_t)n >= d->left)
				return false;
			d->left -= (uint64_t)n;
			d->idle_until = (int64_t)msc_now_ms() + DRAIN_IDLE_MS;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
	}
}

/* Shuts k's socket down (lock held): MHD reads the end and closes it. */
static void
conn_close(struct http_conns *cs, struct http_conn *k)
{
	if (!k->closing) {
		k->closing = true;
		cs->nopen--;
	}
	if (shutdown(k->fd, SHUT_RDWR) != 0 && errno != ENOTCONN)
		msc_log_debug("http: shutdown of a connection: %s",
		    strerror(errno));
}

/*
 * Whether a request's bytes wait on fd that MHD has not read yet: the
 * client did its part, and MHD is behind (a loaded machine). Such a
 * connection is neither idle nor slow.
 */
static bool
unread_bytes(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* Bytes received on fd since it was opened; false when not known. */
static bool
received_bytes(int fd, uint64_t *n)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_bytes_received) +
	    sizeof(ti.tcpi_bytes_received))
		return false;
	*n = ti.tcpi_bytes_received;
	return true;
}

/*
 * Whether a whole header block waits on fd unread: the client has sent
 * its request, and MHD, not the client, is behind. The blank line that
 * ends a header block ("\n\r\n", or "\n\n", which MHD also takes) is
 * looked for in the bytes MHD has not read; the edge serves plain HTTP,
 * so they are the client's own.
 */
static bool
unread_request(int fd)
{
	static char buf[PEEK_BYTES];    /* only this thread peeks into it */
	ssize_t n;

	do
		n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n > 0 && (memmem(buf, (size_t)n, "\n\r\n", 3) != NULL ||
	    memmem(buf, (size_t)n, "\n\n", 2) != NULL);
}

/* Open connections in `owner`'s share (lock held; a scan of 4096 at most). */
static unsigned
owner_count(const struct http_conns *cs, const char *owner)
{
	const struct http_conn *k;
	unsigned n = 0;

	TAILQ_FOREACH(k, &cs->conns, link)
		if (!k->closing && strcmp(k->owner, owner) == 0)
			n++;
	return n;
}

/*
 * Makes room (lock held): closes the oldest open connection of `owner`
 * (NULL: of anyone) other than `keep` that waits for a request's
 * headers, else the oldest whose body is still arriving. False when
 * every one has a request in flight.
 */
static bool
evict_oldest(struct http_conns *cs, const char *owner,
    const struct http_conn *keep)
{
	struct http_conn *k, *victim = NULL;

	TAILQ_FOREACH(k, &cs->conns, link) {
		if (k == keep || k->closing || k->state == CONN_SERVING ||
		    (owner != NULL && strcmp(k->owner, owner) != 0))
			continue;
		if (k->state == CONN_WAITING && !unread_bytes(k->fd)) {
			victim = k;
			break;
		}
		if (victim == NULL)
			victim = k;
	}
	if (victim == NULL)
		return false;
	conn_close(cs, victim);
	cs->evicted++;
	return true;
}

/*
 * Whether k (just counted) fits: within its owner's share and the limit
 * on all, after making room if needed (lock held).
 */
static bool
fits(struct http_conns *cs, struct http_conn *k)
{
	if (k->owner[0] != '\0' && owner_count(cs, k->owner) > cs->per_owner &&
	    !evict_oldest(cs, k->owner, k))
		return false;
	return cs->nopen <= cs->limit || evict_oldest(cs, NULL, k);
}

static void
tick(struct http_conns *cs)
{
	int64_t now = (int64_t)msc_now_ms();
	struct http_conn *k;

	TAILQ_FOREACH(k, &cs->conns, link) {
		if (k->deadline == 0 || now < k->deadline)
			continue;
		/*
		 * The client's whole request waits unread: MHD is behind (a
		 * loaded machine), not the client. It waits for MHD, new or
		 * kept alive, instead of a close under it ("socket hang up"
		 * at the client), up to HEADER_WAIT_MAX_MS in all.
		 */
		if (k->state == CONN_WAITING && !k->closing &&
		    now - k->waiting_since < HEADER_WAIT_MAX_MS &&
		    unread_request(k->fd)) {
			k->deadline = now + HTTP_HEADER_MS;
			if (k->deadline > k->waiting_since + HEADER_WAIT_MAX_MS)
				k->deadline = k->waiting_since +
				    HEADER_WAIT_MAX_MS;
			cs->waited++;
			continue;
		}
		/*
		 * A keep-alive client sent its next request as the server's
		 * idle deadline came: part of it is still on its way, or MHD
		 * has just read it and not yet called us (its thread
		 * preempted between the two on a loaded machine). One more
		 * header deadline, not a close under it. A new connection
		 * gets no more time for a part, so a slow sender gains
		 * nothing.
		 */
		if (k->state == CONN_WAITING && k->kept_alive && !k->extended &&
		    !k->closing && now - k->waiting_since < HEADER_WAIT_MAX_MS) {
			uint64_t rx;
			bool unread = unread_bytes(k->fd);

			if (unread || (k->rx_known &&
			    received_bytes(k->fd, &rx) && rx > k->rx_at_wait)) {
				k->extended = true;
				k->deadline = now + HTTP_HEADER_MS;
				if (!unread)
					cs->mid_read++;
				continue;
			}
		}
		if (k->state == CONN_WAITING && !k->kept_alive && !k->closing)
			cs->cut++;
		k->deadline = 0;
		conn_close(cs, k);
	}
	for (struct drain *d = cs->drains, *nx; d != NULL; d = nx) {
		nx = d->next;
		if (now >= d->until || now >= d->idle_until)
			drain_end(cs, d);
	}
	if ((cs->evicted > 0 || cs->refused > 0) &&
	    now - cs->reported >= REPORT_MS) {
		msc_log_warn("http: connections full (%u in all, %u per "
		    "client): %u without a request in flight closed to make "
		    "room, %u refused, in the last %d s", cs->limit,
		    cs->per_owner, cs->evicted, cs->refused, REPORT_MS / 1000);
		cs->evicted = cs->refused = 0;
		cs->reported = now;
	}
	if ((cs->cut > 0 || cs->waited > 0 || cs->mid_read > 0) &&
	    now - cs->reported_deadlines >= REPORT_MS) {
		msc_log_info("http: in the last %d s, %u new connections "
		    "closed at the header deadline (%d s) without a whole "
		    "request; %u given more time, their whole request "
		    "waiting unread, and %u kept alive whose request the "
		    "server was reading (the server behind)",
		    REPORT_MS / 1000, cs->cut, HTTP_HEADER_MS / 1000,
		    cs->waited, cs->mid_read);
		cs->cut = cs->waited = cs->mid_read = 0;
		cs->reported_deadlines = now;
	}
}

/* Frees the watches unwatched since the last batch. Lock held. */
static void
free_dead_watches(struct http_conns *cs)
{
	while (cs->dead != NULL) {
		struct http_watch *w = cs->dead;

		cs->dead = w->next_dead;
		close(w->fd);
		free(w);
	}
}

static void *
conns_loop(void *arg)
{
	struct http_conns *cs = arg;
	struct epoll_event ev[64];

	for (;;) {
		int n = epoll_wait(cs->ep, ev, 64, TICK_MS);

		pthread_mutex_lock(&cs->mu);
		if (cs->stop) {
			pthread_mutex_unlock(&cs->mu);
			return NULL;
		}
		for (int i = 0; i < n; i++) {
			struct drain *d = ev[i].data.ptr;

			if (d->kind == EV_WATCH) {
				struct http_watch *w = ev[i].data.ptr;

				if (w->dead)    /* unwatched after the wait */
					continue;
				/* One shot: the client went away. */
				(void)epoll_ctl(cs->ep, EPOLL_CTL_DEL, w->fd,
				    NULL);
				w->gone(w->arg);
				continue;
			}
			if (!drain_read(d) || (ev[i].events & (EPOLLHUP |
			    EPOLLERR | EPOLLRDHUP)) != 0)
				drain_end(cs, d);
		}
		tick(cs);
		free_dead_watches(cs);
		pthread_mutex_unlock(&cs->mu);
	}
}

int
http_conns_start(struct edge_http *h, unsigned limit, unsigned per_owner,
    struct http_conns **connsp)
{
	struct http_conns *cs = calloc(1, sizeof(*cs));
	int rv;

	if (cs == NULL)
		return -ENOMEM;
	cs->h = h;
	cs->limit = limit;
	cs->per_owner = per_owner;
	TAILQ_INIT(&cs->conns);
	if ((cs->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		rv = -errno;
		free(cs);
		return rv;
	}
	pthread_mutex_init(&cs->mu, NULL);
	if ((rv = pthread_create(&cs->thr, NULL, conns_loop, cs)) != 0) {
		pthread_mutex_destroy(&cs->mu);
		close(cs->ep);
		free(cs);
		return -rv;
	}
	*connsp = cs;
	return 0;
}

void
http_conns_stop(struct http_conns *cs)
{
	if (cs == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	cs->stop = true;
	pthread_mutex_unlock(&cs->mu);
	pthread_join(cs->thr, NULL);
	free_dead_watches(cs);
	while (cs->drains != NULL)
		drain_end(cs, cs->drains);
	while (!TAILQ_EMPTY(&cs->conns)) {  /* none once MHD has stopped */
		struct http_conn *k = TAILQ_FIRST(&cs->conns);

		TAILQ_REMOVE(&cs->conns, k, link);
		free(k);
	}
	close(cs->ep);
	pthread_mutex_destroy(&cs->mu);
	free(cs);
}

void
http_conns_notify(void *cls, struct MHD_Connection *conn,
    void **socket_context, enum MHD_ConnectionNotificationCode toe)
{
	struct edge_http *h = cls;
	struct http_conns *cs = h->conns;
	struct http_conn *k = *socket_context;
	const union MHD_ConnectionInfo *ci, *ca;
	struct http_addr a;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(conn,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		if (ci == NULL || (k = calloc(1, sizeof(*k))) == NULL) {
			msc_log_warn("http: cannot track a connection; "
			    "closing it");
			if (ci != NULL)
				(void)shutdown(ci->connect_fd, SHUT_RDWR);
			return;
		}
		k->fd = ci->connect_fd;
		k->waiting_since = (int64_t)msc_now_ms();
		k->deadline = k->waiting_since + HTTP_HEADER_MS;
		k->state = CONN_WAITING;
		/* A trusted proxy's counts per request, in its client's. */
		ca = MHD_get_connection_info(conn,
		    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ca != NULL && http_addr_from_sockaddr(ca->client_addr, &a) &&
		    !http_proxy_trusted(h, &a))
			http_addr_owner(&a, k->owner, sizeof(k->owner));
		pthread_mutex_lock(&cs->mu);
		TAILQ_INSERT_TAIL(&cs->conns, k, link);
		cs->nopen++;
		if (!fits(cs, k)) {
			conn_close(cs, k);
			cs->refused++;
		}
		pthread_mutex_unlock(&cs->mu);
		*socket_context = k;
		return;
	}
	if (k == NULL)
		return;
	/* Closed: MHD closes the socket after this returns. */
	pthread_mutex_lock(&cs->mu);
	TAILQ_REMOVE(&cs->conns, k, link);
	if (!k->closing)
		cs->nopen--;
	pthread_mutex_unlock(&cs->mu);
	*socket_context = NULL;
	free(k);
}

/* conn's record, or NULL (not tracked). */
static struct http_conn *
conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

void
http_conns_request(struct http_conns *cs, struct MHD_Connection *conn,
    bool body)
{
	struct http_conn *k = conn_of(conn);

	if (k == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	k->state = body ? CONN_RECEIVING : CONN_SERVING;
	k->deadline = body ? (int64_t)msc_now_ms() + HTTP_BODY_MS : 0;
	k->extended = false;
	pthread_mutex_unlock(&cs->mu);
}

void
http_conns_serving(struct http_conns *cs, struct MHD_Connection *conn)
{
	struct http_conn *k = conn_of(conn);

	if (k == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	k->state = CONN_SERVING;
	k->deadline = 0;
	pthread_mutex_unlock(&cs->mu);
}

void
http_conns_idle(struct http_conns *cs, struct MHD_Connection *conn)
{
	struct http_conn *k = conn_of(conn);
	uint64_t rx = 0;
	bool rx_known;

	if (k == NULL)
		return;
	/* What it received so far is the requests served on it. */
	rx_known = received_bytes(k->fd, &rx);
	pthread_mutex_lock(&cs->mu);
	k->state = CONN_WAITING;
	k->rx_known = rx_known;
	k->rx_at_wait = rx;
	k->waiting_since = (int64_t)msc_now_ms();
	k->deadline = k->waiting_since + HTTP_HEADER_MS;
	k->kept_alive = true;
	TAILQ_REMOVE(&cs->conns, k, link);      /* the newest to wait */
	TAILQ_INSERT_TAIL(&cs->conns, k, link);
	pthread_mutex_unlock(&cs->mu);
}

int
http_conns_charge(struct http_conns *cs, struct MHD_Connection *conn,
    const char *owner)
{
	struct http_conn *k = conn_of(conn);
	int rv = 0;

	if (k == NULL)
		return 0;
	pthread_mutex_lock(&cs->mu);
	if (strcmp(k->owner, owner) != 0) {
		snprintf(k->owner, sizeof(k->owner), "%s", owner);
		if (!k->closing && owner_count(cs, owner) > cs->per_owner &&
		    !evict_oldest(cs, owner, k)) {
			cs->refused++;
			rv = -EBUSY;
		}
	}
	pthread_mutex_unlock(&cs->mu);
	return rv;
}

void
http_conns_drain(struct http_conns *cs, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct drain *d;
	int64_t now = (int64_t)msc_now_ms();

	if (ci == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	if (cs->ndrains >= DRAIN_MAX_FDS || (d = calloc(1, sizeof(*d))) ==
	    NULL) {
		pthread_mutex_unlock(&cs->mu);
		return;         /* MHD's close may reset: the client retries */
	}
	if ((d->fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		pthread_mutex_unlock(&cs->mu);
		free(d);
		return;
	}
	d->left = DRAIN_BYTES;
	d->idle_until = now + DRAIN_IDLE_MS;
	d->until = now + DRAIN_TOTAL_MS;
	ev.data.ptr = d;
	if (epoll_ctl(cs->ep, EPOLL_CTL_ADD, d->fd, &ev) != 0) {
		msc_log_debug("http: cannot drain a refused body: %s",
		    strerror(errno));
		pthread_mutex_unlock(&cs->mu);
		close(d->fd);
		free(d);
		return;
	}
	d->next = cs->drains;
	if (cs->drains != NULL)
		cs->drains->prev = d;
	cs->drains = d;
	cs->ndrains++;
	pthread_mutex_unlock(&cs->mu);
}

struct http_watch *
http_conns_watch(struct http_conns *cs, struct MHD_Connection *conn,
    void (*gone)(void *arg), void *arg)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	struct epoll_event ev = { .events = EPOLLRDHUP | EPOLLONESHOT };
	struct http_watch *w;

	if (ci == NULL || (w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->kind = EV_WATCH;
	w->gone = gone;
	w->arg = arg;
	if ((w->fd = fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		free(w);
		return NULL;
	}
	ev.data.ptr = w;
	pthread_mutex_lock(&cs->mu);
	if (epoll_ctl(cs->ep, EPOLL_CTL_ADD, w->fd, &ev) != 0) {
		pthread_mutex_unlock(&cs->mu);
		close(w->fd);
		free(w);
		return NULL;
	}
	pthread_mutex_unlock(&cs->mu);
	return w;
}

void
http_conns_unwatch(struct http_conns *cs, struct http_watch *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&cs->mu);    /* gone() is not running after this */
	(void)epoll_ctl(cs->ep, EPOLL_CTL_DEL, w->fd, NULL);
	w->dead = true;
	w->next_dead = cs->dead;
	cs->dead = w;
	pthread_mutex_unlock(&cs->mu);
}
