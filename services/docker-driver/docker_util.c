/*
 * docker_util.c - small helpers for the docker_*.c files: error text,
 * clocks, growable buffers, URL escaping and engine error bodies.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "docker_api.h"
#include "docker_api_int.h"

void
dock_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list	ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void
dock_sleep_ms(int ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int
dock_buf_append(struct dock_buf *b, const void *data, size_t n)
{
	size_t	 ncap;
	char	*np;

	if (n == 0)
		return 0;
	if (b->max != 0 && (b->len + n < b->len || b->len + n > b->max))
		return -E2BIG;
	if (b->len + n + 1 > b->cap) {
		ncap = b->cap != 0 ? b->cap : 256;
		while (ncap < b->len + n + 1)
			ncap *= 2;
		if ((np = realloc(b->p, ncap)) == NULL)
			return -ENOMEM;
		b->p = np;
		b->cap = ncap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int
dock_buf_finish(struct dock_buf *b)
{
	if (b->p != NULL)
		return 0;
	if ((b->p = malloc(1)) == NULL)
		return -ENOMEM;
	b->p[0] = '\0';
	b->cap = 1;
	return 0;
}

void
dock_buf_fini(struct dock_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int
dock_escape(const char *s, char *out, size_t outlen)
{
	static const char	 hex[] = "0123456789ABCDEF";
	size_t			 o = 0;
	unsigned char		 c;

	for (; *s != '\0'; s++) {
		c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			if (o + 1 >= outlen)
				return -ENAMETOOLONG;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= outlen)
				return -ENAMETOOLONG;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (o >= outlen)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

void
dock_json_message(const char *body, size_t len, char *buf, size_t buflen)
{
	json_t		*j;
	const char	*m = NULL;
	size_t		 n;

	if (buflen == 0)
		return;
	buf[0] = '\0';
	if (body == NULL || len == 0)
		return;
	if ((j = json_loadb(body, len, 0, NULL)) != NULL) {
		m = json_string_value(json_object_get(j, "message"));
		if (m != NULL)
			snprintf(buf, buflen, "%s", m);
		json_decref(j);
		if (m != NULL)
			return;
	}
	/* Not JSON: keep the first line of the text. */
	n = strcspn(body, "\r\n");
	if (n > len)
		n = len;
	snprintf(buf, buflen, "%.*s", (int)n, body);
}
