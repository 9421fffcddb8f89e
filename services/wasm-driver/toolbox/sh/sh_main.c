/* sh_main.c - builtin dispatch and the sh applet (sh -c, sh file, stdin). */
#include "sh.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static int
bi_colon(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	(void)sh, (void)io, (void)argc, (void)argv;
	return 0;
}

static bool
is_builtin(const char *name);

/* type, which and command -v: mode 't', 'w' or 'v'. */
static int
describe(struct sh *sh, struct tb_io *io, int argc, char **argv, int mode)
{
	bool quiet_v = mode == 'v', which = mode == 'w';
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		const char *n = argv[i];
		struct sh_func *f;

		if (n[0] == '-')
			continue;
		for (f = sh->functions; f && strcmp(f->name, n) != 0; f = f->next)
			;
		if (f != NULL && !which)
			fprintf(io->out, quiet_v ? "%s\n" : "%s is a function\n",
			    n);
		else if (is_builtin(n) && !which)
			fprintf(io->out, quiet_v ? "%s\n" :
			    "%s is a shell builtin\n", n);
		else if (tb_applet_find(n) != NULL)
			fprintf(io->out, quiet_v || which ? "/bin/%s\n" :
			    "%s is /bin/%s\n", n, n);
		else {
			if (!quiet_v && !which)
				tb_err(io, "sh", "type: %s: not found", n);
			rc = 1;
		}
	}
	return rc;
}

static int
bi_type(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	return describe(sh, io, argc, argv, argv[0][0] == 'w' ? 'w' : 't');
}

static int
bi_command(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	int rc;

	if (argc > 1 && (strcmp(argv[1], "-v") == 0 ||
	    strcmp(argv[1], "-V") == 0))
		return describe(sh, io, argc - 1, argv + 1, 'v');
	if (argc < 2)
		return 0;
	if ((rc = sh_builtin(sh, io, argc - 1, argv + 1)) >= 0)
		return rc;
	if ((rc = tb_applet_run(io, argc - 1, argv + 1)) >= 0)
		return rc;
	tb_err(io, "sh", "%s: not found", argv[1]);
	return 127;
}

static int
bi_exec(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	int rc;

	if (argc < 2)
		return 0;
	if ((rc = sh_call_function(sh, io, argc - 1, argv + 1)) < 0 &&
	    (rc = sh_builtin(sh, io, argc - 1, argv + 1)) < 0 &&
	    (rc = tb_applet_run(io, argc - 1, argv + 1)) < 0) {
		tb_err(io, "sh", "exec: %s: not found", argv[1]);
		rc = 127;
	}
	sh->exiting = true;
	sh->status = rc;
	return rc;
}

static int
bi_printenv(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	extern char **environ;
	int rc = 0;

	(void)sh;
	if (argc == 1)
		for (char **e = environ; *e != NULL; e++)
			fprintf(io->out, "%s\n", *e);
	for (int i = 1; i < argc; i++) {
		const char *v = getenv(argv[i]);

		if (v != NULL)
			fprintf(io->out, "%s\n", v);
		else
			rc = 1;
	}
	return rc;
}

/* [[ ... ]]: test, plus == != (glob patterns) and =~ (extended regex). */
static int
bi_dbracket(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	char **av;
	int rc;

	(void)sh;
	if (argc < 2 || strcmp(argv[argc - 1], "]]") != 0) {
		tb_err(io, "sh", "[[: missing ']]'");
		return 2;
	}
	argc--;
	if (argc == 4 && (strcmp(argv[2], "==") == 0 ||
	    strcmp(argv[2], "=") == 0 || strcmp(argv[2], "!=") == 0)) {
		bool m = fnmatch(argv[3], argv[1], 0) == 0;

		return (argv[2][0] == '!') == m;
	}
	if (argc == 4 && strcmp(argv[2], "=~") == 0) {
		regex_t re;

		if (tb_regcomp(io, "sh", &re, argv[3], REG_EXTENDED |
		    REG_NOSUB) != 0)
			return 2;
		rc = regexec(&re, argv[1], 0, NULL, 0) == 0 ? 0 : 1;
		regfree(&re);
		return rc;
	}
	av = tb_xmalloc(sizeof(char *) * (size_t)(argc + 1));
	av[0] = (char *)"test";
	for (int i = 1; i < argc; i++)
		av[i] = strcmp(argv[i], "==") == 0 ? (char *)"=" : argv[i];
	av[argc] = NULL;
	rc = tb_applet_run(io, argc, av);
	free(av);
	return rc;
}

