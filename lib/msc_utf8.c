#include "msc_utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Length of the well-formed sequence at s (1..4), or 0 when ill-formed;
 * *bad gets how many bytes form the maximal ill-formed prefix (>= 1).
 */
static size_t
seq_len(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0];
	size_t need;
	unsigned char lo = 0x80, hi = 0xBF;

	*bad = 1;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		need = 1;
	else if (c >= 0xE0 && c <= 0xEF) {
		need = 2;
		if (c == 0xE0)
			lo = 0xA0;
		if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 3;
		if (c == 0xF0)
			lo = 0x90;
		if (c == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	for (size_t i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	return need + 1;
}

bool
msc_utf8_valid(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0, bad, n;

	while (i < len) {
		if ((n = seq_len(s + i, len - i, &bad)) == 0)
			return false;
		i += n;
	}
	return true;
}

char *
msc_utf8_repair(const char *buf, size_t len, size_t *outlen)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = 0, o = 0, bad, n;
	char *out;

	/* Worst case: every byte becomes 3 bytes of U+FFFD. */
	if (len > (SIZE_MAX - 1) / 3 || (out = malloc(len * 3 + 1)) == NULL)
		return NULL;
	while (i < len) {
		if ((n = seq_len(s + i, len - i, &bad)) != 0) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i += bad;
		}
	}
	out[o] = '\0';
	if (outlen != NULL)
		*outlen = o;
	return out;
}
