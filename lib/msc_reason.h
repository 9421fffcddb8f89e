/*
 * msc_reason.h - the texts an agent reads for each machine-readable
 * failure reason (msc.v1.Reason in envelope.proto), written in one place.
 *
 * Callers decide by a status's code and reason, never by its words; the
 * words come from here, so a service in another language needs only the
 * enum.
 */
#ifndef MSC_REASON_H
#define MSC_REASON_H

#include <stdbool.h>
#include <stddef.h>

#include "envelope.pb-c.h"

/*
 * The text of `reason` (static, never NULL): what a service says when it
 * fails a call for that reason and has nothing to add, or "" for
 * REASON_UNSPECIFIED and values this build does not know.
 */
const char *msc_reason_text(Msc__V1__Reason reason);

/*
 * Whether `reason` says the call failed on the way to the service or back
 * (not sent, no answer, the deadline passed), rather than being answered
 * by the service.
 */
bool msc_reason_call_failed(Msc__V1__Reason reason);

/*
 * The reason a service sends when it fails a call with `reason`: a
 * call-failed reason there describes one of the service's own calls to
 * another (its message says which), which the caller would take for its
 * own call to this service ("the session service is unavailable" when a
 * driver was): it goes as REASON_UNSPECIFIED, the message unchanged.
 * Every other reason is sent as it is.
 */
Msc__V1__Reason msc_reason_passed_on(Msc__V1__Reason reason);

/*
 * Writes the message of a call that failed on the way: the common
 * beginning (MSC_REASON_CALL_FAILED) followed by `detail` (NULL: the
 * reason's text); for REASON_MAYBE_RAN, `detail` is the cause named in
 * the reason's text. Truncates to `len`; returns `buf`.
 */
#define MSC_REASON_CALL_FAILED "service call failed: "
const char *msc_reason_call_failed_message(Msc__V1__Reason reason,
    const char *detail, char *buf, size_t len);

/*
 * The detail of a message written by msc_reason_call_failed_message for a
 * call-failed `reason` (a pointer into `message`, borrowed), or `message`
 * itself for any other reason or any other message.
 */
const char *msc_reason_detail(Msc__V1__Reason reason, const char *message);

/*
 * What the agent reads when the session service could not answer a call
 * for a call-failed reason; `detail` as from msc_reason_detail. Returns
 * `buf`.
 */
const char *msc_reason_session_unreachable(const char *detail, char *buf,
    size_t len);

/* What the agent reads when the session it used is gone (static). */
const char *msc_reason_session_lost(void);

/*
 * What the agent reads when the link to a computer's driver broke during
 * a call: `computer` and `driver` name them, `detail` is the failed call's
 * message. Returns `buf`.
 */
const char *msc_reason_computer_unavailable(const char *computer,
    const char *driver, const char *detail, char *buf, size_t len);

/*
 * What the agent reads when a computer's driver could not be sent the
 * call (it is unreachable). Returns `buf`.
 */
const char *msc_reason_driver_unreachable(const char *computer,
    const char *driver, char *buf, size_t len);

/* The detail of a call the inventory service could not be sent (static). */
const char *msc_reason_inventory_unreachable(void);

/*
 * What the client is told when a call to the session service could not
 * be sent: `rv` is msc_client_call's error. Too many calls open is an
 * overload; a service unreachable for a few seconds is unavailable. Each
 * says when to retry; *retry_sp (may be NULL) gets the seconds to wait.
 * Static.
 */
const char *msc_reason_session_unsent(int rv, int *retry_sp);

/*
 * What the agent reads when no session could be opened for its call:
 * the service was `overloaded`, or not available, with `detail`.
 * Returns `buf`.
 */
const char *msc_reason_session_not_opened(bool overloaded,
    const char *detail, char *buf, size_t len);

/*
 * The step of a tool call that a provider failed in, for the generic text
 * the agent reads instead of the provider's details (REASON_PROVIDER).
 */
enum msc_reason_step {
	MSC_REASON_STEP_CREATE,         /* create or attach a computer */
	MSC_REASON_STEP_EXEC,           /* run a command */
	MSC_REASON_STEP_OTHER,          /* list, restart, reset, delete */
};

/*
 * The reference's generic text (its later revision) for a provider's
 * failure of `step` with status `code`: a deadline is named as such.
 * Static.
 */
const char *msc_reason_provider_text(enum msc_reason_step step,
    Msc__V1__Code code);

#endif /* MSC_REASON_H */
