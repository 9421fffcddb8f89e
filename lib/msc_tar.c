/*
 * msc_tar.c - pax/ustar headers written and read; see msc_tar.h.
 */
#include "msc_tar.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAX_MAX (64 * 1024)

/* ustar's fields: offset and length in the header block. */
#define H_NAME 0, 100
#define H_MODE 100, 8
#define H_UID 108, 8
#define H_GID 116, 8
#define H_SIZE 124, 12
#define H_MTIME 136, 12
#define H_CHKSUM 148, 8
#define H_TYPE 156
#define H_LINK 157, 100
#define H_MAGIC 257, 6
#define H_VERSION 263, 2

static void
put_str(uint8_t *h, size_t off, size_t len, const char *s)
{
	size_t n = strlen(s);

	memcpy(h + off, s, n < len ? n : len);
}

/* An octal number in a field, NUL-ended; false when it does not fit. */
static bool
put_oct(uint8_t *h, size_t off, size_t len, uint64_t v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%0*llo", (int)len - 1,
	    (unsigned long long)v);

	if (n < 0 || (size_t)n >= len)
		return false;
	memcpy(h + off, buf, (size_t)n + 1);
	return true;
}

/* Appends one "LEN key=value\n" record to p (room enough); its length. */
static size_t
pax_record(char *p, const char *key, const char *value)
{
	size_t body = strlen(key) + strlen(value) + 3, len = body, digits;

	/* LEN counts its own digits. */
	for (;;) {
		char tmp[24];

		digits = (size_t)snprintf(tmp, sizeof(tmp), "%zu", len);
		if (body + digits == len)
			break;
		len = body + digits;
	}
	return (size_t)sprintf(p, "%zu %s=%s\n", len, key, value);
}

static void
checksum(uint8_t *h)
{
	unsigned sum = 0;

	memset(h + 148, ' ', 8);
	for (int i = 0; i < MSC_TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

static void
ustar(uint8_t *h, const char *name, char type, unsigned mode, uint64_t size,
    int64_t mtime, const char *link)
{
	memset(h, 0, MSC_TAR_BLOCK);
	put_str(h, H_NAME, name);
	(void)put_oct(h, H_MODE, mode & 07777);
	(void)put_oct(h, H_UID, 0);
	(void)put_oct(h, H_GID, 0);
	if (!put_oct(h, H_SIZE, size))
		(void)put_oct(h, H_SIZE, 0);    /* the pax size says it */
	(void)put_oct(h, H_MTIME, mtime > 0 ? (uint64_t)mtime : 0);
	h[H_TYPE] = (uint8_t)type;
	put_str(h, H_LINK, link);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	checksum(h);
}

size_t
msc_tar_pad(uint64_t n)
{
	return (size_t)((MSC_TAR_BLOCK - n % MSC_TAR_BLOCK) % MSC_TAR_BLOCK);
}

size_t
msc_tar_header(const struct msc_tar_entry *e, uint8_t *out)
{
	char recs[2 * MSC_TAR_NAME_MAX + 200], num[32];
	size_t rl = 0, at = 0;

	if (strlen(e->name) >= 100)
		rl += pax_record(recs + rl, "path", e->name);
	if (strlen(e->link) >= 100)
		rl += pax_record(recs + rl, "linkpath", e->link);
	if (e->size >= 077777777777ULL) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)e->size);
		rl += pax_record(recs + rl, "size", num);
	}
	if (e->offset > 0) {
		snprintf(num, sizeof(num), "%llu",
		    (unsigned long long)e->offset);
		rl += pax_record(recs + rl, "MSC.offset", num);
	}
	if (e->final)
		rl += pax_record(recs + rl, "MSC.final", "1");
	if (rl > 0) {
		ustar(out, "PaxHeader", 'x', 0644, rl, e->mtime, "");
		memcpy(out + MSC_TAR_BLOCK, recs, rl);
		memset(out + MSC_TAR_BLOCK + rl, 0, msc_tar_pad(rl));
		at = MSC_TAR_BLOCK + rl + msc_tar_pad(rl);
	}
	ustar(out + at, e->name, e->type, e->mode, e->size, e->mtime, e->link);
	return at + MSC_TAR_BLOCK;
}

/* ---- reading ------------------------------------------------------------ */

void
msc_tar_rd_init(struct msc_tar_rd *r)
{
	memset(r, 0, sizeof(*r));
}

