/*
 * tbx_io.c - toybox's descriptors 0, 1 and 2 as the applet's streams, and
 * the descriptors a run opens (tbx_shim.h maps the calls here).
 *
 * Compiled like toybox's own files (tbx_shim.h ahead), so that under WASI
 * this file's variables are in the segment put back before each run: the
 * lists below are the running applet's, a nested run gets empty ones and
 * the outer run's come back after it.
 */
#include "../toolbox.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#undef read
#undef write
#undef open
#undef openat
#undef close
#undef lseek
#undef fstat
#undef isatty
#undef fdopen
#undef opendir
#undef fdopendir
#undef readdir
#undef closedir
#undef setvbuf
#undef stat
#undef lstat
#undef fstatat
#undef fchdir
#undef utimensat
#undef futimens
#undef puts
#undef perror

/* What /dev/null opens as: no descriptor (WASI has no /dev). */
#define TBX_FD_NULL	0x3fff0000

/* Descriptors and directories the run opened and has not closed. */
#define TBX_TRACK	64
static int open_fds[TBX_TRACK];
static char *open_paths[TBX_TRACK];	/* a directory's, for fchdir() */
static int n_fds;
static DIR *open_dirs[TBX_TRACK];
static int dir_dots[TBX_TRACK];	/* of "." and "..", how many were read */
static int n_dirs;
/* 0, 1 or 2 closed: the next open of /dev/null takes its place (grep -s
 * closes 2 and opens /dev/null to silence its messages). */
static bool std_closed[3];
/* 0, 1 and 2 as they were before a pretend vfork() child (tbx_proc.c). */
static FILE *std_saved[3];
static bool std_closed_saved[3];

/* path: the absolute name of a directory opened by name, or NULL. */
static void
fd_track(int fd, char *path)
{
	if (fd >= 3 && fd != TBX_FD_NULL && n_fds < TBX_TRACK) {
		open_paths[n_fds] = path;
		open_fds[n_fds++] = fd;
	} else
		free(path);
}

static void
fd_untrack(int fd)
{
	for (int i = 0; i < n_fds; i++)
		if (open_fds[i] == fd) {
			free(open_paths[i]);
			open_fds[i] = open_fds[--n_fds];
			open_paths[i] = open_paths[n_fds];
			return;
		}
}

static int stat_fix(int rc, struct stat *st);

static FILE *
stdio_stream(int fd)
{
	return fd == 0 ? bwk_stdin : fd == 1 ? bwk_stdout : bwk_stderr;
}

