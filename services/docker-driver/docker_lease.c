/*
 * docker_lease.c - renewing the leases of the temporary computers this
 * driver's sessions hold; see docker_lease.h. One thread: each round
 * connects to every held computer's lease socket at once, sends the
 * renewals and waits (bounded) for the replies together, so one frozen or
 * slow helper costs the round at most LEASE_REPLY_MS. Only computers
 * whose helper process is not known (or went stale) are looked up through
 * the engine, after the others were renewed.
 */
#include "docker_lease.h"

#include "docker_driver_int.h"
#include "docker_fastexec.h"
#include "docker_reap.h"
#include "lease_wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_time.h"

#define LEASE_REPLY_MS	1000    /* for the replies of one round */
#define LEASE_QUERY_MS	3000    /* for one lease's state, in a list */
#define LEASE_MIN_PERIOD_MS 250
#define LEASE_MAX_ROUND	4096    /* computers renewed per round at most */

struct held {
	uint64_t ok_ms;         /* monotonic time of the last renewal */
	bool warned;            /* said that renewals fail */
};

struct dock_lease {
	pthread_t thread;
	bool running, stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct msc_map *held;   /* container name -> struct held */
	uint32_t lease_ms;
	int period_ms;
	struct dock_reap *reap; /* those without a helper (docker_reap.c) */
};

/* One renewal or query in flight. */
struct lconn {
	char name[128];
	int fd;
	size_t got;
	uint8_t in[LW_MSG_LEN];
	bool stale;             /* helper not known: ask the engine */
	bool answered;
	struct lw_reply r;
};

/* Connects and sends; c->fd -1 when it could not. */
static void
lconn_send(struct dock_driver *d, struct lconn *c, bool ask_engine, int op,
    uint32_t ms)
{
	uint8_t out[LW_MSG_LEN];
	char dir[64];
	int pfd = dock_fx_reach(d, c->name, ask_engine, dir, sizeof(dir));

	c->fd = -1;
	c->stale = pfd == -ENOENT || pfd == -ESRCH;
	if (pfd < 0)
		return;
	c->fd = dock_fx_connect(dir, LW_SOCK_NAME);
	close(pfd);
	if (c->fd < 0) {
		c->fd = -1;
		return;
	}
	lw_request_encode(out, op, ms);
	if (send(c->fd, out, sizeof(out), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(out)) {
		close(c->fd);
		c->fd = -1;
	}
}

/* Waits up to wait_ms for the replies of cs[0..n). */
static void
lconn_collect(struct lconn *cs, size_t n, int wait_ms)
{
	uint64_t until = msc_now_ms() + (uint64_t)wait_ms;
	struct pollfd *p = calloc(n, sizeof(*p));

	if (p == NULL)
		goto out;
	for (;;) {
		size_t waiting = 0;
		uint64_t now = msc_now_ms();

		for (size_t i = 0; i < n; i++) {
			p[i].fd = cs[i].fd;
			p[i].events = POLLIN;
			p[i].revents = 0;
			waiting += cs[i].fd >= 0;
		}
		if (waiting == 0 || now >= until)
			break;
		if (poll(p, n, (int)(until - now)) < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < n; i++) {
			struct lconn *c = &cs[i];
			ssize_t r;

			if (c->fd < 0 || p[i].revents == 0)
				continue;
			r = recv(c->fd, c->in + c->got, sizeof(c->in) - c->got,
			    MSG_DONTWAIT);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r > 0)
				c->got += (size_t)r;
			if (r > 0 && c->got < sizeof(c->in))
				continue;
			c->answered = c->got == sizeof(c->in) &&
			    lw_reply_decode(c->in, &c->r) == 0;
			close(c->fd);
			c->fd = -1;
		}
	}
out:
	free(p);
	for (size_t i = 0; i < n; i++)
		if (cs[i].fd >= 0) {
			close(cs[i].fd);
			cs[i].fd = -1;
		}
}

