/*
 * wasi_poll.c - poll_oneoff: clock subscriptions (relative or absolute,
 * so sleep() works) and fd read/write readiness, with ppoll(2). All
 * deadlines are kept on CLOCK_MONOTONIC.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>

#include "wasi_int.h"

#define POLL_MAX_SUBS 4096
#define NEVER UINT64_MAX

struct sub {
	uint64_t userdata;
	uint8_t tag;
	uint16_t error;                 /* nonzero: report at once */
	uint64_t deadline;              /* clocks: monotonic ns */
	int pfd;                        /* fds: index in the pollfd array */
};

static uint64_t
now_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0 || ts.tv_sec < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > NEVER - b ? NEVER : a + b;
}

/* The monotonic deadline of a clock subscription at p, or an error. */
static uint16_t
clock_deadline(const uint8_t *p, uint64_t mono, uint64_t *deadline)
{
	static const clockid_t ids[] = { CLOCK_REALTIME, CLOCK_MONOTONIC };
	uint32_t id = wasi_get_u32(p + 16);
	uint64_t timeout = wasi_get_u64(p + 24);
	uint16_t flags;

	memcpy(&flags, p + 40, 2);
	if (id > WASI_CLOCK_MONOTONIC)
		return id <= WASI_CLOCK_THREAD_CPUTIME ? WASI_ENOTSUP :
		    WASI_EINVAL;
	if (flags & WASI_SUBCLOCK_ABSTIME) {
		uint64_t now = now_ns(ids[id]);

		timeout = timeout > now ? timeout - now : 0;
	}
	*deadline = add_sat(mono, timeout);
	return 0;
}

static void
put_event(struct wasi_ctx *c, uint32_t out, uint32_t *n, const struct sub *s,
    uint16_t error, uint64_t nbytes, uint16_t flags)
{
	uint8_t e[WASI_EVENT_SIZE] = { 0 };

	memcpy(e, &s->userdata, 8);
	memcpy(e + 8, &error, 2);
	e[10] = s->tag;
	memcpy(e + 16, &nbytes, 8);
	memcpy(e + 24, &flags, 2);
	wasi_put(c, out + *n * WASI_EVENT_SIZE, e, sizeof(e));
	(*n)++;
}

/* Waits until a pollfd is ready or the deadline passes (NEVER: no limit). */
static int
wait_ready(struct pollfd *pfds, nfds_t npfds, uint64_t deadline)
{
	for (;;) {
		uint64_t now = now_ns(CLOCK_MONOTONIC), left;
		struct timespec ts;
		int r;

		left = deadline == NEVER ? 0 : deadline > now ? deadline - now : 0;
		ts.tv_sec = (time_t)(left / 1000000000u);
		ts.tv_nsec = (long)(left % 1000000000u);
		r = ppoll(npfds ? pfds : NULL, npfds,
		    deadline == NEVER ? NULL : &ts, NULL);
		if (r >= 0 || errno != EINTR)
			return r < 0 ? -errno : r;
	}
}

/* Reads the subscriptions at in into s[] and pfds[]. */
static uint32_t
read_subs(struct wasi_ctx *c, const uint8_t *in, uint32_t nsubs,
    struct sub *s, struct pollfd *pfds, nfds_t *npfds, uint64_t *first)
{
	uint64_t mono = now_ns(CLOCK_MONOTONIC);

	for (uint32_t i = 0; i < nsubs; i++) {
		const uint8_t *p = in + (size_t)i * WASI_SUBSCRIPTION_SIZE;
		int host;

		s[i] = (struct sub){ wasi_get_u64(p), p[8], 0, NEVER, -1 };
		switch (s[i].tag) {
		case WASI_EVENT_CLOCK:
			s[i].error = clock_deadline(p, mono, &s[i].deadline);
			if (s[i].error == 0 && s[i].deadline < *first)
				*first = s[i].deadline;
			break;
		case WASI_EVENT_FD_READ:
		case WASI_EVENT_FD_WRITE:
			if ((host = wasi_host_fd(c, wasi_get_u32(p + 16))) < 0) {
				s[i].error = WASI_EBADF;
				break;
			}
			s[i].pfd = (int)*npfds;
			pfds[(*npfds)++] = (struct pollfd){ host,
				s[i].tag == WASI_EVENT_FD_READ ? POLLIN :
				POLLOUT, 0 };
			break;
		default:
			return WASI_EINVAL;
		}
		if (s[i].error != 0)
			*first = 0;             /* report errors at once */
	}
	return 0;
}

uint32_t
WASI_FN(poll_oneoff)(struct wasi_ctx *c, uint32_t in, uint32_t out,
    uint32_t nsubs, uint32_t neventsp)
{
	const uint8_t *inp;
	struct pollfd *pfds = NULL;
	struct sub *s = NULL;
	uint64_t first = NEVER, now;
	uint32_t rv, n = 0;
	nfds_t npfds = 0;
	int r;

	if (nsubs == 0 || nsubs > POLL_MAX_SUBS)
		return WASI_EINVAL;
	if ((inp = wasi_mem(c, in, (uint64_t)nsubs *
		 WASI_SUBSCRIPTION_SIZE)) == NULL ||
	    wasi_mem(c, out, (uint64_t)nsubs * WASI_EVENT_SIZE) == NULL ||
	    wasi_mem(c, neventsp, 4) == NULL)
		return WASI_EFAULT;
	s = calloc(nsubs, sizeof(*s));
	pfds = calloc(nsubs, sizeof(*pfds));
	if (s == NULL || pfds == NULL) {
		rv = WASI_ENOMEM;
		goto out;
	}
	if ((rv = read_subs(c, inp, nsubs, s, pfds, &npfds, &first)) != 0)
		goto out;
	if ((r = wait_ready(pfds, npfds, first)) < 0) {
		rv = wasi_errno(-r);
		goto out;
	}
	now = now_ns(CLOCK_MONOTONIC);
	for (uint32_t i = 0; i < nsubs; i++) {
		struct pollfd *p = s[i].pfd >= 0 ? &pfds[s[i].pfd] : NULL;
		int avail = 0;

		if (s[i].error != 0) {
			put_event(c, out, &n, &s[i], s[i].error, 0, 0);
		} else if (s[i].tag == WASI_EVENT_CLOCK) {
			/* r == 0: timed out, so the first deadline has come */
			if (s[i].deadline <= now ||
			    (r == 0 && s[i].deadline == first))
				put_event(c, out, &n, &s[i], 0, 0, 0);
		} else if (p->revents & POLLNVAL) {
			put_event(c, out, &n, &s[i], WASI_EBADF, 0, 0);
		} else if (p->revents != 0) {
			if (s[i].tag == WASI_EVENT_FD_READ &&
			    ioctl(p->fd, FIONREAD, &avail) != 0)
				avail = 0;
			put_event(c, out, &n, &s[i], 0, avail < 0 ? 0 :
			    (uint64_t)avail, (p->revents & POLLHUP) ?
			    WASI_EVENT_HANGUP : 0);
		}
	}
	wasi_put_u32(c, neventsp, n);
	rv = 0;
out:
	free(s);
	free(pfds);
	return rv;
}
