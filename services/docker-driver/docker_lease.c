/*
 * docker_lease.c - renewing the leases of the temporary computers this
 * driver's sessions hold; see docker_lease.h. The rounds are the lease
 * renewer's (msc_lease_renewer.h): each connects to every held computer's
 * lease socket at once, sends the renewals and waits (bounded) for the
 * replies together, so one frozen or slow helper costs the round at most
 * LEASE_REPLY_MS. Only computers whose helper process is not known (or
 * went stale) are looked up through the engine, after the others were
 * renewed.
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
#include <unistd.h>

#include "msc_lease_renewer.h"
#include "msc_time.h"

#define LEASE_REPLY_MS	1000    /* for the replies of one round */
#define LEASE_QUERY_MS	3000    /* for one lease's state, in a list */

struct dock_lease {
	struct msc_lease_renewer *renewer;  /* by container name */
	uint32_t lease_ms;
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

/* One round (msc_lease_renewer.h): every held computer's lease renewed. */
static void
renew(void *arg, struct msc_lease_item *items, size_t n)
{
	struct dock_driver *d = arg;
	struct dock_lease *l = d->lease;
	struct lconn *cs = calloc(n, sizeof(*cs));

	if (cs == NULL)
		return;         /* every item FAILED */
	for (size_t i = 0; i < n; i++) {
		snprintf(cs[i].name, sizeof(cs[i].name), "%s", items[i].id);
		lconn_send(d, &cs[i], false, LW_RENEW, l->lease_ms);
	}
	lconn_collect(cs, n, LEASE_REPLY_MS);
	for (size_t i = 0; i < n; i++) {
		struct lconn *c = &cs[i];

		if (c->stale) {
			/* Not known (yet) or restarted: one inspect. */
			lconn_send(d, c, true, LW_RENEW, l->lease_ms);
			lconn_collect(c, 1, LEASE_REPLY_MS);
		}
		items[i].outcome = c->answered ? MSC_LEASE_RENEWED :
		    MSC_LEASE_FAILED;
		if (!c->answered)
			snprintf(items[i].err, sizeof(items[i].err), "gone, "
			    "or its helper does not answer");
	}
	free(cs);
}

int
dock_lease_start(struct dock_driver *d)
{
	struct dock_lease *l = calloc(1, sizeof(*l));
	int rv;

	if (l == NULL)
		return -ENOMEM;
	l->lease_ms = (uint32_t)d->cfg->lease_timeout * 1000u;
	d->lease = l;
	if ((rv = msc_lease_renewer_start(&l->renewer, "docker", l->lease_ms,
		 renew, d)) != 0 ||
	    (rv = dock_reap_start(d, (int)msc_lease_renewer_period_ms(
		 l->renewer), &l->reap)) != 0) {
		dock_lease_stop(d);
		return rv;
	}
	return 0;
}

void
dock_lease_stop(struct dock_driver *d)
{
	struct dock_lease *l = d->lease;

	if (l == NULL)
		return;
	msc_lease_renewer_stop(l->renewer);
	dock_reap_stop(l->reap);
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

	if (has_lease(ctr))
		(void)msc_lease_renewer_hold(l->renewer, name, NULL);
	else
		dock_reap_hold(l->reap, name, ctr);
}

void
dock_lease_drop(struct dock_driver *d, const char *name)
{
	struct dock_lease *l = d->lease;

	msc_lease_renewer_drop(l->renewer, name);
	dock_reap_drop(l->reap, name);
}

void
dock_lease_describe(struct dock_driver *d, const char *name,
    Msc__V1__Computer *c)
{
	struct dock_lease *l = d->lease;
	struct lconn q = { .fd = -1 };

	c->lease = MSC__V1__LEASE_STATE__LEASE_NONE;
	c->lease_left_ms = 0;
	if (msc_lease_renewer_holds(l->renewer, name) ||
	    dock_reap_holds(l->reap, name)) {
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

bool
dock_lease_answers(struct dock_driver *d, const char *name, int wait_ms)
{
	struct lconn q = { .fd = -1 };

	snprintf(q.name, sizeof(q.name), "%s", name);
	lconn_send(d, &q, false, LW_QUERY, 0);
	lconn_collect(&q, 1, wait_ms);
	return q.answered;
}
