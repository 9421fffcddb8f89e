/*
 * fastexec_wire.c - frames and the REQ payload of the fast exec path; see
 * fastexec_wire.h. Compiled into both the driver and the static helper.
 */
#include "fastexec_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire32.h"

uint32_t
fx_type_max(int type)
{
	switch (type) {
	case FX_REQ:
		return FX_REQ_MAX;
	case FX_STDIN:
	case FX_STDOUT:
	case FX_STDERR:
		return FX_DATA_MAX;
	case FX_STDIN_EOF:
	case FX_KILL:
		return 0;
	case FX_EXIT:
		return FX_EXIT_LEN;
	case FX_ERROR:
		return FX_ERR_MAX;
	default:
		return 0;
	}
}

static bool
type_known(int type, bool from_helper)
{
	if (from_helper)
		return type == FX_STDOUT || type == FX_STDERR ||
		    type == FX_EXIT || type == FX_ERROR;
	return type == FX_REQ || type == FX_STDIN || type == FX_STDIN_EOF ||
	    type == FX_KILL;
}

int
fx_hdr_encode(uint8_t out[FX_HDR_LEN], int type, uint32_t len)
{
	if (!type_known(type, false) && !type_known(type, true))
		return -EINVAL;
	if (len > fx_type_max(type))
		return -EINVAL;
	out[0] = (uint8_t)type;
	out[1] = out[2] = out[3] = 0;
	wire_put32(out + 4, len);
	return 0;
}

int
fx_hdr_decode(const uint8_t in[FX_HDR_LEN], bool from_helper, int *typep,
    uint32_t *lenp)
{
	int type = in[0];
	uint32_t len = wire_get32(in + 4);

	if (in[1] != 0 || in[2] != 0 || in[3] != 0)
		return -EPROTO;
	if (!type_known(type, from_helper))
		return -EPROTO;
	if (len > fx_type_max(type))
		return -EPROTO;
	if (type == FX_EXIT && len != FX_EXIT_LEN)
		return -EPROTO;
	*typep = type;
	*lenp = len;
	return 0;
}

static int
count_strs(const char *const *v, size_t *np, size_t *bytesp)
{
	size_t n = 0;

	for (; v != NULL && v[n] != NULL; n++) {
		size_t l = strlen(v[n]);

		if (l > FX_REQ_MAX || n >= FX_STRS_MAX)
			return -EINVAL;
		*bytesp += 4 + l;
	}
	*np = n;
	return 0;
}

int
fx_req_encode(const struct fx_req *r, uint8_t **bufp, size_t *lenp)
{
	size_t argc, envc, total = 32, wl, off, i;
	const char *wd = r->workdir != NULL ? r->workdir : "";
	uint8_t *b;

	if (r->argv == NULL || r->argv[0] == NULL)
		return -EINVAL;
	wl = strlen(wd);
	total += 4 + wl;
	if (count_strs(r->argv, &argc, &total) != 0 ||
	    count_strs(r->env, &envc, &total) != 0)
		return -EINVAL;
	if (total > FX_REQ_MAX || argc + envc > FX_STRS_MAX)
		return -EINVAL;
	for (i = 0; i < envc; i++)
		if (strchr(r->env[i], '=') == NULL || r->env[i][0] == '=')
			return -EINVAL;
	if ((b = malloc(FX_HDR_LEN + total)) == NULL)
		return -ENOMEM;
	(void)fx_hdr_encode(b, FX_REQ, (uint32_t)total);
	off = FX_HDR_LEN;
	wire_put32(b + off, FX_MAGIC);
	wire_put32(b + off + 4, FX_VERSION);
	wire_put32(b + off + 8, r->flags);
	wire_put32(b + off + 12, r->timeout_ms);
	wire_put32(b + off + 16, (uint32_t)(r->output_limit >> 32));
	wire_put32(b + off + 20, (uint32_t)r->output_limit);
	wire_put32(b + off + 24, (uint32_t)argc);
	wire_put32(b + off + 28, (uint32_t)envc);
	off += 32;
	wire_put32(b + off, (uint32_t)wl);
	memcpy(b + off + 4, wd, wl);
	off += 4 + wl;
	for (i = 0; i < argc + envc; i++) {
		const char *s = i < argc ? r->argv[i] : r->env[i - argc];
		size_t l = strlen(s);

		wire_put32(b + off, (uint32_t)l);
		memcpy(b + off + 4, s, l);
		off += 4 + l;
	}
	*bufp = b;
	*lenp = off;
	return 0;
}

void
fx_req_dec_fini(struct fx_req_dec *d)
{
	if (d == NULL)
		return;
	free(d->block);
	memset(d, 0, sizeof(*d));
}

