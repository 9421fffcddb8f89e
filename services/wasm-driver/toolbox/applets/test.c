/* test.c - test and [ (POSIX test with -a -o ! and parentheses). */
#include "../toolbox.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tst {
	struct tb_io	*io;
	char		**av;
	int		 n, pos;
	int		 depth;
	bool		 err;
};

static bool t_or(struct tst *t);

static bool
is_binop(const char *s)
{
	static const char *const ops[] = { "=", "==", "!=", "<", ">", "-eq",
		"-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef" };

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(s, ops[i]) == 0)
			return true;
	return false;
}

static bool
is_unop(const char *s)
{
	return s[0] == '-' && s[1] != '\0' && s[2] == '\0' &&
	    strchr("efdsrwxLhznbcpSgukOGt", s[1]) != NULL;
}

static long long
t_int(struct tst *t, const char *s)
{
	long long v;
	const char *p = s;

	while (*p == ' ' || *p == '\t')
		p++;
	if (tb_parse_ll(p, &v) != 0) {
		tb_err(t->io, "test", "%s: integer expression expected", s);
		t->err = true;
		return 0;
	}
	return v;
}

static bool
t_unary(char op, const char *a)
{
	struct stat st;
	bool ok;

	switch (op) {
	case 'z': return a[0] == '\0';
	case 'n': return a[0] != '\0';
	case 't': return false;
	case 'L':
	case 'h': return lstat(a, &st) == 0 && S_ISLNK(st.st_mode);
	case 'r': return access(a, R_OK) == 0;
	case 'w': return access(a, W_OK) == 0;
	case 'x': return access(a, X_OK) == 0;
	}
	ok = stat(a, &st) == 0;
	switch (op) {
	case 'e': return ok;
	case 'f': return ok && S_ISREG(st.st_mode);
	case 'd': return ok && S_ISDIR(st.st_mode);
	case 's': return ok && st.st_size > 0;
	case 'b': return ok && S_ISBLK(st.st_mode);
	case 'c': return ok && S_ISCHR(st.st_mode);
	case 'p': return ok && S_ISFIFO(st.st_mode);
	case 'S': return ok && S_ISSOCK(st.st_mode);
	case 'g': return ok && (st.st_mode & S_ISGID);
	case 'u': return ok && (st.st_mode & S_ISUID);
	case 'k': return ok && (st.st_mode & S_ISVTX);
	default: return ok;
	}
}

static bool
t_binary(struct tst *t, const char *a, const char *op, const char *b)
{
	struct stat sa, sb;
	bool oka, okb;

	if (strcmp(op, "=") == 0 || strcmp(op, "==") == 0)
		return strcmp(a, b) == 0;
	if (strcmp(op, "!=") == 0)
		return strcmp(a, b) != 0;
	if (strcmp(op, "<") == 0)
		return strcmp(a, b) < 0;
	if (strcmp(op, ">") == 0)
		return strcmp(a, b) > 0;
	if (op[1] == 'n' || op[1] == 'o' || (op[1] == 'e' && op[2] == 'f')) {
		oka = stat(a, &sa) == 0;
		okb = stat(b, &sb) == 0;
		if (op[1] == 'e')
			return oka && okb && sa.st_dev == sb.st_dev &&
			    sa.st_ino == sb.st_ino;
		if (op[1] == 'n' && op[2] == 't')
			return oka && (!okb || sa.st_mtim.tv_sec >
			    sb.st_mtim.tv_sec || (sa.st_mtim.tv_sec ==
			    sb.st_mtim.tv_sec && sa.st_mtim.tv_nsec >
			    sb.st_mtim.tv_nsec));
		if (op[1] == 'o')
			return okb && (!oka || sb.st_mtim.tv_sec >
			    sa.st_mtim.tv_sec || (sb.st_mtim.tv_sec ==
			    sa.st_mtim.tv_sec && sb.st_mtim.tv_nsec >
			    sa.st_mtim.tv_nsec));
	}
	long long x = t_int(t, a), y = t_int(t, b);

	if (strcmp(op, "-eq") == 0) return x == y;
	if (strcmp(op, "-ne") == 0) return x != y;
	if (strcmp(op, "-lt") == 0) return x < y;
	if (strcmp(op, "-le") == 0) return x <= y;
	if (strcmp(op, "-gt") == 0) return x > y;
	return x >= y;
}

static bool
t_primary(struct tst *t)
{
	const char *a;
	bool v;

	if (t->pos >= t->n) {
		tb_err(t->io, "test", "argument expected");
		t->err = true;
		return false;
	}
	a = t->av[t->pos];
	if (t->pos + 2 < t->n && is_binop(t->av[t->pos + 1])) {
		t->pos += 3;
		return t_binary(t, a, t->av[t->pos - 2], t->av[t->pos - 1]);
	}
	if (t->pos + 2 == t->n && is_binop(t->av[t->pos + 1])) {
		/* "a =" with nothing after: missing operand. */
		tb_err(t->io, "test", "%s: missing argument",
		    t->av[t->pos + 1]);
		t->err = true;
		return false;
	}
	if (is_unop(a) && t->pos + 1 < t->n) {
		t->pos += 2;
		return t_unary(a[1], t->av[t->pos - 1]);
	}
	if (strcmp(a, "(") == 0 && t->pos + 1 < t->n) {
		t->pos++;
		v = t_or(t);
		if (t->pos >= t->n || strcmp(t->av[t->pos], ")") != 0) {
			tb_err(t->io, "test", "missing ')'");
			t->err = true;
			return false;
		}
		t->pos++;
		return v;
	}
	t->pos++;
	return a[0] != '\0';
}

static bool
t_not(struct tst *t)
{
	bool v;

	if (t->depth >= 200) {
		if (!t->err)
			tb_err(t->io, "test", "expression too complex");
		t->err = true;
		return false;
	}
	t->depth++;
	if (t->pos < t->n && strcmp(t->av[t->pos], "!") == 0 &&
	    t->pos + 1 < t->n) {
		t->pos++;
		v = !t_not(t);
	} else
		v = t_primary(t);
	t->depth--;
	return v;
}

static bool
t_and(struct tst *t)
{
	bool v = t_not(t);

	while (t->pos < t->n && strcmp(t->av[t->pos], "-a") == 0) {
		bool r;

		t->pos++;
		r = t_not(t);
		v = v && r;
	}
	return v;
}

static bool
t_or(struct tst *t)
{
	bool v = t_and(t);

	while (t->pos < t->n && strcmp(t->av[t->pos], "-o") == 0) {
		bool r;

		t->pos++;
		r = t_and(t);
		v = v || r;
	}
	return v;
}

int
applet_test(struct tb_io *io, int argc, char **argv)
{
	struct tst t = { .io = io, .av = argv + 1, .n = argc - 1 };
	bool v;

	if (strcmp(tb_basename(argv[0]), "[") == 0) {
		if (argc < 2 || strcmp(argv[argc - 1], "]") != 0) {
			tb_err(io, "[", "missing ']'");
			return 2;
		}
		t.n--;
	}
	if (t.n == 0)
		return 1;
	v = t_or(&t);
	if (!t.err && t.pos < t.n) {
		tb_err(io, "test", "%s: unexpected operator", t.av[t.pos]);
		return 2;
	}
	return t.err ? 2 : v ? 0 : 1;
}