ssize_t
tbx_read(int fd, void *buf, size_t n)
{
	size_t got;

	if (fd == TBX_FD_NULL)
		return 0;
	if (fd < 0 || fd > 2) {
		ssize_t r = read(fd, buf, n);
		struct stat st;

		/* WASI: EBADF for a directory */
		if (r < 0 && errno == EBADF && fstat(fd, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			errno = EISDIR;
		return r;
	}
	got = fread(buf, 1, n, stdio_stream(fd));
	if (got == 0 && ferror(stdio_stream(fd)))
		return -1;
	return (ssize_t)got;
}

ssize_t
tbx_write(int fd, const void *buf, size_t n)
{
	if (fd == TBX_FD_NULL)
		return (ssize_t)n;
	if (fd < 0 || fd > 2)
		return write(fd, buf, n);
	if (fwrite(buf, 1, n, stdio_stream(fd)) != n) {
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	return (ssize_t)n;
}

/* The descriptor a /dev path stands for, or -1 when it is none of ours. */
static int
dev_fd(const char *path)
{
	static const char *const names[] = { "/dev/stdin", "/dev/stdout",
	    "/dev/stderr" };

	if (strcmp(path, "/dev/null") == 0)
		return TBX_FD_NULL;
	for (int i = 0; i < 3; i++)
		if (strcmp(path, names[i]) == 0)
			return i;
	return -1;
}

/*
 * Open flags as WASI wants them: there O_RDONLY is a bit of its own (not
 * 0, as toybox assumes: touch opens with O_CREAT alone), and toybox's own
 * O_PATH and O_NOATIME (lib/portability.h: 010000000 and 01000000, as on
 * Linux, when libc has none) are unknown bits that make open() fail.
 */
static int
open_flags(int flags)
{
#ifdef __wasi__
	if (flags & 010000000)	/* O_PATH: only to name the file */
		flags = (flags & ~010000000 & ~O_ACCMODE) | O_RDONLY;
	flags &= ~01000000;	/* O_NOATIME */
	if ((flags & O_ACCMODE) == 0)
		flags |= O_RDONLY;
#endif
	return flags;
}

/* The closed standard descriptor fd becomes /dev/null; fd, or -1. */
static int
std_to_null(int fd)
{
	FILE *f = tb_null_stream(fd == 0 ? "r" : "w");

	if (f == NULL || bwk_track_stream(f) == NULL)
		return -1;
	if (fd == 0)
		bwk_stdin = f;
	else if (fd == 1)
		bwk_stdout = f;
	else
		bwk_stderr = f;
	std_closed[fd] = false;
	return fd;
}

int
tbx_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;

	if ((fd = dev_fd(path)) == TBX_FD_NULL)
		for (int i = 0; i < 3; i++)
			if (std_closed[i])
				return std_to_null(i);
	if (fd >= 0)
		return fd;
	va_start(ap, flags);
	mode = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	if ((fd = open(path, open_flags(flags), mode)) >= 0) {
		char *dir = NULL, cwd[4096];

		/* find opens "." to go back there with fchdir() */
		if (strcmp(path, ".") == 0 && getcwd(cwd, sizeof(cwd)) != NULL)
			dir = strdup(cwd);
		fd_track(fd, dir);
	}
	return fd;
}

int
tbx_openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;

	if (path[0] == '/' && (fd = dev_fd(path)) >= 0)
		return fd;
	va_start(ap, flags);
	mode = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	if ((fd = openat(dirfd, path, open_flags(flags), mode)) >= 0)
		fd_track(fd, NULL);
	return fd;
}

int
tbx_close(int fd)
{
	if (fd >= 0 && fd <= 2) {
		if (fd > 0)	/* (flushing an input stream drops what it read ahead) */
			fflush(stdio_stream(fd));
		std_closed[fd] = true;
		return 0;
	}
	if (fd == TBX_FD_NULL)
		return 0;
	fd_untrack(fd);
	return close(fd);
}

off_t
tbx_lseek(int fd, off_t off, int whence)
{
	if ((fd >= 0 && fd <= 2) || fd == TBX_FD_NULL) {
		errno = ESPIPE;
		return -1;
	}
	return lseek(fd, off, whence);
}

int
tbx_fstat(int fd, struct stat *st)
{
	if ((fd >= 0 && fd <= 2) || fd == TBX_FD_NULL) {
		memset(st, 0, sizeof(*st));
		st->st_mode = fd == TBX_FD_NULL ? S_IFCHR | 0666 :
		    S_IFIFO | 0600;
		return 0;
	}
	return stat_fix(fstat(fd, st), st);
}

int
tbx_isatty(int fd)
{
	(void)fd;
	errno = ENOTTY;
	return 0;
}

FILE *
tbx_fdopen(int fd, const char *mode)
{
	FILE *f;

	if (fd >= 0 && fd <= 2)
		return stdio_stream(fd);
	f = fd == TBX_FD_NULL ? tb_null_stream(mode) : fdopen(fd, mode);
	if (f == NULL)
		return NULL;
	fd_untrack(fd);	/* the stream owns it now, and the run the stream */
	return fd == TBX_FD_NULL ? bwk_track_stream(f) :
	    bwk_track_stream_buffered(f);
}

static DIR *
dir_track(DIR *d)
{
	if (d != NULL && n_dirs < TBX_TRACK) {
		dir_dots[n_dirs] = 0;
		open_dirs[n_dirs++] = d;
	}
	return d;
}

static int
dir_index(DIR *d)
{
	for (int i = 0; i < n_dirs; i++)
		if (open_dirs[i] == d)
			return i;
	return -1;
}

DIR *
tbx_opendir(const char *path)
{
	return dir_track(opendir(path));
}

DIR *
tbx_fdopendir(int fd)
{
	DIR *d = fdopendir(fd);

	if (d != NULL)
		fd_untrack(fd);
	return dir_track(d);
}

/* Under WASI "." and ".." come first whether the host lists them or not
 * (ls -a); natively readdir() as it is. */
struct dirent *
tbx_readdir(DIR *d)
{
#ifdef __wasi__
	static union {
		struct dirent	d;
		char		b[sizeof(struct dirent) + 3];
	} dot;
	int i = dir_index(d);
	struct dirent *e;

	if (i >= 0 && dir_dots[i] < 2) {
		memset(&dot, 0, sizeof(dot));
		dot.d.d_type = DT_DIR;
		strcpy(dot.d.d_name, dir_dots[i]++ == 0 ? "." : "..");
		return &dot.d;
	}
	while ((e = readdir(d)) != NULL && i >= 0 &&
	    (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0))
		;
	return e;
#else
	return readdir(d);
#endif
}

int
tbx_closedir(DIR *d)
{
	int i = dir_index(d);

	if (i >= 0) {
		open_dirs[i] = open_dirs[--n_dirs];
		dir_dots[i] = dir_dots[n_dirs];
	}
	return closedir(d);
}

int
tbx_setvbuf(FILE *f, char *buf, int mode, size_t n)
{
	/* toybox makes stdout unbuffered or line buffered for its process;
	 * here stdout is the caller's stream and stays as it is. */
	(void)f, (void)buf, (void)mode, (void)n;
	return 0;
}

int
tbx_puts(const char *s)
{
	return fputs(s, bwk_stdout) < 0 ? EOF : putc('\n', bwk_stdout);
}

void
tbx_perror(const char *s)
{
	if (s != NULL && *s != '\0')
		fprintf(bwk_stderr, "%s: %s\n", s, strerror(errno));
	else
		fprintf(bwk_stderr, "%s\n", strerror(errno));
}

/* WASI reports no permission bits and no blocks: rw-r--r-- for files,
 * rwxr-xr-x for directories, blocks from the size. */
static int
stat_fix(int rc, struct stat *st)
{
#ifdef __wasi__
	if (rc == 0 && (st->st_mode & 07777) == 0)
		st->st_mode |= S_ISDIR(st->st_mode) ? 0755 :
		    S_ISLNK(st->st_mode) ? 0777 : 0644;
	if (rc == 0 && st->st_blocks == 0 && st->st_size > 0)
		st->st_blocks = (st->st_size + 4095) / 4096 * 8;
#else
	(void)st;
#endif
	return rc;
}

int
tbx_stat(const char *path, struct stat *st)
{
	return stat_fix(stat(path, st), st);
}

int
tbx_lstat(const char *path, struct stat *st)
{
	return stat_fix(lstat(path, st), st);
}

int
tbx_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	int rc = fstatat(dirfd, path, st, flags);

#ifdef __wasi__
	/* ".." of a directory's descriptor is outside what it grants (ls
	 * -a): the directory itself stands in (at the root it is right). */
	if (rc != 0 && strcmp(path, "..") == 0 && dirfd >= 0)
		rc = fstat(dirfd, st);
#endif
	return stat_fix(rc, st);
}

