#include "msc_slug.h"

#include "msc_random.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const adjectives[] = { "amber", "brisk", "calm", "clever",
	"coral", "crisp", "gentle", "lucky", "quiet", "rapid", "silver",
	"steady" };
static const char *const nouns[] = { "badger", "comet", "falcon", "gecko",
	"heron", "lynx", "otter", "panda", "raven", "tiger", "whale", "wolf" };

bool
msc_slug_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MSC_SLUG_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (!alnum && !(c == '-' && i > 0 && i < n - 1))
			return false;
	}
	return true;
}

int
msc_slug_normalize(const char *s, char out[MSC_SLUG_MAX + 1])
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	if (n == 0 || n > MSC_SLUG_MAX)
		return -EINVAL;
	memcpy(out, s, n);
	out[n] = '\0';
	return msc_slug_valid(out) ? 0 : -EINVAL;
}

void
msc_slug_random(char out[MSC_SLUG_MAX + 1])
{
	uint8_t r[4];

	msc_random_bytes(r, sizeof(r));
	snprintf(out, MSC_SLUG_MAX + 1, "%s-%s-%02x%02x",
	    adjectives[r[0] % (sizeof(adjectives) / sizeof(*adjectives))],
	    nouns[r[1] % (sizeof(nouns) / sizeof(*nouns))], r[2], r[3]);
}
