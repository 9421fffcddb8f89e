/*
 * grpc_wire.c - gRPC framing, status codes and header lines (no I/O).
 */
#include "grpc_wire.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
};

const char *
grpc_code_name(int code)
{
	if (code >= 0 && (size_t)code < sizeof(names) / sizeof(*names))
		return names[code];
	return "UNKNOWN_CODE";
}

bool
grpc_code_retryable(int code)
{
	/* As Modal's SDKs: transient failures, sent again with back-off. */
	return code == GRPC_DEADLINE_EXCEEDED || code == GRPC_UNAVAILABLE ||
	    code == GRPC_CANCELLED || code == GRPC_INTERNAL ||
	    code == GRPC_UNKNOWN;
}

int
grpc_code_errno(int code)
{
	switch (code) {
	case GRPC_OK:
		return 0;
	case GRPC_UNAUTHENTICATED:
	case GRPC_PERMISSION_DENIED:
		return -EACCES;
	case GRPC_NOT_FOUND:
		return -ENOENT;
	case GRPC_ALREADY_EXISTS:
		return -EEXIST;
	case GRPC_INVALID_ARGUMENT:
	case GRPC_FAILED_PRECONDITION:
	case GRPC_OUT_OF_RANGE:
		return -EINVAL;
	case GRPC_DEADLINE_EXCEEDED:
		return -ETIMEDOUT;
	case GRPC_RESOURCE_EXHAUSTED:
		return -EAGAIN;
	case GRPC_UNIMPLEMENTED:
		return -ENOSYS;
	default:
		return -EIO;
	}
}

int
grpc_code_from_http(long http_status)
{
	switch (http_status) {
	case 400:
		return GRPC_INTERNAL;
	case 401:
		return GRPC_UNAUTHENTICATED;
	case 403:
		return GRPC_PERMISSION_DENIED;
	case 404:
		return GRPC_UNIMPLEMENTED;
	case 429:
	case 502:
	case 503:
	case 504:
		return GRPC_UNAVAILABLE;
	default:
		return GRPC_UNKNOWN;
	}
}

int
grpc_frame(const uint8_t *msg, size_t len, uint8_t **outp, size_t *lenp)
{
	uint8_t *out;

	if (len > 0xffffffffu)
		return -EMSGSIZE;
	if ((out = malloc(len + 5)) == NULL)
		return -ENOMEM;
	out[0] = 0;
	out[1] = (uint8_t)(len >> 24);
	out[2] = (uint8_t)(len >> 16);
	out[3] = (uint8_t)(len >> 8);
	out[4] = (uint8_t)len;
	if (len > 0)
		memcpy(out + 5, msg, len);
	*outp = out;
	*lenp = len + 5;
	return 0;
}

void
grpc_timeout_value(uint64_t ms, char *buf, size_t len)
{
	/* TimeoutValue is at most 8 digits: use a coarser unit when needed. */
	if (ms < 100000000u)
		snprintf(buf, len, "%llum", (unsigned long long)ms);
	else if (ms / 1000 < 100000000u)
		snprintf(buf, len, "%lluS", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, len, "99999999S");
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

void
grpc_message_decode(const char *in, size_t len, char *buf, size_t buflen)
{
	size_t o = 0;

	if (buflen == 0)
		return;
	for (size_t i = 0; i < len && o + 1 < buflen; i++) {
		int hi, lo;

		if (in[i] == '%' && i + 2 < len &&
		    (hi = hexval((unsigned char)in[i + 1])) >= 0 &&
		    (lo = hexval((unsigned char)in[i + 2])) >= 0) {
			buf[o++] = (char)(hi << 4 | lo);
			i += 2;
		} else
			buf[o++] = in[i];
	}
	buf[o] = '\0';
}

int
grpc_reader_feed(struct grpc_reader *r, const char *p, size_t len,
    int (*fn)(const uint8_t *, size_t, void *), void *arg)
{
	size_t max = r->max ? r->max : GRPC_MAX_RECV;
	int rv;

	while (len > 0) {
		if (r->hdr_have < 5) {
			size_t n = 5 - r->hdr_have < len ? 5 - r->hdr_have : len;

			memcpy(r->hdr + r->hdr_have, p, n);
			r->hdr_have += n;
			p += n;
			len -= n;
			if (r->hdr_have < 5)
				break;
			if (r->hdr[0] != 0)
				return -EPROTO;     /* compressed: never asked for */
			r->need = (size_t)r->hdr[1] << 24 | (size_t)r->hdr[2] << 16 |
			    (size_t)r->hdr[3] << 8 | r->hdr[4];
			if (r->need > max)
				return -EMSGSIZE;
			r->have = 0;
			if ((r->msg = malloc(r->need ? r->need : 1)) == NULL)
				return -ENOMEM;
		}
		if (r->have < r->need) {
			size_t n = r->need - r->have < len ? r->need - r->have
							   : len;

			memcpy(r->msg + r->have, p, n);
			r->have += n;
			p += n;
			len -= n;
		}
		if (r->have == r->need) {
			rv = fn(r->msg, r->need, arg);
			free(r->msg);
			r->msg = NULL;
			r->hdr_have = 0;
			r->need = r->have = 0;
			if (rv != 0)
				return rv;
		}
	}
	return 0;
}

bool
grpc_reader_partial(const struct grpc_reader *r)
{
	return r->hdr_have > 0;
}

void
grpc_reader_fini(struct grpc_reader *r)
{
	free(r->msg);
	r->msg = NULL;
	r->hdr_have = r->need = r->have = 0;
}

void
grpc_status_init(struct grpc_status *s)
{
	memset(s, 0, sizeof(*s));
	s->code = -1;
}

/* The value of header `name` in line, trimmed, or NULL. */
static const char *
header_value(const char *line, size_t len, const char *name, size_t *vlenp)
{
	size_t n = strlen(name);
	const char *v, *end = line + len;

	if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
		return NULL;
	v = line + n + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
			      end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*vlenp = (size_t)(end - v);
	return v;
}

void
grpc_status_line(struct grpc_status *s, const char *line, size_t len)
{
	const char *v;
	size_t vlen;

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		const char *sp = memchr(line, ' ', len);

		/* A new response (after a 100 Continue, say) starts over. */
		grpc_status_init(s);
		if (sp != NULL)
			s->http = strtol(sp + 1, NULL, 10);
		return;
	}
	if ((v = header_value(line, len, "grpc-status", &vlen)) != NULL) {
		char num[16];
		char *end;
		long c;

		if (vlen == 0 || vlen >= sizeof(num))
			return;
		memcpy(num, v, vlen);
		num[vlen] = '\0';
		c = strtol(num, &end, 10);
		s->code = *end == '\0' && c >= 0 && c <= 255 ? (int)c
							     : GRPC_UNKNOWN;
	} else if ((v = header_value(line, len, "grpc-message", &vlen)) != NULL)
		grpc_message_decode(v, vlen, s->message, sizeof(s->message));
	else if ((v = header_value(line, len, "content-type", &vlen)) != NULL)
		s->grpc_type = vlen >= 16 &&
		    strncasecmp(v, "application/grpc", 16) == 0 &&
		    (vlen == 16 || v[16] == '+' || v[16] == ';');
}
