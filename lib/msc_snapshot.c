/* msc_snapshot.c - snapshot ids and names (msc_snapshot.h). */
#include "msc_snapshot.h"

#include <stdint.h>
#include <string.h>

#include "msc_random.h"

bool
msc_snapshot_id_valid(const char *s)
{
	size_t n = strnlen(s, MSC_SNAPSHOT_ID_LEN + 1);

	return n == MSC_SNAPSHOT_ID_LEN &&
	    strncmp(s, MSC_SNAPSHOT_PREFIX, 5) == 0 &&
	    strspn(s + 5, "0123456789abcdef") == MSC_SNAPSHOT_HEX;
}

bool
msc_snapshot_name_valid(const char *s)
{
	size_t n = strnlen(s, MSC_SNAPSHOT_NAME_MAX + 1);

	return n <= MSC_SNAPSHOT_NAME_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"0123456789 ._-") == n;
}

void
msc_snapshot_id_new(char out[MSC_SNAPSHOT_ID_LEN + 1])
{
	uint8_t b[MSC_SNAPSHOT_HEX / 2];

	msc_random_bytes(b, sizeof(b));
	memcpy(out, MSC_SNAPSHOT_PREFIX, 5);
	for (size_t i = 0; i < sizeof(b); i++) {
		out[5 + 2 * i] = "0123456789abcdef"[b[i] >> 4];
		out[5 + 2 * i + 1] = "0123456789abcdef"[b[i] & 15];
	}
	out[MSC_SNAPSHOT_ID_LEN] = '\0';
}
