/*
 * find.c - walk directory trees and evaluate an expression: -name -iname
 * -path -type -size -newer -mtime -mmin -empty -maxdepth -mindepth -depth
 * -prune -print -print0 -delete -exec (run in-process), ! -a -o ( ).
 */
#include "../toolbox.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum fop { F_AND, F_OR, F_NOT, F_TRUE, F_NAME, F_INAME, F_PATH, F_IPATH,
	F_TYPE, F_SIZE, F_NEWER, F_MTIME, F_MMIN, F_EMPTY, F_PRINT, F_PRINT0,
	F_DELETE, F_EXEC, F_PRUNE, F_QUIT };

struct fnode {
	enum fop	 op;
	struct fnode	*l, *r;
	const char	*s;
	char		 cmp;	/* '+', '-' or '=' */
	long long	 n;
	struct timespec	 t;
	char		**argv;	/* -exec */
	int		 argc;
	bool		 batch;	/* -exec ... + */
	char		**paths;	/* batched paths */
	size_t		 npaths;
};

struct find {
	struct tb_io	*io;
	char		**av;
	int		 ac, pos;
	long		 mindepth, maxdepth;
	bool		 depth_first;
	bool		 has_action;
	bool		 pruned, quit;
	int		 depth;		/* parser recursion */
	int		 rc;
	time_t		 now;
	struct fnode	*root;
};

static struct fnode *parse_or(struct find *f);

static struct fnode *
node(enum fop op)
{
	struct fnode *n = calloc(1, sizeof(*n));

	if (n == NULL)
		abort();
	n->op = op;
	return n;
}

static void
node_free(struct fnode *n)
{
	if (n == NULL)
		return;
	node_free(n->l);
	node_free(n->r);
	free(n->argv);
	for (size_t i = 0; i < n->npaths; i++)
		free(n->paths[i]);
	free(n->paths);
	free(n);
}

static const char *
next_arg(struct find *f, const char *prim)
{
	if (f->pos >= f->ac) {
		tb_err(f->io, "find", "missing argument to '%s'", prim);
		return NULL;
	}
	return f->av[f->pos++];
}

/* Parses "[+-]N[suffix]" into n->cmp and n->n (times unit). */
static int
parse_num(struct find *f, struct fnode *n, const char *s, bool size)
{
	char *end;
	long long mult = size ? 512 : 1;

	n->cmp = *s == '+' || *s == '-' ? *s++ : '=';
	n->n = strtoll(s, &end, 10);
	if (end == s)
		goto bad;
	if (size && *end) {
		switch (*end++) {
		case 'c': mult = 1; break;
		case 'w': mult = 2; break;
		case 'b': mult = 512; break;
		case 'k': mult = 1024; break;
		case 'M': mult = 1048576; break;
		case 'G': mult = 1073741824; break;
		default: goto bad;
		}
	}
	if (*end != '\0')
		goto bad;
	n->t.tv_sec = (time_t)mult;	/* size unit */
	return 0;
bad:
	tb_err(f->io, "find", "invalid argument '%s'", s);
	return -1;
}

static struct fnode *
parse_exec(struct find *f)
{
	struct fnode *n = node(F_EXEC);
	int start = f->pos;

	while (f->pos < f->ac && strcmp(f->av[f->pos], ";") != 0 &&
	    !(strcmp(f->av[f->pos], "+") == 0 && f->pos > start &&
	    strcmp(f->av[f->pos - 1], "{}") == 0))
		f->pos++;
	if (f->pos >= f->ac || f->pos == start) {
		tb_err(f->io, "find", "missing argument to '-exec'");
		node_free(n);
		return NULL;
	}
	n->batch = f->av[f->pos][0] == '+';
	n->argc = f->pos - start;
	n->argv = tb_xmalloc(sizeof(char *) * (size_t)(n->argc + 1));
	memcpy(n->argv, f->av + start, sizeof(char *) * (size_t)n->argc);
	n->argv[n->argc] = NULL;
	f->pos++;
	f->has_action = true;
	return n;
}

static struct fnode *parse_primary_nested(struct find *f);

static struct fnode *
parse_primary(struct find *f)
{
	struct fnode *n;

	if (f->depth >= 200) {
		tb_err(f->io, "find", "expression nested too deeply");
		return NULL;
	}
	f->depth++;
	n = parse_primary_nested(f);
	f->depth--;
	return n;
}

