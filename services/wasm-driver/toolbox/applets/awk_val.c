/* awk_val.c - awk values, conversions, associative arrays and fields. */
#include "awk.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void
aval_free(struct aval *v)
{
	if (v->flags & AV_STR)
		free(v->str);
	v->str = NULL;
	v->flags = 0;
}

struct aval
aval_num(double d)
{
	struct aval v = { AV_NUM, d, NULL };

	return v;
}

struct aval
aval_take(char *s)
{
	struct aval v = { AV_STR, 0, s };

	return v;
}

struct aval
aval_str(const char *s)
{
	return aval_take(tb_xstrdup(s));
}

bool
awk_looks_numeric(const char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+' || *s == '-')
		s++;
	if (!isdigit((unsigned char)*s) && !(*s == '.' &&
	    isdigit((unsigned char)s[1])))
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return false;
	strtod(s, &end);
	while (isspace((unsigned char)*end))
		end++;
	return *end == '\0';
}

struct aval
aval_strnum(const char *s)
{
	struct aval v = aval_str(s);

	if (awk_looks_numeric(s)) {
		v.flags |= AV_STRNUM | AV_NUM;
		v.num = strtod(s, NULL);
	}
	return v;
}

struct aval
aval_copy(const struct aval *v)
{
	struct aval c = *v;

	if (v->flags & AV_STR)
		c.str = tb_xstrdup(v->str);
	return c;
}

/* Leading-number value of a string, awk style (no hex, inf or nan). */
static double
str_to_num(const char *s)
{
	const char *p = s;
	char buf[128];
	size_t n;

	while (isspace((unsigned char)*p))
		p++;
	s = p;
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			;
	if ((*p == 'e' || *p == 'E') && (isdigit((unsigned char)p[1]) ||
	    ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
		p += 2;
		while (isdigit((unsigned char)*p))
			p++;
	}
	n = (size_t)(p - s);
	if (n == 0 || n >= sizeof(buf))
		return n == 0 ? 0 : strtod(s, NULL);
	memcpy(buf, s, n);
	buf[n] = '\0';
	return strtod(buf, NULL);
}

double
aval_tonum(struct aval *v)
{
	if (v->flags & AV_NUM)
		return v->num;
	if (v->flags & AV_STR)
		return str_to_num(v->str);
	return 0;
}

/* True when fmt (CONVFMT, OFMT) has exactly one floating conversion. */
static bool
float_format(const char *fmt)
{
	int convs = 0;

	for (const char *p = fmt; *p; p++) {
		if (*p != '%')
			continue;
		if (*++p == '%')
			continue;
		while (*p && strchr("-+ #0", *p))
			p++;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == '.')
			for (p++; isdigit((unsigned char)*p); p++)
				;
		if (*p == '\0' || strchr("eEfFgGaA", *p) == NULL)
			return false;
		convs++;
	}
	return convs == 1;
}

static char *
num_to_str(struct awk *a, double d, int fmt_var)
{
	char buf[512];
	const char *fmt;

	if (d == (double)(long long)d && fabs(d) < 1e16) {
		snprintf(buf, sizeof(buf), "%lld", (long long)d);
		return tb_xstrdup(buf);
	}
	if (isnan(d))
		return tb_xstrdup(signbit(d) ? "-nan" : "nan");
	if (isinf(d))
		return tb_xstrdup(d < 0 ? "-inf" : "inf");
	fmt = aval_tostr(a, &a->globals[fmt_var].v);
	if (!float_format(fmt))
		fmt = "%.6g";
	snprintf(buf, sizeof(buf), fmt, d);
	return tb_xstrdup(buf);
}

const char *
aval_tostr(struct awk *a, struct aval *v)
{
	if (v->flags & AV_STR)
		return v->str;
	if (!(v->flags & AV_NUM))
		return "";
	v->str = num_to_str(a, v->num, V_CONVFMT);
	v->flags |= AV_STR;
	return v->str;
}

const char *
aval_tostr_out(struct awk *a, struct aval *v)
{
	if ((v->flags & AV_NUM) && !(v->flags & AV_STR)) {
		v->str = num_to_str(a, v->num, V_OFMT);
		v->flags |= AV_STR;
	}
	return aval_tostr(a, v);
}

