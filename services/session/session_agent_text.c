/*
 * session_agent_text.c - what an agent reads of a driver's failure: a
 * provider's details (REASON_PROVIDER: what an engine or cloud API said,
 * which may hold tokens or hosts) go to stderr under the session's tag,
 * and the agent reads the reference's generic text for the step.
 */
#include "session_int.h"

#include "msc_log.h"

const char *
sess_agent_text(const struct msc_status *st, enum msc_reason_step step,
    const char *tag)
{
	if (st->reason != MSC__V1__REASON__REASON_PROVIDER)
		return st->message;
	msc_log_warn("session %s: the provider failed: %s", tag, st->message);
	return msc_reason_provider_text(step, st->code);
}
