/*
 * membuf.c - FILE streams over memory (fopencookie), used for pipe stages
 * and command substitution. Writers are capped at m->limit bytes: past it a
 * write fails with ENOSPC, so an endless producer ("yes | head") stops.
 */
#include "toolbox.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A failed write: glibc's fopencookie wants 0 (fwrite miscounts a negative
 * one and copies from past the caller's buffer), musl's takes -1. */
#ifdef __GLIBC__
#define WRITE_FAILED	0
#else
#define WRITE_FAILED	(-1)
#endif

static ssize_t
mem_write(void *cookie, const char *p, size_t n)
{
	struct tb_mem *m = cookie;

	if (m->len + n > m->limit) {
		m->overflow = true;
		errno = ENOSPC;
		return WRITE_FAILED;
	}
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		char *d;

		while (cap < m->len + n)
			cap *= 2;
		if ((d = realloc(m->data, cap)) == NULL) {
			errno = ENOMEM;
			return WRITE_FAILED;
		}
		m->data = d;
		m->cap = cap;
	}
	memcpy(m->data + m->len, p, n);
	m->len += n;
	return (ssize_t)n;
}

static ssize_t
mem_read(void *cookie, char *p, size_t n)
{
	struct tb_mem *m = cookie;
	size_t left = m->len - m->pos;

	if (n > left)
		n = left;
	if (n > 0)
		memcpy(p, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

static int
mem_close(void *cookie)
{
	(void)cookie;
	return 0;
}

FILE *
tb_mem_writer(struct tb_mem *m)
{
	cookie_io_functions_t fns = { NULL, mem_write, NULL, mem_close };

	if (m->limit == 0)
		m->limit = TB_MEM_LIMIT;
	return fopencookie(m, "w", fns);
}

FILE *
tb_mem_reader(struct tb_mem *m)
{
	cookie_io_functions_t fns = { mem_read, NULL, NULL, mem_close };

	return fopencookie(m, "r", fns);
}

void
tb_mem_free(struct tb_mem *m)
{
	free(m->data);
	memset(m, 0, sizeof(*m));
}

static ssize_t
null_read(void *c, char *p, size_t n)
{
	(void)c, (void)p, (void)n;
	return 0;
}

static ssize_t
null_write(void *c, const char *p, size_t n)
{
	(void)c, (void)p;
	return (ssize_t)n;
}

FILE *
tb_null_stream(const char *mode)
{
	cookie_io_functions_t fns = { null_read, null_write, NULL, NULL };

	return fopencookie(NULL, mode, fns);
}
