/* util.c - messages, numbers, paths, memory and buffers for the shell. */
#include "toolbox.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void
tb_err(struct tb_io *io, const char *applet, const char *fmt, ...)
{
	va_list ap;

	fflush(io->out);
	fprintf(io->err, "%s: ", applet);
	va_start(ap, fmt);
	vfprintf(io->err, fmt, ap);
	va_end(ap);
	fputc('\n', io->err);
	fflush(io->err);
}

void
tb_errno(struct tb_io *io, const char *applet, const char *what)
{
	tb_err(io, applet, "%s: %s", what, strerror(errno));
}

int
tb_parse_ll(const char *s, long long *vp)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*vp = v;
	return 0;
}

const char *
tb_basename(const char *path)
{
	static const char slash[] = "/";
	const char *end = path + strlen(path), *p;

	while (end > path + 1 && end[-1] == '/')
		end--;
	if (end == path + 1 && path[0] == '/')
		return slash;
	for (p = end; p > path && p[-1] != '/'; p--)
		;
	return p;
}

void *
tb_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		fputs("toolbox: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *
tb_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL) {
		fputs("toolbox: out of memory\n", stderr);
		abort();
	}
	return q;
}

char *
tb_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(tb_xmalloc(n), s, n);
}

void
tb_buf_add(struct tb_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = tb_xrealloc(b->data, cap);
		b->cap = cap;
	}
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
tb_buf_addc(struct tb_buf *b, int c)
{
	char ch = (char)c;

	tb_buf_add(b, &ch, 1);
}

void
tb_buf_adds(struct tb_buf *b, const char *s)
{
	tb_buf_add(b, s, strlen(s));
}

char *
tb_buf_str(struct tb_buf *b)
{
	tb_buf_add(b, "", 0);
	b->data[b->len] = '\0';
	return b->data;
}

void
tb_buf_free(struct tb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

int
tb_regcomp(struct tb_io *io, const char *applet, regex_t *re, const char *pat,
    int flags)
{
	char msg[256];
	int e;

	if ((e = regcomp(re, pat, flags)) != 0) {
		regerror(e, re, msg, sizeof(msg));
		tb_err(io, applet, "bad regex '%s': %s", pat, msg);
		return -1;
	}
	return 0;
}
