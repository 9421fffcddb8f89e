/* awk_field.c - records, field splitting, NF, and the dynamic regex cache. */
#include "awk.h"

#include <stdlib.h>
#include <string.h>

regex_t *
awk_dynre(struct awk *a, const char *src)
{
	int k;

	for (k = 0; k < 16; k++)
		if (a->recache[k].src != NULL &&
		    strcmp(a->recache[k].src, src) == 0)
			return &a->recache[k].re;
	k = a->recache_next;
	a->recache_next = (k + 1) % 16;
	if (a->recache[k].src != NULL) {
		regfree(&a->recache[k].re);
		free(a->recache[k].src);
		a->recache[k].src = NULL;
	}
	if (tb_regcomp(a->io, "awk", &a->recache[k].re, src, REG_EXTENDED)
	    != 0) {
		awk_runtime_error(a, "bad regular expression");
		return NULL;
	}
	a->recache[k].src = tb_xstrdup(src);
	return &a->recache[k].re;
}

/* Calls add(ctx, start, len) for each field of s. */
static int
split_fields(struct awk *a, const char *s, const char *fs,
    void (*add)(void *, const char *, size_t), void *ctx)
{
	int n = 0;
	size_t len = strlen(s);

	if (strcmp(fs, " ") == 0) {
		const char *p = s;

		for (;;) {
			const char *start;

			while (*p == ' ' || *p == '\t' || *p == '\n')
				p++;
			if (*p == '\0')
				break;
			start = p;
			while (*p && *p != ' ' && *p != '\t' && *p != '\n')
				p++;
			add(ctx, start, (size_t)(p - start));
			n++;
		}
		return n;
	}
	if (len == 0)
		return 0;
	if (fs[0] == '\0') {
		for (size_t i = 0; i < len; i++)
			add(ctx, s + i, 1);
		return (int)len;
	}
	if (fs[1] == '\0' && fs[0] != '\\') {
		const char *p = s, *q;

		while ((q = strchr(p, fs[0])) != NULL) {
			add(ctx, p, (size_t)(q - p));
			n++;
			p = q + 1;
		}
		add(ctx, p, strlen(p));
		return n + 1;
	}
	regex_t *re = awk_dynre(a, fs);
	regmatch_t m;
	size_t pos = 0;

	if (re == NULL) {
		add(ctx, s, len);
		return 1;
	}
	while (pos <= len && regexec(re, s + pos, 1, &m, pos > 0 ?
	    REG_NOTBOL : 0) == 0) {
		if (m.rm_eo == 0) {
			/* An empty match: no separator here. */
			if (pos + 1 > len)
				break;
			if (regexec(re, s + pos + 1, 1, &m, REG_NOTBOL) != 0)
				break;
			m.rm_so++;
			m.rm_eo++;
			if (m.rm_eo == m.rm_so)
				break;
		}
		add(ctx, s + pos, (size_t)m.rm_so);
		n++;
		pos += (size_t)m.rm_eo;
	}
	add(ctx, s + pos, len - pos);
	return n + 1;
}

static void
add_field(void *ctx, const char *p, size_t n)
{
	struct awk *a = ctx;
	char *s;

	if (a->nf + 2 > a->fcap) {
		a->fcap = a->fcap ? a->fcap * 2 : 32;
		a->fields = tb_xrealloc(a->fields, sizeof(struct aval) *
		    (size_t)a->fcap);
	}
	s = tb_xmalloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	a->fields[++a->nf] = aval_strnum(s);
	free(s);
}

static void
set_nf_var(struct awk *a)
{
	aval_free(&a->globals[V_NF].v);
	a->globals[V_NF].v = aval_num(a->nf);
}

static void
clear_fields(struct awk *a)
{
	for (int i = 1; i <= a->nf; i++)
		aval_free(&a->fields[i]);
	a->nf = 0;
}

void
awk_set_record(struct awk *a, const char *s, size_t n)
{
	char *copy = tb_xmalloc(n + 1);

	memcpy(copy, s, n);
	copy[n] = '\0';
	if (a->fcap == 0) {
		a->fcap = 32;
		a->fields = tb_xrealloc(a->fields, sizeof(struct aval) * 32);
	} else
		aval_free(&a->fields[0]);
	clear_fields(a);
	a->fields[0] = aval_strnum(copy);
	split_fields(a, copy, aval_tostr(a, &a->globals[V_FS].v), add_field,
	    a);
	free(copy);
	set_nf_var(a);
}

void
awk_rebuild_record(struct awk *a)
{
	struct tb_buf b = { 0 };
	const char *ofs = aval_tostr(a, &a->globals[V_OFS].v);

	for (int i = 1; i <= a->nf; i++) {
		if (i > 1)
			tb_buf_adds(&b, ofs);
		tb_buf_adds(&b, aval_tostr_out(a, &a->fields[i]));
	}
	aval_free(&a->fields[0]);
	a->fields[0] = aval_take(tb_buf_str(&b));
	set_nf_var(a);
}

struct aval *
awk_field(struct awk *a, int i)
{
	static struct aval empty;

	if (a->fcap == 0)
		awk_set_record(a, "", 0);
	if (i < 0 || i > a->nf) {
		empty.flags = 0;
		empty.str = NULL;
		return &empty;
	}
	return &a->fields[i];
}

void
awk_set_nf(struct awk *a, int nf)
{
	if (a->fcap == 0)
		awk_set_record(a, "", 0);
	if (nf < 0)
		nf = 0;
	while (a->nf > nf)
		aval_free(&a->fields[a->nf--]);
	while (a->nf < nf)
		add_field(a, "", 0);
	awk_rebuild_record(a);
}

void
awk_set_field(struct awk *a, int i, struct aval v)
{
	if (i == 0) {
		const char *s = aval_tostr(a, &v);

		awk_set_record(a, s, strlen(s));
		aval_free(&v);
		return;
	}
	if (a->fcap == 0)
		awk_set_record(a, "", 0);
	while (a->nf < i)
		add_field(a, "", 0);
	aval_free(&a->fields[i]);
	a->fields[i] = v;
	awk_rebuild_record(a);
}

struct split_ctx {
	struct amap	*arr;
	int		 n;
};

static void
add_elem(void *ctx, const char *p, size_t n)
{
	struct split_ctx *c = ctx;
	char key[32], *s = tb_xmalloc(n + 1);
	struct aval *v;

	memcpy(s, p, n);
	s[n] = '\0';
	snprintf(key, sizeof(key), "%d", ++c->n);
	v = amap_get(c->arr, key, true);
	aval_free(v);
	*v = aval_strnum(s);
	free(s);
}

int
awk_split(struct awk *a, const char *s, const char *fs, struct amap *arr)
{
	struct split_ctx c = { arr, 0 };

	amap_clear(arr);
	split_fields(a, s, fs, add_elem, &c);
	return c.n;
}
