/* hash.c - sha256sum, md5sum (with -c) and base64. */
#include "../toolbox.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct digest {
	uint32_t	h[8];
	uint8_t		buf[64];
	size_t		nbuf;
	uint64_t	len;
	bool		md5;
};

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
	0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
	0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
	0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
	0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void
sha256_block(struct digest *d, const uint8_t *p)
{
	uint32_t w[64], a, b, c, e, f, g, h, dd, t1, t2;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
		    (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
		    (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = d->h[0]; b = d->h[1]; c = d->h[2]; dd = d->h[3];
	e = d->h[4]; f = d->h[5]; g = d->h[6]; h = d->h[7];
	for (int i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = dd + t1;
		dd = c; c = b; b = a; a = t1 + t2;
	}
	d->h[0] += a; d->h[1] += b; d->h[2] += c; d->h[3] += dd;
	d->h[4] += e; d->h[5] += f; d->h[6] += g; d->h[7] += h;
}

static void
md5_block(struct digest *d, const uint8_t *p)
{
	static const int r[] = { 7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23,
		6, 10, 15, 21 };
	uint32_t m[16], a = d->h[0], b = d->h[1], c = d->h[2], e = d->h[3];

	for (int i = 0; i < 16; i++)
		m[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
		    (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
	for (int i = 0; i < 64; i++) {
		uint32_t f, k = (uint32_t)(fabs(sin(i + 1.0)) * 4294967296.0);
		int g, round = i / 16;

		if (round == 0) {
			f = (b & c) | (~b & e);
			g = i;
		} else if (round == 1) {
			f = (e & b) | (~e & c);
			g = (5 * i + 1) % 16;
		} else if (round == 2) {
			f = b ^ c ^ e;
			g = (3 * i + 5) % 16;
		} else {
			f = c ^ (b | ~e);
			g = (7 * i) % 16;
		}
		f += a + k + m[g];
		a = e;
		e = c;
		c = b;
		b += ROL(f, r[round * 4 + i % 4]);
	}
	d->h[0] += a; d->h[1] += b; d->h[2] += c; d->h[3] += e;
}

static void
digest_init(struct digest *d, bool md5)
{
	static const uint32_t sha_h[8] = { 0x6a09e667, 0xbb67ae85,
		0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
		0x5be0cd19 };
	static const uint32_t md5_h[4] = { 0x67452301, 0xefcdab89,
		0x98badcfe, 0x10325476 };

	memset(d, 0, sizeof(*d));
	d->md5 = md5;
	memcpy(d->h, md5 ? md5_h : sha_h, md5 ? sizeof(md5_h) : sizeof(sha_h));
}

static void
digest_add(struct digest *d, const uint8_t *p, size_t n)
{
	d->len += n;
	while (n > 0) {
		size_t k = 64 - d->nbuf < n ? 64 - d->nbuf : n;

		memcpy(d->buf + d->nbuf, p, k);
		d->nbuf += k;
		p += k;
		n -= k;
		if (d->nbuf == 64) {
			(d->md5 ? md5_block : sha256_block)(d, d->buf);
			d->nbuf = 0;
		}
	}
}

/* Finishes and writes the hex digest into out (65 bytes). */
static void
digest_hex(struct digest *d, char *out)
{
	uint64_t bits = d->len * 8;
	uint8_t pad[72] = { 0x80 }, len[8];
	size_t padn = (d->nbuf < 56 ? 56 : 120) - d->nbuf;
	int words = d->md5 ? 4 : 8;

	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(d->md5 ? bits >> (8 * i) :
		    bits >> (56 - 8 * i));
	digest_add(d, pad, padn);
	digest_add(d, len, 8);
	for (int i = 0; i < words; i++) {
		uint32_t v = d->h[i];

		if (d->md5)
			v = (v >> 24) | ((v >> 8) & 0xff00) |
			    ((v << 8) & 0xff0000) | (v << 24);
		snprintf(out + 8 * i, 9, "%08x", v);
	}
}

static int
hash_file(struct tb_io *io, const char *applet, const char *path, bool md5,
    char *hex)
{
	FILE *in = tb_open_in(io, applet, path);
	struct digest d;
	uint8_t buf[8192];
	size_t n;

	if (in == NULL)
		return -1;
	digest_init(&d, md5);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		digest_add(&d, buf, n);
	tb_close_in(io, in);
	digest_hex(&d, hex);
	return 0;
}

/* -c: checks "HASH  NAME" lines. */
static int
check_list(struct tb_io *io, const char *applet, const char *list, bool md5)
{
	FILE *f = tb_open_in(io, applet, list);
	char *line = NULL, hex[65];
	size_t cap = 0, hl = md5 ? 32 : 64;
	ssize_t n;
	int bad = 0;

	if (f == NULL)
		return 1;
	while ((n = getline(&line, &cap, f)) > 0) {
		char *name;

		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if ((size_t)n < hl + 2 || line[hl] != ' ')
			continue;
		name = line + hl + 1 + (line[hl + 1] == ' ' ||
		    line[hl + 1] == '*');
		if (hash_file(io, applet, name, md5, hex) != 0 ||
		    strncasecmp(hex, line, hl) != 0) {
			fprintf(io->out, "%s: FAILED\n", name);
			bad++;
		} else
			fprintf(io->out, "%s: OK\n", name);
	}
	free(line);
	tb_close_in(io, f);
	if (bad)
		tb_err(io, applet, "WARNING: %d computed checksum%s did NOT "
		    "match", bad, bad > 1 ? "s" : "");
	return bad ? 1 : 0;
}

static int
sum_main(struct tb_io *io, int argc, char **argv, bool md5)
{
	const char *applet = md5 ? "md5sum" : "sha256sum";
	struct tb_opt o;
	bool check = false;
	char hex[65];
	int c, rc = 0;

	tb_opt_init(&o, io, applet, argc, argv);
	while ((c = tb_opt_next(&o, "cbt")) != TB_OPT_END) {
		if (c == 'c')
			check = true;
		else if (c != 'b' && c != 't')
			return 1;
	}
	if (check)
		return check_list(io, applet, o.ind < argc ? argv[o.ind] : "-",
		    md5);
	for (int i = o.ind; i < argc || i == o.ind; i++) {
		const char *p = i < argc ? argv[i] : "-";

		if (hash_file(io, applet, p, md5, hex) != 0) {
			rc = 1;
		} else
			fprintf(io->out, "%s  %s\n", hex, p);
		if (i >= argc)
			break;
	}
	return rc;
}

int
applet_sha256sum(struct tb_io *io, int argc, char **argv)
{
	return sum_main(io, argc, argv, false);
}

int
applet_md5sum(struct tb_io *io, int argc, char **argv)
{
	return sum_main(io, argc, argv, true);
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int
b64_decode(struct tb_io *io, FILE *in, bool ignore)
{
	unsigned v = 0;
	int c, bits = 0;

	while ((c = getc(in)) != EOF) {
		const char *p;

		if (c == '=' || c == '\n' || c == '\r' || c == ' ')
			continue;
		if ((p = strchr(b64, c)) == NULL || c == '\0') {
			if (ignore)
				continue;
			tb_err(io, "base64", "invalid input");
			return 1;
		}
		v = (v << 6) | (unsigned)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			fputc((int)((v >> bits) & 0xff), io->out);
		}
	}
	return 0;
}

int
applet_base64(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	bool decode = false, ignore = false;
	long long wrap = 76, col = 0;
	unsigned char in3[3];
	size_t n;
	FILE *in;
	int c, rc = 0;

	tb_opt_init(&o, io, "base64", argc, argv);
	while ((c = tb_opt_next(&o, "diw:")) != TB_OPT_END) {
		if (c == 'd')
			decode = true;
		else if (c == 'i')
			ignore = true;
		else if (c == 'w' && tb_parse_ll(o.arg, &wrap) == 0 && wrap >= 0)
			;
		else if (c == TB_OPT_LONG && strcmp(o.arg, "decode") == 0)
			decode = true;
		else
			return 1;
	}
	if ((in = tb_open_in(io, "base64", o.ind < argc ? argv[o.ind] : "-"))
	    == NULL)
		return 1;
	if (decode) {
		rc = b64_decode(io, in, ignore);
		tb_close_in(io, in);
		return rc;
	}
	while ((n = fread(in3, 1, 3, in)) > 0) {
		char out[4];
		unsigned v = (unsigned)in3[0] << 16 | (n > 1 ? (unsigned)in3[1]
		    << 8 : 0) | (n > 2 ? in3[2] : 0);

		out[0] = b64[v >> 18];
		out[1] = b64[(v >> 12) & 63];
		out[2] = n > 1 ? b64[(v >> 6) & 63] : '=';
		out[3] = n > 2 ? b64[v & 63] : '=';
		for (int k = 0; k < 4; k++) {
			fputc(out[k], io->out);
			if (wrap > 0 && ++col == wrap) {
				fputc('\n', io->out);
				col = 0;
			}
		}
		if (n < 3)
			break;
	}
	if (wrap == 0 || col > 0)
		fputc('\n', io->out);
	tb_close_in(io, in);
	return rc;
}