static struct fnode *
parse_primary_nested(struct find *f)
{
	const char *p = f->av[f->pos++], *a;
	struct fnode *n;
	struct stat st;

	if (strcmp(p, "(") == 0) {
		n = parse_or(f);
		if (n == NULL)
			return NULL;
		if (f->pos >= f->ac || strcmp(f->av[f->pos], ")") != 0) {
			tb_err(f->io, "find", "missing ')'");
			node_free(n);
			return NULL;
		}
		f->pos++;
		return n;
	}
	if (strcmp(p, "!") == 0 || strcmp(p, "-not") == 0) {
		struct fnode *x;

		if (f->pos >= f->ac || (x = parse_primary(f)) == NULL)
			return NULL;
		n = node(F_NOT);
		n->l = x;
		return n;
	}
	if (strcmp(p, "-print") == 0 || strcmp(p, "-print0") == 0 ||
	    strcmp(p, "-delete") == 0 || strcmp(p, "-quit") == 0) {
		n = node(p[2] == 'r' ? (p[6] ? F_PRINT0 : F_PRINT) :
		    p[1] == 'd' ? F_DELETE : F_QUIT);
		if (n->op == F_DELETE)
			f->depth_first = true;
		f->has_action = true;
		return n;
	}
	if (strcmp(p, "-exec") == 0 || strcmp(p, "-execdir") == 0 ||
	    strcmp(p, "-ok") == 0)
		return parse_exec(f);
	if (strcmp(p, "-prune") == 0)
		return node(F_PRUNE);
	if (strcmp(p, "-empty") == 0)
		return node(F_EMPTY);
	if (strcmp(p, "-true") == 0)
		return node(F_TRUE);
	if (strcmp(p, "-false") == 0) {
		n = node(F_NOT);
		n->l = node(F_TRUE);
		return n;
	}
	if (strcmp(p, "-depth") == 0 || strcmp(p, "-d") == 0) {
		f->depth_first = true;
		return node(F_TRUE);
	}
	if (strcmp(p, "-xdev") == 0 || strcmp(p, "-mount") == 0 ||
	    strcmp(p, "-follow") == 0 || strcmp(p, "-noleaf") == 0)
		return node(F_TRUE);
	{
		static const char *const with_arg[] = { "-maxdepth",
			"-mindepth", "-name", "-iname", "-path", "-ipath",
			"-wholename", "-type", "-size", "-mtime", "-mmin",
			"-newer" };
		size_t k;

		for (k = 0; k < sizeof(with_arg) / sizeof(with_arg[0]); k++)
			if (strcmp(p, with_arg[k]) == 0)
				break;
		if (k == sizeof(with_arg) / sizeof(with_arg[0])) {
			tb_err(f->io, "find", "unknown predicate '%s'", p);
			return NULL;
		}
	}
	if ((a = next_arg(f, p)) == NULL)
		return NULL;
	if (strcmp(p, "-maxdepth") == 0 || strcmp(p, "-mindepth") == 0) {
		long long v;

		if (tb_parse_ll(a, &v) != 0 || v < 0) {
			tb_err(f->io, "find", "invalid argument '%s' to '%s'",
			    a, p);
			return NULL;
		}
		*(p[2] == 'a' ? &f->maxdepth : &f->mindepth) = (long)v;
		return node(F_TRUE);
	}
	if (strcmp(p, "-name") == 0 || strcmp(p, "-iname") == 0 ||
	    strcmp(p, "-path") == 0 || strcmp(p, "-ipath") == 0 ||
	    strcmp(p, "-wholename") == 0) {
		n = node(p[1] == 'n' ? F_NAME : p[1] == 'i' ? (p[2] == 'n' ?
		    F_INAME : F_IPATH) : F_PATH);
		n->s = a;
		return n;
	}
	if (strcmp(p, "-type") == 0) {
		if (strlen(a) != 1 || strchr("fdlpscb", a[0]) == NULL) {
			tb_err(f->io, "find", "unknown argument to -type: %s",
			    a);
			return NULL;
		}
		n = node(F_TYPE);
		n->s = a;
		return n;
	}
	if (strcmp(p, "-size") == 0 || strcmp(p, "-mtime") == 0 ||
	    strcmp(p, "-mmin") == 0) {
		n = node(p[1] == 's' ? F_SIZE : p[2] == 't' ? F_MTIME : F_MMIN);
		if (parse_num(f, n, a, n->op == F_SIZE) != 0) {
			node_free(n);
			return NULL;
		}
		return n;
	}
	if (strcmp(p, "-newer") == 0) {
		if (stat(a, &st) != 0) {
			tb_errno(f->io, "find", a);
			return NULL;
		}
		n = node(F_NEWER);
		n->t = st.st_mtim;
		return n;
	}
	tb_err(f->io, "find", "unknown predicate '%s'", p);
	return NULL;
}

static bool
at_op_end(struct find *f)
{
	return f->pos >= f->ac || strcmp(f->av[f->pos], ")") == 0 ||
	    strcmp(f->av[f->pos], "-o") == 0 || strcmp(f->av[f->pos], "-or")
	    == 0 || strcmp(f->av[f->pos], ",") == 0;
}

