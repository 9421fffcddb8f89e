/*
 * session_describe.c - Session/Describe: the drivers' tool description,
 * asked of the first driver (every driver of a fleet serves one backend's
 * computers to the same agents), so the edge knows no backend.
 */
#include "session_int.h"

#include "driver.pb-c.h"

/* Passes the driver's answer on as it is. */
static void
described(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct msc_call *call = arg;

	if (resp == NULL) {
		msc_call_fail_reason(call, st->code, st->reason, "%s",
		    st->message);
		return;
	}
	msc_call_reply(call, resp);
	protobuf_c_message_free_unpacked(resp, NULL);
}

void
sess_h_describe(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	struct sess_service *s = state;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;

	(void)req;
	if (msc_client_call(msc_fleet_client(s->fleet, 0),
		&msc__v1__driver__descriptor, "Describe", &e.base,
		sess_hop_ms(msc_call_remaining_ms(call), 0), described,
		call) != 0)
		msc_call_fail(call, MSC__V1__CODE__UNAVAILABLE,
		    "driver '%s' cannot be reached", msc_fleet_id(s->fleet, 0));
}
