/*
 * msc_reason.c - the one table from failure reason to text.
 */
#include "msc_reason.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* MAYBE_RAN's text with the cause named. */
#define MAYBE_RAN_FORMAT                                                     \
	"the connection to the service was lost during the call (%s); it "   \
	"may or may not have happened"

static const struct {
	Msc__V1__Reason reason;
	bool call_failed;
	const char *text;
} reasons[] = {
	{ MSC__V1__REASON__REASON_SESSION_NOT_FOUND, false,
	    "Session not found" },
	{ MSC__V1__REASON__REASON_COMPUTER_UNAVAILABLE, false,
	    "the computer is unavailable" },
	{ MSC__V1__REASON__REASON_OVERLOADED, false,
	    "the service is overloaded" },
	{ MSC__V1__REASON__REASON_NOT_SENT, true,
	    "the service cannot be reached" },
	{ MSC__V1__REASON__REASON_MAYBE_RAN, true,
	    "the connection to the service was lost during the call; it may "
	    "or may not have happened" },
	{ MSC__V1__REASON__REASON_COMPUTER_DIED, false,
	    "the computer died during the call" },
	{ MSC__V1__REASON__REASON_INVALID_ARGUMENT, false,
	    "invalid argument" },
	{ MSC__V1__REASON__REASON_DEADLINE, true, "deadline exceeded" },
	{ MSC__V1__REASON__REASON_CANCELLED, false,
	    "the call was cancelled; its command was killed" },
	{ MSC__V1__REASON__REASON_PROVIDER, false,
	    "Sandbox provider operation failed" },
};

#define NREASONS (sizeof(reasons) / sizeof(reasons[0]))

const char *
msc_reason_text(Msc__V1__Reason reason)
{
	for (size_t i = 0; i < NREASONS; i++)
		if (reasons[i].reason == reason)
			return reasons[i].text;
	return "";
}

bool
msc_reason_call_failed(Msc__V1__Reason reason)
{
	for (size_t i = 0; i < NREASONS; i++)
		if (reasons[i].reason == reason)
			return reasons[i].call_failed;
	return false;
}

Msc__V1__Reason
msc_reason_passed_on(Msc__V1__Reason reason)
{
	return msc_reason_call_failed(reason)
	    ? MSC__V1__REASON__REASON_UNSPECIFIED : reason;
}

const char *
msc_reason_call_failed_message(Msc__V1__Reason reason, const char *detail,
    char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s", MSC_REASON_CALL_FAILED);

	if (n < 0 || (size_t)n >= len)
		return buf;
	if (reason == MSC__V1__REASON__REASON_MAYBE_RAN)
		snprintf(buf + n, len - (size_t)n, MAYBE_RAN_FORMAT,
		    detail != NULL ? detail : "no answer");
	else
		snprintf(buf + n, len - (size_t)n, "%s",
		    detail != NULL ? detail : msc_reason_text(reason));
	return buf;
}

const char *
msc_reason_detail(Msc__V1__Reason reason, const char *message)
{
	size_t pre = sizeof(MSC_REASON_CALL_FAILED) - 1;

	if (msc_reason_call_failed(reason) &&
	    strncmp(message, MSC_REASON_CALL_FAILED, pre) == 0)
		return message + pre;
	return message;
}

const char *
msc_reason_session_unreachable(const char *detail, char *buf, size_t len)
{
	snprintf(buf, len, "The session service is unavailable (%s); retry "
	    "in a few seconds.", detail);
	return buf;
}

const char *
msc_reason_session_lost(void)
{
	return "The session was lost (the session service restarted); retry "
	       "the call.";
}

const char *
msc_reason_computer_unavailable(const char *computer, const char *driver,
    const char *detail, char *buf, size_t len)
{
	snprintf(buf, len, "Computer '%s' is unavailable (driver '%s'): %s. "
	    "Retry later.", computer, driver, detail);
	return buf;
}

const char *
msc_reason_driver_unreachable(const char *computer, const char *driver,
    char *buf, size_t len)
{
	snprintf(buf, len, "Computer '%s' is unavailable: its driver '%s' "
	    "cannot be reached. Retry later.", computer, driver);
	return buf;
}

const char *
msc_reason_inventory_unreachable(void)
{
	return "the inventory service cannot be reached";
}

const char *
msc_reason_session_unsent(int rv, int *retry_sp)
{
	int retry_s = 5;
	const char *text;

	switch (rv) {
	case -EAGAIN:
		retry_s = 1;
		text = "The session service is overloaded (too many calls in "
		       "flight); retry in a second.";
		break;
	case -ENOTCONN:
		text = "The session service is unavailable: it cannot be "
		       "reached; retry in a few seconds.";
		break;
	case -ENOMEM:
		text = "The server is out of memory; retry later.";
		break;
	default:
		text = "The call could not be sent to the session service; "
		       "retry in a few seconds.";
		break;
	}
	if (retry_sp != NULL)
		*retry_sp = retry_s;
	return text;
}

const char *
msc_reason_session_not_opened(bool overloaded, const char *detail,
    char *buf, size_t len)
{
	snprintf(buf, len, "The session service is %s: %s; retry in a few "
	    "seconds.", overloaded ? "overloaded" : "not available", detail);
	return buf;
}

const char *
msc_reason_provider_text(enum msc_reason_step step, Msc__V1__Code code)
{
	if (code == MSC__V1__CODE__DEADLINE_EXCEEDED)
		return "Sandbox operation exceeded its deadline";
	switch (step) {
	case MSC_REASON_STEP_CREATE:
		return "Sandbox could not be created or attached";
	case MSC_REASON_STEP_EXEC:
		return "Sandbox execution failed";
	default:
		return "Sandbox provider operation failed";
	}
}
