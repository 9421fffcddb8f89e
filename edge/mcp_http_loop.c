/*
 * mcp_http_loop.c - MHD's event loop, on a thread of the edge's own.
 *
 * MHD's internal thread (MHD_USE_INTERNAL_POLLING_THREAD with epoll,
 * libmicrohttpd 0.9.75 and its later releases alike) takes at most 128
 * events from one epoll_wait, and when it gets exactly 128 it waits
 * again, with the timeout it computed before the first wait, before it
 * handles any of them. When nothing else happens (a client whose every
 * connection to the edge has sent its request and waits for the answer),
 * those requests sit unread until the nearest connection's inactivity
 * timeout (IDLE_TIMEOUT_S, 30 s); that timeout's pass, which comes before
 * the ready connections are handled, then closes the oldest of them under
 * their requests, and the client sees "socket hang up" (a load client with
 * exactly 128 connections to an edge: bench/RESULTS.md, 2026-12-07).
 *
 * Here the waiting is ours: this thread polls MHD's epoll descriptor for
 * as long as MHD_get_timeout allows, and MHD_run never waits (its
 * epoll_wait has a timeout of 0, so a full batch is followed by an empty
 * one at once and every ready connection is handled in the same run).
 *
 * A connection resumed from another thread wakes this one
 * (http_resume_locked): MHD's own wake-up for a resume can be consumed by
 * a run that had already passed its resume step, and the resumed
 * connection would then wait for the next network event
 * (MHD_resume_connection in microhttpd.h).
 */
#include "mcp_http_int.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "msc_log.h"

/*
 * The longest wait between two runs. MHD puts its listening socket back
 * into its epoll set only at the start of a run, so after a run that
 * closed connections at its connection limit, new connections wait for
 * the next run; this bounds that wait.
 */
#define LOOP_MAX_WAIT_MS 1000

struct http_loop {
	struct MHD_Daemon *d;         /* borrowed */
	int epfd;                     /* MHD's, borrowed */
	int wake;                     /* eventfd: a resume, or the stop */
	atomic_bool stop;
	pthread_t thr;
};

/* How long this thread may wait before MHD must run again. */
static int
wait_ms(struct MHD_Daemon *d)
{
	MHD_UNSIGNED_LONG_LONG to;

	if (MHD_get_timeout(d, &to) != MHD_YES || to > LOOP_MAX_WAIT_MS)
		return LOOP_MAX_WAIT_MS;
	return (int)to;
}

static void *
loop_run(void *arg)
{
	struct http_loop *l = arg;
	struct pollfd p[2] = {
		{ .fd = l->epfd, .events = POLLIN },
		{ .fd = l->wake, .events = POLLIN },
	};
	uint64_t n;

	while (!atomic_load(&l->stop)) {
		if (poll(p, 2, wait_ms(l->d)) < 0 && errno != EINTR) {
			msc_log_err("http: poll: %s", strerror(errno));
			usleep(10000);  /* not a busy loop, whatever it is */
		}
		/* Read before the run: a wake after this one runs again. */
		if ((p[1].revents & POLLIN) != 0 &&
		    read(l->wake, &n, sizeof(n)) < 0 && errno != EAGAIN)
			msc_log_debug("http: wake: %s", strerror(errno));
		if (atomic_load(&l->stop))
			break;
		if (MHD_run(l->d) != MHD_YES)
			msc_log_debug("http: a run of the server failed");
	}
	return NULL;
}

int
http_loop_start(struct edge_http *h)
{
	const union MHD_DaemonInfo *di =
	    MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD);
	struct http_loop *l;
	int rv;

	if (di == NULL)
		return -EINVAL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -ENOMEM;
	l->d = h->d;
	l->epfd = di->epoll_fd;
	atomic_init(&l->stop, false);
	if ((l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		rv = -errno;
		free(l);
		return rv;
	}
	if ((rv = pthread_create(&l->thr, NULL, loop_run, l)) != 0) {
		close(l->wake);
		free(l);
		return -rv;
	}
	(void)pthread_setname_np(l->thr, "http-loop");
	pthread_mutex_lock(&h->mu);
	h->loop = l;
	pthread_mutex_unlock(&h->mu);
	return 0;
}

/* Wakes the loop for one more run. */
static void
loop_wake(struct http_loop *l)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is full, so a wake is pending anyway. */
	if (write(l->wake, &one, sizeof(one)) < 0 && errno != EAGAIN)
		msc_log_warn("http: cannot wake the server's loop: %s",
		    strerror(errno));
}

void
http_resume_locked(struct http_call *c)
{
	MHD_resume_connection(c->conn);
	/* None once stopped: MHD_stop_daemon resumes what is left. */
	if (c->h->loop != NULL)
		loop_wake(c->h->loop);
}

void
http_loop_stop(struct edge_http *h)
{
	struct http_loop *l;

	pthread_mutex_lock(&h->mu);     /* no resume wakes it after this */
	l = h->loop;
	h->loop = NULL;
	pthread_mutex_unlock(&h->mu);
	if (l == NULL)
		return;
	atomic_store(&l->stop, true);
	loop_wake(l);
	pthread_join(l->thr, NULL);
	close(l->wake);
	free(l);
}
