/* awk.c - the awk applet: options, setup, the record loop, cleanup. */
#include "awk.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

/* Processes escape sequences of -v values and -F (like string literals). */
static char *
unescape(const char *s)
{
	struct tb_buf b = { 0 };

	for (; *s; s++) {
		if (*s != '\\' || s[1] == '\0') {
			tb_buf_addc(&b, *s);
			continue;
		}
		switch (*++s) {
		case 'n': tb_buf_addc(&b, '\n'); break;
		case 't': tb_buf_addc(&b, '\t'); break;
		case 'r': tb_buf_addc(&b, '\r'); break;
		case '\\': tb_buf_addc(&b, '\\'); break;
		case '"': tb_buf_addc(&b, '"'); break;
		case '/': tb_buf_addc(&b, '/'); break;
		default:
			tb_buf_addc(&b, '\\');
			tb_buf_addc(&b, *s);
		}
	}
	return tb_buf_str(&b);
}

static void
set_global(struct awk *a, int idx, struct aval v)
{
	aval_free(&a->globals[idx].v);
	a->globals[idx].v = v;
}

static int
assign_var(struct awk *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *name, *val;

	if (eq == NULL || eq == arg) {
		tb_err(a->io, "awk", "-v: '%s': expected name=value", arg);
		return -1;
	}
	name = strndup(arg, (size_t)(eq - arg));
	val = unescape(eq + 1);
	set_global(a, awk_global(a, name), aval_strnum(val));
	free(name);
	free(val);
	return 0;
}

static void
setup(struct awk *a, int argc, char **argv)
{
	static const char *const specials[] = { "NR", "NF", "FNR", "FS",
		"OFS", "ORS", "RS", "FILENAME", "SUBSEP", "RSTART", "RLENGTH",
		"CONVFMT", "OFMT", "ENVIRON", "ARGC", "ARGV" };
	char key[32];

	for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); i++)
		awk_global(a, specials[i]);
	set_global(a, V_FS, aval_str(" "));
	set_global(a, V_OFS, aval_str(" "));
	set_global(a, V_ORS, aval_str("\n"));
	set_global(a, V_RS, aval_str("\n"));
	set_global(a, V_SUBSEP, aval_str("\034"));
	set_global(a, V_CONVFMT, aval_str("%.6g"));
	set_global(a, V_OFMT, aval_str("%.6g"));
	set_global(a, V_NR, aval_num(0));
	set_global(a, V_NF, aval_num(0));
	set_global(a, V_FNR, aval_num(0));
	set_global(a, V_RSTART, aval_num(0));
	set_global(a, V_RLENGTH, aval_num(-1));
	a->globals[V_ENVIRON].arr = amap_new();
	for (char **e = environ; *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		char *k;

		if (eq == NULL)
			continue;
		k = strndup(*e, (size_t)(eq - *e));
		*amap_get(a->globals[V_ENVIRON].arr, k, true) =
		    aval_strnum(eq + 1);
		free(k);
	}
	a->globals[V_ARGV].arr = amap_new();
	*amap_get(a->globals[V_ARGV].arr, "0", true) = aval_str("awk");
	for (int i = 0; i < argc; i++) {
		snprintf(key, sizeof(key), "%d", i + 1);
		*amap_get(a->globals[V_ARGV].arr, key, true) =
		    aval_strnum(argv[i]);
	}
	set_global(a, V_ARGC, aval_num(argc + 1));
	a->argi = 1;
	a->seed = 1;
}

/* Runs BEGIN or END items; false when the program must stop. */
static void
run_special(struct awk *a, struct aitem *it)
{
	for (; it != NULL && !a->exiting; it = it->next)
		awk_exec(a, it->action);
}

static bool
pattern_true(struct awk *a, struct anode *p)
{
	struct aval v = awk_eval(a, p);
	bool t = aval_true(&v);

	aval_free(&v);
	return t;
}

