/*
 * msc_redact.h - the secrets this process was given (tokens, API keys),
 * kept out of what it writes: every log line (msc_log) and every failure
 * message it sends to another service (msc_call_fail) has each of them
 * replaced with "[redacted]". A provider's error text may echo the
 * credential it was sent; that is how one would reach a log otherwise.
 *
 * Secrets are added at startup (msc_cfg_parse adds the configured ones,
 * drivers those they read themselves) and never removed; adding is
 * thread-safe, and redacting takes no lock.
 */
#ifndef MSC_REDACT_H
#define MSC_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#define MSC_REDACT_MAX 32       /* secrets kept; more: -ENOSPC */
#define MSC_REDACT_MIN 4        /* shorter values are not secrets */
#define MSC_REDACT_MARK "[redacted]"

/* Keeps a copy of `secret`. 0 (also when it is already kept), -EINVAL
 * (NULL or shorter than MSC_REDACT_MIN), -ENOSPC or -ENOMEM. */
int msc_redact_add(const char *secret);

/*
 * Replaces every kept secret in the NUL-terminated buf (of cap bytes)
 * with MSC_REDACT_MARK, cutting what no longer fits. A text that is cut
 * (here, or already: `cut`, e.g. by a vsnprintf that ran out of room)
 * also loses the first bytes of a secret it may end with. Returns the
 * new length.
 */
size_t msc_redact(char *buf, size_t cap, bool cut);

#endif /* MSC_REDACT_H */
