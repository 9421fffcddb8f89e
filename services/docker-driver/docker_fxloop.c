/*
 * docker_fxloop.c - the loop that waits for the helpers' commands and the
 * Engine API execs' streams; see docker_fxloop.h. Commands arrive from worker threads on a pending list
 * (a wake eventfd tells the loop); everything else is the loop thread's
 * alone: the epoll set, the watched list, each command's state.
 */
#include "docker_fxloop.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/queue.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_time.h"

#define FXLOOP_EVENTS 64

struct watch;

/* What an epoll event names: a command's socket or its cancel fd. */
struct tag {
	struct watch *w;
	bool cancel;
};

/* What a watched command is: one sent to a helper, or an Engine API
 * exec's stream; the calls of docker_fastexec.h or docker_api.h. */
struct kind {
	int (*fd)(const void *c);
	short (*events)(void *c);
	int64_t (*deadline)(const void *c);
	int (*budget)(void *c, struct dock_fx_budget *b, char *err,
	    size_t errlen);
	int (*step)(void *c, short revents, struct dock_exec_res *res,
	    char *err, size_t errlen);
	int (*end)(void *c, int rc, struct dock_exec_res *res, char *err,
	    size_t errlen);
};

static int
fx_fd(const void *c)
{
	return dock_fx_fd(c);
}

static short
fx_events(void *c)
{
	return dock_fx_events(c);
}

static int64_t
fx_deadline(const void *c)
{
	return dock_fx_deadline(c);
}

static int
fx_budget(void *c, struct dock_fx_budget *b, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	dock_fx_set_budget(c, b);
	return 0;
}

static int
fx_step(void *c, short revents, struct dock_exec_res *res, char *err,
    size_t errlen)
{
	return dock_fx_step(c, revents, res, err, errlen);
}

static int
fx_end(void *c, int rc, struct dock_exec_res *res, char *err, size_t errlen)
{
	return dock_fx_end(c, rc, res, err, errlen);
}

static const struct kind helper_kind = { fx_fd, fx_events, fx_deadline,
	fx_budget, fx_step, fx_end };

static int
engine_fd(const void *c)
{
	return dock_exec_fd(c);
}

static short
engine_events(void *c)
{
	return dock_exec_events(c);
}

static int64_t
engine_deadline(const void *c)
{
	return dock_exec_deadline(c);
}

static int
engine_budget(void *c, struct dock_fx_budget *b, char *err, size_t errlen)
{
	return dock_exec_set_budget(c, b, err, errlen);
}

static int
engine_step(void *c, short revents, struct dock_exec_res *res, char *err,
    size_t errlen)
{
	return dock_exec_step(c, revents, &res->outcome, err, errlen);
}

/* The stream is closed; the exec's end (blocking) is the callback's. */
static int
engine_end(void *c, int rc, struct dock_exec_res *res, char *err,
    size_t errlen)
{
	(void)errlen;
	dock_exec_stop(c, rc, res->outcome, err);
	return rc < 0 ? rc : 0;
}

static const struct kind engine_kind = { engine_fd, engine_events,
	engine_deadline, engine_budget, engine_step, engine_end };

struct watch {
	const struct kind *k;
	void *c;
	int cancel_fd;
	dock_fxloop_done_fn done;
	void *arg;
	struct dock_exec_res res;
	short events;                   /* asked of its socket now */
	bool in_set;                    /* its socket is in the epoll set */
	bool ended;                     /* freed after this round's events */
	struct tag t_sock, t_cancel;
	TAILQ_ENTRY(watch) link;
};

TAILQ_HEAD(watch_list, watch);

struct dock_fxloop {
	pthread_t thread;
	int ep, wake;
	pthread_mutex_t mu;             /* pending, stop */
	struct watch_list pending;
	bool stop;
	struct watch_list watched;      /* the loop thread's */
	struct watch_list ended;        /* the loop thread's */
	struct dock_fx_budget *budget;  /* NULL: no bound; freed last */
};

/* Ends w: out of the set, killed unless it exited, its callback run. */
static void
watch_end(struct dock_fxloop *l, struct watch *w, int rc, const char *why)
{
	char err[1024];
	int rv;

	snprintf(err, sizeof(err), "%s", why != NULL ? why : "");
	if (w->in_set)
		(void)epoll_ctl(l->ep, EPOLL_CTL_DEL, w->k->fd(w->c), NULL);
	if (w->cancel_fd >= 0)
		(void)epoll_ctl(l->ep, EPOLL_CTL_DEL, w->cancel_fd, NULL);
	rv = w->k->end(w->c, rc, &w->res, err, sizeof(err));
	w->c = NULL;
	TAILQ_REMOVE(&l->watched, w, link);
	w->ended = true;
	TAILQ_INSERT_TAIL(&l->ended, w, link);
	/* The callback may free what cancel_fd belongs to: it is out. */
	w->done(w->arg, rv, &w->res, err);
}