static struct fnode *
parse_and(struct find *f)
{
	struct fnode *l = parse_primary(f), *r, *n;

	while (l != NULL && !at_op_end(f)) {
		if (strcmp(f->av[f->pos], "-a") == 0 ||
		    strcmp(f->av[f->pos], "-and") == 0)
			f->pos++;
		if (f->pos >= f->ac || (r = parse_primary(f)) == NULL) {
			if (f->pos >= f->ac)
				tb_err(f->io, "find", "expected an expression");
			node_free(l);
			return NULL;
		}
		n = node(F_AND);
		n->l = l;
		n->r = r;
		l = n;
	}
	return l;
}

static struct fnode *
parse_or(struct find *f)
{
	struct fnode *l, *r, *n;

	if (f->pos >= f->ac) {
		tb_err(f->io, "find", "expected an expression");
		return NULL;
	}
	l = parse_and(f);
	while (l != NULL && f->pos < f->ac && (strcmp(f->av[f->pos], "-o")
	    == 0 || strcmp(f->av[f->pos], "-or") == 0 ||
	    strcmp(f->av[f->pos], ",") == 0)) {
		f->pos++;
		if (f->pos >= f->ac || (r = parse_and(f)) == NULL) {
			node_free(l);
			return NULL;
		}
		n = node(F_OR);
		n->l = l;
		n->r = r;
		l = n;
	}
	return l;
}

static bool
cmp_num(char cmp, long long v, long long n)
{
	return cmp == '+' ? v > n : cmp == '-' ? v < n : v == n;
}

static bool
is_empty(const char *path, const struct stat *st)
{
	DIR *d;
	struct dirent *e;
	bool empty = true;

	if (S_ISREG(st->st_mode))
		return st->st_size == 0;
	if (!S_ISDIR(st->st_mode) || (d = opendir(path)) == NULL)
		return false;
	while (empty && (e = readdir(d)) != NULL)
		empty = strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0;
	closedir(d);
	return empty;
}

static int
run_exec(struct find *f, struct fnode *n, char **paths, size_t np)
{
	struct tb_buf args = { 0 }, strs = { 0 };
	char **av;
	int rc;

	for (int i = 0; i < n->argc; i++) {
		const char *a = n->argv[i];

		if (n->batch && strcmp(a, "{}") == 0) {
			for (size_t k = 0; k < np; k++)
				tb_buf_add(&args, &paths[k], sizeof(char *));
			continue;
		}
		if (strstr(a, "{}") != NULL) {
			/* Replace every "{}"; kept in strs until the run. */
			struct tb_buf s = { 0 };
			char *copy;

			for (const char *p = a; *p;) {
				if (p[0] == '{' && p[1] == '}') {
					tb_buf_adds(&s, paths[0]);
					p += 2;
				} else
					tb_buf_addc(&s, *p++);
			}
			copy = tb_buf_str(&s);
			tb_buf_add(&strs, &copy, sizeof(char *));
			tb_buf_add(&args, &copy, sizeof(char *));
			continue;
		}
		tb_buf_add(&args, &a, sizeof(char *));
	}
	tb_buf_add(&args, &(char *){ NULL }, sizeof(char *));
	av = (char **)args.data;
	fflush(f->io->out);
	rc = tb_applet_run(f->io, (int)(args.len / sizeof(char *)) - 1, av);
	if (rc < 0) {
		tb_err(f->io, "find", "'%s': No such file or directory", av[0]);
		f->rc = 1;
	}
	for (size_t i = 0; i < strs.len / sizeof(char *); i++)
		free(((char **)strs.data)[i]);
	tb_buf_free(&strs);
	tb_buf_free(&args);
	return rc;
}

