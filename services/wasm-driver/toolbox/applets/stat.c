/* stat.c - stat, du, readlink, realpath. */
#include "../toolbox.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *
type_name(mode_t m, off_t size)
{
	if (S_ISREG(m))
		return size == 0 ? "regular empty file" : "regular file";
	if (S_ISDIR(m))
		return "directory";
	if (S_ISLNK(m))
		return "symbolic link";
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISCHR(m))
		return "character special file";
	if (S_ISBLK(m))
		return "block special file";
	return "unknown";
}

static void
mode_str(mode_t m, char out[11])
{
	mode_t p = tb_mode_perm(m);

	out[0] = S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : S_ISFIFO(m) ? 'p' :
	    S_ISCHR(m) ? 'c' : S_ISBLK(m) ? 'b' : S_ISSOCK(m) ? 's' : '-';
	for (int i = 0; i < 9; i++)
		out[i + 1] = (p & (0400 >> i)) ? "rwxrwxrwx"[i] : '-';
	out[10] = '\0';
}

static void
time_str(const struct timespec *ts, char *buf, size_t n)
{
	struct tm tm;
	char a[40], z[8];
	time_t t = ts->tv_sec;

	localtime_r(&t, &tm);
	strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm);
	snprintf(buf, n, "%s.%09ld %s", a, (long)ts->tv_nsec, z);
}

static void
stat_format(FILE *out, const char *fmt, const char *path,
    const struct stat *st)
{
	char buf[64], m[11];

	for (const char *p = fmt; *p; p++) {
		if (*p == '\\' && p[1] == 'n') {
			fputc('\n', out);
			p++;
			continue;
		}
		if (*p != '%' || p[1] == '\0') {
			fputc(*p, out);
			continue;
		}
		switch (*++p) {
		case 'n': fputs(path, out); break;
		case 'N': fprintf(out, "'%s'", path); break;
		case 's': fprintf(out, "%lld", (long long)st->st_size); break;
		case 'F': fputs(type_name(st->st_mode, st->st_size), out);
			break;
		case 'a': fprintf(out, "%o", (unsigned)tb_mode_perm(
		    st->st_mode)); break;
		case 'A': mode_str(st->st_mode, m); fputs(m, out); break;
		case 'u': fprintf(out, "%u", (unsigned)st->st_uid); break;
		case 'g': fprintf(out, "%u", (unsigned)st->st_gid); break;
		case 'U': fputs(st->st_uid == 0 ? "root" : "unknown", out);
			break;
		case 'G': fputs(st->st_gid == 0 ? "root" : "unknown", out);
			break;
		case 'i': fprintf(out, "%llu", (unsigned long long)st->st_ino);
			break;
		case 'h': fprintf(out, "%lu", (unsigned long)st->st_nlink);
			break;
		case 'b': fprintf(out, "%lld", (long long)st->st_blocks); break;
		case 'Y': fprintf(out, "%lld", (long long)st->st_mtim.tv_sec);
			break;
		case 'X': fprintf(out, "%lld", (long long)st->st_atim.tv_sec);
			break;
		case 'y': time_str(&st->st_mtim, buf, sizeof(buf));
			fputs(buf, out); break;
		case 'x': time_str(&st->st_atim, buf, sizeof(buf));
			fputs(buf, out); break;
		case '%': fputc('%', out); break;
		default: fputc('%', out); fputc(*p, out); break;
		}
	}
	fputc('\n', out);
}

