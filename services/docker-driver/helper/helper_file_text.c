/*
 * helper_file_text.c - the pure parts of the helper's file commands
 * (helper_file.h): UTF-8, the text window within its budget, binary
 * detection and mime types, base64. No system calls: unit-tested on the
 * host (tests/unit/test_helper_file.c).
 */
#include "helper_file.h"

#include <stdio.h>
#include <string.h>

size_t
hxf_utf8_len(const uint8_t *p, size_t n, bool partial_ok)
{
	uint8_t c = p[0];
	size_t len;
	uint8_t lo = 0x80, hi = 0xbf;   /* the second byte's range */

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;      /* no overlong form */
		else if (c == 0xed)
			hi = 0x9f;      /* no surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;      /* at most U+10FFFF */
	} else
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (i >= n)
			return partial_ok ? n : 0;
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xbf))
			return 0;
	}
	return len;
}

bool
hxf_looks_binary(const uint8_t *p, size_t n)
{
	size_t odd = 0;

	if (n > HXF_SNIFF)
		n = HXF_SNIFF;
	for (size_t i = 0; i < n;) {
		size_t len = hxf_utf8_len(p + i, n - i, true);
		uint8_t c = p[i];

		if (c == 0)
			return true;
		if (len == 0 || (c < 0x20 && c != '\t' && c != '\n' &&
		    c != '\r' && c != '\f' && c != '\v' && c != '\b' &&
		    c != 0x1b))
			odd++;
		i += len == 0 ? 1 : len;
	}
	return odd * 10 > n;
}

const char *
hxf_mime(const uint8_t *p, size_t n)
{
	static const struct {
		const char *magic;
		size_t len, at;
		const char *type;
	} types[] = {
		{ "\x89PNG\r\n\x1a\n", 8, 0, "image/png" },
		{ "\xff\xd8\xff", 3, 0, "image/jpeg" },
		{ "GIF8", 4, 0, "image/gif" },
		{ "WEBP", 4, 8, "image/webp" },
		{ "%PDF-", 5, 0, "application/pdf" },
		{ "PK\x03\x04", 4, 0, "application/zip" },
		{ "\x1f\x8b", 2, 0, "application/gzip" },
		{ "BZh", 3, 0, "application/x-bzip2" },
		{ "\xfd" "7zXZ", 5, 0, "application/x-xz" },
		{ "\x28\xb5\x2f\xfd", 4, 0, "application/zstd" },
		{ "\x7f" "ELF", 4, 0, "application/x-executable" },
		{ "\0asm", 4, 0, "application/wasm" },
		{ "SQLite format 3", 16, 0, "application/vnd.sqlite3" },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (n >= types[i].at + types[i].len && memcmp(p + types[i].at,
		    types[i].magic, types[i].len) == 0)
			return types[i].type;
	return "application/octet-stream";
}

/* The JSON size of the character at p (its length in *len). */
static size_t
char_cost(const uint8_t *p, size_t n, size_t *len)
{
	size_t l = hxf_utf8_len(p, n, false);

	*len = l == 0 ? 1 : l;
	if (l == 0)
		return 3;               /* U+FFFD */
	return l == 1 ? hxp_esc_len(p[0]) : l;
}

static void
emit_char(struct out *o, const uint8_t *p, size_t len, bool valid)
{
	if (!valid)
		hxp_out_raw(o, "\xef\xbf\xbd", 3);
	else if (len == 1) {
		char s[8];
		uint8_t c = p[0];

		if (c == '"' || c == '\\')
			snprintf(s, sizeof(s), "\\%c", c);
		else if (c == '\n')
			snprintf(s, sizeof(s), "\\n");
		else if (c == '\t')
			snprintf(s, sizeof(s), "\\t");
		else if (c == '\r')
			snprintf(s, sizeof(s), "\\r");
		else if (c < 0x20)
			snprintf(s, sizeof(s), "\\u%04x", c);
		else
			snprintf(s, sizeof(s), "%c", c);
		hxp_out_cstr(o, s);
	} else
		hxp_out_raw(o, (const char *)p, len);
}

void
hxf_emit_text(struct out *o, const uint8_t *raw, size_t n,
    long long first_line, bool numbers, size_t budget, struct hxf_text *r)
{
	size_t spent = 2, pos = 0;      /* the quotes */
	char num[32];

	memset(r, 0, sizeof(*r));
	hxp_out_cstr(o, "\"");
	while (pos < n) {
		const uint8_t *nl = memchr(raw + pos, '\n', n - pos);
		size_t end = nl != NULL ? (size_t)(nl - raw) + 1 : n;
		size_t cost = 0, k, len;
		int nn = 0;

		if (numbers)
			nn = snprintf(num, sizeof(num), "%6lld\\t",
			    first_line + r->lines);
		cost = (size_t)nn;
		for (k = pos; k < end; k += len)
			cost += char_cost(raw + k, end - k, &len);
		if (spent + cost > budget && r->lines > 0)
			break;
		if (spent + cost > budget)
			r->cut = true;  /* the first line: its head */
		if (nn > 0 && spent + (size_t)nn <= budget) {
			hxp_out_raw(o, num, (size_t)nn);
			spent += (size_t)nn;
		}
		for (k = pos; k < end; k += len) {
			size_t c = char_cost(raw + k, end - k, &len);

			if (spent + c > budget)
				break;
			emit_char(o, raw + k, len, hxf_utf8_len(raw + k,
			    end - k, false) != 0);
			if (hxf_utf8_len(raw + k, end - k, false) == 0)
				r->invalid = true;
			spent += c;
		}
		pos = k;
		if (r->cut)
			break;
		r->lines++;
	}
	r->used = pos;
	hxp_out_cstr(o, "\"");
}

void
hxf_out_base64(struct out *o, const uint8_t *p, size_t n)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];

	hxp_out_cstr(o, "\"");
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		q[0] = al[v >> 18 & 63];
		q[1] = al[v >> 12 & 63];
		q[2] = i + 1 < n ? al[v >> 6 & 63] : '=';
		q[3] = i + 2 < n ? al[v & 63] : '=';
		hxp_out_raw(o, q, 4);
	}
	hxp_out_cstr(o, "\"");
}
