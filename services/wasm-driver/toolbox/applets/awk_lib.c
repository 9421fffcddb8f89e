/* awk_lib.c - awk builtins, printf formatting, files, pipes and getline. */
#include "awk.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Formats printf-style; arguments come from the node list args. */
char *
awk_format(struct awk *a, const char *fmt, struct anode *args)
{
	struct tb_buf out = { 0 };
	const char *p = fmt;

	while (*p) {
		char spec[64], buf[512], conv;
		size_t n = 0;
		int star[2], nstar = 0;
		struct aval v = { 0, 0, NULL };

		if (*p != '%') {
			tb_buf_addc(&out, *p++);
			continue;
		}
		if (p[1] == '%') {
			tb_buf_addc(&out, '%');
			p += 2;
			continue;
		}
		spec[n++] = *p++;
		while (*p && strchr("-+ #0", *p) && n < 20)
			spec[n++] = *p++;
		for (int part = 0; part < 2; part++) {
			if (part == 1) {
				if (*p != '.')
					break;
				spec[n++] = *p++;
			}
			if (*p == '*') {
				struct aval w = args ? awk_eval(a, args) :
				    aval_num(0);

				star[nstar++] = (int)aval_tonum(&w);
				aval_free(&w);
				args = args ? args->next : NULL;
				spec[n++] = *p++;
			} else
				while (isdigit((unsigned char)*p) && n < 40)
					spec[n++] = *p++;
		}
		while (*p == 'h' || *p == 'l' || *p == 'L' || *p == 'q')
			p++;
		conv = *p;
		if (conv == '\0' || strchr("diouxXeEfFgGcs", conv) == NULL) {
			/* Not a conversion: output as is. */
			tb_buf_add(&out, spec, n);
			continue;
		}
		p++;
		if (args != NULL) {
			v = awk_eval(a, args);
			args = args->next;
		}
		if (strchr("diouxX", conv)) {
			spec[n++] = 'l';
			spec[n++] = 'l';
		}
		spec[n++] = conv == 'i' ? 'd' : conv;
		spec[n] = '\0';
#define FMT(x) (nstar == 2 ? snprintf(buf, sizeof(buf), spec, star[0], \
    star[1], x) : nstar == 1 ? snprintf(buf, sizeof(buf), spec, star[0], x) \
    : snprintf(buf, sizeof(buf), spec, x))
		if (conv == 's') {
			const char *s = aval_tostr(a, &v);
			int len = nstar == 2 ? snprintf(NULL, 0, spec, star[0],
			    star[1], s) : nstar == 1 ? snprintf(NULL, 0, spec,
			    star[0], s) : snprintf(NULL, 0, spec, s);
			char *big = tb_xmalloc((size_t)len + 1);

			if (nstar == 2)
				snprintf(big, (size_t)len + 1, spec, star[0],
				    star[1], s);
			else if (nstar == 1)
				snprintf(big, (size_t)len + 1, spec, star[0], s);
			else
				snprintf(big, (size_t)len + 1, spec, s);
			tb_buf_adds(&out, big);
			free(big);
		} else if (conv == 'c') {
			int ch;

			if ((v.flags & AV_NUM) && !(v.flags & AV_STR))
				ch = (int)v.num;
			else
				ch = (unsigned char)aval_tostr(a, &v)[0];
			FMT(ch);
			tb_buf_adds(&out, buf);
		} else if (strchr("dioxXu", conv)) {
			double d = aval_tonum(&v);

			if (conv == 'd' || conv == 'i')
				FMT((long long)d);
			else
				FMT((unsigned long long)(long long)d);
			tb_buf_adds(&out, buf);
		} else {
			FMT(aval_tonum(&v));
			tb_buf_adds(&out, buf);
		}
#undef FMT
		aval_free(&v);
	}
	return tb_buf_str(&out);
}

static struct anode *
nth_arg(struct anode *n, int k)
{
	struct anode *e = n->a;

	while (e != NULL && k-- > 0)
		e = e->next;
	return e;
}

static double
num_arg(struct awk *a, struct anode *n, int k)
{
	struct aval v = awk_eval(a, nth_arg(n, k));
	double d = aval_tonum(&v);

	aval_free(&v);
	return d;
}

/* The string of argument k (malloc'd). */
static char *
str_arg(struct awk *a, struct anode *n, int k)
{
	struct aval v = awk_eval(a, nth_arg(n, k));
	char *s = tb_xstrdup(aval_tostr(a, &v));

	aval_free(&v);
	return s;
}