/* Takes one length-prefixed string at p[*off..len); NUL inside is bad. */
static int
take_str(const uint8_t *p, size_t len, size_t *off, char **dst, char **arena)
{
	uint32_t l;

	if (len - *off < 4)
		return -EPROTO;
	l = wire_get32(p + *off);
	*off += 4;
	if (l > len - *off || memchr(p + *off, '\0', l) != NULL)
		return -EPROTO;
	memcpy(*arena, p + *off, l);
	(*arena)[l] = '\0';
	*dst = *arena;
	*arena += l + 1;
	*off += l;
	return 0;
}

int
fx_req_decode(const uint8_t *p, size_t len, struct fx_req_dec *out)
{
	struct fx_req_dec d;
	uint32_t argc, envc, i;
	size_t off = 32, ptrs;
	char *arena, *wd;

	memset(&d, 0, sizeof(d));
	if (len < 36 || len > FX_REQ_MAX || wire_get32(p) != FX_MAGIC ||
	    wire_get32(p + 4) != FX_VERSION)
		return -EPROTO;
	argc = wire_get32(p + 24);
	envc = wire_get32(p + 28);
	/* Each string takes at least its 4-byte length. */
	if (argc == 0 || argc > FX_STRS_MAX || envc > FX_STRS_MAX ||
	    (size_t)argc + envc > (len - 36) / 4)
		return -EPROTO;
	ptrs = ((size_t)argc + envc + 2) * sizeof(char *);
	/* Strings shrink by 3 bytes each (4-byte length -> NUL). */
	if ((d.block = malloc(ptrs + len)) == NULL)
		return -ENOMEM;
	d.argv = d.block;
	d.env = d.argv + argc + 1;
	arena = (char *)d.block + ptrs;
	d.req.flags = wire_get32(p + 8);
	d.req.timeout_ms = wire_get32(p + 12);
	d.req.output_limit = (uint64_t)wire_get32(p + 16) << 32 | wire_get32(p + 20);
	if (take_str(p, len, &off, &wd, &arena) != 0)
		goto bad;
	if (wd[0] != '\0' && wd[0] != '/')
		goto bad;
	for (i = 0; i < argc; i++)
		if (take_str(p, len, &off, &d.argv[i], &arena) != 0)
			goto bad;
	for (i = 0; i < envc; i++) {
		if (take_str(p, len, &off, &d.env[i], &arena) != 0)
			goto bad;
		if (d.env[i][0] == '=' || strchr(d.env[i], '=') == NULL)
			goto bad;
	}
	if (off != len || (d.req.flags & ~FX_F_STDIN) != 0)
		goto bad;
	d.argv[argc] = NULL;
	d.env[envc] = NULL;
	d.req.workdir = wd[0] != '\0' ? wd : NULL;
	d.req.argv = (const char *const *)d.argv;
	d.req.env = (const char *const *)d.env;
	*out = d;
	return 0;
bad:
	free(d.block);
	return -EPROTO;
}

void
fx_exit_encode(uint8_t out[FX_EXIT_LEN], int outcome, int code)
{
	wire_put32(out, (uint32_t)outcome);
	wire_put32(out + 4, (uint32_t)code);
}

int
fx_exit_decode(const uint8_t *p, size_t len, int *outcomep, int *codep)
{
	uint32_t o, c;

	if (len != FX_EXIT_LEN)
		return -EPROTO;
	o = wire_get32(p);
	c = wire_get32(p + 4);
	if (o > FX_LIMIT || c > 255)
		return -EPROTO;
	*outcomep = (int)o;
	*codep = (int)c;
	return 0;
}

void
fx_parser_init(struct fx_parser *ps, bool from_helper)
{
	memset(ps, 0, sizeof(*ps));
	ps->from_helper = from_helper;
}

void
fx_parser_fini(struct fx_parser *ps)
{
	free(ps->buf);
	ps->buf = NULL;
	ps->cap = 0;
}

int
fx_parse(struct fx_parser *ps, const uint8_t *data, size_t n, size_t *usedp,
    struct fx_frame *f)
{
	size_t used = 0, k;
	int rc;

	while (ps->hdr_have < FX_HDR_LEN) {
		if (used == n) {
			*usedp = used;
			return 0;
		}
		ps->hdr[ps->hdr_have++] = data[used++];
		if (ps->hdr_have < FX_HDR_LEN)
			continue;
		rc = fx_hdr_decode(ps->hdr, ps->from_helper, &ps->type,
		    &ps->len);
		if (rc != 0) {
			*usedp = used;
			return rc;
		}
		ps->got = 0;
		if (ps->len > ps->cap) {
			uint8_t *nb = realloc(ps->buf, ps->len);

			if (nb == NULL)
				return -ENOMEM;
			ps->buf = nb;
			ps->cap = ps->len;
		}
	}
	k = n - used;
	if (k > ps->len - ps->got)
		k = ps->len - ps->got;
	if (k > 0)
		memcpy(ps->buf + ps->got, data + used, k);
	ps->got += (uint32_t)k;
	used += k;
	*usedp = used;
	if (ps->got < ps->len)
		return 0;
	f->type = ps->type;
	f->p = ps->buf;
	f->len = ps->len;
	ps->hdr_have = 0;
	return 1;
}
