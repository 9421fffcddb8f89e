/* lease_wire.c - encoding the lease messages; see lease_wire.h. */
#include "lease_wire.h"

#include <errno.h>
#include <string.h>

#include "wire32.h"

static void
put_head(uint8_t out[LW_MSG_LEN], int op)
{
	memset(out, 0, LW_MSG_LEN);
	memcpy(out, "MSCL", 4);
	out[4] = LW_VERSION;
	out[5] = (uint8_t)op;
}

static int
check_head(const uint8_t in[LW_MSG_LEN])
{
	if (memcmp(in, "MSCL", 4) != 0 || in[4] != LW_VERSION ||
	    (in[5] != LW_RENEW && in[5] != LW_QUERY))
		return -EPROTO;
	return in[5];
}

void
lw_request_encode(uint8_t out[LW_MSG_LEN], int op, uint32_t ms)
{
	put_head(out, op);
	wire_put32(out + 8, ms);
}

int
lw_request_decode(const uint8_t in[LW_MSG_LEN], int *opp, uint32_t *msp)
{
	int op = check_head(in);

	if (op < 0 || in[6] != 0 || in[7] != 0 || wire_get32(in + 12) != 0)
		return -EPROTO;
	*opp = op;
	*msp = wire_get32(in + 8);
	return 0;
}

void
lw_reply_encode(uint8_t out[LW_MSG_LEN], const struct lw_reply *r)
{
	put_head(out, r->op);
	out[6] = (uint8_t)r->state;
	wire_put32(out + 8, r->left_ms);
	wire_put32(out + 12, r->lease_ms);
}

int
lw_reply_decode(const uint8_t in[LW_MSG_LEN], struct lw_reply *r)
{
	int op = check_head(in);

	if (op < 0 || (in[6] != LW_HELD && in[6] != LW_NONE) || in[7] != 0)
		return -EPROTO;
	r->op = op;
	r->state = in[6];
	r->left_ms = wire_get32(in + 8);
	r->lease_ms = wire_get32(in + 12);
	return 0;
}
