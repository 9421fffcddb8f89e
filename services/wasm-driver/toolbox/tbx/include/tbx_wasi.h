/*
 * tbx_wasi.h - what toybox's headers (toys.h, lib/portability.h) expect
 * from a Linux libc and wasi-libc lacks: the declarations of the stub
 * headers in this folder (pwd.h, termios.h, ...), for the wasm32-wasi
 * build only. The functions are defined in ../tbx_wasi.c; each fails the
 * way Linux does when the thing is missing (no user database, no
 * terminal, no signals, no fork), so the applets take their usual path.
 */
#ifndef TBX_WASI_H
#define TBX_WASI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* setjmp.h: toybox only jumps when toys.rebound is set (never, here). */
typedef long jmp_buf[1], sigjmp_buf[1];
#define setjmp(b)	0
#define sigsetjmp(b, s)	0
_Noreturn void siglongjmp(sigjmp_buf b, int v);
_Noreturn void longjmp(jmp_buf b, int v);

/* pwd.h, grp.h: no user database (getpwuid() etc. find nobody). */
struct passwd {
	char	*pw_name, *pw_passwd;
	uid_t	 pw_uid;
	gid_t	 pw_gid;
	char	*pw_gecos, *pw_dir, *pw_shell;
};
struct group {
	char	*gr_name, *gr_passwd;
	gid_t	 gr_gid;
	char	**gr_mem;
};
struct passwd *getpwuid(uid_t uid);
struct passwd *getpwnam(const char *name);
int getpwuid_r(uid_t, struct passwd *, char *, size_t, struct passwd **);
int getpwnam_r(const char *, struct passwd *, char *, size_t,
    struct passwd **);
struct group *getgrgid(gid_t gid);
struct group *getgrnam(const char *name);
int getgrgid_r(gid_t, struct group *, char *, size_t, struct group **);
int getgrnam_r(const char *, struct group *, char *, size_t,
    struct group **);
int getgroups(int n, gid_t *list);
int setgroups(size_t n, const gid_t *list);
int initgroups(const char *user, gid_t gid);
uid_t getuid(void), geteuid(void);
gid_t getgid(void), getegid(void);
int setuid(uid_t), setgid(gid_t);

/* sys/mount.h, sys/statvfs.h: statfs() fails with ENOSYS. */
struct statfs {
	unsigned long	f_type, f_bsize, f_frsize, f_blocks, f_bfree,
			f_bavail, f_files, f_ffree, f_namelen, f_flags;
	struct { int __val[2]; } f_fsid;
};
struct statvfs {
	unsigned long	f_bsize, f_frsize, f_blocks, f_bfree, f_bavail,
			f_files, f_ffree, f_favail, f_fsid, f_flag, f_namemax;
};
int statfs(const char *path, struct statfs *buf);
int fstatfs(int fd, struct statfs *buf);
int statvfs(const char *path, struct statvfs *buf);
int mount(const char *, const char *, const char *, unsigned long,
    const void *);
int umount2(const char *, int);

/* mntent.h: no mount table. */
struct mntent {
	char	*mnt_fsname, *mnt_dir, *mnt_type, *mnt_opts;
	int	 mnt_freq, mnt_passno;
};
#include <stdio.h>
FILE *setmntent(const char *file, const char *mode);
struct mntent *getmntent(FILE *f);
int endmntent(FILE *f);

/* termios.h: no terminal. */
typedef unsigned int tcflag_t, speed_t;
typedef unsigned char cc_t;
struct termios {
	tcflag_t	c_iflag, c_oflag, c_cflag, c_lflag;
	cc_t		c_line, c_cc[32];
	speed_t		__c_ispeed, __c_ospeed;
};
struct winsize { unsigned short ws_row, ws_col, ws_xpixel, ws_ypixel; };
int tcgetattr(int fd, struct termios *t);
int tcsetattr(int fd, int act, const struct termios *t);
#define TCSANOW		0
#define TCSAFLUSH	2
#define TIOCGWINSZ	0x5413
#define TIOCNOTTY	0x5422

