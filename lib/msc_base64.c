/*
 * msc_base64.c - strict base64 (msc_base64.h): the 2026-07-28 header
 * sentinels (edge/mcp_era.c), file_write's base64 content, and a
 * text-only exec's stdin (msc_helper_copy.c).
 */
#include "msc_base64.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static int
value(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

int
msc_base64_decode(const char *in, size_t len, uint8_t **out, size_t *outlen)
{
	uint8_t *p;
	size_t o = 0;

	if (len % 4 != 0)
		return -EINVAL;
	if ((p = malloc(len / 4 * 3 + 1)) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i += 4) {
		int v[4], pad = 0;

		for (int k = 0; k < 4; k++) {
			v[k] = value(in[i + k]);
			if (in[i + k] == '=' && i + 4 == len && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (v[k] < 0 || pad > 0) {
				free(p);
				return -EINVAL;
			}
		}
		uint32_t n = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 |
		    (uint32_t)v[2] << 6 | (uint32_t)v[3];

		p[o++] = (uint8_t)(n >> 16);
		if (pad < 2)
			p[o++] = (uint8_t)(n >> 8 & 0xff);
		if (pad < 1)
			p[o++] = (uint8_t)(n & 0xff);
	}
	p[o] = '\0';
	*out = p;
	*outlen = o;
	return 0;
}

int
msc_base64_encode(const uint8_t *in, size_t len, char **out)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o;
	size_t i, k = 0;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3 ||
	    (o = malloc((len + 2) / 3 * 4 + 1)) == NULL)
		return -ENOMEM;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 |
		    in[i + 2];

		o[k++] = abc[v >> 18];
		o[k++] = abc[(v >> 12) & 63];
		o[k++] = abc[(v >> 6) & 63];
		o[k++] = abc[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16 |
		    (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);

		o[k++] = abc[v >> 18];
		o[k++] = abc[(v >> 12) & 63];
		o[k++] = i + 1 < len ? abc[(v >> 6) & 63] : '=';
		o[k++] = '=';
	}
	o[k] = '\0';
	*out = o;
	return 0;
}
