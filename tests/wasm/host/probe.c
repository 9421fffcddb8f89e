/*
 * probe.c - the guest program of the WASI host tests, compiled with
 * clang --target=wasm32-wasi. argv[1] picks what it does; file results
 * print "OK" or "ERR <strerror>" so the harness can check them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int
result(int r)
{
	if (r < 0)
		printf("ERR %s\n", strerror(errno));
	else
		printf("OK\n");
	return 0;
}

static int
cmd_read(const char *path)
{
	char buf[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return result(-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return result(-1);
	buf[n] = '\0';
	printf("DATA %s\n", buf);
	return 0;
}

static int
cmd_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return result(-1);
	if (write(fd, text, strlen(text)) < 0) {
		close(fd);
		return result(-1);
	}
	return result(close(fd));
}

/* openat() through a directory fd, as nftw-style code does. */
static int
cmd_openat(const char *dir, const char *path)
{
	char buf[256];
	int d = open(dir, O_RDONLY | O_DIRECTORY), fd;
	ssize_t n;

	if (d < 0)
		return result(-1);
	fd = openat(d, path, O_RDONLY);
	close(d);
	if (fd < 0)
		return result(-1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	printf("DATA %s\n", buf);
	return 0;
}

static int
cmd_ls(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return result(-1);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	printf("ENTRIES %d\n", n);
	return 0;
}

static int
cmd_readlink(const char *path)
{
	char buf[512];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return result(-1);
	buf[n] = '\0';
	printf("LINK %s\n", buf);
	return 0;
}

static int
cmd_stat(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return result(-1);
	printf("STAT %s %lld\n", S_ISDIR(st.st_mode) ? "dir" :
	    S_ISLNK(st.st_mode) ? "link" : S_ISREG(st.st_mode) ? "file" :
	    "other", (long long)st.st_size);
	return 0;
}

/* Seek, pread/pwrite, truncate, times and rename on one file. */
static int
cmd_fileops(void)
{
	struct timespec ts[2] = { { 1000000, 0 }, { 2000000, 0 } };
	char buf[16] = { 0 };
	struct stat st;
	int fd = open("fileops.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, "0123456789", 10) != 10 ||
	    lseek(fd, 2, SEEK_SET) != 2 || read(fd, buf, 3) != 3 ||
	    strcmp(buf, "234") != 0 || pwrite(fd, "ab", 2, 8) != 2 ||
	    pread(fd, buf, 4, 6) != 4 || memcmp(buf, "67ab", 4) != 0 ||
	    ftruncate(fd, 4) != 0 || fstat(fd, &st) != 0 || st.st_size != 4 ||
	    futimens(fd, ts) != 0 || fstat(fd, &st) != 0 ||
	    st.st_mtim.tv_sec != 2000000 || close(fd) != 0 ||
	    utimensat(AT_FDCWD, "fileops.txt", ts, 0) != 0 ||
	    rename("fileops.txt", "renamed.txt") != 0 ||
	    access("fileops.txt", F_OK) == 0 || mkdir("d1", 0755) != 0 ||
	    symlink("renamed.txt", "d1/../sl") != 0 ||
	    link("renamed.txt", "hard.txt") != 0 ||
	    stat("hard.txt", &st) != 0 || st.st_nlink != 2 ||
	    unlink("hard.txt") != 0 || unlink("sl") != 0 ||
	    rmdir("d1") != 0 || unlink("renamed.txt") != 0)
		return result(-1);
	return result(0);
}

static int
cmd_malloc(const char *mib)
{
	static char *volatile keep;
	long want = atol(mib), got = 0;

	/* Touch each block, or the compiler drops the unused malloc(). */
	while (got < want && (keep = malloc(1 << 20)) != NULL) {
		keep[got] = 1;
		got++;
	}
	printf("GOT %ld MiB\n", got);
	return 0;
}

static int
cmd_spam(const char *bytes)
{
	static char buf[65536];
	long left = atol(bytes);

	memset(buf, 'x', sizeof(buf));
	while (left > 0) {
		size_t n = left < (long)sizeof(buf) ? (size_t)left : sizeof(buf);

		if (fwrite(buf, 1, n, stdout) != n)
			return 1;
		left -= (long)n;
	}
	return 0;
}

static int
cmd_sleep(const char *ms)
{
	struct timespec a, b, d = { 0, atol(ms) * 1000000L };

	clock_gettime(CLOCK_MONOTONIC, &a);
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("SLEPT %lld\n", (long long)((b.tv_sec - a.tv_sec) * 1000 +
	    (b.tv_nsec - a.tv_nsec) / 1000000));
	return 0;
}

#pragma clang diagnostic ignored "-Winfinite-recursion"

__attribute__((noinline)) static int
deep(int n)
{
	if (n == -1)
		return 0;
	return deep(n + 1) * 3 + n;
}

__attribute__((noinline)) static int
deep_mem(int n)
{
	volatile char big[4096];

	big[n & 4095] = (char)n;
	return deep_mem(n + 1) + big[(n * 7) & 4095];
}

static int
cmd_cat(void)
{
	char buf[4096];
	size_t n;

	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		fwrite(buf, 1, n, stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "hello";
	const char *a = argc > 2 ? argv[2] : "";
	const char *b = argc > 3 ? argv[3] : "";
	char cwd[512];

	/* What the toolbox does: PWD is the working directory. */
	if (getenv("PWD") != NULL && strcmp(c, "nochdir") != 0)
		chdir(getenv("PWD"));
	if (strcmp(c, "hello") == 0)
		return printf("hello from wasm\n") < 0;
	if (strcmp(c, "args") == 0) {
		for (int i = 0; i < argc; i++)
			printf("[%s]\n", argv[i]);
		return 0;
	}
	if (strcmp(c, "env") == 0) {
		extern char **environ;

		for (char **e = environ; *e != NULL; e++)
			printf("%s\n", *e);
		return 0;
	}
	if (strcmp(c, "exit") == 0)
		return atoi(a);
	if (strcmp(c, "procexit") == 0)
		exit(atoi(a));
	if (strcmp(c, "stderr") == 0)
		return fprintf(stderr, "to stderr\n") < 0;
	if (strcmp(c, "cat") == 0)
		return cmd_cat();
	if (strcmp(c, "pwd") == 0 || strcmp(c, "nochdir") == 0)
		return printf("PWD %s\n", getcwd(cwd, sizeof(cwd))) < 0;
	if (strcmp(c, "read") == 0)
		return cmd_read(a);
	if (strcmp(c, "write") == 0)
		return cmd_write(a, b);
	if (strcmp(c, "openat") == 0)
		return cmd_openat(a, b);
	if (strcmp(c, "ls") == 0)
		return cmd_ls(a);
	if (strcmp(c, "mkdir") == 0)
		return result(mkdir(a, 0755));
	if (strcmp(c, "rmdir") == 0)
		return result(rmdir(a));
	if (strcmp(c, "unlink") == 0)
		return result(unlink(a));
	if (strcmp(c, "rename") == 0)
		return result(rename(a, b));
	if (strcmp(c, "link") == 0)
		return result(link(a, b));
	if (strcmp(c, "symlink") == 0)
		return result(symlink(a, b));
	if (strcmp(c, "readlink") == 0)
		return cmd_readlink(a);
	if (strcmp(c, "stat") == 0)
		return cmd_stat(a);
	if (strcmp(c, "fileops") == 0)
		return cmd_fileops();
	if (strcmp(c, "malloc") == 0)
		return cmd_malloc(a);
	if (strcmp(c, "spam") == 0)
		return cmd_spam(a);
	if (strcmp(c, "sleep") == 0)
		return cmd_sleep(a);
	if (strcmp(c, "unreachable") == 0)
		__builtin_trap();
	if (strcmp(c, "oob") == 0)
		return *(volatile int *)(uintptr_t)0xfffffff0u;
	if (strcmp(c, "divzero") == 0) {
		volatile int z = 0;

		return 10 / z;
	}
	if (strcmp(c, "recurse") == 0)
		return deep(argc);
	if (strcmp(c, "recurse-mem") == 0)
		return deep_mem(argc);
	if (strcmp(c, "loop") == 0) {
		for (volatile unsigned long i = 0;; i++)
			;
	}
	fprintf(stderr, "probe: unknown command %s\n", c);
	return 2;
}