static regex_t *
re_arg(struct awk *a, struct anode *e)
{
	struct aval v;
	regex_t *re;

	if (e->kind == E_REGEX)
		return e->re;
	v = awk_eval(a, e);
	re = awk_dynre(a, aval_tostr(a, &v));
	aval_free(&v);
	return re;
}

/* sub() and gsub(): returns the number of replacements. */
static int
substitute(struct awk *a, struct anode *n, bool global)
{
	struct anode *target = n->nargs > 2 ? nth_arg(n, 2) : NULL;
	regex_t *re = re_arg(a, nth_arg(n, 0));
	char *repl = str_arg(a, n, 1), *src;
	struct tb_buf out = { 0 };
	struct aval tv;
	size_t pos = 0, len, prev_end = (size_t)-1;
	regmatch_t m;
	int count = 0;

	if (re == NULL) {
		free(repl);
		return 0;
	}
	tv = target ? awk_eval(a, target) : aval_copy(awk_field(a, 0));
	src = tb_xstrdup(aval_tostr(a, &tv));
	aval_free(&tv);
	len = strlen(src);
	while (pos <= len && regexec(re, src + pos, 1, &m, pos > 0 ?
	    REG_NOTBOL : 0) == 0) {
		size_t so = pos + (size_t)m.rm_so, eo = pos + (size_t)m.rm_eo;

		if (so == eo && so == prev_end) {
			if (so < len)
				tb_buf_addc(&out, src[so]);
			pos = so + 1;
			continue;
		}
		tb_buf_add(&out, src + pos, so - pos);
		for (const char *r = repl; *r; r++) {
			if (*r == '\\' && (r[1] == '&' || r[1] == '\\')) {
				tb_buf_addc(&out, *++r);
			} else if (*r == '&')
				tb_buf_add(&out, src + so, eo - so);
			else
				tb_buf_addc(&out, *r);
		}
		count++;
		prev_end = eo;
		if (so == eo) {
			if (so < len)
				tb_buf_addc(&out, src[so]);
			pos = eo + 1;
		} else
			pos = eo;
		if (!global)
			break;
	}
	if (count > 0) {
		if (pos < len)
			tb_buf_add(&out, src + pos, len - pos);
		if (target != NULL)
			awk_assign_node(a, target, aval_take(tb_buf_str(&out)));
		else
			awk_set_field(a, 0, aval_take(tb_buf_str(&out)));
	} else
		tb_buf_free(&out);
	free(src);
	free(repl);
	return count;
}

static struct aval
substr_of(struct awk *a, struct anode *n)
{
	char *s = str_arg(a, n, 0);
	double len = (double)strlen(s), m = num_arg(a, n, 1), k;
	double start, end;
	struct aval r;

	m = floor(m + 0.5);
	start = m;
	if (n->nargs > 2) {
		k = floor(num_arg(a, n, 2) + 0.5);
		end = m + k;
	} else
		end = len + 1;
	if (start < 1)
		start = 1;
	if (end > len + 1)
		end = len + 1;
	if (isnan(end) || end <= start)
		r = aval_str("");
	else
		r = aval_take(strndup(s + (size_t)start - 1,
		    (size_t)(end - start)));
	free(s);
	return r;
}