static bool
eval(struct find *f, struct fnode *n, const char *path, const struct stat *st)
{
	const char *base = tb_basename(path);
	char *p = (char *)path;

	switch (n->op) {
	case F_AND:
		return eval(f, n->l, path, st) && eval(f, n->r, path, st);
	case F_OR:
		return eval(f, n->l, path, st) || eval(f, n->r, path, st);
	case F_NOT:
		return !eval(f, n->l, path, st);
	case F_TRUE:
		return true;
	case F_NAME:
		return fnmatch(n->s, base, 0) == 0;
	case F_INAME:
		return fnmatch(n->s, base, FNM_CASEFOLD) == 0;
	case F_PATH:
		return fnmatch(n->s, path, 0) == 0;
	case F_IPATH:
		return fnmatch(n->s, path, FNM_CASEFOLD) == 0;
	case F_TYPE:
		switch (n->s[0]) {
		case 'f': return S_ISREG(st->st_mode);
		case 'd': return S_ISDIR(st->st_mode);
		case 'l': return S_ISLNK(st->st_mode);
		case 'p': return S_ISFIFO(st->st_mode);
		case 's': return S_ISSOCK(st->st_mode);
		case 'c': return S_ISCHR(st->st_mode);
		default: return S_ISBLK(st->st_mode);
		}
	case F_SIZE: {
		long long unit = (long long)n->t.tv_sec;

		return cmp_num(n->cmp, (st->st_size + unit - 1) / unit, n->n);
	}
	case F_NEWER:
		return st->st_mtim.tv_sec > n->t.tv_sec ||
		    (st->st_mtim.tv_sec == n->t.tv_sec &&
		    st->st_mtim.tv_nsec > n->t.tv_nsec);
	case F_MTIME:
		return cmp_num(n->cmp, (f->now - st->st_mtim.tv_sec) / 86400,
		    n->n);
	case F_MMIN:
		return cmp_num(n->cmp, (f->now - st->st_mtim.tv_sec + 59) / 60,
		    n->n);
	case F_EMPTY:
		return is_empty(path, st);
	case F_PRINT:
		fprintf(f->io->out, "%s\n", path);
		return true;
	case F_PRINT0:
		fprintf(f->io->out, "%s%c", path, 0);
		return true;
	case F_DELETE:
		if ((S_ISDIR(st->st_mode) ? rmdir(path) : unlink(path)) != 0) {
			tb_err(f->io, "find", "cannot delete '%s': %s", path,
			    strerror(errno));
			f->rc = 1;
			return false;
		}
		return true;
	case F_EXEC:
		if (n->batch) {
			n->paths = tb_xrealloc(n->paths, (n->npaths + 1) *
			    sizeof(char *));
			n->paths[n->npaths++] = tb_xstrdup(path);
			return true;
		}
		return run_exec(f, n, &p, 1) == 0;
	case F_PRUNE:
		f->pruned = true;
		return true;
	case F_QUIT:
		f->quit = true;
		return true;
	}
	return false;
}

static void
flush_batches(struct find *f, struct fnode *n)
{
	if (n == NULL)
		return;
	if (n->op == F_EXEC && n->batch && n->npaths > 0 &&
	    run_exec(f, n, n->paths, n->npaths) != 0)
		f->rc = 1;
	flush_batches(f, n->l);
	flush_batches(f, n->r);
}

static void
visit(struct find *f, const char *path, long depth)
{
	struct stat st;
	bool match_here = depth >= f->mindepth;

	if (f->quit)
		return;
	if (lstat(path, &st) != 0) {
		tb_err(f->io, "find", "'%s': %s", path, strerror(errno));
		f->rc = 1;
		return;
	}
	f->pruned = false;
	if (match_here && !f->depth_first)
		eval(f, f->root, path, &st);
	if (S_ISDIR(st.st_mode) && depth < f->maxdepth && !f->pruned &&
	    !f->quit) {
		size_t n;
		char **names = tb_dir_names(path, &n);

		if (names == NULL) {
			tb_err(f->io, "find", "'%s': %s", path,
			    strerror(errno));
			f->rc = 1;
		} else {
			for (size_t i = 0; i < n; i++) {
				char *sub = tb_path_join(path, names[i]);

				if (sub != NULL)
					visit(f, sub, depth + 1);
				free(sub);
			}
			tb_dir_names_free(names, n);
		}
	}
	if (match_here && f->depth_first && !f->quit)
		eval(f, f->root, path, &st);
}

int
applet_find(struct tb_io *io, int argc, char **argv)
{
	struct find f = { .io = io, .av = argv, .ac = argc, .pos = 1,
	    .maxdepth = 1L << 30, .now = time(NULL) };
	int first = 1, npaths;

	while (f.pos < argc && (argv[f.pos][0] != '-' || argv[f.pos][1] ==
	    '\0') && strcmp(argv[f.pos], "(") != 0 &&
	    strcmp(argv[f.pos], "!") != 0)
		f.pos++;
	npaths = f.pos - first;
	if (f.pos < argc) {
		if ((f.root = parse_or(&f)) == NULL)
			return 1;
		if (f.pos < argc) {
			tb_err(io, "find", "unexpected '%s'", argv[f.pos]);
			node_free(f.root);
			return 1;
		}
	}
	if (f.root == NULL)
		f.root = node(F_TRUE);
	if (!f.has_action) {
		struct fnode *n = node(F_AND);

		n->l = f.root;
		n->r = node(F_PRINT);
		f.root = n;
	}
	if (npaths == 0)
		visit(&f, ".", 0);
	for (int i = first; i < first + npaths; i++)
		visit(&f, argv[i], 0);
	flush_batches(&f, f.root);
	node_free(f.root);
	return f.rc;
}
