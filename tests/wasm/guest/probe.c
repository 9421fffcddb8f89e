/*
 * probe.c - a small WASI program for the wasm backend's tests: each
 * subcommand exercises one thing the host must get right.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
cat(FILE *in)
{
	char buf[4096];
	size_t n;

	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, stdout);
	return 0;
}

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "probe: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fputs(text, f);
	return fclose(f) == 0 ? 0 : 1;
}

static int
read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	int rv;

	if (f == NULL) {
		fprintf(stderr, "probe: %s: %s\n", path, strerror(errno));
		return 1;
	}
	rv = cat(f);
	fclose(f);
	return rv;
}

/*
 * A sparse file of mib MiB (ftruncate: a hole, no blocks), then a 4 KiB
 * block written every 64 KiB of it: prints how many went in and what
 * stopped them.
 */
static int
sparse(const char *path, long mib)
{
	static char block[4096];
	off_t size = (off_t)mib << 20, off = 0;
	long n = 0;
	ssize_t r = 0;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || ftruncate(fd, size) != 0) {
		fprintf(stderr, "probe: %s: %s\n", path, strerror(errno));
		return 1;
	}
	memset(block, 'x', sizeof(block));
	for (; off < size; off += 65536, n++)
		if ((r = pwrite(fd, block, sizeof(block), off)) !=
		    (ssize_t)sizeof(block))
			break;
	printf("wrote %ld blocks: %s\n", n, off >= size ? "all" :
	    r < 0 ? strerror(errno) : "short write");
	close(fd);
	return off >= size ? 0 : 4;
}

/* Keeps the compiler from dropping allocations nobody reads. */
static char *volatile sink;

/* Allocates n MiB and touches it; reports how far it got. */
static int
alloc(long mib)
{
	long got = 0;

	for (; got < mib; got++) {
		char *p = malloc(1 << 20);

		if (p == NULL)
			break;
		memset(p, 1, 1 << 20);
		sink = p;
	}
	printf("allocated %ld MiB\n", got);
	return got == mib ? 0 : 3;
}

static volatile unsigned long spin;

int
main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (strcmp(cmd, "echo") == 0) {
		for (int i = 2; i < argc; i++)
			printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
		return 0;
	}
	if (strcmp(cmd, "cat") == 0)
		return cat(stdin);
	if (strcmp(cmd, "write") == 0 && argc == 4)
		return write_file(argv[2], argv[3]);
	if (strcmp(cmd, "read") == 0 && argc == 3)
		return read_file(argv[2]);
	if (strcmp(cmd, "exit") == 0 && argc == 3)
		return atoi(argv[2]);
	if (strcmp(cmd, "sparse") == 0 && argc == 4)
		return sparse(argv[2], atol(argv[3]));
	if (strcmp(cmd, "loop") == 0)
		for (;;)
			spin++;
	if (strcmp(cmd, "alloc") == 0 && argc == 3)
		return alloc(atol(argv[2]));
	if (strcmp(cmd, "stderr") == 0) {
		fprintf(stderr, "to stderr\n");
		return 0;
	}
	/* Anything else: print argv, one element per line. */
	for (int i = 0; i < argc; i++)
		printf("[%s]\n", argv[i]);
	return 0;
}