void
msc_tar_rd_fini(struct msc_tar_rd *r)
{
	free(r->pax);
	r->pax = NULL;
}

bool
msc_tar_name_ok(const char *name)
{
	const char *p = name;
	size_t n = strlen(name);

	if (n == 0 || n > MSC_TAR_NAME_MAX || name[0] == '/')
		return false;
	if (strcmp(name, ".") == 0)
		return true;
	while (*p != '\0') {
		const char *slash = strchr(p, '/');
		size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);

		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (slash == NULL)
			break;
		p = slash + 1;
		if (*p == '\0')
			return false;
	}
	return true;
}

static bool
get_oct(const uint8_t *h, size_t off, size_t len, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (h[off] & 0x80)
		return false;           /* base-256: never written here */
	while (i < len && h[off + i] == ' ')
		i++;
	for (; i < len && h[off + i] >= '0' && h[off + i] <= '7'; i++) {
		if (*v >> 61)
			return false;
		*v = *v * 8 + (uint64_t)(h[off + i] - '0');
	}
	return i == len || h[off + i] == '\0' || h[off + i] == ' ';
}

/* A NUL-ended copy of a field (or of the pax value) into out. */
static void
get_str(const uint8_t *h, size_t off, size_t len, char *out)
{
	size_t n = strnlen((const char *)h + off, len);

	memcpy(out, h + off, n);
	out[n] = '\0';
}

