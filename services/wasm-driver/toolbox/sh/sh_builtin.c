/* sh_builtin.c - shell builtins, variables, and the sh applet itself. */
#include "sh.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int
sh_setvar(struct sh *sh, const char *name, const char *value)
{
	(void)sh;
	if (!sh_is_name(name, strlen(name)))
		return -1;
	return setenv(name, value, 1) == 0 ? 0 : -1;
}

const char *
sh_getvar(struct sh *sh, const char *name, char buf[32])
{
	if (name[0] == '?' && name[1] == '\0') {
		snprintf(buf, 32, "%d", sh->status);
		return buf;
	}
	if (name[0] == '#' && name[1] == '\0') {
		snprintf(buf, 32, "%d", sh->nparams);
		return buf;
	}
	if (name[0] == '$' && name[1] == '\0')
		return "1";
	if (name[0] == '!' && name[1] == '\0')
		return NULL;
	if (name[0] == '-' && name[1] == '\0') {
		snprintf(buf, 32, "%s%s%s", sh->errexit ? "e" : "",
		    sh->xtrace ? "x" : "", sh->nounset ? "u" : "");
		return buf;
	}
	if (isdigit((unsigned char)name[0])) {
		long k = strtol(name, NULL, 10);

		if (k == 0)
			return sh->arg0;
		return k <= sh->nparams ? sh->params[k - 1] : NULL;
	}
	return getenv(name);
}

static void
set_params(struct sh *sh, int argc, char **argv)
{
	sh_free_fields(sh->params, sh->nparams);
	sh->params = tb_xmalloc(sizeof(char *) * (size_t)(argc + 1));
	for (int i = 0; i < argc; i++)
		sh->params[i] = tb_xstrdup(argv[i]);
	sh->params[argc] = NULL;
	sh->nparams = argc;
}

int
sh_call_function(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	struct sh_func *f;
	char **saved;
	int nsaved, rc;

	for (f = sh->functions; f != NULL; f = f->next)
		if (strcmp(f->name, argv[0]) == 0)
			break;
	if (f == NULL)
		return -1;
	if (sh->funcs >= SH_MAX_DEPTH) {
		tb_err(io, "sh", "%s: maximum function nesting exceeded",
		    argv[0]);
		return 2;
	}
	saved = sh->params;
	nsaved = sh->nparams;
	sh->params = NULL;
	sh->nparams = 0;
	set_params(sh, argc - 1, argv + 1);
	f->body->refs++;	/* survives a redefinition while running */
	sh->funcs++;
	rc = sh_run(sh, f->body, io);
	sh_locals_pop(sh, sh->funcs);
	sh->funcs--;
	sh_node_free(f->body);
	sh->returning = false;
	sh_free_fields(sh->params, sh->nparams);
	sh->params = saved;
	sh->nparams = nsaved;
	return rc;
}

int
sh_bi_cd(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("HOME");
	char old[PATH_MAX], now[PATH_MAX];

	(void)sh;
	if (dir == NULL || *dir == '\0')
		dir = "/";
	if (strcmp(dir, "-") == 0) {
		dir = getenv("OLDPWD");
		if (dir == NULL) {
			tb_err(io, "sh", "cd: OLDPWD not set");
			return 1;
		}
		fprintf(io->out, "%s\n", dir);
	}
	if (getcwd(old, sizeof(old)) == NULL)
		old[0] = '\0';
	if (chdir(dir) != 0) {
		tb_err(io, "sh", "cd: %s: %s", dir, strerror(errno));
		return 1;
	}
	if (old[0] != '\0')
		setenv("OLDPWD", old, 1);
	if (getcwd(now, sizeof(now)) != NULL)
		setenv("PWD", now, 1);
	return 0;
}

int
sh_bi_exit(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	long long v = sh->status;

	if (argc > 1 && tb_parse_ll(argv[1], &v) != 0) {
		tb_err(io, "sh", "exit: %s: numeric argument required",
		    argv[1]);
		v = 2;
	}
	sh->exiting = true;
	sh->status = (int)(v & 0xff);
	return sh->status;
}

static void
print_quoted(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	}
	fputc('\'', out);
}

int
sh_bi_export(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "-n") == 0)
			continue;
		if (eq == NULL) {
			if (!sh_is_name(argv[i], strlen(argv[i]))) {
				tb_err(io, "sh", "export: '%s': not a valid "
				    "identifier", argv[i]);
				rc = 1;
			}
			continue;
		}
		*eq = '\0';
		if (sh_setvar(sh, argv[i], eq + 1) != 0) {
			tb_err(io, "sh", "export: '%s': not a valid identifier",
			    argv[i]);
			rc = 1;
		}
		*eq = '=';
	}
	if (argc == 1 || (argc == 2 && strcmp(argv[1], "-p") == 0)) {
		for (char **e = environ; *e != NULL; e++) {
			const char *eq = strchr(*e, '=');

			if (eq == NULL)
				continue;
			fprintf(io->out, "export %.*s=", (int)(eq - *e), *e);
			print_quoted(io->out, eq + 1);
			fputc('\n', io->out);
		}
	}
	return rc;
}

