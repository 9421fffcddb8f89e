/*
 * tbx_wasi.c - the POSIX functions toybox calls that wasi-libc lacks
 * (declared in include/tbx_wasi.h), wasm32-wasi build only.
 *
 * WASI has no users, permissions, owners, signals or processes: files
 * report uid and gid 0 and no permission bits, so changing them succeeds
 * without doing anything (as the existing toolbox does), looking a user
 * up finds nobody, and what needs a process or a terminal fails with
 * ENOSYS / ENOTTY.
 */
#define _WASI_EMULATED_SIGNAL	/* for signal.h: sigset_t */
#define _WASI_EMULATED_PROCESS_CLOCKS	/* for sys/resource.h */
#include "include/tbx_wasi.h"

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

uid_t getuid(void) { return 0; }
uid_t geteuid(void) { return 0; }
gid_t getgid(void) { return 0; }
gid_t getegid(void) { return 0; }
mode_t umask(mode_t mask) { (void)mask; return 022; }

int
getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t n,
    struct passwd **res)
{
	(void)uid, (void)pw, (void)buf, (void)n;
	*res = NULL;
	return 0;
}

int
getgrgid_r(gid_t gid, struct group *gr, char *buf, size_t n,
    struct group **res)
{
	(void)gid, (void)gr, (void)buf, (void)n;
	*res = NULL;
	return 0;
}

int
getpwnam_r(const char *name, struct passwd *pw, char *buf, size_t n,
    struct passwd **res)
{
	(void)name, (void)pw, (void)buf, (void)n;
	*res = NULL;
	return 0;
}

int
getgrnam_r(const char *name, struct group *gr, char *buf, size_t n,
    struct group **res)
{
	(void)name, (void)gr, (void)buf, (void)n;
	*res = NULL;
	return 0;
}

struct passwd *getpwuid(uid_t uid) { (void)uid; return NULL; }
struct passwd *getpwnam(const char *name) { (void)name; return NULL; }
struct group *getgrgid(gid_t gid) { (void)gid; return NULL; }
struct group *getgrnam(const char *name) { (void)name; return NULL; }

/* No owners or permission bits to change. */
int chmod(const char *p, mode_t m) { (void)p, (void)m; return 0; }
int fchmod(int fd, mode_t m) { (void)fd, (void)m; return 0; }
int
fchmodat(int dirfd, const char *p, mode_t m, int fl)
{
	(void)dirfd, (void)p, (void)m, (void)fl;
	return 0;
}
int
chown(const char *p, uid_t u, gid_t g)
{
	(void)p, (void)u, (void)g;
	return 0;
}
int
lchown(const char *p, uid_t u, gid_t g)
{
	(void)p, (void)u, (void)g;
	return 0;
}
int fchown(int fd, uid_t u, gid_t g) { (void)fd, (void)u, (void)g; return 0; }
int
fchownat(int dirfd, const char *p, uid_t u, gid_t g, int fl)
{
	(void)dirfd, (void)p, (void)u, (void)g, (void)fl;
	return 0;
}

static int
nosys(void)
{
	errno = ENOSYS;
	return -1;
}

int
mknodat(int dirfd, const char *p, mode_t m, dev_t d)
{
	(void)dirfd, (void)p, (void)m, (void)d;
	return nosys();
}
int fchdir(int fd) { (void)fd; return nosys(); }
long syscall(long n, ...) { (void)n; return nosys(); }
int personality(int p) { (void)p; return nosys(); }
void tzset(void) { }

int
settimeofday(const struct timeval *tv, const struct timezone *tz)
{
	(void)tv, (void)tz;
	errno = EPERM;
	return -1;
}

int
sigfillset(sigset_t *set)
{
	memset(set, 0xff, sizeof(*set));
	return 0;
}

int
sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	(void)how, (void)set;
	if (old != NULL)
		memset(old, 0, sizeof(*old));
	return 0;
}

_Noreturn void
siglongjmp(sigjmp_buf b, int v)
{
	(void)b, (void)v;
	abort();	/* toybox jumps only when toys.rebound is set: never */
}

int
sigaction(int sig, const struct sigaction *sa, struct sigaction *old)
{
	(void)sig, (void)sa;
	if (old != NULL)
		memset(old, 0, sizeof(*old));
	return 0;
}

/* WASI has no dup(); a directory can be opened again (ls and du walk a
 * directory through a dup() of its descriptor), anything else cannot. */
int
dup(int fd)
{
	int nfd = openat(fd, ".", O_RDONLY | O_DIRECTORY);

	if (nfd < 0 && errno == ENOTDIR)
		return nosys();
	return nfd;
}

/* No mount table, no file system statistics. */
FILE *
setmntent(const char *file, const char *mode)
{
	(void)file, (void)mode;
	errno = ENOENT;
	return NULL;
}
struct mntent *getmntent(FILE *f) { (void)f; return NULL; }
int endmntent(FILE *f) { (void)f; return 1; }
int
statfs(const char *path, struct statfs *buf)
{
	(void)path, (void)buf;
	return nosys();
}
int
statvfs(const char *path, struct statvfs *buf)
{
	(void)path, (void)buf;
	return nosys();
}

int inotify_init(void) { return nosys(); }
int
inotify_add_watch(int fd, const char *path, uint32_t mask)
{
	(void)fd, (void)path, (void)mask;
	return nosys();
}

/* No extended attributes. */
static ssize_t
notsup(void)
{
	errno = ENOTSUP;
	return -1;
}
ssize_t
fgetxattr(int fd, const char *name, void *v, size_t n)
{
	(void)fd, (void)name, (void)v, (void)n;
	return notsup();
}
ssize_t
flistxattr(int fd, char *l, size_t n)
{
	(void)fd, (void)l, (void)n;
	return notsup();
}
int
fsetxattr(int fd, const char *name, const void *v, size_t n, int fl)
{
	(void)fd, (void)name, (void)v, (void)n, (void)fl;
	return (int)notsup();
}

/* sed -i's temporary file: "nameXXXXXX" with the X's replaced. */
int
mkstemp(char *tmpl)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t len = strlen(tmpl);
	char *x;

	if (len < 6 || strcmp(x = tmpl + len - 6, "XXXXXX") != 0) {
		errno = EINVAL;
		return -1;
	}
	for (int tries = 0; tries < 100; tries++) {
		unsigned char r[6];
		int fd;

		if (getentropy(r, sizeof(r)) != 0)
			return -1;
		for (int i = 0; i < 6; i++)
			x[i] = chars[r[i] % (sizeof(chars) - 1)];
		if ((fd = open(tmpl, O_RDWR | O_CREAT | O_EXCL, 0600)) >= 0 ||
		    errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}