static bool
header_ok(const uint8_t *h)
{
	uint64_t want;
	unsigned sum = 0;

	if (!get_oct(h, H_CHKSUM, &want))
		return false;
	for (int i = 0; i < MSC_TAR_BLOCK; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	return sum == want;
}

/* Applies the pax records kept for this header; false: malformed. */
static bool
apply_pax(struct msc_tar_rd *r)
{
	char *p = r->pax, *end = r->pax + r->pax_len;

	*end = '\0';            /* the block has room for it */
	while (p < end) {
		char *sp, *eq, *rec_end;
		unsigned long long len;
		size_t vl;

		/* "LEN key=value\n": LEN's digits first (strtoull would skip
		 * blanks and a sign), the record holds its space, a key,
		 * '=' and '\n'. The block is NUL-ended, so strtoull stops. */
		if (*p < '0' || *p > '9')
			return false;
		len = strtoull(p, &sp, 10);
		if (*sp != ' ' || len > (size_t)(end - p) ||
		    len < (size_t)(sp - p) + 4)
			return false;
		rec_end = p + len;
		if (rec_end[-1] != '\n' ||
		    (eq = memchr(sp + 1, '=', (size_t)(rec_end - sp - 2))) ==
		    NULL || eq == sp + 1)
			return false;
		*eq = '\0';
		vl = (size_t)(rec_end - 1 - (eq + 1));
		if (strcmp(sp + 1, "path") == 0 ||
		    strcmp(sp + 1, "linkpath") == 0) {
			char *dst = sp[1] == 'p' ? r->e.name : r->e.link;

			if (vl > MSC_TAR_NAME_MAX || memchr(eq + 1, '\0', vl))
				return false;
			memcpy(dst, eq + 1, vl);
			dst[vl] = '\0';
		} else if (strcmp(sp + 1, "size") == 0 ||
		    strcmp(sp + 1, "MSC.offset") == 0) {
			char num[32], *e;
			unsigned long long v;

			if (vl == 0 || vl >= sizeof(num))
				return false;
			memcpy(num, eq + 1, vl);
			num[vl] = '\0';
			v = strtoull(num, &e, 10);
			if (*e != '\0')
				return false;
			if (sp[1] == 's')
				r->e.size = v;
			else
				r->e.offset = v;
		} else if (strcmp(sp + 1, "MSC.final") == 0)
			r->e.final = vl == 1 && eq[1] == '1';
		p = rec_end;
	}
	return true;
}

/* A whole header block in r->blk: the entry, or a pax block's start. */
static int
header(struct msc_tar_rd *r, const struct msc_tar_cb *cb, void *arg)
{
	const uint8_t *h = r->blk;
	uint64_t mode, size, mtime;
	char name[101], link[101];
	bool zero = true;

	for (int i = 0; i < MSC_TAR_BLOCK && zero; i++)
		zero = h[i] == 0;
	if (zero) {
		if (++r->zeros == 2)
			r->end = true;
		return 0;
	}
	if (r->zeros > 0 || !header_ok(h) || !get_oct(h, H_MODE, &mode) ||
	    !get_oct(h, H_SIZE, &size) || !get_oct(h, H_MTIME, &mtime))
		return -EBADMSG;
	if (h[H_TYPE] == 'x') {
		if (size > PAX_MAX)
			return -E2BIG;
		if (r->pax == NULL && (r->pax = malloc(PAX_MAX + 1)) == NULL)
			return -ENOMEM;
		r->pax_len = 0;
		r->pax_size = (size_t)size;
		r->left = size;
		r->pad = msc_tar_pad(size);
		/* An empty block has no bytes to wait for: its records (none)
		 * are the next header's at once. */
		r->in_pax = size > 0;
		r->pax_pending = size == 0;
		return 0;
	}
	r->in_pax = false;
	get_str(h, H_NAME, name);
	get_str(h, H_LINK, link);
	memset(&r->e, 0, sizeof(r->e));
	/* ustar's prefix field, when set, goes before the name. */
	if (h[345] != '\0' && memcmp(h + 257, "ustar", 5) == 0) {
		char prefix[156];

		get_str(h, 345, 155, prefix);
		snprintf(r->e.name, sizeof(r->e.name), "%s/%s", prefix, name);
	} else
		snprintf(r->e.name, sizeof(r->e.name), "%s", name);
	snprintf(r->e.link, sizeof(r->e.link), "%s", link);
	r->e.type = h[H_TYPE] == '\0' ? MSC_TAR_FILE : (char)h[H_TYPE];
	r->e.mode = (unsigned)(mode & 07777);
	r->e.size = size;
	r->e.mtime = (int64_t)mtime;
	if (r->pax_pending && !apply_pax(r))
		return -EBADMSG;
	r->pax_pending = false;
	/* Only a file's size is data to read (a link's or a folder's is 0). */
	if (r->e.type != MSC_TAR_FILE && r->e.type != '7')
		size = r->e.type == MSC_TAR_SYMLINK || r->e.type == MSC_TAR_DIR
		    || r->e.type == '1' ? 0 : r->e.size;
	else
		size = r->e.size;
	r->left = size;
	r->pad = msc_tar_pad(size);
	if (cb->entry != NULL) {
		int rv = cb->entry(arg, &r->e);

		if (rv != 0)
			return rv;
	}
	if (r->left == 0 && cb->done != NULL)
		return cb->done(arg, &r->e);
	return 0;
}

int
msc_tar_feed(struct msc_tar_rd *r, const uint8_t *p, size_t n,
    const struct msc_tar_cb *cb, void *arg)
{
	int rv;

	while (n > 0 && !r->end) {
		if (r->left > 0) {
			size_t k = r->left < n ? (size_t)r->left : n;

			if (r->in_pax) {
				if (k > r->pax_size - r->pax_len)
					return -EBADMSG;
				memcpy(r->pax + r->pax_len, p, k);
				r->pax_len += k;
			} else if (cb->data != NULL &&
			    (rv = cb->data(arg, p, k)) != 0)
				return rv;
			r->left -= k;
			p += k;
			n -= k;
			if (r->left == 0 && r->in_pax) {
				r->in_pax = false;
				r->pax_pending = true;
			} else if (r->left == 0 && cb->done != NULL &&
			    (rv = cb->done(arg, &r->e)) != 0)
				return rv;
			continue;
		}
		if (r->pad > 0) {
			size_t k = r->pad < n ? (size_t)r->pad : n;

			r->pad -= k;
			p += k;
			n -= k;
			continue;
		}
		{
			size_t k = MSC_TAR_BLOCK - r->have;

			if (k > n)
				k = n;
			memcpy(r->blk + r->have, p, k);
			r->have += k;
			p += k;
			n -= k;
			if (r->have < MSC_TAR_BLOCK)
				break;
			r->have = 0;
			if ((rv = header(r, cb, arg)) != 0)
				return rv;
		}
	}
	return 0;
}

bool
msc_tar_rd_complete(const struct msc_tar_rd *r, bool trailer_optional)
{
	if (r->end)
		return true;
	return trailer_optional && r->left == 0 && r->pad == 0 &&
	    r->have == 0 && !r->in_pax && !r->pax_pending;
}