/* signal.h: wasi-libc's emulation has signal() and raise() only. */
#define SIG_BLOCK	0
#define SIG_UNBLOCK	1
#define SIG_SETMASK	2
#define SA_RESTART	0x10000000
struct sigaction {
	void		(*sa_handler)(int);
	void		(*sa_sigaction)(int, void *, void *);
	sigset_t	sa_mask;
	int		sa_flags;
};
int sigaction(int sig, const struct sigaction *sa, struct sigaction *old);
int sigprocmask(int how, const sigset_t *set, sigset_t *old);
int kill(pid_t pid, int sig);

/* sys/wait.h and unistd.h: no processes. */
#define WNOHANG		1
#define WIFEXITED(s)	(((s) & 0x7f) == 0)
#define WEXITSTATUS(s)	(((s) >> 8) & 0xff)
#define WIFSIGNALED(s)	(((s) & 0x7f) != 0 && ((s) & 0x7f) != 0x7f)
#define WTERMSIG(s)	((s) & 0x7f)
pid_t fork(void);
pid_t vfork(void);
pid_t waitpid(pid_t pid, int *status, int options);
pid_t setsid(void);
int execv(const char *path, char *const argv[]);
int execvp(const char *file, char *const argv[]);
int pipe(int fd[2]);
int dup(int fd);
int dup2(int fd, int fd2);
int fchdir(int fd);
int chown(const char *path, uid_t uid, gid_t gid);
int lchown(const char *path, uid_t uid, gid_t gid);
int fchown(int fd, uid_t uid, gid_t gid);
int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flags);
int chmod(const char *path, mode_t mode);
int fchmod(int fd, mode_t mode);
int fchmodat(int dirfd, const char *path, mode_t mode, int flags);
int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev);
int mkfifo(const char *path, mode_t mode);
mode_t umask(mode_t mask);

/* sys/inotify.h: tail -f is not supported. */
struct inotify_event { int wd; uint32_t mask, cookie, len; char name[]; };
#define IN_MODIFY	2
int inotify_init(void);
int inotify_add_watch(int fd, const char *path, uint32_t mask);

/* sys/xattr.h: no extended attributes. */
ssize_t getxattr(const char *, const char *, void *, size_t);
ssize_t lgetxattr(const char *, const char *, void *, size_t);
ssize_t fgetxattr(int, const char *, void *, size_t);
ssize_t listxattr(const char *, char *, size_t);
ssize_t llistxattr(const char *, char *, size_t);
ssize_t flistxattr(int, char *, size_t);
int setxattr(const char *, const char *, const void *, size_t, int);
int lsetxattr(const char *, const char *, const void *, size_t, int);
int fsetxattr(int, const char *, const void *, size_t, int);

/* syslog.h */
#define LOG_PID		1
#define LOG_AUTH	(4 << 3)
#define LOG_DAEMON	(3 << 3)
void openlog(const char *ident, int opt, int facility);
void vsyslog(int prio, const char *fmt, __builtin_va_list ap);
void closelog(void);

/* time.h, sys/time.h (date): no time zones (UTC), no setting the clock. */
struct timeval;
struct timezone;
void tzset(void);
int settimeofday(const struct timeval *tv, const struct timezone *tz);

/* sys/resource.h: wasi-libc's struct rusage has the two times only; time
 * -v prints the rest too (all 0: wait4() measures nothing here). */
#include <sys/resource.h>
#define rusage	tbx_rusage
struct tbx_rusage {
	struct timeval	ru_utime, ru_stime;
	long		ru_maxrss, ru_ixrss, ru_idrss, ru_isrss, ru_minflt,
			ru_majflt, ru_nswap, ru_inblock, ru_oublock, ru_msgsnd,
			ru_msgrcv, ru_nsignals, ru_nvcsw, ru_nivcsw;
};

/* sys/syscall.h: no system calls by number (taskset.c, built for nproc:
 * sched_getaffinity fails, so nproc counts 1). */
#define __NR_sched_setaffinity	203
#define __NR_sched_getaffinity	204
long syscall(long n, ...);

/* sys/personality.h (uname.c's linux32, never registered) */
int personality(int);

/* paths.h */
#define _PATH_DEFPATH	"/usr/bin:/bin"
#define _PATH_STDPATH	"/usr/bin:/bin:/usr/sbin:/sbin"

/* netdb.h, net/if.h: toybox's lib/net.c is not built. */
#define IF_NAMESIZE	16

#endif /* TBX_WASI_H */
