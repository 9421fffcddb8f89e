/* cpmv.c - cp and mv. */
#include "../toolbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cp_opts {
	struct tb_io	*io;
	const char	*applet;
	bool		 recursive;
	bool		 preserve;
	bool		 noclobber;
	bool		 verbose;
	bool		 deref;		/* follow symlinks in sources */
};

/* True when directory dir is dst_parent or one of its ancestors. */
static bool
is_ancestor(const struct stat *dir, const char *dst_parent)
{
	struct tb_buf p = { 0 };
	struct stat st, prev = { 0 };
	bool found = false;

	tb_buf_adds(&p, dst_parent);
	for (int depth = 0; depth < 256; depth++) {
		if (stat(tb_buf_str(&p), &st) != 0)
			break;
		if (st.st_dev == dir->st_dev && st.st_ino == dir->st_ino) {
			found = true;
			break;
		}
		if (depth > 0 && st.st_dev == prev.st_dev &&
		    st.st_ino == prev.st_ino)
			break;
		prev = st;
		tb_buf_adds(&p, "/..");
	}
	tb_buf_free(&p);
	return found;
}

static int
copy_file(struct cp_opts *c, const char *src, const char *dst,
    const struct stat *sst)
{
	struct stat dst_st;
	int in, out, rc = 0;
	char buf[16384];
	ssize_t n;

	if (stat(dst, &dst_st) == 0) {
		if (dst_st.st_dev == sst->st_dev &&
		    dst_st.st_ino == sst->st_ino) {
			tb_err(c->io, c->applet, "'%s' and '%s' are the same "
			    "file", src, dst);
			return 1;
		}
		if (c->noclobber)
			return 0;
	}
	if ((in = open(src, O_RDONLY)) < 0) {
		tb_err(c->io, c->applet, "cannot open '%s' for reading: %s",
		    src, strerror(errno));
		return 1;
	}
	if ((out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0) {
		tb_err(c->io, c->applet, "cannot create regular file '%s': %s",
		    dst, strerror(errno));
		close(in);
		return 1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0) {
				tb_err(c->io, c->applet, "error writing '%s': "
				    "%s", dst, strerror(errno));
				rc = 1;
				goto done;
			}
			off += w;
		}
	}
	if (n < 0) {
		tb_err(c->io, c->applet, "error reading '%s': %s", src,
		    strerror(errno));
		rc = 1;
	}
done:
	if (c->preserve && rc == 0) {
		struct timespec ts[2] = { sst->st_atim, sst->st_mtim };

		futimens(out, ts);
	}
	close(in);
	if (close(out) != 0)
		rc = 1;
	return rc;
}

static int cp_tree(struct cp_opts *c, const char *src, const char *dst);

static int
copy_dir(struct cp_opts *c, const char *src, const char *dst,
    const struct stat *sst)
{
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (!c->recursive) {
		tb_err(c->io, c->applet, "-r not specified; omitting "
		    "directory '%s'", src);
		return 1;
	}
	if (mkdir(dst, 0777) != 0 && (errno != EEXIST || !tb_is_dir(dst))) {
		tb_err(c->io, c->applet, "cannot create directory '%s': %s",
		    dst, strerror(errno));
		return 1;
	}
	if ((d = opendir(src)) == NULL) {
		tb_errno(c->io, c->applet, src);
		return 1;
	}
	while ((e = readdir(d)) != NULL) {
		char *s, *t;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		s = tb_path_join(src, e->d_name);
		t = tb_path_join(dst, e->d_name);
		if (s != NULL && t != NULL)
			rc |= cp_tree(c, s, t);
		else
			rc = 1;
		free(s);
		free(t);
	}
	closedir(d);
	if (c->preserve) {
		struct timespec ts[2] = { sst->st_atim, sst->st_mtim };

		utimensat(AT_FDCWD, dst, ts, 0);
	}
	return rc;
}

static int
cp_tree(struct cp_opts *c, const char *src, const char *dst)
{
	struct stat st;
	int r;

	r = c->deref || !c->recursive ? stat(src, &st) : lstat(src, &st);
	if (r != 0) {
		tb_err(c->io, c->applet, "cannot stat '%s': %s", src,
		    strerror(errno));
		return 1;
	}
	if (c->verbose)
		fprintf(c->io->out, "'%s' -> '%s'\n", src, dst);
	if (S_ISDIR(st.st_mode))
		return copy_dir(c, src, dst, &st);
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(src, target, sizeof(target) - 1);

		if (n < 0) {
			tb_errno(c->io, c->applet, src);
			return 1;
		}
		target[n] = '\0';
		unlink(dst);
		if (symlink(target, dst) != 0) {
			tb_err(c->io, c->applet, "cannot create symlink '%s': "
			    "%s", dst, strerror(errno));
			return 1;
		}
		return 0;
	}
	return copy_file(c, src, dst, &st);
}