int
sh_bi_unset(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	bool funcs = false;

	(void)io;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-f") == 0) {
			funcs = true;
			continue;
		}
		if (strcmp(argv[i], "-v") == 0)
			continue;
		if (!funcs) {
			unsetenv(argv[i]);
			continue;
		}
		for (struct sh_func **p = &sh->functions; *p; p = &(*p)->next)
			if (strcmp((*p)->name, argv[i]) == 0) {
				struct sh_func *f = *p;

				*p = f->next;
				sh_node_free(f->body);
				free(f->name);
				free(f);
				break;
			}
	}
	return 0;
}

int
sh_set_long(struct sh *sh, const char *name, bool on)
{
	static const struct {
		const char	*name;
		char		 c;
	} longs[] = { { "errexit", 'e' }, { "xtrace", 'x' }, { "nounset", 'u' },
		{ "noglob", 'f' }, { "pipefail", 'p' }, { "verbose", 'v' },
		{ "monitor", 'm' }, { "hashall", 'h' }, { "noclobber", 'C' } };

	for (size_t k = 0; k < sizeof(longs) / sizeof(longs[0]); k++)
		if (strcmp(name, longs[k].name) == 0) {
			if (longs[k].c == 'p')
				sh->pipefail = on;
			else
				sh_set_option(sh, longs[k].c, on);
			return 0;
		}
	return -1;
}

int
sh_set_option(struct sh *sh, char c, bool on)
{
	switch (c) {
	case 'e': sh->errexit = on; return 0;
	case 'x': sh->xtrace = on; return 0;
	case 'u': sh->nounset = on; return 0;
	case 'f': sh->noglob = on; return 0;
	case 'v': case 'h': case 'm': case 'b': case 'C': case 'i': case 's':
	case 'l':
		return 0;
	}
	return -1;
}

int
sh_bi_set(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	int i;

	if (argc == 1) {
		for (char **e = environ; *e != NULL; e++)
			fprintf(io->out, "%s\n", *e);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool on = a[0] == '-';

		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			i++;
			set_params(sh, argc - i, argv + i);
			return 0;
		}
		if (a[0] != '-' && a[0] != '+')
			break;
		for (const char *p = a + 1; *p; p++) {
			if (*p == 'o') {
				const char *name = i + 1 < argc ? argv[++i] :
				    "";

				if (sh_set_long(sh, name, on) != 0) {
					tb_err(io, "sh", "set: %s: invalid "
					    "option name", name);
					return 2;
				}
			} else if (sh_set_option(sh, *p, on) != 0) {
				tb_err(io, "sh", "set: -%c: invalid option", *p);
				return 2;
			}
		}
	}
	if (i < argc)
		set_params(sh, argc - i, argv + i);
	return 0;
}

int
sh_bi_shift(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	long long n = 1;

	if (argc > 1 && (tb_parse_ll(argv[1], &n) != 0 || n < 0)) {
		tb_err(io, "sh", "shift: %s: numeric argument required",
		    argv[1]);
		return 1;
	}
	if (n > sh->nparams)
		return 1;
	for (long long i = 0; i < n; i++)
		free(sh->params[i]);
	memmove(sh->params, sh->params + n, sizeof(char *) *
	    (size_t)(sh->nparams - n + 1));
	sh->nparams -= (int)n;
	return 0;
}

/* read [-r] [-p prompt] [name...] */
int
sh_bi_read(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	struct tb_buf line = { 0 };
	bool raw = false, got = false;
	const char *ifs = getenv("IFS");
	int c, i = 1, rc = 0;
	char *s;

	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "-r") == 0)
			raw = true;
		else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
			fputs(argv[++i], io->err);
			fflush(io->err);
		} else if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "-s") != 0) {
			tb_err(io, "sh", "read: %s: unsupported option",
			    argv[i]);
			return 2;
		}
	}
	while ((c = getc(io->in)) != EOF) {
		got = true;
		if (c == '\n')
			break;
		if (c == '\\' && !raw) {
			if ((c = getc(io->in)) == EOF)
				break;
			if (c == '\n')
				continue;
		}
		tb_buf_addc(&line, c);
	}
	if (c == EOF)
		rc = 1;
	if (!got) {
		tb_buf_free(&line);
		for (int k = i; k < argc; k++)
			sh_setvar(sh, argv[k], "");
		return 1;
	}
	if (ifs == NULL)
		ifs = " \t\n";
	s = tb_buf_str(&line);
	if (i >= argc) {
		sh_setvar(sh, "REPLY", s);
		tb_buf_free(&line);
		return rc;
	}
	for (int k = i; k < argc; k++) {
		struct tb_buf v = { 0 };

		while (*s && strchr(ifs, *s) && isspace((unsigned char)*s))
			s++;
		if (k == argc - 1) {
			size_t n = strlen(s);

			while (n > 0 && strchr(ifs, s[n - 1]) &&
			    isspace((unsigned char)s[n - 1]))
				n--;
			tb_buf_add(&v, s, n);
			s += strlen(s);
		} else {
			while (*s && !strchr(ifs, *s)) {
				tb_buf_addc(&v, *s++);
			}
			if (*s)
				s++;
		}
		if (sh_setvar(sh, argv[k], tb_buf_str(&v)) != 0) {
			tb_err(io, "sh", "read: '%s': not a valid identifier",
			    argv[k]);
			rc = 2;
		}
		tb_buf_free(&v);
	}
	tb_buf_free(&line);
	return rc;
}