/* Notes a renewal; says once when a held computer's renewals fail. */
static void
record(struct dock_lease *l, const struct lconn *c)
{
	uint64_t now = msc_now_ms();
	struct held *h;

	pthread_mutex_lock(&l->mu);
	if ((h = msc_map_get(l->held, c->name)) != NULL) {
		if (c->answered) {
			h->ok_ms = now;
			h->warned = false;
		} else if (!h->warned && now - h->ok_ms > l->lease_ms / 2) {
			h->warned = true;
			msc_log_warn("cannot renew the lease of %s (gone, or its "
			    "helper does not answer)", c->name);
		}
	}
	pthread_mutex_unlock(&l->mu);
}

struct snap {
	struct lconn *cs;
	size_t n, cap;
};

static void
snap_one(void *arg, const char *key, void *value)
{
	struct snap *s = arg;

	(void)value;
	if (s->n == s->cap)
		return;
	memset(&s->cs[s->n], 0, sizeof(s->cs[s->n]));
	snprintf(s->cs[s->n].name, sizeof(s->cs[s->n].name), "%s", key);
	s->cs[s->n].fd = -1;
	s->n++;
}

/* One round: every held computer's lease renewed, or tried. */
static void
renew_round(struct dock_driver *d)
{
	struct dock_lease *l = d->lease;
	struct snap s = { 0 };

	pthread_mutex_lock(&l->mu);
	s.cap = msc_map_len(l->held);
	if (s.cap > LEASE_MAX_ROUND)
		s.cap = LEASE_MAX_ROUND;
	if (s.cap > 0 && (s.cs = calloc(s.cap, sizeof(*s.cs))) != NULL)
		msc_map_each(l->held, snap_one, &s);
	pthread_mutex_unlock(&l->mu);
	if (s.cs == NULL)
		return;
	for (size_t i = 0; i < s.n; i++)
		lconn_send(d, &s.cs[i], false, LW_RENEW, l->lease_ms);
	lconn_collect(s.cs, s.n, LEASE_REPLY_MS);
	for (size_t i = 0; i < s.n; i++) {
		struct lconn *c = &s.cs[i];

		if (c->stale) {
			/* Not known (yet) or restarted: one inspect. */
			lconn_send(d, c, true, LW_RENEW, l->lease_ms);
			lconn_collect(c, 1, LEASE_REPLY_MS);
		}
		record(l, c);
	}
	free(s.cs);
}

static void *
lease_main(void *arg)
{
	struct dock_driver *d = arg;
	struct dock_lease *l = d->lease;

	struct timespec next;

	/* Rounds on a fixed cadence: a slow round does not push the next. */
	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&l->mu);
	while (!l->stopping) {
		struct timespec now;

		next.tv_sec += l->period_ms / 1000;
		next.tv_nsec += (long)(l->period_ms % 1000) * 1000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (next.tv_sec < now.tv_sec - 1)
			next = now;     /* fell far behind (a stop): start over */
		while (!l->stopping &&
		    pthread_cond_timedwait(&l->cv, &l->mu, &next) != ETIMEDOUT)
			;
		if (l->stopping)
			break;
		pthread_mutex_unlock(&l->mu);
		renew_round(d);
		pthread_mutex_lock(&l->mu);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int
dock_lease_start(struct dock_driver *d)
{
	struct dock_lease *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;
	int rv;

	if (l == NULL)
		return -ENOMEM;
	if ((rv = msc_map_new(&l->held)) != 0) {
		free(l);
		return rv;
	}
	l->lease_ms = (uint32_t)d->cfg->lease_timeout * 1000u;
	l->period_ms = (int)(l->lease_ms / 3);
	if (l->period_ms < LEASE_MIN_PERIOD_MS)
		l->period_ms = LEASE_MIN_PERIOD_MS;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	d->lease = l;
	if ((rv = dock_reap_start(d, l->period_ms, &l->reap)) != 0) {
		dock_lease_stop(d);
		return rv;
	}
	if ((rv = pthread_create(&l->thread, NULL, lease_main, d)) != 0) {
		dock_lease_stop(d);
		return -rv;
	}
	l->running = true;
	return 0;
}

static void
free_held(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	free(value);
}

void
dock_lease_stop(struct dock_driver *d)
{
	struct dock_lease *l = d->lease;

	if (l == NULL)
		return;
	pthread_mutex_lock(&l->mu);
	l->stopping = true;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (l->running)
		pthread_join(l->thread, NULL);
	dock_reap_stop(l->reap);
	msc_map_each(l->held, free_held, NULL);
	msc_map_free(l->held);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l);
	d->lease = NULL;
}

