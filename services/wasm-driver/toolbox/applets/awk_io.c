/* awk_io.c - awk output redirection, pipes, getline and input records. */
#include "awk.h"

#include <stdlib.h>
#include <string.h>

static struct astream *
find_stream(struct awk *a, const char *name)
{
	for (struct astream *s = a->streams; s != NULL; s = s->next)
		if (strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

static struct astream *
add_stream(struct awk *a, const char *name, int kind)
{
	struct astream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		abort();
	s->name = tb_xstrdup(name);
	s->kind = kind;
	s->next = a->streams;
	a->streams = s;
	return s;
}

FILE *
awk_output(struct awk *a, int kind, const char *name)
{
	struct astream *s;

	if (strcmp(name, "/dev/stdout") == 0 || strcmp(name, "-") == 0)
		return a->io->out;
	if (strcmp(name, "/dev/stderr") == 0)
		return a->io->err;
	if ((s = find_stream(a, name)) != NULL && s->kind != '<' &&
	    s->kind != 'c')
		return s->f;
	s = add_stream(a, name, kind);
	if (kind == '|')
		s->f = tb_mem_writer(&s->mem);
	else
		s->f = strcmp(name, "/dev/null") == 0 ? tb_null_stream("w") :
		    fopen(name, kind == 'a' ? "a" : "w");
	if (s->f == NULL) {
		awk_runtime_error(a, "can't redirect to %s", name);
		return NULL;
	}
	return s->f;
}

/* Runs cmd with sh, stdin from in, stdout to out. */
static int
run_command(struct awk *a, const char *cmd, FILE *in, FILE *out)
{
	struct tb_io io = { in, out, a->io->err };
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)cmd, NULL };

	fflush(a->io->out);
	return applet_sh(&io, 3, argv);
}

static void
stream_free(struct awk *a, struct astream *s, int *status)
{
	*status = 0;
	if (s->kind == '|') {
		FILE *in;

		fclose(s->f);
		if ((in = tb_mem_reader(&s->mem)) != NULL) {
			*status = run_command(a, s->name, in, a->io->out);
			fclose(in);
		}
	} else if (s->f != NULL && s->f != a->io->in)
		*status = fclose(s->f) == 0 ? 0 : -1;
	tb_mem_free(&s->mem);
	free(s->name);
	free(s);
}

int
awk_close(struct awk *a, const char *name)
{
	struct astream **p;
	int status = -1;

	for (p = &a->streams; *p != NULL; p = &(*p)->next)
		if (strcmp((*p)->name, name) == 0) {
			struct astream *s = *p;

			*p = s->next;
			stream_free(a, s, &status);
			break;
		}
	return status;
}

void
awk_close_all(struct awk *a)
{
	int status;

	/* Oldest first, so pipes run in the order they were opened. */
	while (a->streams != NULL) {
		struct astream **p = &a->streams, *s;

		while ((*p)->next != NULL)
			p = &(*p)->next;
		s = *p;
		*p = NULL;
		stream_free(a, s, &status);
	}
}

bool
awk_next_record(struct awk *a, FILE *f, struct tb_buf *rec)
{
	const char *rs = aval_tostr(a, &a->globals[V_RS].v);
	int c, sep = rs[0] ? (unsigned char)rs[0] : -1;
	bool got = false;

	rec->len = 0;
	if (sep >= 0) {
		while ((c = getc(f)) != EOF) {
			got = true;
			if (c == sep)
				break;
			tb_buf_addc(rec, c);
		}
		tb_buf_str(rec);
		return got;
	}
	/* Paragraph mode: records separated by blank lines. */
	while ((c = getc(f)) == '\n')
		;
	while (c != EOF) {
		got = true;
		if (c == '\n') {
			int d = getc(f);

			if (d == '\n' || d == EOF) {
				while (d == '\n')
					d = getc(f);
				if (d != EOF)
					ungetc(d, f);
				break;
			}
			ungetc(d, f);
		}
		tb_buf_addc(rec, c);
		c = getc(f);
	}
	tb_buf_str(rec);
	return got;
}

static void
set_num_var(struct awk *a, int v, double d)
{
	aval_free(&a->globals[v].v);
	a->globals[v].v = aval_num(d);
}