struct aval
awk_builtin(struct awk *a, struct anode *n)
{
	struct aval r;
	char *s, *t;
	double d;

	switch (n->op) {
	case B_LENGTH:
		if (n->nargs == 0)
			return aval_num((double)strlen(aval_tostr(a,
			    awk_field(a, 0))));
		if ((n->a->kind == E_VAR || n->a->kind == E_LOCAL) &&
		    awk_cell(a, n->a)->arr != NULL)
			return aval_num((double)awk_cell(a, n->a)->arr->n);
		s = str_arg(a, n, 0);
		r = aval_num((double)strlen(s));
		free(s);
		return r;
	case B_SUBSTR:
		if (n->nargs < 2)
			break;
		return substr_of(a, n);
	case B_INDEX:
		if (n->nargs < 2)
			break;
		s = str_arg(a, n, 0);
		t = str_arg(a, n, 1);
		{
			char *p = strstr(s, t);

			r = aval_num(p ? (double)(p - s) + 1 : 0);
		}
		free(s);
		free(t);
		return r;
	case B_SPLIT: {
		struct anode *arr = nth_arg(n, 1), *fs = nth_arg(n, 2);
		struct acell *c;
		char *sep;
		int cnt;

		if (n->nargs < 2 || (arr->kind != E_VAR && arr->kind != E_LOCAL))
			break;
		c = awk_cell(a, arr);
		if (c->arr == NULL && c->link != NULL && c->link->v.flags == 0) {
			if (c->link->arr == NULL)
				c->link->arr = amap_new();
			c->arr = c->link->arr;
			c->arr_ref = true;
		}
		if (c->arr == NULL) {
			if (c->v.flags != 0) {
				awk_runtime_error(a, "split: second argument "
				    "is not an array");
				return aval_num(0);
			}
			c->arr = amap_new();
		}
		s = str_arg(a, n, 0);
		if (fs == NULL)
			sep = tb_xstrdup(aval_tostr(a, &a->globals[V_FS].v));
		else if (fs->kind == E_REGEX)
			sep = tb_xstrdup(fs->str);
		else
			sep = str_arg(a, n, 2);
		cnt = awk_split(a, s, sep, c->arr);
		free(s);
		free(sep);
		return aval_num(cnt);
	}
	case B_SUB:
	case B_GSUB:
		if (n->nargs < 2)
			break;
		return aval_num(substitute(a, n, n->op == B_GSUB));
	case B_MATCH: {
		regex_t *re;
		regmatch_t m;

		if (n->nargs < 2)
			break;
		s = str_arg(a, n, 0);
		re = re_arg(a, nth_arg(n, 1));
		if (re != NULL && regexec(re, s, 1, &m, 0) == 0) {
			aval_free(&a->globals[V_RSTART].v);
			aval_free(&a->globals[V_RLENGTH].v);
			a->globals[V_RSTART].v = aval_num(m.rm_so + 1);
			a->globals[V_RLENGTH].v = aval_num(m.rm_eo - m.rm_so);
			d = m.rm_so + 1;
		} else {
			aval_free(&a->globals[V_RSTART].v);
			aval_free(&a->globals[V_RLENGTH].v);
			a->globals[V_RSTART].v = aval_num(0);
			a->globals[V_RLENGTH].v = aval_num(-1);
			d = 0;
		}
		free(s);
		return aval_num(d);
	}
	case B_SPRINTF:
		if (n->nargs < 1)
			break;
		s = str_arg(a, n, 0);
		t = awk_format(a, s, n->a->next);
		free(s);
		return aval_take(t);
	case B_SIN: return aval_num(sin(num_arg(a, n, 0)));
	case B_COS: return aval_num(cos(num_arg(a, n, 0)));
	case B_ATAN2: return aval_num(atan2(num_arg(a, n, 0), num_arg(a, n, 1)));
	case B_EXP: return aval_num(exp(num_arg(a, n, 0)));
	case B_LOG: return aval_num(log(num_arg(a, n, 0)));
	case B_SQRT: return aval_num(sqrt(num_arg(a, n, 0)));
	case B_INT:
		d = num_arg(a, n, 0);
		return aval_num(d < 0 ? ceil(d) : floor(d));
	case B_RAND:
		a->seed = a->seed * 1103515245u + 12345u;
		return aval_num((double)((a->seed >> 8) & 0xffffff) / 16777216.0);
	case B_SRAND:
		d = a->prev_seed;
		a->prev_seed = n->nargs > 0 ? num_arg(a, n, 0) :
		    (double)time(NULL);
		a->seed = (unsigned)(long long)a->prev_seed;
		return aval_num(d);
	case B_TOLOWER:
	case B_TOUPPER:
		s = str_arg(a, n, 0);
		for (char *p = s; *p; p++)
			*p = (char)(n->op == B_TOLOWER ? tolower(
			    (unsigned char)*p) : toupper((unsigned char)*p));
		return aval_take(s);
	case B_SYSTEM: {
		char *argv[4] = { (char *)"sh", (char *)"-c", NULL, NULL };
		int rc;

		s = str_arg(a, n, 0);
		argv[2] = s;
		fflush(a->io->out);
		rc = applet_sh(a->io, 3, argv);
		free(s);
		return aval_num(rc);
	}
	case B_CLOSE:
		s = str_arg(a, n, 0);
		r = aval_num(awk_close(a, s));
		free(s);
		return r;
	case B_FFLUSH:
		fflush(a->io->out);
		return aval_num(0);
	}
	awk_runtime_error(a, "wrong number of arguments to a builtin "
	    "function");
	return aval_num(0);
}