int
applet_stat(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	const char *fmt = NULL;
	bool deref = false;
	int c, rc = 0;

	tb_opt_init(&o, io, "stat", argc, argv);
	while ((c = tb_opt_next(&o, "c:Lt")) != TB_OPT_END) {
		if (c == 'c')
			fmt = o.arg;
		else if (c == 'L')
			deref = true;
		else if (c == TB_OPT_LONG && strncmp(o.arg, "format=", 7) == 0)
			fmt = o.arg + 7;
		else if (c != 't')
			return c == TB_OPT_LONG ? (tb_opt_bad_long(&o), 1) : 1;
	}
	if (o.ind >= argc) {
		tb_err(io, "stat", "missing operand");
		return 1;
	}
	for (int i = o.ind; i < argc; i++) {
		struct stat st;
		char m[11], ta[64], tm[64], tc[64];

		if ((deref ? stat(argv[i], &st) : lstat(argv[i], &st)) != 0) {
			tb_err(io, "stat", "cannot stat '%s': %s", argv[i],
			    strerror(errno));
			rc = 1;
			continue;
		}
		if (fmt != NULL) {
			stat_format(io->out, fmt, argv[i], &st);
			continue;
		}
		mode_str(st.st_mode, m);
		time_str(&st.st_atim, ta, sizeof(ta));
		time_str(&st.st_mtim, tm, sizeof(tm));
		time_str(&st.st_ctim, tc, sizeof(tc));
		fprintf(io->out, "  File: %s\n  Size: %-10lld\tBlocks: %-10lld "
		    "IO Block: %-6ld %s\nDevice: %llxh/%llud\tInode: %-11llu "
		    "Links: %lu\nAccess: (%04o/%s)  Uid: (%5u/%8s)   "
		    "Gid: (%5u/%8s)\nAccess: %s\nModify: %s\nChange: %s\n",
		    argv[i], (long long)st.st_size, (long long)st.st_blocks,
		    (long)st.st_blksize, type_name(st.st_mode, st.st_size),
		    (unsigned long long)st.st_dev,
		    (unsigned long long)st.st_dev,
		    (unsigned long long)st.st_ino, (unsigned long)st.st_nlink,
		    (unsigned)tb_mode_perm(st.st_mode), m,
		    (unsigned)st.st_uid, st.st_uid == 0 ? "root" : "unknown",
		    (unsigned)st.st_gid, st.st_gid == 0 ? "root" : "unknown",
		    ta, tm, tc);
	}
	return rc;
}

struct du {
	struct tb_io	*io;
	bool		 all, human, bytes, summary, total;
	long		 maxdepth;
	int		 rc;
};

static void
du_print(struct du *d, unsigned long long bytes, const char *path)
{
	char buf[32];

	if (d->human)
		fprintf(d->io->out, "%s\t%s\n", tb_human(buf, sizeof(buf),
		    bytes), path);
	else if (d->bytes)
		fprintf(d->io->out, "%llu\t%s\n", bytes, path);
	else
		fprintf(d->io->out, "%llu\t%s\n", (bytes + 1023) / 1024, path);
}

/* Apparent size of path (recursively); prints per -a/-s/-d. */
static unsigned long long
du_walk(struct du *d, const char *path, long depth)
{
	struct stat st;
	unsigned long long sum;

	if (lstat(path, &st) != 0) {
		tb_err(d->io, "du", "cannot access '%s': %s", path,
		    strerror(errno));
		d->rc = 1;
		return 0;
	}
	sum = S_ISDIR(st.st_mode) ? 0 : (unsigned long long)st.st_size;
	if (S_ISDIR(st.st_mode)) {
		size_t n;
		char **names = tb_dir_names(path, &n);

		if (names == NULL) {
			tb_errno(d->io, "du", path);
			d->rc = 1;
			return 0;
		}
		for (size_t i = 0; i < n; i++) {
			char *sub = tb_path_join(path, names[i]);

			if (sub == NULL)
				continue;
			sum += du_walk(d, sub, depth + 1);
			free(sub);
		}
		tb_dir_names_free(names, n);
	}
	if ((S_ISDIR(st.st_mode) || d->all || depth == 0) &&
	    depth <= d->maxdepth && (!d->summary || depth == 0))
		du_print(d, sum, path);
	return sum;
}

int
applet_du(struct tb_io *io, int argc, char **argv)
{
	struct du d = { .io = io, .maxdepth = 1L << 30 };
	struct tb_opt o;
	unsigned long long total = 0;
	long long v;
	int c;

	tb_opt_init(&o, io, "du", argc, argv);
	while ((c = tb_opt_next(&o, "ahbsckd:xL")) != TB_OPT_END) {
		switch (c) {
		case 'a': d.all = true; break;
		case 'h': d.human = true; break;
		case 'b': d.bytes = true; break;
		case 's': d.summary = true; break;
		case 'c': d.total = true; break;
		case 'k': case 'x': case 'L': break;
		case 'd':
			if (tb_parse_ll(o.arg, &v) != 0 || v < 0) {
				tb_err(io, "du", "invalid maximum depth '%s'",
				    o.arg);
				return 1;
			}
			d.maxdepth = (long)v;
			break;
		case TB_OPT_LONG:
			if (strncmp(o.arg, "max-depth=", 10) == 0 &&
			    tb_parse_ll(o.arg + 10, &v) == 0 && v >= 0) {
				d.maxdepth = (long)v;
				break;
			}
			tb_opt_bad_long(&o);
			return 1;
		default:
			return 1;
		}
	}
	if (o.ind >= argc)
		total = du_walk(&d, ".", 0);
	for (int i = o.ind; i < argc; i++)
		total += du_walk(&d, argv[i], 0);
	if (d.total)
		du_print(&d, total, "total");
	return d.rc;
}

