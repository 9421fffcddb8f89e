/* msc_slug.h - computer ids: validation and readable random slugs. */
#ifndef MSC_SLUG_H
#define MSC_SLUG_H

#include <stdbool.h>
#include <stddef.h>

#include "msc_random.h" /* msc_random_bytes, for the callers of old */

#define MSC_SLUG_MAX 63
#define MSC_SLUG_ERROR                                                        \
	"computer_id must be 1-63 lowercase letters, numbers, or hyphens; it " \
	"must start and end with a letter or number."

/* True when s matches ^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$. */
bool msc_slug_valid(const char *s);

/*
 * Copies s without leading/trailing whitespace into out (size >= 64).
 * Returns 0, or -EINVAL when the trimmed id is not a valid slug.
 */
int msc_slug_normalize(const char *s, char out[MSC_SLUG_MAX + 1]);

/* Writes "<adjective>-<noun>-<4 hex>" from the kernel CSPRNG into out. */
void msc_slug_random(char out[MSC_SLUG_MAX + 1]);

#endif /* MSC_SLUG_H */
