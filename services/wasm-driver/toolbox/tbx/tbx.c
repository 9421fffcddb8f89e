/*
 * tbx.c - toybox's applets run inside the toolbox: the entry point the
 * runner (bwk/bwk.c: streams, allocations, exit, variables put back) calls
 * for each run, running find -exec's commands in-process (WASI has no fork
 * or exec), and lib/tty.c's terminal_size().
 *
 * Compiled like toybox's own files (tbx_shim.h ahead, toybox's headers).
 */
#include "toys.h"

#include "../toolbox.h"

/* Runs the toybox command argv[0] (its basename) to its end; its exit
 * status. Called by bwk_run(); exit() on the way unwinds to there. */
int
tbx_main(int argc, char **argv)
{
	char *slash = strrchr(argv[0], '/');
	struct toy_list *which = toy_find(slash != NULL ? slash + 1 : argv[0]);

	(void)argc;
	if (which == NULL || which == toy_list) {
		fprintf(stderr, "toybox: no applet %s\n", argv[0]);
		return 127;
	}
	toy_init(which, argv);
	which->toy_main();
	xexit();
	return toys.exitval;
}

/* lib/tty.c (not built: no terminal here): COLUMNS and LINES, if set. */
int
terminal_size(unsigned *xx, unsigned *yy)
{
	char *s;
	unsigned x = 0, y = 0;

	if ((s = getenv("COLUMNS")) != NULL)
		x = atoi(s);
	if ((s = getenv("LINES")) != NULL)
		y = atoi(s);
	if (x && xx != NULL)
		*xx = x;
	if (y && yy != NULL)
		*yy = y;
	return x || y;
}

int
tbx_xrun(char **argv)
{
	struct tb_io io = { stdin, stdout, stderr };
	int argc, rc;

	for (argc = 0; argv[argc] != NULL; argc++)
		;
	fflush(stdout);
	if ((rc = tb_applet_run(&io, argc, argv)) < 0) {
		errno = ENOENT;
		perror_msg("exec %s", argv[0]);
		rc = 127;
	}
	return rc;
}

int
applet_toybox(struct tb_io *io, int argc, char **argv)
{
	return bwk_run(io, argc, argv, tbx_main);
}
