/*
 * split_args.c - `mcp-sandbox-computer split-args PROGRAM [ARG...]`: the
 * arguments of one server command line that service PROGRAM takes, shell
 * quoted on one line, so that scripts/run-split hands each process of a
 * split server only its own options (eval "set -- $(...)").
 */
#include "split_args.h"

#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "drivers.h"
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
	const struct msc_program *prog = NULL;
	char **out;
	int n;

	for (size_t i = 0; argc >= 2 && i < drivers_nsplit; i++)
		if (strcmp(drivers_split[i]->name, argv[1]) == 0)
			prog = drivers_split[i];
	if (prog == NULL) {
		fprintf(stderr, "usage: mcp-sandbox-computer split-args "
				"msc-edge|msc-session|msc-inventory|msc-*-driver "
				"[ARG...]\n");
		return 2;
	}
	if ((out = calloc((size_t)argc, sizeof(*out))) == NULL)
		return 1;
	/* argv[1] is the program: what follows is the command line. */
	n = msc_cfg_select(prog, drivers_split, drivers_nsplit, argc - 1,
	    argv + 1, out);
	for (int i = 0; i < n; i++) {
		if (i > 0)
			putchar(' ');
		put_quoted(out[i]);
	}
	putchar('\n');
	free(out);
	return fflush(stdout) == 0 ? 0 : 1;
}
