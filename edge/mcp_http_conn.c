/*
 * mcp_http_conn.c - what MHD does not do for slow and abandoned clients:
 * an absolute deadline for a request's headers (MHD's own timeout only
 * counts inactivity, so a byte every few seconds would hold a connection
 * for ever), the same for a whole body, and the close of an idle
 * keep-alive connection. One thread checks the deadlines a few times a
 * second and shuts an overdue socket down; MHD then sees the end of the
 * stream and closes the connection itself.
 *
 * The same thread drains: an answer sent before the request's body was
 * read makes MHD close the connection, and closing a socket with unread
 * data sends a reset that can destroy the answer on its way. So the
 * socket is duplicated first and the rest of the body is read and
 * dropped here until the client closes, for a bounded time and size.
 *
 * And it watches: a 2026-07-28 tools/call whose client closes the
 * connection before the reply is cancelled (http_conns_watch).
 */
#include "mcp_http_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_time.h"

#define TICK_MS 200
#define DRAIN_MAX_FDS 128
#define DRAIN_BYTES (64u * 1024 * 1024)
#define DRAIN_IDLE_MS 1000
#define DRAIN_TOTAL_MS 10000

struct http_conn {
	int fd;                       /* MHD's; valid while listed */
	int64_t deadline;             /* 0: none */
	struct http_conn *prev, *next;
};

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
	pthread_mutex_t mu;           /* guards conns, drains, stop */
	struct http_conn *conns;
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

static void
tick(struct http_conns *cs)
{
	int64_t now = (int64_t)msc_now_ms();

	for (struct http_conn *k = cs->conns; k != NULL; k = k->next) {
		if (k->deadline == 0 || now < k->deadline)
			continue;
		k->deadline = 0;
		/* MHD reads the end of the stream and closes. */
		if (shutdown(k->fd, SHUT_RDWR) != 0 && errno != ENOTCONN)
			msc_log_debug("http: shutdown of an overdue connection: "
			    "%s", strerror(errno));
	}
	for (struct drain *d = cs->drains, *nx; d != NULL; d = nx) {
		nx = d->next;
		if (now >= d->until || now >= d->idle_until)
			drain_end(cs, d);
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
http_conns_start(struct http_conns **connsp)
{
	struct http_conns *cs = calloc(1, sizeof(*cs));
	int rv;

	if (cs == NULL)
		return -ENOMEM;
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
	while (cs->conns != NULL) {     /* none once MHD has stopped */
		struct http_conn *k = cs->conns;

		cs->conns = k->next;
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
	struct http_conns *cs = cls;
	struct http_conn *k = *socket_context;
	const union MHD_ConnectionInfo *ci;

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
		k->deadline = (int64_t)msc_now_ms() + HTTP_HEADER_MS;
		pthread_mutex_lock(&cs->mu);
		k->next = cs->conns;
		if (cs->conns != NULL)
			cs->conns->prev = k;
		cs->conns = k;
		pthread_mutex_unlock(&cs->mu);
		*socket_context = k;
		return;
	}
	if (k == NULL)
		return;
	/* Closed: MHD closes the socket after this returns. */
	pthread_mutex_lock(&cs->mu);
	if (k->prev != NULL)
		k->prev->next = k->next;
	else
		cs->conns = k->next;
	if (k->next != NULL)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&cs->mu);
	*socket_context = NULL;
	free(k);
}

void
http_conns_deadline(struct http_conns *cs, struct MHD_Connection *conn,
    int ms)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct http_conn *k = ci != NULL ? ci->socket_context : NULL;

	if (k == NULL)
		return;
	pthread_mutex_lock(&cs->mu);
	k->deadline = ms > 0 ? (int64_t)msc_now_ms() + ms : 0;
	pthread_mutex_unlock(&cs->mu);
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
