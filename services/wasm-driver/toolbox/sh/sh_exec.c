/* sh_exec.c - running command trees: redirections, pipelines, control. */
#include "sh.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* "NAME=..." with an unquoted, valid NAME. */
static bool
is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');

	return eq != NULL && eq > w && sh_is_name(w, (size_t)(eq - w));
}

struct saved_var {
	char	*name;
	char	*old;	/* NULL: was unset */
};

static void
restore_vars(struct saved_var *v, int n)
{
	for (int i = n - 1; i >= 0; i--) {
		if (v[i].old)
			setenv(v[i].name, v[i].old, 1);
		else
			unsetenv(v[i].name);
		free(v[i].name);
		free(v[i].old);
	}
	free(v);
}

static void
xtrace(struct sh *sh, struct tb_io *io, int argc, char **argv)
{
	fflush(io->out);
	fputs("+", sh->io->err);
	for (int i = 0; i < argc; i++)
		fprintf(sh->io->err, " %s", argv[i]);
	fputc('\n', sh->io->err);
	fflush(sh->io->err);
}

static int
run_simple(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	char **argv = NULL, **f;
	int argc = 0, nf, nassign = 0, rc;
	struct saved_var *saved = NULL;
	int nsaved = 0;
	struct tb_io cio = *io;
	struct sh_rstate rs = { .nfiles = 0 };

	unsigned nsubst = sh->nsubst;

	while (nassign < n->nwords && is_assignment(n->words[nassign]))
		nassign++;
	/* [[ ... ]]: words are neither split nor globbed (as in bash). */
	bool dbracket = nassign < n->nwords &&
	    strcmp(n->words[nassign], "[[") == 0;

	for (int i = nassign; i < n->nwords; i++) {
		if (dbracket) {
			char *s = sh_expand_str(sh, n->words[i]);

			if (s == NULL) {
				sh_free_fields(argv, argc);
				return 1;
			}
			f = tb_xmalloc(sizeof(char *));
			f[0] = s;
			nf = 1;
		} else if (sh_expand_fields(sh, n->words[i], &f, &nf) != 0) {
			sh_free_fields(argv, argc);
			return 1;
		}
		argv = tb_xrealloc(argv, sizeof(char *) * (size_t)(argc + nf +
		    1));
		if (nf > 0)
			memcpy(argv + argc, f, sizeof(char *) * (size_t)nf);
		argc += nf;
		argv[argc] = NULL;
		free(f);
	}
	for (int i = 0; i < nassign; i++) {
		const char *w = n->words[i], *eq = strchr(w, '=');
		char *name = strndup(w, (size_t)(eq - w));
		char *val = sh_expand_str(sh, eq + 1);

		if (val == NULL) {
			free(name);
			rc = 1;
			goto out;
		}
		if (argc > 0) {
			const char *old = getenv(name);

			saved = tb_xrealloc(saved, sizeof(*saved) *
			    (size_t)(nsaved + 1));
			saved[nsaved].name = tb_xstrdup(name);
			saved[nsaved++].old = old ? tb_xstrdup(old) : NULL;
		}
		setenv(name, val, 1);
		free(name);
		free(val);
	}
	if (sh_redirect(sh, n->redirs, &cio, &rs) != 0) {
		rc = 1;
		goto out;
	}
	/* A command of assignments only: the status of its last $(...). */
	rc = sh->nsubst != nsubst ? sh->status : 0;
	if (argc == 0)
		goto out;
	if (sh->xtrace)
		xtrace(sh, &cio, argc, argv);
	if ((rc = sh_call_function(sh, &cio, argc, argv)) >= 0)
		goto out;
	if ((rc = sh_builtin(sh, &cio, argc, argv)) >= 0)
		goto out;
	if ((rc = tb_applet_run(&cio, argc, argv)) >= 0)
		goto out;
	tb_err(&cio, "sh", "%s: not found", argv[0]);
	rc = 127;
out:
	fflush(cio.out);
	fflush(cio.err);
	sh_rstate_close(&rs);
	if (nsaved > 0)
		restore_vars(saved, nsaved);
	else
		free(saved);
	sh_free_fields(argv, argc);
	return rc;
}

static bool
interrupted(struct sh *sh)
{
	return sh->exiting || sh->breaking > 0 || sh->continuing > 0 ||
	    sh->returning;
}

static int run_node(struct sh *sh, struct sh_node *n, struct tb_io *io);

static int
run_cond(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	int rc;

	sh->cond++;
	rc = run_node(sh, n, io);
	sh->cond--;
	return rc;
}

