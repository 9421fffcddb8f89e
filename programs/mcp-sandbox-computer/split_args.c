/*
 * split_args.c - `mcp-sandbox-computer split-args PROGRAM [ARG...]`: the
 * arguments of one server command line that service PROGRAM takes, shell
 * quoted on one line, so that scripts/run-split hands each process of a
 * split server only its own options (eval "set -- $(...)").
 */
#include "split_args.h"

#include <stdio.h>
#include <stdlib.h>

#include "msc_cfg.h"

/* Writes s as one single-quoted shell word. */
static void
put_quoted(const char *s)
{
	putchar('\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

int
split_args_main(int argc, char **argv)
{
	unsigned prog;
	char **out;
	int n;

	if (argc < 2 || msc_cfg_prog_by_name(argv[1], &prog) != 0) {
		fprintf(stderr, "usage: mcp-sandbox-computer split-args "
				"msc-edge|msc-session|msc-inventory|msc-*-driver "
				"[ARG...]\n");
		return 2;
	}
	if ((out = calloc((size_t)argc, sizeof(*out))) == NULL)
		return 1;
	/* argv[1] is the program: what follows is the command line. */
	n = msc_cfg_select(prog, argc - 1, argv + 1, out);
	for (int i = 0; i < n; i++) {
		if (i > 0)
			putchar(' ');
		put_quoted(out[i]);
	}
	putchar('\n');
	free(out);
	return fflush(stdout) == 0 ? 0 : 1;
}