/* Ends w with this outcome (the deadline passed, or cancelled). */
static void
watch_kill(struct dock_fxloop *l, struct watch *w, enum dock_exec_outcome o)
{
	w->res.outcome = o;
	watch_end(l, w, 1, NULL);
}

/* Puts a new command into the set; a failure ends it at once. */
static void
watch_add(struct dock_fxloop *l, struct watch *w)
{
	struct epoll_event ev = { .events = (uint32_t)w->events,
		.data.ptr = &w->t_sock };
	struct epoll_event cev = { .events = EPOLLIN,
		.data.ptr = &w->t_cancel };
	char why[512] = "";
	int rv;

	TAILQ_INSERT_TAIL(&l->watched, w, link);
	if (l->budget != NULL &&
	    (rv = w->k->budget(w->c, l->budget, why, sizeof(why))) != 0) {
		watch_end(l, w, rv, why);
		return;
	}
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, w->k->fd(w->c), &ev) != 0) {
		rv = errno;
		goto fail;
	}
	w->in_set = true;
	if (w->cancel_fd >= 0 &&
	    epoll_ctl(l->ep, EPOLL_CTL_ADD, w->cancel_fd, &cev) != 0) {
		rv = errno;
		w->cancel_fd = -1;      /* not in the set */
		goto fail;
	}
	return;
fail:
	snprintf(why, sizeof(why), "exec: cannot wait for the command: %s",
	    strerror(rv));
	msc_log_warn("%s", why);
	watch_end(l, w, -EIO, why);
}

/* Handles what came on w's socket; ends it when it is over. */
static void
watch_step(struct dock_fxloop *l, struct watch *w, uint32_t revents)
{
	char err[1024] = "";
	int rc = w->k->step(w->c, (short)revents, &w->res, err, sizeof(err));
	short events;

	if (rc != 0) {
		watch_end(l, w, rc, err);
		return;
	}
	events = w->k->events(w->c);
	if (events != w->events) {
		struct epoll_event ev = { .events = (uint32_t)events,
			.data.ptr = &w->t_sock };

		w->events = events;
		(void)epoll_ctl(l->ep, EPOLL_CTL_MOD, w->k->fd(w->c), &ev);
	}
}

/* The ms until the earliest deadline (-1: none), ending those past. */
static int
deadlines(struct dock_fxloop *l)
{
	int64_t now = (int64_t)msc_now_ms(), first = INT64_MAX;
	struct watch *w, *next;

	for (w = TAILQ_FIRST(&l->watched); w != NULL; w = next) {
		int64_t dl = w->k->deadline(w->c);

		next = TAILQ_NEXT(w, link);

		if (dl <= now)
			watch_kill(l, w, DOCK_EXEC_TIMEOUT);
		else if (dl < first)
			first = dl;
	}
	if (first == INT64_MAX)
		return -1;
	return first - now > 60000 ? 60000 : (int)(first - now);
}

static void *
loop_main(void *arg)
{
	struct dock_fxloop *l = arg;
	struct epoll_event evs[FXLOOP_EVENTS];
	struct watch_list fresh;
	struct watch *w;
	bool stop = false;

	while (!stop) {
		int n, timeout;

		TAILQ_INIT(&fresh);
		pthread_mutex_lock(&l->mu);
		TAILQ_CONCAT(&fresh, &l->pending, link);
		stop = l->stop;
		pthread_mutex_unlock(&l->mu);
		while ((w = TAILQ_FIRST(&fresh)) != NULL) {
			TAILQ_REMOVE(&fresh, w, link);
			watch_add(l, w);
		}
		if (stop)
			break;
		timeout = deadlines(l);
		while ((w = TAILQ_FIRST(&l->ended)) != NULL) {
			TAILQ_REMOVE(&l->ended, w, link);
			free(w);
		}
		n = epoll_wait(l->ep, evs, FXLOOP_EVENTS, timeout);
		if (n < 0 && errno != EINTR) {
			msc_log_warn("exec loop: epoll_wait: %s",
			    strerror(errno));
			n = 0;
			usleep(10000);
		}
		for (int i = 0; i < n; i++) {
			struct tag *t = evs[i].data.ptr;

			if (t == NULL) {
				uint64_t v;

				(void)!read(l->wake, &v, sizeof(v));
				continue;
			}
			if (t->w->ended)
				continue;       /* ended by an earlier event */
			if (t->cancel)
				watch_kill(l, t->w, DOCK_EXEC_CANCELLED);
			else
				watch_step(l, t->w, evs[i].events);
		}
	}
	while ((w = TAILQ_FIRST(&l->watched)) != NULL)
		watch_kill(l, w, DOCK_EXEC_CANCELLED);
	while ((w = TAILQ_FIRST(&l->ended)) != NULL) {
		TAILQ_REMOVE(&l->ended, w, link);
		free(w);
	}
	return NULL;
}