static char *
join_args(int argc, char **argv)
{
	struct tb_buf b = { 0 };

	for (int i = 0; i < argc; i++) {
		if (i > 0)
			tb_buf_addc(&b, ' ');
		tb_buf_adds(&b, argv[i]);
	}
	return tb_buf_str(&b);
}

int
sh_bi_eval(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	char *src = join_args(argc - 1, argv + 1);
	int rc = sh_eval(sh, src, io);

	free(src);
	return rc;
}

char *
sh_read_file(struct sh *sh, struct tb_io *io, const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? io->in : fopen(path, "r");
	struct tb_buf b = { 0 };
	char buf[4096];
	size_t n;

	(void)sh;
	if (f == NULL) {
		tb_err(io, "sh", "%s: %s", path, strerror(errno));
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		tb_buf_add(&b, buf, n);
	if (f != io->in)
		fclose(f);
	return tb_buf_str(&b);
}

int
sh_bi_source(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	char *src;
	int rc;

	if (argc < 2) {
		tb_err(io, "sh", "%s: filename argument required", argv[0]);
		return 2;
	}
	if ((src = sh_read_file(sh, io, argv[1])) == NULL)
		return 1;
	rc = sh_eval(sh, src, io);
	sh->returning = false;
	free(src);
	return rc;
}

int
sh_bi_return(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	long long v = sh->status;

	if (argc > 1 && tb_parse_ll(argv[1], &v) != 0) {
		tb_err(io, "sh", "return: %s: numeric argument required",
		    argv[1]);
		v = 2;
	}
	sh->returning = true;
	return (int)(v & 0xff);
}

int
sh_bi_break(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	long long n = 1;

	if (argc > 1 && (tb_parse_ll(argv[1], &n) != 0 || n < 1)) {
		tb_err(io, "sh", "%s: %s: bad number", argv[0], argv[1]);
		return 1;
	}
	if (sh->loops == 0)
		return 0;
	if (n > sh->loops)
		n = sh->loops;
	if (argv[0][0] == 'b')
		sh->breaking = (int)n;
	else
		sh->continuing = (int)n;
	return 0;
}

void
sh_locals_pop(struct sh *sh, int frame)
{
	while (sh->locals != NULL && sh->locals->frame >= frame) {
		struct sh_local *l = sh->locals;

		sh->locals = l->next;
		if (l->old != NULL)
			(void)setenv(l->name, l->old, 1);
		else
			(void)unsetenv(l->name);
		free(l->name);
		free(l->old);
		free(l);
	}
}

/* Saves name's value for the current function call, once per call. */
static void
local_save(struct sh *sh, const char *name)
{
	struct sh_local *l;
	const char *v;

	for (l = sh->locals; l != NULL && l->frame == sh->funcs; l = l->next)
		if (strcmp(l->name, name) == 0)
			return;
	l = tb_xmalloc(sizeof(*l));
	l->name = tb_xstrdup(name);
	v = getenv(name);
	l->old = v != NULL ? tb_xstrdup(v) : NULL;
	l->frame = sh->funcs;
	l->next = sh->locals;
	sh->locals = l;
}

int
sh_bi_local(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	int rc = 0;

	if (sh->funcs == 0) {
		tb_err(io, "sh", "%s: can only be used in a function",
		    argv[0]);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (eq != NULL)
			*eq = '\0';
		if (!sh_is_name(argv[i], strlen(argv[i]))) {
			tb_err(io, "sh", "%s: '%s': not a valid identifier",
			    argv[0], argv[i]);
			rc = 1;
		} else {
			local_save(sh, argv[i]);
			if (eq != NULL && sh_setvar(sh, argv[i], eq + 1) != 0)
				rc = 1;
		}
		if (eq != NULL)
			*eq = '=';
	}
	return rc;
}

int
sh_bi_let(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	long long v = 0;

	(void)io;
	for (int i = 1; i < argc; i++)
		if (sh_arith(sh, argv[i], &v) != 0)
			return 2;
	return v == 0;
}
