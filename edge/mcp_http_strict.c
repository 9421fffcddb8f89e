/*
 * mcp_http_strict.c - the request head as one reading only: headers that
 * a proxy in front could read differently from us (RFC 9112 section 5.1,
 * 6.3 and 3.2) are refused before anything else looks at the request,
 * with 400 and the connection's close, so that nothing after them on the
 * connection is taken for a request.
 *
 * libmicrohttpd 0.9.75 keeps every header line, duplicates included, and
 * a name with whitespace before its colon as it came ("Transfer-Encoding "
 * is then not Transfer-Encoding to it, while a proxy may take it for one):
 * its strict mode (MHD_OPTION_STRICT_FOR_CLIENT) checks that only at -1,
 * its most tolerant level, and then drops the connection without an
 * answer, so the checks are made here, over every header it kept.
 */
#include "mcp_http_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

struct head_count {
	unsigned content_length, host, transfer_encoding;
	const char *bad;        /* the first reason to refuse */
};

static enum MHD_Result
count_header(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct head_count *h = cls;

	(void)kind;
	if (key[strcspn(key, " \t")] != '\0')
		h->bad = "whitespace in a header name";
	else if (strcasecmp(key, "Content-Length") == 0) {
		if (h->content_length++ > 0)
			h->bad = "repeated Content-Length header";
		else if (value == NULL || *value == '\0' ||
		    value[strspn(value, "0123456789")] != '\0')
			h->bad = "invalid Content-Length header";
	} else if (strcasecmp(key, "Transfer-Encoding") == 0) {
		/* The one coding a request may have, once (RFC 9112 6.1). */
		if (h->transfer_encoding++ > 0)
			h->bad = "repeated Transfer-Encoding header";
		else if (value == NULL || strcasecmp(value, "chunked") != 0)
			h->bad = "a Transfer-Encoding other than chunked";
	} else if (strcasecmp(key, "Host") == 0 && h->host++ > 0)
		h->bad = "repeated Host header";
	return h->bad == NULL ? MHD_YES : MHD_NO;
}

bool
http_strict_refused(struct http_call *c, const char *version)
{
	struct head_count h = { 0 };
	char text[128];
	json_t *body;

	(void)MHD_get_connection_values(c->conn, MHD_HEADER_KIND,
	    count_header, &h);
	if (h.bad == NULL && h.transfer_encoding > 0 && h.content_length > 0)
		h.bad = "both Transfer-Encoding and Content-Length";
	if (h.bad == NULL && h.host == 0 && version != NULL &&
	    strcasecmp(version, MHD_HTTP_VERSION_1_1) == 0)
		h.bad = "an HTTP/1.1 request needs a Host header";
	if (h.bad == NULL)
		return false;
	snprintf(text, sizeof(text), "Bad Request: %s", h.bad);
	body = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    "error", "code", -32000, "message", text);
	http_answer_json(c, 400, body, "Connection", "close");
	json_decref(body);
	return true;
}