/* "var=value" operand: assigns (escapes processed); false if no such. */
static bool
operand_assignment(struct awk *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	struct tb_buf name = { 0 };
	int idx;

	if (eq == NULL || eq == arg)
		return false;
	for (const char *p = arg; p < eq; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' &&
		    *p <= 'Z') || (p > arg && *p >= '0' && *p <= '9')))
			return false;
	tb_buf_add(&name, arg, (size_t)(eq - arg));
	idx = awk_global(a, tb_buf_str(&name));
	tb_buf_free(&name);
	aval_free(&a->globals[idx].v);
	a->globals[idx].v = aval_strnum(eq + 1);
	return true;
}

bool
awk_main_record(struct awk *a)
{
	for (;;) {
		if (!a->in_open) {
			struct aval *argc_v = &a->globals[V_ARGC].v;
			int argc = (int)aval_tonum(argc_v);
			const char *arg = NULL;
			char key[32];
			struct aval *v;

			while (a->argi < argc) {
				snprintf(key, sizeof(key), "%d", a->argi++);
				v = a->globals[V_ARGV].arr ? amap_get(
				    a->globals[V_ARGV].arr, key, false) : NULL;
				if (v == NULL || *aval_tostr(a, v) == '\0')
					continue;
				arg = aval_tostr(a, v);
				if (operand_assignment(a, arg)) {
					arg = NULL;
					continue;
				}
				break;
			}
			if (arg == NULL) {
				if (a->used_file)
					return false;
				arg = "-";
			}
			a->used_file = true;
			if (strcmp(arg, "-") == 0 ||
			    strcmp(arg, "/dev/stdin") == 0)
				a->in = a->io->in;
			else if ((a->in = fopen(arg, "r")) == NULL) {
				tb_err(a->io, "awk", "%s: No such file or "
				    "directory", arg);
				a->exit_code = 2;
				continue;
			}
			a->in_open = true;
			aval_free(&a->globals[V_FILENAME].v);
			a->globals[V_FILENAME].v = aval_str(a->in == a->io->in ?
			    "" : arg);
			set_num_var(a, V_FNR, 0);
		}
		if (awk_next_record(a, a->in, &a->rec)) {
			set_num_var(a, V_NR, aval_tonum(&a->globals[V_NR].v) +
			    1);
			set_num_var(a, V_FNR, aval_tonum(&a->globals[V_FNR].v) +
			    1);
			return true;
		}
		if (a->in != a->io->in)
			fclose(a->in);
		a->in = NULL;
		a->in_open = false;
	}
}

struct aval
awk_getline(struct awk *a, struct anode *n)
{
	struct tb_buf rec = { 0 };
	struct astream *s = NULL;
	bool got;

	if (n->op == 0) {
		got = awk_main_record(a);
		if (got) {
			tb_buf_add(&rec, a->rec.data, a->rec.len);
			tb_buf_str(&rec);
		}
	} else {
		struct aval v = awk_eval(a, n->a);
		const char *name = aval_tostr(a, &v);

		s = find_stream(a, name);
		if (s == NULL && n->op == '<') {
			s = add_stream(a, name, '<');
			s->f = strcmp(name, "-") == 0 ? a->io->in :
			    fopen(name, "r");
		} else if (s == NULL) {
			FILE *in = tb_null_stream("r"), *out;

			s = add_stream(a, name, 'c');
			out = tb_mem_writer(&s->mem);
			if (in != NULL && out != NULL)
				run_command(a, name, in, out);
			if (out != NULL)
				fclose(out);
			if (in != NULL)
				fclose(in);
			s->f = tb_mem_reader(&s->mem);
		}
		aval_free(&v);
		if (s->f == NULL)
			return aval_num(-1);
		got = awk_next_record(a, s->f, &rec);
		if (got && n->op == '|')
			set_num_var(a, V_NR, aval_tonum(&a->globals[V_NR].v) +
			    1);
	}
	if (!got) {
		tb_buf_free(&rec);
		return aval_num(0);
	}
	if (n->b != NULL)
		awk_assign_node(a, n->b, aval_strnum(tb_buf_str(&rec)));
	else
		awk_set_record(a, rec.data ? rec.data : "", rec.len);
	tb_buf_free(&rec);
	return aval_num(1);
}
