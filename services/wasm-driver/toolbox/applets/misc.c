/*
 * misc.c - the small applets toybox 0.8.9 has not in a form that runs here:
 * yes (a pipe stage cannot wait for its reader), nproc (toybox's is in
 * taskset, which needs sched_getaffinity), env and time (toybox's exec or
 * fork their command; here it runs in-process).
 */
#include "../toolbox.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/*
 * Pipe stages run one after another, so yes cannot wait for its reader:
 * it writes until its output refuses more (a pipe stage holds at most
 * TB_MEM_LIMIT bytes) or YES_MAX bytes, whichever comes first, in blocks.
 */
#define YES_MAX		((size_t)TB_MEM_LIMIT)
#define YES_BLOCK	8192

int
applet_yes(struct tb_io *io, int argc, char **argv)
{
	struct tb_buf line = { 0 }, block = { 0 };
	size_t written = 0;

	for (int i = 1; i < argc; i++) {
		if (i > 1)
			tb_buf_addc(&line, ' ');
		tb_buf_adds(&line, argv[i]);
	}
	if (argc < 2)
		tb_buf_addc(&line, 'y');
	tb_buf_addc(&line, '\n');
	do
		tb_buf_add(&block, line.data, line.len);
	while (block.len + line.len <= YES_BLOCK);
	while (written < YES_MAX) {
		size_t n = block.len;

		if (n > YES_MAX - written)
			n = YES_MAX - written;
		if (fwrite(block.data, 1, n, io->out) != n)
			break;
		written += n;
	}
	tb_buf_free(&block);
	tb_buf_free(&line);
	return 0;
}

int
applet_nproc(struct tb_io *io, int argc, char **argv)
{
	long n = 1;

	(void)argc, (void)argv;
#ifdef _SC_NPROCESSORS_ONLN
	n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
#endif
	fprintf(io->out, "%ld\n", n);
	return 0;
}

int
applet_env(struct tb_io *io, int argc, char **argv)
{
	struct tb_buf saved = { 0 };	/* char *name, char *old pairs */
	char **pairs;
	size_t npairs;
	int i = 1, rc = 0;

	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	for (; i < argc && strchr(argv[i], '=') != NULL &&
	    argv[i][0] != '='; i++) {
		char *eq = strchr(argv[i], '=');
		char *name = tb_xstrdup(argv[i]);
		const char *old;
		char *keep[2];

		name[eq - argv[i]] = '\0';
		old = getenv(name);
		keep[0] = name;
		keep[1] = old ? tb_xstrdup(old) : NULL;
		tb_buf_add(&saved, keep, sizeof(keep));
		setenv(name, eq + 1, 1);
	}
	if (i >= argc) {
		for (char **e = environ; *e != NULL; e++)
			fprintf(io->out, "%s\n", *e);
	} else if ((rc = tb_applet_run(io, argc - i, argv + i)) < 0) {
		tb_err(io, "env", "'%s': No such file or directory", argv[i]);
		rc = 127;
	}
	pairs = (char **)saved.data;
	npairs = saved.len / sizeof(char *);
	for (size_t k = npairs; k >= 2; k -= 2) {
		if (pairs[k - 1] != NULL)
			setenv(pairs[k - 2], pairs[k - 1], 1);
		else
			unsetenv(pairs[k - 2]);
		free(pairs[k - 2]);
		free(pairs[k - 1]);
	}
	tb_buf_free(&saved);
	return rc;
}

int
applet_time(struct tb_io *io, int argc, char **argv)
{
	struct timespec a, b;
	double real;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (argc > 1 && (rc = tb_applet_run(io, argc - 1, argv + 1)) < 0) {
		tb_err(io, "time", "can't execute '%s': No such file or "
		    "directory", argv[1]);
		rc = 127;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	real = (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	fflush(io->out);
	fprintf(io->err, "real\t%dm%.3fs\nuser\t0m0.000s\nsys\t0m0.000s\n",
	    (int)(real / 60), fmod(real, 60));
	return rc;
}