static int
run_pipeline(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	struct sh_node *stages[64], *p = n;
	struct tb_mem prev = { 0 }, cur;
	FILE *in = io->in;
	int ns = 0, rc = 0, fail = 0;

	/* PIPE nodes nest to the left: PIPE(PIPE(a, b), c). */
	while (p->kind == N_PIPE && ns < 63) {
		stages[ns++] = p->b;
		p = p->a;
	}
	stages[ns++] = p;
	for (int i = 0; i < ns / 2; i++) {
		struct sh_node *t = stages[i];

		stages[i] = stages[ns - 1 - i];
		stages[ns - 1 - i] = t;
	}
	for (int i = 0; i < ns; i++) {
		struct tb_io sio = { in, io->out, io->err };
		FILE *w = NULL;
		bool saved_exit = sh->exiting;

		if (i < ns - 1) {
			memset(&cur, 0, sizeof(cur));
			if ((w = tb_mem_writer(&cur)) == NULL) {
				tb_err(io, "sh", "pipe: %s", strerror(errno));
				rc = 1;
				break;
			}
			sio.out = w;
		}
		rc = run_node(sh, stages[i], &sio);
		if (rc != 0)
			fail = rc;
		/* Each stage is a subshell as far as exit is concerned. */
		sh->exiting = saved_exit;
		if (w != NULL)
			fclose(w);
		if (in != io->in)
			fclose(in);
		tb_mem_free(&prev);
		in = io->in;
		if (i < ns - 1) {
			prev = cur;
			if ((in = tb_mem_reader(&prev)) == NULL) {
				tb_mem_free(&prev);
				in = io->in;
				rc = 1;
				break;
			}
		}
	}
	if (in != io->in)
		fclose(in);
	tb_mem_free(&prev);
	return sh->pipefail && fail != 0 ? fail : rc;
}

/* Saves cwd, variables and parameters; restores them afterwards. */
struct snapshot {
	char	 cwd[PATH_MAX];
	char	**env;
	char	**params;
	int	 nparams;
};

static void
snapshot_take(struct sh *sh, struct snapshot *s)
{
	int n = 0;

	if (getcwd(s->cwd, sizeof(s->cwd)) == NULL)
		s->cwd[0] = '\0';
	while (environ[n] != NULL)
		n++;
	s->env = tb_xmalloc(sizeof(char *) * (size_t)(n + 1));
	for (int i = 0; i < n; i++)
		s->env[i] = tb_xstrdup(environ[i]);
	s->env[n] = NULL;
	s->nparams = sh->nparams;
	s->params = tb_xmalloc(sizeof(char *) * (size_t)(sh->nparams + 1));
	for (int i = 0; i < sh->nparams; i++)
		s->params[i] = tb_xstrdup(sh->params[i]);
}

static void
snapshot_restore(struct sh *sh, struct snapshot *s)
{
	if (s->cwd[0] != '\0')
		(void)chdir(s->cwd);
	clearenv();
	for (char **e = s->env; *e != NULL; e++) {
		char *eq = strchr(*e, '=');

		if (eq != NULL) {
			*eq = '\0';
			setenv(*e, eq + 1, 1);
		}
		free(*e);
	}
	free(s->env);
	sh_free_fields(sh->params, sh->nparams);
	sh->params = s->params;
	sh->nparams = s->nparams;
}

static int
run_loop(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	int rc = 0;

	sh->loops++;
	for (;;) {
		int c = run_cond(sh, n->a, io);

		if (interrupted(sh))
			break;
		if ((n->kind == N_WHILE) != (c == 0))
			break;
		rc = run_node(sh, n->b, io);
		if (sh->continuing > 0 && --sh->continuing == 0)
			continue;
		if (sh->breaking > 0) {
			sh->breaking--;
			break;
		}
		if (interrupted(sh))
			break;
	}
	sh->loops--;
	return rc;
}

static int
run_for(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	char **items = NULL, **f;
	int nitems = 0, nf, rc = 0;

	if (!n->has_in) {
		items = tb_xmalloc(sizeof(char *) * (size_t)(sh->nparams + 1));
		for (int i = 0; i < sh->nparams; i++)
			items[nitems++] = tb_xstrdup(sh->params[i]);
	}
	for (int i = 0; i < n->nwords; i++) {
		if (sh_expand_fields(sh, n->words[i], &f, &nf) != 0) {
			sh_free_fields(items, nitems);
			return 1;
		}
		items = tb_xrealloc(items, sizeof(char *) *
		    (size_t)(nitems + nf + 1));
		if (nf > 0)
			memcpy(items + nitems, f, sizeof(char *) *
			    (size_t)nf);
		nitems += nf;
		free(f);
	}
	sh->loops++;
	for (int i = 0; i < nitems; i++) {
		if (sh_setvar(sh, n->name, items[i]) != 0)
			break;
		rc = run_node(sh, n->b, io);
		if (sh->continuing > 0 && --sh->continuing == 0)
			continue;
		if (sh->breaking > 0) {
			sh->breaking--;
			break;
		}
		if (interrupted(sh))
			break;
	}
	sh->loops--;
	sh_free_fields(items, nitems);
	return rc;
}

static int
run_case(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	char *word = sh_expand_str(sh, n->name);

	if (word == NULL)
		return 1;
	for (struct sh_case_item *it = n->items; it != NULL; it = it->next) {
		for (int k = 0; k < it->npats; k++) {
			char *pat = sh_expand_pattern(sh, it->pats[k]);
			bool m = pat != NULL && fnmatch(pat, word, 0) == 0;

			free(pat);
			if (m) {
				free(word);
				return run_node(sh, it->body, io);
			}
		}
	}
	free(word);
	return 0;
}

