/*
 * session_output.h - the output a reply carries: at most
 * --reply-output-limit bytes of stdout and stderr together. A stream
 * past its share comes as its head, a marker and its tail, and is first
 * saved whole in the computer (one Driver/Exec per stream writing it to
 * /tmp/kilntainers-output/), so the agent can grep or tail it there.
 */
#ifndef SESS_SESSION_OUTPUT_H
#define SESS_SESSION_OUTPUT_H

#include <stddef.h>

#include "driver.pb-c.h"
#include "msc_rpc.h"
#include "session.pb-c.h"

struct sess_service;

/*
 * Called once with the reply filled (stdout and stderr malloc'd, valid
 * UTF-8; NULL data when out of memory): the callee replies and frees
 * rep->stdout.data and rep->stderr.data.
 */
typedef void (*sess_output_done)(void *arg, Msc__V1__TerminalExecReply *rep);

/* Where a stream goes: the driver and computer that ran the command. */
struct sess_output_to {
	struct msc_client *driver;      /* borrowed */
	const char *computer_id;        /* borrowed until done */
	const char *owner;              /* the session's tag; borrowed */
	uint64_t deadline_ms;           /* the call's (msc_now_ms clock) */
};

/*
 * Fills rep->stdout/stderr from the command's result `res` (taken: freed
 * here) within cfg->reply_output_limit, saving the streams it cuts, and
 * calls done(arg, rep): at once, or after the saves (from an RPC thread).
 * rep's other fields are the caller's and must stay valid until done.
 */
void sess_output_reply(struct sess_service *s, const struct sess_output_to *to,
    Msc__V1__ExecResult *res, Msc__V1__TerminalExecReply *rep,
    sess_output_done done, void *arg);

/*
 * The cut itself (exposed for unit tests): writes into out (malloc'd,
 * *outlen) the head and tail of `in` within `share` bytes, each cut at a
 * line end when one is near and never inside a UTF-8 sequence, with the
 * marker naming `name` ("stdout"), the whole length and `file` (where it
 * was saved) or `why` (why it could not be). U+FFFD repair applied.
 * 0 or -ENOMEM.
 */
int sess_output_cut(const uint8_t *in, size_t len, size_t share,
    const char *name, const char *file, const char *why, char **out,
    size_t *outlen);

#endif /* SESS_SESSION_OUTPUT_H */