bool
aval_true(struct aval *v)
{
	if (v->flags & (AV_STRNUM))
		return v->num != 0;
	if (v->flags & AV_STR)
		return v->str[0] != '\0';
	if (v->flags & AV_NUM)
		return v->num != 0;
	return false;
}

static bool
is_numeric(const struct aval *v)
{
	return v->flags == 0 || (v->flags & AV_STRNUM) ||
	    ((v->flags & AV_NUM) && !(v->flags & AV_STR));
}

int
aval_cmp(struct awk *a, struct aval *x, struct aval *y)
{
	if (is_numeric(x) && is_numeric(y)) {
		double p = aval_tonum(x), q = aval_tonum(y);

		return p < q ? -1 : p > q ? 1 : 0;
	}
	return strcmp(aval_tostr(a, x), aval_tostr(a, y));
}

static size_t
hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

struct amap *
amap_new(void)
{
	struct amap *m = calloc(1, sizeof(*m));

	if (m == NULL)
		abort();
	return m;
}

void
amap_clear(struct amap *m)
{
	for (size_t i = 0; i < m->nb; i++) {
		struct amap_ent *e = m->b[i], *next;

		for (; e != NULL; e = next) {
			next = e->next;
			free(e->key);
			aval_free(&e->v);
			free(e);
		}
		m->b[i] = NULL;
	}
	m->n = 0;
}

void
amap_free(struct amap *m)
{
	if (m == NULL)
		return;
	amap_clear(m);
	free(m->b);
	free(m);
}

static void
amap_grow(struct amap *m)
{
	size_t nb = m->nb ? m->nb * 4 : 16;
	struct amap_ent **b = calloc(nb, sizeof(*b));

	if (b == NULL)
		abort();
	for (size_t i = 0; i < m->nb; i++) {
		struct amap_ent *e = m->b[i], *next;

		for (; e != NULL; e = next) {
			size_t k = hash(e->key) % nb;

			next = e->next;
			e->next = b[k];
			b[k] = e;
		}
	}
	free(m->b);
	m->b = b;
	m->nb = nb;
}

struct aval *
amap_get(struct amap *m, const char *key, bool create)
{
	struct amap_ent *e;
	size_t k;

	if (m->nb > 0)
		for (e = m->b[hash(key) % m->nb]; e != NULL; e = e->next)
			if (strcmp(e->key, key) == 0)
				return &e->v;
	if (!create)
		return NULL;
	if (m->n >= m->nb)
		amap_grow(m);
	k = hash(key) % m->nb;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		abort();
	e->key = tb_xstrdup(key);
	e->next = m->b[k];
	m->b[k] = e;
	m->n++;
	return &e->v;
}

void
amap_del(struct amap *m, const char *key)
{
	struct amap_ent **p;

	if (m->nb == 0)
		return;
	for (p = &m->b[hash(key) % m->nb]; *p != NULL; p = &(*p)->next)
		if (strcmp((*p)->key, key) == 0) {
			struct amap_ent *e = *p;

			*p = e->next;
			free(e->key);
			aval_free(&e->v);
			free(e);
			m->n--;
			return;
		}
}

static int
key_cmp(const void *x, const void *y)
{
	const char *a = *(char *const *)x, *b = *(char *const *)y;
	bool na = awk_looks_numeric(a), nb = awk_looks_numeric(b);

	/* Numeric keys in numeric order first, then the rest. */
	if (na && nb) {
		double p = strtod(a, NULL), q = strtod(b, NULL);

		return p < q ? -1 : p > q;
	}
	if (na != nb)
		return na ? -1 : 1;
	return strcmp(a, b);
}

char **
amap_keys(struct amap *m, size_t *np)
{
	char **k = tb_xmalloc(sizeof(char *) * (m->n + 1));
	size_t n = 0;

	for (size_t i = 0; i < m->nb; i++)
		for (struct amap_ent *e = m->b[i]; e != NULL; e = e->next)
			k[n++] = e->key;
	/* Deterministic order (awk leaves it unspecified). */
	qsort(k, n, sizeof(char *), key_cmp);
	*np = n;
	return k;
}