int
dock_lease_body(struct dock_driver *d, json_t *body, bool temporary)
{
	json_t *ep = json_object_get(body, "Entrypoint");
	const char *p0 = json_string_value(json_array_get(ep, 0));
	char ms[16];

	if (!temporary || p0 == NULL || strcmp(p0, DOCK_FX_MOUNT_HELPER) != 0)
		return 0;
	snprintf(ms, sizeof(ms), "%u", d->lease->lease_ms);
	if (json_array_append_new(ep, json_string("--lease-ms")) != 0 ||
	    json_array_append_new(ep, json_string(ms)) != 0)
		return -ENOMEM;
	return 0;
}

/* Whether container `ctr`'s helper was started with a lease. */
static bool
has_lease(json_t *ctr)
{
	json_t *ep = json_object_get(json_object_get(ctr, "Config"),
	    "Entrypoint"), *v;
	size_t i;

	if (!dock_fx_mounts_helper(ctr))
		return false;
	json_array_foreach (ep, i, v)
		if (json_is_string(v) &&
		    strcmp(json_string_value(v), "--lease-ms") == 0)
			return true;
	return false;
}

void
dock_lease_hold(struct dock_driver *d, const char *name, json_t *ctr)
{
	struct dock_lease *l = d->lease;
	struct held *h;

	if (!has_lease(ctr)) {
		dock_reap_hold(l->reap, name, ctr);
		return;
	}
	pthread_mutex_lock(&l->mu);
	if (msc_map_get(l->held, name) == NULL &&
	    ((h = calloc(1, sizeof(*h))) == NULL ||
		(h->ok_ms = msc_now_ms(), msc_map_put(l->held, name, h)) != 0)) {
		free(h);
		msc_log_warn("cannot hold the lease of %s: out of memory", name);
	}
	pthread_mutex_unlock(&l->mu);
}

void
dock_lease_drop(struct dock_driver *d, const char *name)
{
	struct dock_lease *l = d->lease;

	pthread_mutex_lock(&l->mu);
	free(msc_map_del(l->held, name));
	pthread_mutex_unlock(&l->mu);
	dock_reap_drop(l->reap, name);
}

void
dock_lease_describe(struct dock_driver *d, const char *name,
    Msc__V1__Computer *c)
{
	struct dock_lease *l = d->lease;
	struct lconn q = { .fd = -1 };
	bool held;

	pthread_mutex_lock(&l->mu);
	held = msc_map_get(l->held, name) != NULL;
	pthread_mutex_unlock(&l->mu);
	c->lease = MSC__V1__LEASE_STATE__LEASE_NONE;
	c->lease_left_ms = 0;
	if (held || dock_reap_holds(l->reap, name)) {
		c->lease = MSC__V1__LEASE_STATE__LEASE_HELD;
		return;
	}
	snprintf(q.name, sizeof(q.name), "%s", name);
	lconn_send(d, &q, true, LW_QUERY, 0);
	lconn_collect(&q, 1, LEASE_QUERY_MS);
	if (q.answered && q.r.state == LW_HELD) {
		c->lease = MSC__V1__LEASE_STATE__LEASE_EXPIRING;
		c->lease_left_ms = q.r.left_ms;
	}
}
