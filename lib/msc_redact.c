#include "msc_redact.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Written under add_mu only; a slot is filled before n_kept counts it. */
static const char *kept[MSC_REDACT_MAX];
static size_t kept_len[MSC_REDACT_MAX];
static atomic_size_t n_kept;
static pthread_mutex_t add_mu = PTHREAD_MUTEX_INITIALIZER;

int
msc_redact_add(const char *secret)
{
	size_t n, len;
	char *copy;
	int rv = 0;

	if (secret == NULL || (len = strlen(secret)) < MSC_REDACT_MIN)
		return -EINVAL;
	pthread_mutex_lock(&add_mu);
	n = atomic_load_explicit(&n_kept, memory_order_relaxed);
	for (size_t i = 0; i < n; i++)
		if (kept_len[i] == len && memcmp(kept[i], secret, len) == 0)
			goto out;
	if (n == MSC_REDACT_MAX) {
		rv = -ENOSPC;
		goto out;
	}
	if ((copy = strdup(secret)) == NULL) {
		rv = -ENOMEM;
		goto out;
	}
	kept[n] = copy;
	kept_len[n] = len;
	atomic_store_explicit(&n_kept, n + 1, memory_order_release);
out:
	pthread_mutex_unlock(&add_mu);
	return rv;
}

/*
 * Replaces the len bytes at p (inside buf, of length *used) with the
 * mark; returns whether the text had to be cut to fit.
 */
static bool
replace_at(char *buf, size_t cap, size_t *used, char *p, size_t len)
{
	const size_t mark = sizeof(MSC_REDACT_MARK) - 1;
	size_t at = (size_t)(p - buf), tail = *used - at - len;
	size_t room = cap - 1;  /* bytes before the NUL */
	bool cut = false;

	if (at + mark > room) {         /* not even the mark fits: cut here */
		memcpy(p, MSC_REDACT_MARK, room - at);
		*used = room;
		buf[room] = '\0';
		return true;
	}
	if (at + mark + tail > room) {
		tail = room - at - mark;
		cut = true;
	}
	memmove(p + mark, p + len, tail);
	memcpy(p, MSC_REDACT_MARK, mark);
	*used = at + mark + tail;
	buf[*used] = '\0';
	return cut;
}

/* A text cut short may end in the first bytes of a secret: they go. */
static size_t
drop_cut_prefix(char *buf, size_t used, size_t n)
{
	bool dropped;

	do {
		dropped = false;
		for (size_t i = 0; i < n; i++)
			for (size_t k = kept_len[i] - 1; k > 0; k--)
				if (k <= used &&
				    memcmp(buf + used - k, kept[i], k) == 0) {
					used -= k;
					dropped = true;
					break;
				}
	} while (dropped);
	buf[used] = '\0';
	return used;
}

size_t
msc_redact(char *buf, size_t cap, bool cut)
{
	size_t n = atomic_load_explicit(&n_kept, memory_order_acquire);
	size_t used;

	if (buf == NULL || cap == 0)
		return 0;
	used = strnlen(buf, cap - 1);
	buf[used] = '\0';
	for (size_t i = 0; i < n; i++) {
		char *from = buf, *p;

		while ((p = strstr(from, kept[i])) != NULL) {
			cut |= replace_at(buf, cap, &used, p, kept_len[i]);
			from = p + sizeof(MSC_REDACT_MARK) - 1;
			if ((size_t)(from - buf) >= used)
				break;
		}
	}
	return cut ? drop_cut_prefix(buf, used, n) : used;
}
