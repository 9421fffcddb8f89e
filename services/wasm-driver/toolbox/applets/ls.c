/* ls.c - list directory contents (-l -a -A -R -1 -h -d -F -p -t -S -r -i). */
#include "../toolbox.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ls_opts {
	struct tb_io	*io;
	bool		 lng, all, almost, recursive, dironly, human;
	bool		 classify, slash, bytime, bysize, reverse, inode;
	bool		 printed;	/* something listed: blank line first */
	int		 rc;
	time_t		 now;
};

struct ls_ent {
	char		*name;	/* as shown */
	char		*path;	/* for stat and recursion */
	struct stat	 st;
};

static struct ls_opts *sort_opts;	/* qsort has no context argument */

static int
ent_cmp(const void *a, const void *b)
{
	const struct ls_ent *x = a, *y = b;
	int r = 0;

	if (sort_opts->bytime) {
		if (x->st.st_mtim.tv_sec != y->st.st_mtim.tv_sec)
			r = x->st.st_mtim.tv_sec < y->st.st_mtim.tv_sec ? 1 : -1;
		else if (x->st.st_mtim.tv_nsec != y->st.st_mtim.tv_nsec)
			r = x->st.st_mtim.tv_nsec < y->st.st_mtim.tv_nsec ?
			    1 : -1;
	} else if (sort_opts->bysize && x->st.st_size != y->st.st_size)
		r = x->st.st_size < y->st.st_size ? 1 : -1;
	if (r == 0)
		r = strcmp(x->name, y->name);
	return sort_opts->reverse ? -r : r;
}

static void
ents_sort(struct ls_opts *l, struct ls_ent *e, size_t n)
{
	if (n < 2)
		return;
	sort_opts = l;
	qsort(e, n, sizeof(*e), ent_cmp);
	sort_opts = NULL;
}

static void
ents_free(struct ls_ent *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].path);
	}
	free(e);
}

static char
type_char(mode_t m)
{
	return S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : S_ISCHR(m) ? 'c' :
	    S_ISBLK(m) ? 'b' : S_ISFIFO(m) ? 'p' : S_ISSOCK(m) ? 's' : '-';
}

static void
mode_string(mode_t m, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	mode_t p = tb_mode_perm(m);

	out[0] = type_char(m);
	for (int i = 0; i < 9; i++)
		out[i + 1] = (p & (0400 >> i)) ? rwx[i] : '-';
	if (p & S_ISUID)
		out[3] = out[3] == 'x' ? 's' : 'S';
	if (p & S_ISGID)
		out[6] = out[6] == 'x' ? 's' : 'S';
	if (p & S_ISVTX)
		out[9] = out[9] == 'x' ? 't' : 'T';
	out[10] = '\0';
}

static void
owner_string(unsigned id, char *buf, size_t n)
{
	if (id == 0)
		snprintf(buf, n, "root");
	else
		snprintf(buf, n, "%u", id);
}

static int
num_width(unsigned long long v)
{
	int w = 1;

	while (v >= 10) {
		v /= 10;
		w++;
	}
	return w;
}

static void
print_suffix(struct ls_opts *l, const struct stat *st)
{
	char c = 0;

	if (S_ISDIR(st->st_mode) && (l->classify || l->slash))
		c = '/';
	else if (l->classify) {
		if (S_ISLNK(st->st_mode))
			c = '@';
		else if (S_ISFIFO(st->st_mode))
			c = '|';
		else if (S_ISREG(st->st_mode) && (st->st_mode & 0111))
			c = '*';
	}
	if (c)
		fputc(c, l->io->out);
}

