/*
 * helper_lease.h - the lease of a temporary computer, kept by its exec
 * helper (see lease_wire.h). Static, libc only.
 */
#ifndef MSC_HELPER_LEASE_H
#define MSC_HELPER_LEASE_H

#include <stdbool.h>
#include <stdint.h>

struct hx_lease {
	int fd;                 /* the lease socket, -1 when none */
	uint32_t lease_ms;      /* 0: no lease (a permanent computer) */
	int64_t deadline;       /* monotonic ms */
	int64_t poll_until;     /* when the last poll was due to return */
	bool graced;            /* had its grace since the last renewal */
};

/*
 * Reads `--lease-ms N` from argv[2..] and, with a lease, listens on
 * LW_SOCK_NAME next to `sock_path`. Without that flag (or with N 0) the
 * helper has no lease and never ends by itself. 0, or a negative errno
 * for a malformed flag (the helper then runs without a lease: ending a
 * computer by mistake is worse than an orphan).
 */
int hx_lease_init(struct hx_lease *l, int argc, char **argv,
    const char *sock_path);

/* The poll timeout the lease needs (ms, -1 for none), combined with `t`. */
int hx_lease_timeout(struct hx_lease *l, int t);

/*
 * After a poll: notices that the helper was frozen (docker pause, SIGSTOP,
 * a host suspend: the poll returned long after it was due) and then gives
 * the drivers one lease more to come back (once until the next renewal,
 * so a starved CPU cannot keep an orphan alive); serves the renewals waiting on
 * the lease socket when `readable`. Returns true when the lease lapsed.
 */
bool hx_lease_check(struct hx_lease *l, bool readable);

#endif /* MSC_HELPER_LEASE_H */
