#include "msc_random.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

void
msc_random_bytes(void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n > 0) {
		ssize_t r = getrandom(p, n, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			/* getrandom cannot fail on Linux >= 3.17 otherwise. */
			memset(p, 0, n);
			return;
		}
		p += r;
		n -= (size_t)r;
	}
}

void
msc_random_hex(char *out, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t b[64];

	while (n > 0) {
		size_t k = n < sizeof(b) ? n : sizeof(b);

		msc_random_bytes(b, k);
		for (size_t i = 0; i < k; i++) {
			*out++ = hex[b[i] >> 4];
			*out++ = hex[b[i] & 15];
		}
		n -= k;
	}
	*out = '\0';
}

uint32_t
msc_random_uniform(uint32_t bound)
{
	uint32_t r, min;

	if (bound < 2)
		return 0;
	/* Rejects the values below 2^32 % bound, so every residue is as
	 * likely (as arc4random_uniform does). */
	min = -bound % bound;
	do
		msc_random_bytes(&r, sizeof(r));
	while (r < min);
	return r % bound;
}
