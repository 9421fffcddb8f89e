/*
 * helper_lease.c - the helper's side of a temporary computer's lease
 * (lease_wire.h): the deadline on the monotonic clock (a jump of the
 * host's wall clock changes nothing), the renewals from the drivers, and
 * a grace of one lease after the helper was frozen, so a paused container
 * or a suspended host is not ended for time it did not see pass.
 */
#include "helper_lease.h"

#include "helper.h"
#include "lease_wire.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define HL_READ_MS	200     /* for a renewal's 16 bytes after accept */
#define HL_FROZEN_MS	2000    /* a poll this late means we were frozen */
#define HL_ACCEPTS	64      /* renewals served per wakeup at most */

static int
parse_ms(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > LW_MAX_MS)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int
listen_lease(const char *sock_path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *slash = strrchr(sock_path, '/');
	size_t dlen = slash != NULL ? (size_t)(slash - sock_path) + 1 : 0;
	int fd;

	if (dlen + sizeof(LW_SOCK_NAME) > sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, sock_path, dlen);
	memcpy(sa.sun_path + dlen, LW_SOCK_NAME, sizeof(LW_SOCK_NAME));
	(void)unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(sa.sun_path, 0666) != 0 || listen(fd, 128) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int
hx_lease_init(struct hx_lease *l, int argc, char **argv,
    const char *sock_path)
{
	uint32_t ms = 0;

	*l = (struct hx_lease){ .fd = -1 };
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--lease-ms") != 0)
			continue;
		if (i + 1 >= argc || parse_ms(argv[i + 1], &ms) != 0) {
			hx_log("invalid --lease-ms; running without a lease");
			return -EINVAL;
		}
		break;
	}
	if (ms == 0)
		return 0;
	if ((l->fd = listen_lease(sock_path)) < 0) {
		int rc = l->fd;

		/* Nobody could renew it: it would end for sure. */
		hx_log("cannot listen for lease renewals: %s; running without "
		       "a lease", strerror(-rc));
		l->fd = -1;
		return rc;
	}
	l->lease_ms = ms;
	l->deadline = hx_now_ms() + ms;
	l->poll_until = hx_now_ms();
	return 0;
}

/*
 * The helper ran late by more than HL_FROZEN_MS (it was frozen, in a
 * poll or between two): one lease more, once until the next renewal.
 */
static void
notice_freeze(struct hx_lease *l, int64_t now)
{
	if (now <= l->poll_until + HL_FROZEN_MS || l->graced ||
	    now + (int64_t)l->lease_ms <= l->deadline)
		return;
	l->graced = true;
	hx_log("was frozen for %lld ms; the lease gets %u ms more",
	    (long long)(now - l->poll_until), l->lease_ms);
	l->deadline = now + l->lease_ms;
}

int
hx_lease_timeout(struct hx_lease *l, int t)
{
	int64_t left;

	if (l->lease_ms == 0)
		return t;
	notice_freeze(l, hx_now_ms());
	left = l->deadline - hx_now_ms();
	if (left < 0)
		left = 0;
	if (t >= 0 && t < left)
		left = t;
	l->poll_until = hx_now_ms() + left;
	return (int)left;
}

/*
 * Only a peer outside our PID namespace (its pid reads as 0 here) is a
 * driver. As PID 1 of the computer's namespace, everything the sandboxed
 * code runs is inside it. Not PID 1 (a test on the host, or a container
 * sharing the host's PID namespace) there is no such line to draw.
 */
static bool
peer_is_driver(int c)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &uc, &len) != 0)
		return false;
	return getpid() != 1 || uc.pid == 0;
}

static void
serve_one(struct hx_lease *l, int c)
{
	uint8_t in[LW_MSG_LEN], out[LW_MSG_LEN];
	struct pollfd p = { .fd = c, .events = POLLIN };
	struct lw_reply r = { .lease_ms = l->lease_ms };
	size_t got = 0;
	int64_t until = hx_now_ms() + HL_READ_MS, now, left;
	uint32_t ms;

	if (!peer_is_driver(c))
		return;
	while (got < sizeof(in)) {
		ssize_t n;
		int64_t wait = until - hx_now_ms();

		if (wait <= 0 || poll(&p, 1, (int)wait) <= 0)
			return;
		n = read(c, in + got, sizeof(in) - got);
		if (n <= 0)
			return;
		got += (size_t)n;
	}
	if (lw_request_decode(in, &r.op, &ms) != 0)
		return;
	now = hx_now_ms();
	if (r.op == LW_RENEW && ms > 0) {
		l->graced = false;
		if (now + (int64_t)ms > l->deadline)
			l->deadline = now + (int64_t)ms;
	}
	left = l->deadline - now;
	r.state = LW_HELD;
	r.left_ms = left < 0 ? 0 : (uint32_t)(left > UINT32_MAX ? UINT32_MAX :
	    left);
	lw_reply_encode(out, &r);
	/*
	 * The clock was read before the reply goes out: a freeze from the
	 * moment the driver can see it is measured from here.
	 */
	l->poll_until = now;
	(void)send(c, out, sizeof(out), MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool
hx_lease_check(struct hx_lease *l, bool readable)
{
	int64_t now = hx_now_ms();

	if (l->lease_ms == 0)
		return false;
	notice_freeze(l, now);
	for (int i = 0; readable && i < HL_ACCEPTS; i++) {
		int c = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0)
			break;
		serve_one(l, c);
		close(c);
	}
	/*
	 * A freeze after a renewal's reply went out (the driver has it and
	 * pauses the container before this line runs) is noticed here, on
	 * the same clock reading that judges the deadline.
	 */
	now = hx_now_ms();
	notice_freeze(l, now);
	/* Until the next poll, the helper is due to run on at once. */
	l->poll_until = now;
	return now >= l->deadline;
}
