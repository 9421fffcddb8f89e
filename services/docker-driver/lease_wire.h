/*
 * lease_wire.h - the lease between the docker-driver and the exec helper
 * of a temporary computer (helper/helper_lease.c, docker_lease.c).
 *
 * A temporary computer's helper starts with a lease (`--lease-ms N` after
 * its socket path) and ends its container when nobody renews it in time.
 * A driver renews the lease of every temporary computer a session holds
 * by connecting to the helper's second socket (/.msc/lease) and sending
 * one fixed-size request; the helper answers with one fixed-size reply
 * and closes. The lease is the latest of all renewals: a server renewing
 * for N ms never shortens what another gave.
 *
 *   request (16 bytes): "MSCL" | version (1) | op | 0 0 | ms (u32 BE) | 0 0 0 0
 *   reply   (16 bytes): "MSCL" | version (1) | op | state | 0 |
 *                       left_ms (u32 BE) | lease_ms (u32 BE)
 *
 * op LW_RENEW extends the lease to at least now + ms; LW_QUERY only reads
 * it. state LW_HELD: left_ms are left; LW_NONE: this helper has no lease
 * (a permanent computer), left_ms is 0. Only a peer outside the
 * computer's PID namespace may speak (the helper checks SO_PEERCRED), so
 * the sandboxed code can neither keep its orphan alive nor end it early
 * this way. Depends on libc only (the helper is static).
 */
#ifndef LEASE_WIRE_H
#define LEASE_WIRE_H

#include <stdint.h>

#define LW_SOCK_NAME	"lease"
#define LW_MSG_LEN	16
#define LW_VERSION	1
#define LW_MAX_MS	(24u * 3600 * 1000)	/* one renewal gives at most a day */

enum lw_op { LW_RENEW = 1, LW_QUERY = 2 };
enum lw_state { LW_HELD = 1, LW_NONE = 2 };

struct lw_reply {
	int op;
	int state;
	uint32_t left_ms;
	uint32_t lease_ms;
};

void lw_request_encode(uint8_t out[LW_MSG_LEN], int op, uint32_t ms);
/* 0 with *opp and *msp, or -EPROTO. */
int lw_request_decode(const uint8_t in[LW_MSG_LEN], int *opp, uint32_t *msp);
void lw_reply_encode(uint8_t out[LW_MSG_LEN], const struct lw_reply *r);
/* 0, or -EPROTO for a malformed reply. */
int lw_reply_decode(const uint8_t in[LW_MSG_LEN], struct lw_reply *r);

#endif /* LEASE_WIRE_H */
