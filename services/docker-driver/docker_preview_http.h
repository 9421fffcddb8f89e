/*
 * docker_preview_http.h - HTTP/1.1 request and answer heads as the
 * preview listener reads them (docker_preview_http.c). Every pointer is
 * borrowed from the head's buffer.
 */
#ifndef DOCKER_PREVIEW_HTTP_H
#define DOCKER_PREVIEW_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "docker_preview.h"

#define DOCK_HTTP_HEADERS_MAX 100

/* One header: its name (nl bytes) and its value (vl bytes, trimmed). */
struct dock_http_hdr {
	const char *n, *v;
	size_t nl, vl;
};

/* A token character (RFC 9110). */
bool dock_http_tchar(char ch);

/*
 * Splits head h (len bytes, ending "\r\n\r\n") into its first line's
 * length and at most DOCK_HTTP_HEADERS_MAX headers (hs, *nh): 0, or
 * -EPROTO for what the strict rules refuse.
 */
int dock_http_split(const char *h, size_t len, size_t *first_len,
    struct dock_http_hdr *hs, size_t *nh);

/* Whether header h is `name` (any case). */
bool dock_http_is(const struct dock_http_hdr *h, const char *name);

/* Whether h's value lists `token` (comma-separated, any case). */
bool dock_http_has(const struct dock_http_hdr *h, const char *token);

/* Connection, Keep-Alive, Proxy-Connection, Upgrade, TE, Trailer. */
bool dock_http_hop_by_hop(const struct dock_http_hdr *h);

/*
 * The capability a Host value (v, vl bytes) names under `domain`:
 * "<32 hex>.<domain>[:digits]", any case, into cap (lowercase); false
 * for any other name.
 */
bool dock_http_host_cap(const char *domain, const char *v, size_t vl,
    char cap[DOCK_PREVIEW_CAP_LEN + 1]);

#endif /* DOCKER_PREVIEW_HTTP_H */
