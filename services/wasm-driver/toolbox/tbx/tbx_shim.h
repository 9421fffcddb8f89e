/*
 * tbx_shim.h - included ahead of every source file of toybox (third_party/,
 * see ../README.md), never by our own code other than tbx.c.
 *
 * On top of bwk_shim.h (the applet's streams as stdin/stdout/stderr, a
 * run's allocations freed when it ends, exit() ending the run, variables
 * in the segment that is put back before each run), toybox works on file
 * descriptors: 0, 1 and 2 here are the applet's streams, not the
 * process's, so read/write/close/lseek/fstat/isatty/fdopen on them go to
 * those streams (tbx_io.c). What WASI lacks is made up there: permission
 * bits and block counts in stat(), "." and ".." in directories (not all
 * WASI hosts list them), fchdir() back to a directory opened by name,
 * UTIME_NOW, "Is a directory" when reading one. Descriptors a run opens are closed when it
 * ends. /dev/null, /dev/stdin, /dev/stdout and /dev/stderr are emulated (a
 * WASI sandbox has no /dev). Commands run in-process (tbx_proc.c). The stdio calls that name no stream, and libc functions that
 * return memory toybox frees, are mapped too.
 */
#ifndef TBX_SHIM_H
#define TBX_SHIM_H

#include "../bwk/bwk_shim.h"
#undef main
#define main	tbx_unused_main	/* toybox's main.c: ours is tbx_main */
/* _xexit() ends with _exit(): the run's end, as exit() (bwk_shim.h). */
#define _exit(...)	bwk_exit(__VA_ARGS__)

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The stdio calls that name no stream use the applet's. */
int tbx_puts(const char *s);
void tbx_perror(const char *s);
#define printf(...)	fprintf(stdout, __VA_ARGS__)
#define vprintf(...)	vfprintf(stdout, __VA_ARGS__)
#define puts(...)	tbx_puts(__VA_ARGS__)
#define putchar(c)	putc((c), stdout)
#define getchar()	getc(stdin)
#define perror(...)	tbx_perror(__VA_ARGS__)

/* Functions of libc that return memory toybox frees (bwk.c). */
char *bwk_strndup(const char *s, size_t n);
ssize_t bwk_getdelim(char **lp, size_t *np, int delim, FILE *f);
ssize_t bwk_getline(char **lp, size_t *np, FILE *f);
char *bwk_getcwd(char *buf, size_t n);
#define strndup(...)	bwk_strndup(__VA_ARGS__)
#define getdelim(...)	bwk_getdelim(__VA_ARGS__)
#define getline(...)	bwk_getline(__VA_ARGS__)
#define getcwd(...)	bwk_getcwd(__VA_ARGS__)

ssize_t tbx_read(int fd, void *buf, size_t n);
ssize_t tbx_write(int fd, const void *buf, size_t n);
int tbx_open(const char *path, int flags, ...);
int tbx_openat(int dirfd, const char *path, int flags, ...);
int tbx_close(int fd);
off_t tbx_lseek(int fd, off_t off, int whence);
int tbx_fstat(int fd, struct stat *st);
int tbx_isatty(int fd);
FILE *tbx_fdopen(int fd, const char *mode);
DIR *tbx_opendir(const char *path);
DIR *tbx_fdopendir(int fd);
struct dirent *tbx_readdir(DIR *d);
int tbx_closedir(DIR *d);
int tbx_setvbuf(FILE *f, char *buf, int mode, size_t n);
int tbx_stat(const char *path, struct stat *st);
int tbx_lstat(const char *path, struct stat *st);
int tbx_fstatat(int dirfd, const char *path, struct stat *st, int flags);
int tbx_fchdir(int fd);
int tbx_utimensat(int dirfd, const char *path, const struct timespec ts[2],
    int flags);
int tbx_futimens(int fd, const struct timespec ts[2]);
#define read(...)	tbx_read(__VA_ARGS__)
#define write(...)	tbx_write(__VA_ARGS__)
#define open(...)	tbx_open(__VA_ARGS__)
#define openat(...)	tbx_openat(__VA_ARGS__)
#define close(...)	tbx_close(__VA_ARGS__)
#undef lseek	/* wasi-libc has a macro */
#define lseek(...)	tbx_lseek(__VA_ARGS__)
#define fstat(...)	tbx_fstat(__VA_ARGS__)
#define isatty(...)	tbx_isatty(__VA_ARGS__)
#define fdopen(...)	tbx_fdopen(__VA_ARGS__)
#define opendir(...)	tbx_opendir(__VA_ARGS__)
#define fdopendir(...)	tbx_fdopendir(__VA_ARGS__)
#define readdir(...)	tbx_readdir(__VA_ARGS__)
#define closedir(...)	tbx_closedir(__VA_ARGS__)
#define setvbuf(...)	tbx_setvbuf(__VA_ARGS__)
#define stat(...)	tbx_stat(__VA_ARGS__)
#define lstat(...)	tbx_lstat(__VA_ARGS__)
#define fstatat(...)	tbx_fstatat(__VA_ARGS__)
#define fchdir(...)	tbx_fchdir(__VA_ARGS__)
#define utimensat(...)	tbx_utimensat(__VA_ARGS__)
#define futimens(...)	tbx_futimens(__VA_ARGS__)

/* Processes and the environment, in-process (tbx_proc.c): xrun() and
 * xexec() run the command as an applet, vfork() enters a pretend child
 * (its xexec() returns, its changes to 0, 1 and 2 are undone), the wait
 * functions give its status, and what a run does to the environment is
 * undone when it ends. */
int tbx_xrun(char **argv);
void tbx_xexec(char **argv);
pid_t tbx_vfork(void);
pid_t tbx_waitpid(pid_t pid, int *status, int options);
pid_t tbx_wait(int *status);
struct rusage;
pid_t tbx_wait4(pid_t pid, int *status, int options, struct rusage *ru);
int tbx_setenv(const char *name, const char *val, int overwrite);
int tbx_unsetenv(const char *name);
#define vfork	tbx_vfork
#define waitpid	tbx_waitpid
#define wait	tbx_wait
#define wait4	tbx_wait4
#define setenv	tbx_setenv
#define unsetenv	tbx_unsetenv
/* tbx_io.c, for the pretend child: saves 0, 1 and 2; puts them back. */
void tbx_io_std_save(void);
void tbx_io_std_restore(void);
/* realpath, readlink -f: by name (tbx.c); toybox's own walks with
 * openat(fd, ".."), which WASI refuses (a directory's descriptor is a
 * capability for what is below it). */
char *tbx_xabspath(char *path, int flags);
#ifndef TBX_XWRAP	/* lib/xwrap.c keeps its own (unused) xrun, xexec... */
#define xrun	tbx_xrun
#define xexec	tbx_xexec
#define xabspath	tbx_xabspath
#endif

#endif /* TBX_SHIM_H */
