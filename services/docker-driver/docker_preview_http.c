/*
 * docker_preview_http.c - the preview listener's reading of HTTP/1.1
 * heads (issue 30), by the MCP listener's strict rules: a head split
 * into its first line and headers (no bare CR or LF, no NUL, no folded
 * line, no space before a colon), header names and values, and the Host
 * that names a capability. Pure functions over borrowed bytes.
 */
#include "docker_preview_http.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

bool
dock_http_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || (ch != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

/*
 * Splits head (ending "\r\n\r\n") into its first line and headers; 0 or
 * -EPROTO for what the strict rules refuse.
 */
int
dock_http_split(const char *h, size_t len, size_t *first_len,
    struct dock_http_hdr *hs, size_t *nh)
{
	const char *p = h, *end = h + len - 2;  /* the last CRLF's start */
	const char *eol;

	*nh = 0;
	for (size_t i = 0; i + 1 < len; i++)
		if ((h[i + 1] == '\n' && h[i] != '\r') || h[i] == '\0' ||
		    (h[i] == '\r' && h[i + 1] != '\n'))
			return -EPROTO;         /* bare LF or CR, NUL */
	if ((eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2)) == NULL)
		return -EPROTO;
	*first_len = (size_t)(eol - p);
	p = eol + 2;
	while (p < end) {
		const char *colon, *v, *ve;

		eol = memmem(p, (size_t)(end - p) + 2, "\r\n", 2);
		if (eol == NULL || *nh >= DOCK_HTTP_HEADERS_MAX)
			return -EPROTO;
		if (*p == ' ' || *p == '\t')
			return -EPROTO;         /* obs-fold */
		for (colon = p; colon < eol && dock_http_tchar(*colon); colon++)
			;
		if (colon == p || colon >= eol || *colon != ':')
			return -EPROTO;         /* no name, or space before ':' */
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		for (ve = eol; ve > v && (ve[-1] == ' ' || ve[-1] == '\t');
		    ve--)
			;
		hs[*nh] = (struct dock_http_hdr){ p, v, (size_t)(colon - p),
			(size_t)(ve - v) };
		(*nh)++;
		p = eol + 2;
	}
	return 0;
}

bool
dock_http_is(const struct dock_http_hdr *h, const char *name)
{
	return h->nl == strlen(name) && strncasecmp(h->n, name, h->nl) == 0;
}

bool
dock_http_has(const struct dock_http_hdr *h, const char *token)
{
	size_t tl = strlen(token);

	for (size_t i = 0; i + tl <= h->vl; i++)
		if (strncasecmp(h->v + i, token, tl) == 0 &&
		    (i == 0 || h->v[i - 1] == ',' || h->v[i - 1] == ' ') &&
		    (i + tl == h->vl || h->v[i + tl] == ',' ||
			h->v[i + tl] == ' '))
			return true;
	return false;
}

bool
dock_http_hop_by_hop(const struct dock_http_hdr *h)
{
	return dock_http_is(h, "connection") || dock_http_is(h, "keep-alive") ||
	    dock_http_is(h, "proxy-connection") || dock_http_is(h, "upgrade") || dock_http_is(h, "te") ||
	    dock_http_is(h, "trailer");
}

/* The capability a Host value names, or false. */
bool
dock_http_host_cap(const char *domain, const char *v, size_t vl,
    char cap[DOCK_PREVIEW_CAP_LEN + 1])
{
	size_t dl = strlen(domain), hl = vl;
	const char *colon = memchr(v, ':', vl);

	if (colon != NULL) {
		hl = (size_t)(colon - v);
		for (const char *q = colon + 1; q < v + vl; q++)
			if (*q < '0' || *q > '9')
				return false;
	}
	if (hl != DOCK_PREVIEW_CAP_LEN + 1 + dl || v[DOCK_PREVIEW_CAP_LEN] !=
	    '.' || strncasecmp(v + DOCK_PREVIEW_CAP_LEN + 1, domain, dl) !=
	    0)
		return false;
	for (size_t i = 0; i < DOCK_PREVIEW_CAP_LEN; i++) {
		char ch = v[i];

		if (ch >= 'A' && ch <= 'F')
			ch = (char)(ch - 'A' + 'a');
		if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
			return false;
		cap[i] = ch;
	}
	cap[DOCK_PREVIEW_CAP_LEN] = '\0';
	return true;
}
