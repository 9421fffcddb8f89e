/*
 * main.c - entry point of the toolbox ("busybox" multi-call program).
 *
 * Run as "busybox <applet> args..." (argv[0] names no applet) or through
 * an applet name as argv[0]. Under WASI a PWD that is an absolute path
 * becomes the working directory: that is how the host passes it (wasi-libc
 * itself always starts in "/"). Natively the inherited directory is used.
 */
#include "toolbox.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
usage(FILE *out)
{
	fputs("BusyBox-style multi-call toolbox (WebAssembly).\n"
	    "Usage: busybox <applet> [arguments...]\n"
	    "   or: busybox --list\n"
	    "   or: busybox sh -c '<command line>'\n"
	    "Applets:\n", out);
}

int
main(int argc, char **argv)
{
	struct tb_io io = { stdin, stdout, stderr };
	const char *name = argc > 0 ? tb_basename(argv[0]) : "busybox";
	const struct tb_applet *a;
	int rc;

#ifdef __wasi__
	const char *pwd = getenv("PWD");

	if (pwd != NULL && pwd[0] == '/')
		(void)chdir(pwd);
#endif
	if ((a = tb_applet_find(name)) == NULL) {
		if (argc < 2 || strcmp(argv[1], "--help") == 0) {
			usage(stdout);
			tb_applet_print_list(stdout);
			return 0;
		}
		if (strcmp(argv[1], "--list") == 0) {
			tb_applet_print_list(stdout);
			return 0;
		}
		argc--;
		argv++;
		if ((a = tb_applet_find(argv[0])) == NULL) {
			fprintf(stderr, "busybox: applet not found: %s\n",
			    argv[0]);
			tb_applet_print_list(stdout);
			return 2;
		}
	}
	rc = a->fn(&io, argc, argv);
	fflush(stdout);
	fflush(stderr);
	return rc & 0xff;
}
