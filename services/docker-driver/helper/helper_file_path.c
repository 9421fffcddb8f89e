/*
 * helper_file_path.c - a file tool's path resolved and guarded (issue 29;
 * helper_file.h), below every command of helper_file*.c.
 *
 * A path is walked folder by folder from / or the working folder, each
 * folder opened and checked; with a root (hxf_root: the WASM backends)
 * every step resolves in it (openat2 RESOLVE_IN_ROOT). A symlink at the
 * end is followed once and its target walked and checked again. The
 * guard refuses what an agent should not be led to by a path or a
 * symlink: /proc and /sys (the kernel's, by file system type, not by
 * name), the helper's own folder /.msc and its binary.
 */
#include "helper.h"
#include "helper_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#define HXF_MSC_DIR	"/.msc"
#define HXF_HELPER	"/.msc-helper"

struct hxf_root hxf_root = { .fd = -1 };

/* ---- a root (hxf_root): paths resolved in it ---------------------------- */

/* Opens guest path abs (absolute) in the root; -1 with errno set. */
static int
root_open(const char *abs, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, hxf_root.fd, abs, &how, sizeof(how));

	return fd < 0 ? -1 : (int)fd;
}

/* path made absolute against the guest's working folder; 0 or -1. */
static int
root_abs(const char *path, char *out, size_t len)
{
	const char *cwd = hxf_root.cwd != NULL ? hxf_root.cwd : "/";
	int n = path[0] == '/' ? snprintf(out, len, "%s", path) :
	    snprintf(out, len, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/",
		path);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/*
 * What `abs`'s symlink leads to, as a guest path: its target opened in
 * the root (symlinks resolved there) and named by its host path less the
 * root's. NULL with errno set.
 */
static char *
root_realpath(const char *abs, char out[PATH_MAX])
{
	char proc[40], host[PATH_MAX];
	size_t rl = hxf_root.host != NULL ? strlen(hxf_root.host) : 0;
	ssize_t n;
	int fd;

	if (rl == 0) {
		errno = ENOSYS;         /* no /proc: the root's path unknown */
		return NULL;
	}
	if ((fd = root_open(abs, O_PATH)) < 0)
		return NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, host, sizeof(host) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	host[n] = '\0';
	if (rl == 1)                    /* the root is the host's "/" */
		snprintf(out, PATH_MAX, "%s", host);
	else if (strcmp(host, hxf_root.host) == 0)
		strcpy(out, "/");
	else if (strncmp(host, hxf_root.host, rl) == 0 && host[rl] == '/')
		snprintf(out, PATH_MAX, "%s", host + rl);
	else {
		errno = EXDEV;          /* moved out meanwhile */
		return NULL;
	}
	return out;
}

/* ---- guards ------------------------------------------------------------- */

const char *
hxf_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a folder";
	if (S_ISFIFO(mode))
		return "a fifo (a read could wait forever)";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symlink";
	return "not a regular file";
}

const char *
hxf_forbidden(int fd, const struct stat *st)
{
	static const struct {
		long magic;
		const char *why;
	} kernel[] = {
		{ 0x9fa0, "in /proc (the kernel's process files)" },
		{ 0x62656572, "in /sys (the kernel's)" },
		{ 0x27e0eb, "in the kernel's cgroup files" },
		{ 0x63677270, "in the kernel's cgroup files" },
		{ 0x64626720, "in the kernel's debugfs" },
		{ 0x73636673, "in the kernel's securityfs" },
		{ (long)0xcafe4a11, "in the kernel's bpf files" },
		{ 0x74726163, "in the kernel's tracefs" },
	};
	struct statfs sf;
	struct stat m, root;

	if (fstatfs(fd, &sf) != 0)
		return "on a file system that cannot be checked";
	for (size_t i = 0; i < sizeof(kernel) / sizeof(kernel[0]); i++)
		if ((long)sf.f_type == kernel[i].magic)
			return kernel[i].why;
	if (hxf_root.fd >= 0)
		return NULL;            /* no helper in a root's computer */
	if (stat(HXF_MSC_DIR, &m) == 0 && ((st->st_dev == m.st_dev &&
	    st->st_ino == m.st_ino) || (st->st_dev == m.st_dev &&
	    stat("/", &root) == 0 && root.st_dev != m.st_dev)))
		return "in the exec helper's own folder " HXF_MSC_DIR;
	if (stat(HXF_HELPER, &m) == 0 && st->st_dev == m.st_dev &&
	    st->st_ino == m.st_ino)
		return "the exec helper itself";
	return NULL;
}

/*
 * Opens name in dfd as a folder and checks it; -1 with the line written.
 * With a root, the folder is opened as `abs`, the guest path that leads
 * to it (dfd's and name), from the root.
 */
