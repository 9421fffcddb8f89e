/* fileops.c - mkdir, rmdir, rm, touch, ln. */
#include "../toolbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* mkdir -p: creates every missing component of path. */
static int
mkdir_parents(const char *path)
{
	char *p = tb_xstrdup(path);
	size_t n = strlen(p);
	int rc = 0;

	for (size_t i = 1; i <= n; i++) {
		if ((p[i] != '/' && p[i] != '\0') || p[i - 1] == '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0777) != 0) {
			int e = errno;

			if (e != EEXIST || !tb_is_dir(p)) {
				errno = e != EEXIST ? e : i == n ? EEXIST :
				    ENOTDIR;
				rc = -1;
				break;
			}
		}
		if (i < n)
			p[i] = '/';
	}
	free(p);
	return rc;
}

int
applet_mkdir(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	bool parents = false, verbose = false;
	int c, rc = 0;

	tb_opt_init(&o, io, "mkdir", argc, argv);
	while ((c = tb_opt_next(&o, "pvm:")) != TB_OPT_END) {
		if (c == 'p')
			parents = true;
		else if (c == 'v')
			verbose = true;
		else if (c == TB_OPT_LONG && strcmp(o.arg, "parents") == 0)
			parents = true;
		else if (c != 'm')
			return c == TB_OPT_LONG ? (tb_opt_bad_long(&o), 1) : 1;
	}
	if (o.ind >= argc) {
		tb_err(io, "mkdir", "missing operand");
		return 1;
	}
	for (int i = o.ind; i < argc; i++) {
		int r;

		if (parents) {
			r = mkdir_parents(argv[i]);
		} else
			r = mkdir(argv[i], 0777);
		if (r != 0) {
			tb_err(io, "mkdir", "cannot create directory '%s': %s",
			    argv[i], strerror(errno));
			rc = 1;
		} else if (verbose)
			fprintf(io->out, "mkdir: created directory '%s'\n",
			    argv[i]);
	}
	return rc;
}

int
applet_rmdir(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	bool parents = false;
	int c, rc = 0;

	tb_opt_init(&o, io, "rmdir", argc, argv);
	while ((c = tb_opt_next(&o, "p")) != TB_OPT_END) {
		if (c != 'p')
			return 1;
		parents = true;
	}
	if (o.ind >= argc) {
		tb_err(io, "rmdir", "missing operand");
		return 1;
	}
	for (int i = o.ind; i < argc; i++) {
		char *p = tb_xstrdup(argv[i]);

		for (;;) {
			char *slash;

			if (rmdir(p) != 0) {
				tb_err(io, "rmdir", "failed to remove '%s': %s",
				    p, strerror(errno));
				rc = 1;
				break;
			}
			if (!parents || (slash = strrchr(p, '/')) == NULL ||
			    slash == p)
				break;
			*slash = '\0';
		}
		free(p);
	}
	return rc;
}

struct rm_opts {
	struct tb_io	*io;
	bool		 force;
	bool		 recursive;
	bool		 verbose;
	bool		 dirs;
};