/* The destination of src: inside dest when dest is a directory. */
static char *
target_of(const char *src, const char *dest, bool into)
{
	return into ? tb_path_join(dest, tb_basename(src)) : tb_xstrdup(dest);
}

/* Refuses to copy or move a directory into itself. */
static bool
into_itself(struct cp_opts *c, const char *src, const char *to)
{
	struct stat st;
	char *parent = tb_xstrdup(to), *slash = strrchr(parent, '/');
	bool bad;

	if (slash != NULL)
		*(slash == parent ? slash + 1 : slash) = '\0';
	else
		strcpy(parent, ".");
	bad = lstat(src, &st) == 0 && S_ISDIR(st.st_mode) &&
	    is_ancestor(&st, parent);
	free(parent);
	if (bad)
		tb_err(c->io, c->applet, "cannot %s a directory, '%s', into "
		    "itself, '%s'", strcmp(c->applet, "mv") == 0 ? "move" :
		    "copy", src, to);
	return bad;
}

static int
cp_parse(struct cp_opts *c, struct tb_opt *o, int argc, char **argv,
    bool is_mv)
{
	int ch;

	tb_opt_init(o, c->io, c->applet, argc, argv);
	while ((ch = tb_opt_next(o, is_mv ? "fivnT" : "rRapfnivLPdT"))
	    != TB_OPT_END) {
		switch (ch) {
		case 'r':
		case 'R': c->recursive = true; break;
		case 'a': c->recursive = c->preserve = true; break;
		case 'p': c->preserve = true; break;
		case 'n': c->noclobber = true; break;
		case 'v': c->verbose = true; break;
		case 'L': c->deref = true; break;
		case 'f': case 'i': case 'P': case 'd': case 'T': break;
		case TB_OPT_LONG:
			if (!is_mv && strcmp(o->arg, "recursive") == 0) {
				c->recursive = true;
				break;
			}
			tb_opt_bad_long(o);
			return -1;
		default:
			return -1;
		}
	}
	if (argc - o->ind < 2) {
		if (argc - o->ind == 1)
			tb_err(c->io, c->applet, "missing destination file "
			    "operand after '%s'", argv[o->ind]);
		else
			tb_err(c->io, c->applet, "missing file operand");
		return -1;
	}
	if (argc - o->ind > 2 && !tb_is_dir(argv[argc - 1])) {
		tb_err(c->io, c->applet, "target '%s' is not a directory",
		    argv[argc - 1]);
		return -1;
	}
	return 0;
}

int
applet_cp(struct tb_io *io, int argc, char **argv)
{
	struct cp_opts c = { .io = io, .applet = "cp" };
	struct tb_opt o;
	const char *dest;
	bool into;
	int rc = 0;

	if (cp_parse(&c, &o, argc, argv, false) != 0)
		return 1;
	dest = argv[argc - 1];
	into = tb_is_dir(dest);
	for (int i = o.ind; i < argc - 1; i++) {
		char *to = target_of(argv[i], dest, into);

		if (to == NULL)
			return 1;
		if (c.recursive && into_itself(&c, argv[i], to))
			rc = 1;
		else
			rc |= cp_tree(&c, argv[i], to);
		free(to);
	}
	return rc;
}

static int
rm_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char *s;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((s = tb_path_join(path, e->d_name)) == NULL)
			rc = -1;
		else if (rm_tree(s) != 0)
			rc = -1;
		free(s);
	}
	closedir(d);
	return rc == 0 ? rmdir(path) : rc;
}

int
applet_mv(struct tb_io *io, int argc, char **argv)
{
	struct cp_opts c = { .io = io, .applet = "mv", .recursive = true };
	struct tb_opt o;
	struct stat st, dst;
	const char *dest;
	bool into;
	int rc = 0;

	if (cp_parse(&c, &o, argc, argv, true) != 0)
		return 1;
	dest = argv[argc - 1];
	into = tb_is_dir(dest);
	for (int i = o.ind; i < argc - 1; i++) {
		char *to = target_of(argv[i], dest, into);

		if (to == NULL)
			return 1;
		if (lstat(argv[i], &st) != 0) {
			tb_err(io, "mv", "cannot stat '%s': %s", argv[i],
			    strerror(errno));
			rc = 1;
		} else if (c.noclobber && lstat(to, &dst) == 0) {
			/* Keep the existing file. */
		} else if (into_itself(&c, argv[i], to)) {
			rc = 1;
		} else if (rename(argv[i], to) != 0) {
			if (errno == EXDEV && cp_tree(&c, argv[i], to) == 0 &&
			    rm_tree(argv[i]) == 0) {
				free(to);
				continue;
			}
			tb_err(io, "mv", "cannot move '%s' to '%s': %s",
			    argv[i], to, strerror(errno));
			rc = 1;
		} else if (c.verbose)
			fprintf(io->out, "renamed '%s' -> '%s'\n", argv[i], to);
		free(to);
	}
	return rc;
}