/*
 * Canonical absolute path of path, resolving "." "..", and symlinks.
 * With missing_ok the last component may not exist. malloc'd or NULL.
 */
static char *
canon(const char *path, bool missing_ok)
{
	struct tb_buf out = { 0 }, todo = { 0 };
	char cwd[PATH_MAX];
	int links = 0;

	if (path[0] != '/') {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return NULL;
		tb_buf_adds(&todo, cwd);
		tb_buf_addc(&todo, '/');
	}
	tb_buf_adds(&todo, path);
	tb_buf_str(&todo);
	tb_buf_adds(&out, "");
	for (size_t i = 0; i < todo.len;) {
		size_t n;
		char *comp, target[PATH_MAX];
		ssize_t tl;
		struct stat st;

		while (i < todo.len && todo.data[i] == '/')
			i++;
		n = strcspn(todo.data + i, "/");
		if (n == 0)
			break;
		comp = todo.data + i;
		i += n;
		if (n == 1 && comp[0] == '.')
			continue;
		if (n == 2 && comp[0] == '.' && comp[1] == '.') {
			while (out.len > 0 && out.data[out.len - 1] != '/')
				out.len--;
			if (out.len > 0)
				out.len--;
			continue;
		}
		size_t keep = out.len;

		tb_buf_addc(&out, '/');
		tb_buf_add(&out, comp, n);
		tb_buf_str(&out);
		if (lstat(out.data, &st) != 0) {
			if (errno == ENOENT && missing_ok && i >= todo.len)
				break;
			goto fail;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++links > 40 || (tl = readlink(out.data, target,
		    sizeof(target) - 1)) < 0) {
			errno = links > 40 ? ELOOP : errno;
			goto fail;
		}
		target[tl] = '\0';
		/* Splice the target in front of the rest. */
		struct tb_buf next = { 0 };

		tb_buf_adds(&next, target);
		tb_buf_addc(&next, '/');
		tb_buf_add(&next, todo.data + i, todo.len - i);
		tb_buf_free(&todo);
		todo = next;
		tb_buf_str(&todo);
		i = 0;
		out.len = target[0] == '/' ? 0 : keep;
	}
	tb_buf_free(&todo);
	if (out.len == 0)
		tb_buf_addc(&out, '/');
	return tb_buf_str(&out);
fail:
	tb_buf_free(&todo);
	tb_buf_free(&out);
	return NULL;
}

int
applet_realpath(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	bool missing_ok = false;
	int c, rc = 0;

	tb_opt_init(&o, io, "realpath", argc, argv);
	while ((c = tb_opt_next(&o, "emsq")) != TB_OPT_END) {
		if (c == 'm')
			missing_ok = true;
		else if (c == TB_OPT_ERR || c == TB_OPT_LONG)
			return 1;
	}
	if (o.ind >= argc) {
		tb_err(io, "realpath", "missing operand");
		return 1;
	}
	for (int i = o.ind; i < argc; i++) {
		char *p = canon(argv[i], missing_ok);

		if (p == NULL) {
			tb_errno(io, "realpath", argv[i]);
			rc = 1;
			continue;
		}
		fprintf(io->out, "%s\n", p);
		free(p);
	}
	return rc;
}

int
applet_readlink(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	bool canonical = false, nonl = false;
	int c, rc = 0;

	tb_opt_init(&o, io, "readlink", argc, argv);
	while ((c = tb_opt_next(&o, "femnqsv")) != TB_OPT_END) {
		if (c == 'f' || c == 'e' || c == 'm')
			canonical = true;
		else if (c == 'n')
			nonl = true;
		else if (c == TB_OPT_ERR || c == TB_OPT_LONG)
			return 1;
	}
	if (o.ind >= argc) {
		tb_err(io, "readlink", "missing operand");
		return 1;
	}
	for (int i = o.ind; i < argc; i++) {
		char buf[PATH_MAX], *p = NULL;
		ssize_t n;

		if (canonical)
			p = canon(argv[i], true);
		else if ((n = readlink(argv[i], buf, sizeof(buf) - 1)) >= 0) {
			buf[n] = '\0';
			p = tb_xstrdup(buf);
		}
		if (p == NULL) {
			rc = 1;
			continue;
		}
		fprintf(io->out, nonl ? "%s" : "%s\n", p);
		free(p);
	}
	return rc;
}