struct builtin {
	const char	*name;
	int		(*fn)(struct sh *, struct tb_io *, int, char **);
};

static const struct builtin builtins[] = {
	{ ".", sh_bi_source },
	{ ":", bi_colon },
	{ "[[", bi_dbracket },
	{ "alias", bi_colon },
	{ "break", sh_bi_break },
	{ "cd", sh_bi_cd },
	{ "command", bi_command },
	{ "continue", sh_bi_break },
	{ "eval", sh_bi_eval },
	{ "exec", bi_exec },
	{ "exit", sh_bi_exit },
	{ "export", sh_bi_export },
	{ "hash", bi_colon },
	{ "let", sh_bi_let },
	{ "local", sh_bi_local },
	{ "printenv", bi_printenv },
	{ "read", sh_bi_read },
	{ "readonly", sh_bi_export },
	{ "return", sh_bi_return },
	{ "set", sh_bi_set },
	{ "shift", sh_bi_shift },
	{ "source", sh_bi_source },
	{ "trap", bi_colon },
	{ "type", bi_type },
	{ "ulimit", bi_colon },
	{ "umask", bi_colon },
	{ "unset", sh_bi_unset },
	{ "wait", bi_colon },
	{ "which", bi_type },
};

static bool
is_builtin(const char *name)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return true;
	return false;
}

int
sh_builtin(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (strcmp(builtins[i].name, argv[0]) == 0)
			return builtins[i].fn(sh, io, argc, argv);
	return -1;
}

static void
sh_free(struct sh *sh)
{
	sh_locals_pop(sh, 0);
	sh_free_fields(sh->params, sh->nparams);
	while (sh->functions != NULL) {
		struct sh_func *f = sh->functions;

		sh->functions = f->next;
		sh_node_free(f->body);
		free(f->name);
		free(f);
	}
}

static int sh_run_applet(struct tb_io *io, int argc, char **argv);

/*
 * Shells started by shells (sh script.sh, awk's system(), xargs sh) all
 * run on one C stack: bound their nesting. The counter is back to zero
 * when the outermost shell returns.
 */
#define SH_MAX_SHELLS 16
static int sh_active;

int
applet_sh(struct tb_io *io, int argc, char **argv)
{
	int rc;

	if (sh_active >= SH_MAX_SHELLS) {
		tb_err(io, "sh", "too many nested shells");
		return 2;
	}
	sh_active++;
	rc = sh_run_applet(io, argc, argv);
	sh_active--;
	return rc;
}

static int
sh_run_applet(struct tb_io *io, int argc, char **argv)
{
	struct sh sh = { .io = io, .arg0 = (char *)"sh" };
	const char *cmd = NULL;
	char *src = NULL;
	int i = 1, rc;

	for (; i < argc && (argv[i][0] == '-' || argv[i][0] == '+') &&
	    argv[i][1] != '\0' && cmd == NULL; i++) {
		bool on = argv[i][0] == '-';

		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		for (const char *p = argv[i] + 1; *p; p++) {
			if (*p == 'c' && on) {
				if (i + 1 >= argc) {
					tb_err(io, "sh", "-c requires an "
					    "argument");
					return 2;
				}
				cmd = argv[++i];
			} else if (*p == 'o') {
				if (i + 1 >= argc || sh_set_long(&sh,
				    argv[++i], on) != 0) {
					tb_err(io, "sh", "-o: invalid option "
					    "name");
					return 2;
				}
			} else if (sh_set_option(&sh, *p, on) != 0) {
				tb_err(io, "sh", "-%c: invalid option", *p);
				return 2;
			}
		}
	}
	if (cmd != NULL) {
		if (i < argc)
			sh.arg0 = argv[i++];
		src = tb_xstrdup(cmd);
	} else if (i < argc) {
		sh.arg0 = argv[i];
		if ((src = sh_read_file(&sh, io, argv[i++])) == NULL)
			return 127;
	} else if ((src = sh_read_file(&sh, io, "-")) == NULL)
		return 2;
	sh.params = tb_xmalloc(sizeof(char *) * (size_t)(argc - i + 1));
	for (; i < argc; i++)
		sh.params[sh.nparams++] = tb_xstrdup(argv[i]);
	sh.params[sh.nparams] = NULL;
	rc = sh_eval(&sh, src, io);
	free(src);
	sh_free(&sh);
	fflush(io->out);
	return rc;
}