static void
run_main(struct awk *a)
{
	while (!a->exiting && awk_main_record(a)) {
		awk_set_record(a, a->rec.data, a->rec.len);
		for (struct aitem *it = a->items; it != NULL && !a->exiting;
		    it = it->next) {
			bool sel;
			int r;

			if (it->pat == NULL)
				sel = true;
			else if (it->pat2 == NULL)
				sel = pattern_true(a, it->pat);
			else if (it->in_range) {
				sel = true;
				it->in_range = !pattern_true(a, it->pat2);
			} else if ((sel = pattern_true(a, it->pat)))
				it->in_range = !pattern_true(a, it->pat2);
			if (!sel || a->exiting)
				continue;
			if (it->action == NULL) {
				fputs(aval_tostr(a, awk_field(a, 0)), a->io->out);
				fputs(aval_tostr(a, &a->globals[V_ORS].v),
				    a->io->out);
				continue;
			}
			r = awk_exec(a, it->action);
			if (r == R_NEXT)
				break;
			if (r == R_NEXTFILE) {
				if (a->in != NULL && a->in != a->io->in)
					fclose(a->in);
				a->in = NULL;
				a->in_open = false;
				break;
			}
		}
	}
}

static void
awk_free(struct awk *a)
{
	awk_close_all(a);
	if (a->in != NULL && a->in != a->io->in)
		fclose(a->in);
	for (int i = 0; i < a->nglobals; i++) {
		aval_free(&a->globals[i].v);
		amap_free(a->globals[i].arr);
		free(a->names[i]);
	}
	free(a->globals);
	free(a->names);
	for (int i = 0; i <= a->nf && a->fcap > 0; i++)
		aval_free(&a->fields[i]);
	free(a->fields);
	for (int i = 0; i < a->nfuncs; i++)
		free(a->funcs[i].params);
	free(a->funcs);
	for (int i = 0; i < a->nregs; i++) {
		regfree(a->regs[i]);
		free(a->regs[i]);
	}
	free(a->regs);
	for (int k = 0; k < 16; k++)
		if (a->recache[k].src != NULL) {
			regfree(&a->recache[k].re);
			free(a->recache[k].src);
		}
	aval_free(&a->retval);
	tb_buf_free(&a->rec);
	free(a->toks);
	awk_arena_free(a);
}

static int
read_prog(struct tb_io *io, struct tb_buf *prog, const char *path)
{
	FILE *f = tb_open_in(io, "awk", path);
	char buf[4096];
	size_t n;

	if (f == NULL)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		tb_buf_add(prog, buf, n);
	tb_close_in(io, f);
	tb_buf_addc(prog, '\n');
	return 0;
}

int
applet_awk(struct tb_io *io, int argc, char **argv)
{
	struct awk a = { .io = io };
	struct tb_buf prog = { 0 };
	struct tb_opt o;
	char **vars = NULL, *fs = NULL;
	int nvars = 0, c, rc = 2;
	bool have_prog = false;

	tb_opt_init(&o, io, "awk", argc, argv);
	while ((c = tb_opt_next(&o, "+F:v:f:")) != TB_OPT_END) {
		switch (c) {
		case 'F':
			free(fs);
			fs = strcmp(o.arg, "t") == 0 ? tb_xstrdup("\t") :
			    unescape(o.arg);
			break;
		case 'v':
			vars = tb_xrealloc(vars, sizeof(char *) *
			    (size_t)(nvars + 1));
			vars[nvars++] = o.arg;
			break;
		case 'f':
			if (read_prog(io, &prog, o.arg) != 0)
				goto out;
			have_prog = true;
			break;
		case TB_OPT_LONG:
			if (strcmp(o.arg, "version") == 0) {
				fputs("awk (toolbox) 1.0\n", io->out);
				rc = 0;
				goto out;
			}
			tb_opt_bad_long(&o);
			goto out;
		default:
			goto out;
		}
	}
	if (!have_prog) {
		if (o.ind >= argc) {
			tb_err(io, "awk", "no program given\nUsage: awk [-F fs] "
			    "[-v var=value] [-f progfile | 'prog'] [file ...]");
			goto out;
		}
		tb_buf_adds(&prog, argv[o.ind++]);
	}
	setup(&a, argc - o.ind, argv + o.ind);
	if (fs != NULL)
		set_global(&a, V_FS, aval_str(fs));
	for (int i = 0; i < nvars; i++)
		if (assign_var(&a, vars[i]) != 0)
			goto out;
	if (awk_lex(&a, tb_buf_str(&prog)) != 0 || awk_parse(&a) != 0)
		goto out;
	rc = 0;
	run_special(&a, a.begin);
	if (!a.exiting && (a.items != NULL || a.end != NULL))
		run_main(&a);
	if (!a.fatal) {
		a.exiting = false;
		run_special(&a, a.end);
	}
	rc = a.exit_code;
out:
	awk_free(&a);
	free(vars);
	free(fs);
	tb_buf_free(&prog);
	return rc;
}
