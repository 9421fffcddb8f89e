/*
 * mcp_live.c - cancellation and progress of tools/call; see mcp_live.h.
 */
#include "mcp_live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"
#include "session.pb-c.h"

/* How long the session has to confirm a cancel. */
#define LIVE_CANCEL_MS 10000

bool
mcp_live_call_key(json_t *id, char out[MCP_LIVE_KEY_MAX])
{
	const char *s;
	int n;

	if (json_is_integer(id)) {
		snprintf(out, MCP_LIVE_KEY_MAX, "n:%lld",
		    (long long)json_integer_value(id));
		return true;
	}
	if ((s = json_string_value(id)) == NULL ||
	    strlen(s) != json_string_length(id))
		return false;
	n = snprintf(out, MCP_LIVE_KEY_MAX, "s:%s", s);
	return n > 0 && n < MCP_LIVE_KEY_MAX;
}

static void
cancel_done(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	else if (st->code != MSC__V1__CODE__NOT_FOUND)
		msc_log_warn("cancelling a call failed: %s", st->message);
}

void
mcp_live_notified(struct msc_client *session, const char *sid,
    const char *method, json_t *params)
{
	Msc__V1__ExecCallRef ref = MSC__V1__EXEC_CALL_REF__INIT;
	char key[MCP_LIVE_KEY_MAX];
	int rv;

	if (strcmp(method, "notifications/cancelled") != 0 || sid[0] == '\0' ||
	    session == NULL ||
	    !mcp_live_call_key(json_object_get(params, "requestId"), key))
		return;
	ref.session_id = (char *)sid;
	ref.call_key = key;
	if ((rv = msc_client_call(session, &msc__v1__session__descriptor,
		 "CancelExec", &ref.base, LIVE_CANCEL_MS, cancel_done,
		 NULL)) != 0)
		msc_log_warn("cancelling a call failed: it could not be sent "
		    "(%d)", rv);
}