static void
define_function(struct sh *sh, struct sh_node *n)
{
	struct sh_func *f;

	for (f = sh->functions; f != NULL; f = f->next)
		if (strcmp(f->name, n->name) == 0)
			break;
	if (f == NULL) {
		f = calloc(1, sizeof(*f));
		if (f == NULL)
			abort();
		f->name = tb_xstrdup(n->name);
		f->next = sh->functions;
		sh->functions = f;
	} else
		sh_node_free(f->body);
	n->a->refs++;
	f->body = n->a;
}

static int
run_node(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	struct tb_io cio = *io;
	struct sh_rstate rs = { .nfiles = 0 };
	struct snapshot *snap;
	int rc = 0;

	if (n == NULL || sh->exiting)
		return sh->status;
	if (n->kind != N_CMD && n->redirs != NULL &&
	    sh_redirect(sh, n->redirs, &cio, &rs) != 0) {
		sh_rstate_close(&rs);
		return sh->status = 1;
	}
	switch (n->kind) {
	case N_CMD:
		rc = run_simple(sh, n, &cio);
		break;
	case N_PIPE:
		rc = run_pipeline(sh, n, &cio);
		break;
	case N_AND:
	case N_OR:
		rc = run_cond(sh, n->a, &cio);
		if (!interrupted(sh) && (rc == 0) == (n->kind == N_AND))
			rc = run_node(sh, n->b, &cio);
		break;
	case N_SEQ:
		/* Iterate along the right-deep chain (see sh_parse.c). */
		for (struct sh_node *p = n;; p = p->b) {
			if (p->kind != N_SEQ || (p != n && p->redirs != NULL)) {
				rc = run_node(sh, p, &cio);
				break;
			}
			rc = run_node(sh, p->a, &cio);
			if (interrupted(sh))
				break;
		}
		break;
	case N_NOT:
		rc = !run_cond(sh, n->a, &cio);
		break;
	case N_SUBSHELL:
		snap = tb_xmalloc(sizeof(*snap));
		snapshot_take(sh, snap);
		rc = run_node(sh, n->a, &cio);
		snapshot_restore(sh, snap);
		free(snap);
		sh->exiting = false;
		sh->breaking = sh->continuing = 0;
		break;
	case N_GROUP:
		rc = n->a ? run_node(sh, n->a, &cio) : 0;
		break;
	case N_IF:
		if (run_cond(sh, n->a, &cio) == 0) {
			if (!interrupted(sh))
				rc = run_node(sh, n->b, &cio);
		} else if (!interrupted(sh))
			rc = n->c ? run_node(sh, n->c, &cio) : 0;
		break;
	case N_WHILE:
	case N_UNTIL:
		rc = run_loop(sh, n, &cio);
		break;
	case N_FOR:
		rc = run_for(sh, n, &cio);
		break;
	case N_CASE:
		rc = run_case(sh, n, &cio);
		break;
	case N_FUNC:
		define_function(sh, n);
		rc = 0;
		break;
	}
	fflush(cio.out);
	sh_rstate_close(&rs);
	if (!sh->exiting)
		sh->status = rc;
	if (sh->errexit && rc != 0 && sh->cond == 0 && !sh->exiting &&
	    (n->kind == N_CMD || n->kind == N_PIPE))
		sh->exiting = true;
	return sh->status;
}

int
sh_run(struct sh *sh, struct sh_node *n, struct tb_io *io)
{
	return run_node(sh, n, io);
}

int
sh_eval(struct sh *sh, const char *src, struct tb_io *io)
{
	struct sh_node *tree = NULL;
	int rc;

	if (sh->depth >= SH_MAX_DEPTH) {
		tb_err(io, "sh", "maximum nesting depth exceeded");
		return sh->status = 2;
	}
	if (sh_parse(sh, src, &tree) != 0)
		return sh->status = 2;
	sh->depth++;
	rc = run_node(sh, tree, io);
	sh->depth--;
	sh_node_free(tree);
	return rc;
}

char *
sh_capture(struct sh *sh, const char *src)
{
	struct tb_mem m = { 0 };
	struct tb_io io = *sh->io;
	bool saved_exit = sh->exiting;
	char *r;

	sh->nsubst++;
	if ((io.out = tb_mem_writer(&m)) == NULL)
		return tb_xstrdup("");
	sh_eval(sh, src, &io);
	fclose(io.out);
	sh->exiting = saved_exit;
	sh->breaking = sh->continuing = 0;
	sh->returning = false;
	while (m.len > 0 && m.data[m.len - 1] == '\n')
		m.len--;
	r = tb_xmalloc(m.len + 1);
	if (m.len > 0)
		memcpy(r, m.data, m.len);
	r[m.len] = '\0';
	tb_mem_free(&m);
	return r;
}