int
tbx_fchdir(int fd)
{
	for (int i = 0; i < n_fds; i++)
		if (open_fds[i] == fd && open_paths[i] != NULL)
			return chdir(open_paths[i]);
#ifdef __wasi__
	errno = ENOSYS;	/* find -execdir: not supported */
	return -1;
#else
	return fchdir(fd);
#endif
}

/* Some WASI hosts reject UTIME_NOW: the time itself instead. */
static const struct timespec *
times_now(const struct timespec ts[2], struct timespec out[2])
{
	struct timespec now;

	if (ts == NULL || (ts[0].tv_nsec != UTIME_NOW &&
	    ts[1].tv_nsec != UTIME_NOW))
		return ts;
	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < 2; i++)
		out[i] = ts[i].tv_nsec == UTIME_NOW ? now : ts[i];
	return out;
}

int
tbx_utimensat(int dirfd, const char *path, const struct timespec ts[2],
    int flags)
{
	struct timespec t[2];

	return utimensat(dirfd, path, times_now(ts, t), flags);
}

int
tbx_futimens(int fd, const struct timespec ts[2])
{
	struct timespec t[2];

	if (fd >= 0 && fd <= 2) {
		errno = EBADF;
		return -1;
	}
	return futimens(fd, times_now(ts, t));
}

void
tbx_io_std_save(void)
{
	for (int i = 0; i < 3; i++) {
		std_saved[i] = stdio_stream(i);
		std_closed_saved[i] = std_closed[i];
	}
}

/* A stream the child put in place of one is closed (std_to_null's). */
void
tbx_io_std_restore(void)
{
	FILE **cur[3] = { &bwk_stdin, &bwk_stdout, &bwk_stderr };

	for (int i = 0; i < 3; i++) {
		if (*cur[i] != std_saved[i]) {
			fclose(*cur[i]);
			*cur[i] = std_saved[i];
		}
		std_closed[i] = std_closed_saved[i];
	}
}

void
tbx_io_close_all(void)
{
	while (n_fds > 0) {
		n_fds--;
		free(open_paths[n_fds]);
		close(open_fds[n_fds]);
	}
	while (n_dirs > 0)
		closedir(open_dirs[--n_dirs]);
}