/* Prints entries (files or one directory's contents). */
static void
print_ents(struct ls_opts *l, struct ls_ent *e, size_t n, bool total)
{
	int wl = 1, wu = 1, wg = 1, ws = 1, wi = 1;
	unsigned long long blocks = 0;
	char buf[64];
	FILE *out = l->io->out;

	for (size_t i = 0; i < n; i++) {
		char u[32], g[32];
		int w;

		owner_string(e[i].st.st_uid, u, sizeof(u));
		owner_string(e[i].st.st_gid, g, sizeof(g));
		w = num_width((unsigned long long)e[i].st.st_nlink);
		wl = w > wl ? w : wl;
		wu = (int)strlen(u) > wu ? (int)strlen(u) : wu;
		wg = (int)strlen(g) > wg ? (int)strlen(g) : wg;
		w = l->human ? (int)strlen(tb_human(buf, sizeof(buf),
		    (unsigned long long)e[i].st.st_size)) :
		    num_width((unsigned long long)e[i].st.st_size);
		ws = w > ws ? w : ws;
		w = num_width((unsigned long long)e[i].st.st_ino);
		wi = w > wi ? w : wi;
		blocks += (unsigned long long)e[i].st.st_blocks;
	}
	if (l->lng && total)
		fprintf(out, "total %llu\n", (blocks + 1) / 2);
	for (size_t i = 0; i < n; i++) {
		const struct stat *st = &e[i].st;

		if (l->inode)
			fprintf(out, "%*llu ", wi,
			    (unsigned long long)st->st_ino);
		if (l->lng) {
			char mode[11], u[32], g[32], date[32];
			struct tm tm;
			time_t t = st->st_mtim.tv_sec;

			mode_string(st->st_mode, mode);
			owner_string(st->st_uid, u, sizeof(u));
			owner_string(st->st_gid, g, sizeof(g));
			localtime_r(&t, &tm);
			strftime(date, sizeof(date), t > l->now - 15778476 &&
			    t <= l->now + 3600 ? "%b %e %H:%M" : "%b %e  %Y",
			    &tm);
			if (l->human)
				tb_human(buf, sizeof(buf),
				    (unsigned long long)st->st_size);
			else
				snprintf(buf, sizeof(buf), "%llu",
				    (unsigned long long)st->st_size);
			fprintf(out, "%s %*lu %-*s %-*s %*s %s ", mode, wl,
			    (unsigned long)st->st_nlink, wu, u, wg, g, ws, buf,
			    date);
		}
		fputs(e[i].name, out);
		if (l->lng && S_ISLNK(st->st_mode)) {
			char target[PATH_MAX];
			ssize_t k = readlink(e[i].path, target,
			    sizeof(target) - 1);

			if (k >= 0) {
				target[k] = '\0';
				fprintf(out, " -> %s", target);
			}
		} else
			print_suffix(l, st);
		fputc('\n', out);
	}
}

static void list_dir(struct ls_opts *l, const char *path, bool header);

/* Reads a directory; returns the entries (sorted) or NULL on error. */
static struct ls_ent *
read_dir(struct ls_opts *l, const char *path, size_t *np)
{
	DIR *d;
	struct dirent *de;
	struct ls_ent *e = NULL;
	size_t n = 0, cap = 0;

	if ((d = opendir(path)) == NULL) {
		tb_err(l->io, "ls", "cannot open directory '%s': %s", path,
		    strerror(errno));
		l->rc = 2;
		return NULL;
	}
	/* Some WASI hosts list no "." and "..": add them for -a. */
	bool dot = false, dotdot = false, eod = false;

	for (;;) {
		const char *nm;

		if (!eod && (de = readdir(d)) != NULL)
			nm = de->d_name;
		else if ((eod = true) && l->all && !dot)
			nm = ".";
		else if (l->all && !dotdot)
			nm = "..";
		else
			break;
		if (strcmp(nm, ".") == 0)
			dot = true;
		else if (strcmp(nm, "..") == 0)
			dotdot = true;
		if (nm[0] == '.' && !l->all && (!l->almost ||
		    strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0))
			continue;
		if (n == cap)
			e = tb_xrealloc(e, (cap = cap ? cap * 2 : 32) *
			    sizeof(*e));
		e[n].name = tb_xstrdup(nm);
		e[n].path = tb_path_join(path, nm);
		if (e[n].path == NULL || lstat(e[n].path, &e[n].st) != 0)
			memset(&e[n].st, 0, sizeof(e[n].st));
		n++;
	}
	closedir(d);
	ents_sort(l, e, n);
	*np = n;
	return e ? e : tb_xmalloc(1);
}