int
dock_fxloop_start(uint64_t output_bound, struct dock_fxloop **lp)
{
	struct dock_fxloop *l = calloc(1, sizeof(*l));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	int rv;

	if (l == NULL)
		return -ENOMEM;
	if (output_bound > 0 &&
	    (rv = dock_fx_budget_new(output_bound, &l->budget)) != 0) {
		free(l);
		return rv;
	}
	l->ep = l->wake = -1;
	pthread_mutex_init(&l->mu, NULL);
	TAILQ_INIT(&l->pending);
	TAILQ_INIT(&l->watched);
	TAILQ_INIT(&l->ended);
	if ((l->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    epoll_ctl(l->ep, EPOLL_CTL_ADD, l->wake, &ev) != 0) {
		rv = -errno;
		goto fail;
	}
	if ((rv = pthread_create(&l->thread, NULL, loop_main, l)) != 0) {
		rv = -rv;
		goto fail;
	}
	*lp = l;
	return 0;
fail:
	if (l->ep >= 0)
		close(l->ep);
	if (l->wake >= 0)
		close(l->wake);
	pthread_mutex_destroy(&l->mu);
	dock_fx_budget_free(l->budget);
	free(l);
	return rv;
}

/* Hands command c of kind k to the loop (any thread). */
static void
loop_add(struct dock_fxloop *l, const struct kind *k, void *c, int cancel_fd,
    dock_fxloop_done_fn done, void *arg)
{
	struct watch *w = calloc(1, sizeof(*w));
	struct dock_exec_res res = { .exit_code = -1 };
	uint64_t one = 1;

	if (w == NULL) {
		char err[] = "exec: out of memory";

		/* Ended at once, killed (a helper's closed connection kills
		 * its command; an exec's finish kills it). */
		res.outcome = DOCK_EXEC_CANCELLED;
		(void)k->end(c, -ENOMEM, &res, err, sizeof(err));
		done(arg, -ENOMEM, &res, err);
		return;
	}
	w->k = k;
	w->c = c;
	w->cancel_fd = cancel_fd;
	w->done = done;
	w->arg = arg;
	w->res.exit_code = -1;
	w->events = k->events(c);
	w->t_sock.w = w->t_cancel.w = w;
	w->t_cancel.cancel = true;
	pthread_mutex_lock(&l->mu);
	TAILQ_INSERT_TAIL(&l->pending, w, link);
	pthread_mutex_unlock(&l->mu);
	(void)!write(l->wake, &one, sizeof(one));
}

void
dock_fxloop_add(struct dock_fxloop *l, struct dock_fx *c, int cancel_fd,
    dock_fxloop_done_fn done, void *arg)
{
	loop_add(l, &helper_kind, c, cancel_fd, done, arg);
}

void
dock_fxloop_add_exec(struct dock_fxloop *l, struct dock_xexec *x,
    int cancel_fd, dock_fxloop_done_fn done, void *arg)
{
	loop_add(l, &engine_kind, x, cancel_fd, done, arg);
}

void
dock_fxloop_stop(struct dock_fxloop *l)
{
	uint64_t one = 1;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = true;
	pthread_mutex_unlock(&l->mu);
	(void)!write(l->wake, &one, sizeof(one));
	pthread_join(l->thread, NULL);
	close(l->ep);
	close(l->wake);
	pthread_mutex_destroy(&l->mu);
	/* Every command's end ran; a deferred one ran before (the driver
	 * stops its workers first): no charge is left against it. */
	dock_fx_budget_free(l->budget);
	free(l);
}