static int
open_dir(int dfd, const char *name, const char *abs, const char *path,
    bool make)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	struct stat st;
	const char *why;
	int fd;

	fd = hxf_root.fd >= 0 ? root_open(abs, flags) : openat(dfd, name,
	    flags);
	if (fd < 0 && errno == ENOENT && make) {
		if (hxf_root.charge != NULL &&
		    hxf_root.charge(hxf_root.arg, HXF_ENTRY_BYTES) != 0) {
			(void)hxp_fail("%s: cannot make the folder %s: no space "
			    "left on the computer's disk", path, name);
			return -1;
		}
		if (mkdirat(dfd, name, 0755) != 0 && errno != EEXIST) {
			(void)hxp_fail("%s: cannot make the folder %s: %s",
			    path, name, strerror(errno));
			return -1;
		}
		fd = hxf_root.fd >= 0 ? root_open(abs, flags) : openat(dfd,
		    name, flags);
	}
	if (fd < 0) {
		if (errno == ENOENT)
			(void)hxp_fail("%s: the folder %s does not exist "
			    "(make_dirs: true makes it)", path, name);
		else if (errno == ENOTDIR)
			(void)hxp_fail("%s: %s is not a folder", path, name);
		else
			(void)hxp_fail("%s: %s: %s", path, name,
			    strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		(void)hxp_fail("%s: %s: %s", path, name, strerror(errno));
		close(fd);
		return -1;
	}
	if ((why = hxf_forbidden(fd, &st)) != NULL) {
		(void)hxp_fail("%s: refused: the path is %s", path, why);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Walks path's folders from / or the working folder; -1 on failure. With
 * a root, path is made absolute first and each folder opened from the
 * root by the path that leads to it.
 */
static int
walk(const char *path, bool make_dirs, struct hxf_target *t)
{
	char copy[PATH_MAX], abs[PATH_MAX] = "", *last, *p, *slash;
	int dfd;

	if (strlen(path) >= sizeof(copy) || (hxf_root.fd >= 0 &&
	    root_abs(path, copy, sizeof(copy)) != 0))
		return hxp_fail("path: longer than %d bytes", PATH_MAX - 1), -1;
	if (hxf_root.fd < 0)
		strcpy(copy, path);
	last = strrchr(copy, '/');
	p = last != NULL ? last + 1 : copy;
	if (*p == '\0' || strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
		return hxp_fail("%s: is a folder, not a file", path), -1;
	if (strlen(p) >= sizeof(t->base))
		return hxp_fail("%s: the name is longer than 255 bytes",
		    path), -1;
	strcpy(t->base, p);
	if ((dfd = open_dir(AT_FDCWD, copy[0] == '/' ? "/" : ".", "/", path,
	    false)) < 0)
		return -1;
	if (last == NULL)
		return dfd;
	*last = '\0';
	for (p = copy; *p != '\0'; p = slash + 1) {
		int nfd;

		if ((slash = strchr(p, '/')) != NULL)
			*slash = '\0';
		if (*p != '\0' && strcmp(p, ".") != 0) {
			/* The guest path to p (used with a root only). */
			size_t al = strlen(abs);

			snprintf(abs + al, sizeof(abs) - al, "/%s", p);
			nfd = open_dir(dfd, p, abs, path, make_dirs);
			close(dfd);
			if (nfd < 0)
				return -1;
			dfd = nfd;
		}
		if (slash == NULL)
			break;
	}
	return dfd;
}

int
hxf_resolve(const char *path, bool make_dirs, struct hxf_target *t)
{
	char real[PATH_MAX], abs[PATH_MAX];
	const char *cwd;

	memset(t, 0, sizeof(*t));
	t->dirfd = -1;
	if (path[0] == '\0')
		return hxp_fail("path: empty");
	for (int round = 0; round < 2; round++) {
		if ((t->dirfd = walk(path, make_dirs, t)) < 0)
			return HX_EXIT_ERR;
		if (fstatat(t->dirfd, t->base, &t->st,
		    AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				return hxp_fail("%s: %s", path,
				    strerror(errno));
			t->exists = false;
			break;
		}
		t->exists = true;
		if (!S_ISLNK(t->st.st_mode))
			break;
		/* A symlink: its target, walked and checked again. */
		close(t->dirfd);
		t->dirfd = -1;
		if (round == 1)
			return hxp_fail("%s: the symlink changed while it was "
			    "followed", path);
		if (hxf_root.fd >= 0 ? (root_abs(path, abs, sizeof(abs)) != 0 ||
		    root_realpath(abs, real) == NULL) :
		    realpath(path, real) == NULL)
			return hxp_fail("%s: a symlink to a missing file or "
			    "one that cannot be followed (%s)", path,
			    strerror(errno));
		path = real;
	}
	/* Named as given, made absolute (the working folder's). */
	t->shown[0] = '\0';
	cwd = path[0] == '/' ? NULL : hxf_root.fd >= 0 ? hxf_root.cwd :
	    getcwd(real, sizeof(real));     /* real is path's: not then */
	if (cwd != NULL &&
	    strlen(cwd) + strlen(path) + 2 <= sizeof(t->shown)) {
		strcpy(t->shown, cwd);
		if (strcmp(cwd, "/") != 0)
			strcat(t->shown, "/");
	}
	if (strlen(t->shown) + strlen(path) < sizeof(t->shown))
		strcat(t->shown, path);
	return 0;
}