static void
list_dir(struct ls_opts *l, const char *path, bool header)
{
	struct ls_ent *e;
	size_t n;

	if (header) {
		fprintf(l->io->out, "%s%s:\n", l->printed ? "\n" : "", path);
		l->printed = true;
	}
	if ((e = read_dir(l, path, &n)) == NULL)
		return;
	print_ents(l, e, n, true);
	l->printed = true;
	if (l->recursive)
		for (size_t i = 0; i < n; i++)
			if (S_ISDIR(e[i].st.st_mode) &&
			    strcmp(e[i].name, ".") != 0 &&
			    strcmp(e[i].name, "..") != 0)
				list_dir(l, e[i].path, true);
	ents_free(e, n);
}

int
applet_ls(struct tb_io *io, int argc, char **argv)
{
	struct ls_opts l = { .io = io, .now = time(NULL) };
	struct tb_opt o;
	struct ls_ent *files, *dirs;
	size_t nf = 0, nd = 0;
	int c, nops;
	char *dot[] = { (char *)".", NULL }, **ops;

	tb_opt_init(&o, io, "ls", argc, argv);
	while ((c = tb_opt_next(&o, "laAR1hdFptSrinCxgo")) != TB_OPT_END) {
		switch (c) {
		case 'l': case 'n': case 'g': case 'o': l.lng = true; break;
		case 'a': l.all = true; break;
		case 'A': l.almost = true; break;
		case 'R': l.recursive = true; break;
		case 'h': l.human = true; break;
		case 'd': l.dironly = true; break;
		case 'F': l.classify = true; break;
		case 'p': l.slash = true; break;
		case 't': l.bytime = true; break;
		case 'S': l.bysize = true; break;
		case 'r': l.reverse = true; break;
		case 'i': l.inode = true; break;
		case '1': case 'C': case 'x': break;
		case TB_OPT_LONG:
			if (strncmp(o.arg, "color", 5) == 0 ||
			    strcmp(o.arg, "group-directories-first") == 0)
				break;
			if (strcmp(o.arg, "all") == 0) {
				l.all = true;
				break;
			}
			tb_opt_bad_long(&o);
			return 2;
		default:
			return 2;
		}
	}
	nops = argc - o.ind;
	ops = argv + o.ind;
	if (nops == 0) {
		ops = dot;
		nops = 1;
	}
	files = tb_xmalloc(sizeof(*files) * (size_t)nops);
	dirs = tb_xmalloc(sizeof(*dirs) * (size_t)nops);
	for (int k = 0; k < nops; k++) {
		const char *op = ops[k];
		struct stat st;
		bool isdir;

		if (lstat(op, &st) != 0) {
			tb_err(io, "ls", "cannot access '%s': %s", op,
			    strerror(errno));
			l.rc = 2;
			continue;
		}
		isdir = S_ISDIR(st.st_mode);
		if (S_ISLNK(st.st_mode) && !l.lng && !l.dironly &&
		    tb_is_dir(op))
			isdir = true;
		if (isdir && !l.dironly) {
			dirs[nd].name = tb_xstrdup(op);
			dirs[nd].path = tb_xstrdup(op);
			dirs[nd++].st = st;
		} else {
			files[nf].name = tb_xstrdup(op);
			files[nf].path = tb_xstrdup(op);
			files[nf++].st = st;
		}
	}
	ents_sort(&l, files, nf);
	ents_sort(&l, dirs, nd);
	if (nf > 0) {
		print_ents(&l, files, nf, false);
		l.printed = true;
	}
	for (size_t i = 0; i < nd; i++)
		list_dir(&l, dirs[i].path, nops > 1 || l.recursive);
	ents_free(files, nf);
	ents_free(dirs, nd);
	return l.rc;
}