static int
rm_path(struct rm_opts *r, const char *path)
{
	struct stat st;
	int rc = 0;

	if (lstat(path, &st) != 0) {
		if (r->force && errno == ENOENT)
			return 0;
		tb_err(r->io, "rm", "cannot remove '%s': %s", path,
		    strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d;
		struct dirent *e;

		if (!r->recursive && !r->dirs) {
			tb_err(r->io, "rm", "cannot remove '%s': Is a directory",
			    path);
			return 1;
		}
		if (r->recursive) {
			if ((d = opendir(path)) == NULL) {
				tb_errno(r->io, "rm", path);
				return 1;
			}
			while ((e = readdir(d)) != NULL) {
				char *sub;

				if (strcmp(e->d_name, ".") == 0 ||
				    strcmp(e->d_name, "..") == 0)
					continue;
				sub = tb_path_join(path, e->d_name);
				if (sub == NULL) {
					rc = 1;
					break;
				}
				rc |= rm_path(r, sub);
				free(sub);
			}
			closedir(d);
		}
		if (rmdir(path) != 0) {
			tb_err(r->io, "rm", "cannot remove '%s': %s", path,
			    strerror(errno));
			return 1;
		}
	} else if (unlink(path) != 0) {
		tb_err(r->io, "rm", "cannot remove '%s': %s", path,
		    strerror(errno));
		return 1;
	}
	if (r->verbose && rc == 0)
		fprintf(r->io->out, "removed '%s'\n", path);
	return rc;
}

int
applet_rm(struct tb_io *io, int argc, char **argv)
{
	struct rm_opts r = { .io = io };
	struct tb_opt o;
	int c, rc = 0;

	tb_opt_init(&o, io, "rm", argc, argv);
	while ((c = tb_opt_next(&o, "fiRrvd")) != TB_OPT_END) {
		switch (c) {
		case 'f': r.force = true; break;
		case 'i': break;
		case 'R':
		case 'r': r.recursive = true; break;
		case 'v': r.verbose = true; break;
		case 'd': r.dirs = true; break;
		case TB_OPT_LONG:
			if (strcmp(o.arg, "recursive") == 0)
				r.recursive = true;
			else if (strcmp(o.arg, "force") == 0)
				r.force = true;
			else if (strcmp(o.arg, "no-preserve-root") != 0) {
				tb_opt_bad_long(&o);
				return 1;
			}
			break;
		default:
			return 1;
		}
	}
	if (o.ind >= argc && !r.force) {
		tb_err(io, "rm", "missing operand");
		return 1;
	}
	for (int i = o.ind; i < argc; i++) {
		const char *b = tb_basename(argv[i]);

		if (strcmp(b, ".") == 0 || strcmp(b, "..") == 0) {
			tb_err(io, "rm", "refusing to remove '.' or '..' "
			    "directory: skipping '%s'", argv[i]);
			rc = 1;
			continue;
		}
		if (strcmp(b, "/") == 0) {
			tb_err(io, "rm", "it is dangerous to operate "
			    "recursively on '/'");
			rc = 1;
			continue;
		}
		rc |= rm_path(&r, argv[i]);
	}
	return rc;
}

int
applet_touch(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	bool create = true;
	int c, rc = 0;
	struct timespec ts[2];
	long long ll;

	/* Explicit times: some WASI hosts reject UTIME_NOW. */
	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[1] = ts[0];

	tb_opt_init(&o, io, "touch", argc, argv);
	while ((c = tb_opt_next(&o, "cahmd:")) != TB_OPT_END) {
		if (c == 'c')
			create = false;
		else if (c == 'd') {
			if (o.arg[0] != '@' || tb_parse_ll(o.arg + 1, &ll)) {
				tb_err(io, "touch", "invalid date format '%s'"
				    " (only @SECONDS)", o.arg);
				return 1;
			}
			ts[0].tv_sec = ts[1].tv_sec = (time_t)ll;
			ts[0].tv_nsec = ts[1].tv_nsec = 0;
		} else if (c != 'a' && c != 'm' && c != 'h')
			return 1;
	}
	if (o.ind >= argc) {
		tb_err(io, "touch", "missing file operand");
		return 1;
	}
	for (int i = o.ind; i < argc; i++) {
		if (utimensat(AT_FDCWD, argv[i], ts, 0) == 0)
			continue;
		if (errno == ENOENT && create) {
			int fd = open(argv[i], O_WRONLY | O_CREAT, 0666);

			if (fd >= 0) {
				futimens(fd, ts);
				close(fd);
				continue;
			}
		} else if (errno == ENOENT)
			continue;
		tb_err(io, "touch", "cannot touch '%s': %s", argv[i],
		    strerror(errno));
		rc = 1;
	}
	return rc;
}

int
applet_ln(struct tb_io *io, int argc, char **argv)
{
	struct tb_opt o;
	bool sym = false, force = false;
	int c, rc = 0, n;
	const char *dest;

	tb_opt_init(&o, io, "ln", argc, argv);
	while ((c = tb_opt_next(&o, "sfnvT")) != TB_OPT_END) {
		if (c == 's')
			sym = true;
		else if (c == 'f')
			force = true;
		else if (c != 'n' && c != 'v' && c != 'T')
			return 1;
	}
	n = argc - o.ind;
	if (n < 1) {
		tb_err(io, "ln", "missing file operand");
		return 1;
	}
	dest = n == 1 ? "." : argv[argc - 1];
	if (n > 2 && !tb_is_dir(dest)) {
		tb_err(io, "ln", "target '%s' is not a directory", dest);
		return 1;
	}
	for (int i = o.ind; i < (n == 1 ? argc : argc - 1); i++) {
		char *to = tb_is_dir(dest) ?
		    tb_path_join(dest, tb_basename(argv[i])) :
		    tb_xstrdup(dest);
		int r;

		if (to == NULL)
			return 1;
		if (force)
			unlink(to);
		r = sym ? symlink(argv[i], to) : link(argv[i], to);
		if (r != 0) {
			tb_err(io, "ln", "failed to create %slink '%s': %s",
			    sym ? "symbolic " : "hard ", to, strerror(errno));
			rc = 1;
		}
		free(to);
	}
	return rc;
}
