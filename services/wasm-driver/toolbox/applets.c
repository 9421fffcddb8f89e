/* applets.c - the applet table and dispatch by name. */
#include "toolbox.h"

#include <stdlib.h>
#include <string.h>

/* Sorted by name (strcmp order): looked up with bsearch. */
static const struct tb_applet applets[] = {
	{ "[", applet_toybox },
	{ "ash", applet_sh },
	{ "awk", applet_awk },
	{ "base32", applet_toybox },
	{ "base64", applet_toybox },
	{ "basename", applet_toybox },
	{ "bash", applet_sh },
	{ "cat", applet_toybox },
	{ "cp", applet_toybox },
	{ "cut", applet_toybox },
	{ "date", applet_toybox },
	{ "diff", applet_toybox },
	{ "dirname", applet_toybox },
	{ "du", applet_toybox },
	{ "echo", applet_toybox },
	{ "env", applet_toybox },
	{ "false", applet_toybox },
	{ "find", applet_toybox },
	{ "grep", applet_toybox },
	{ "head", applet_toybox },
	{ "install", applet_toybox },
	{ "ln", applet_toybox },
	{ "ls", applet_toybox },
	{ "md5sum", applet_toybox },
	{ "mkdir", applet_toybox },
	{ "mv", applet_toybox },
	{ "nl", applet_toybox },
	{ "nproc", applet_toybox },
	{ "paste", applet_toybox },
	{ "printf", applet_toybox },
	{ "pwd", applet_toybox },
	{ "readlink", applet_toybox },
	{ "realpath", applet_toybox },
	{ "rev", applet_toybox },
	{ "rm", applet_toybox },
	{ "rmdir", applet_toybox },
	{ "sed", applet_toybox },
	{ "seq", applet_toybox },
	{ "sh", applet_sh },
	{ "sha1sum", applet_toybox },
	{ "sha224sum", applet_toybox },
	{ "sha256sum", applet_toybox },
	{ "sha384sum", applet_toybox },
	{ "sha512sum", applet_toybox },
	{ "sleep", applet_toybox },
	{ "sort", applet_toybox },
	{ "stat", applet_toybox },
	{ "tac", applet_toybox },
	{ "tail", applet_toybox },
	{ "tee", applet_toybox },
	{ "test", applet_toybox },
	{ "time", applet_toybox },
	{ "touch", applet_toybox },
	{ "tr", applet_toybox },
	{ "true", applet_toybox },
	{ "uname", applet_toybox },
	{ "uniq", applet_toybox },
	{ "wc", applet_toybox },
	{ "xargs", applet_toybox },
	{ "yes", applet_toybox },
};

static int
applet_cmp(const void *k, const void *e)
{
	return strcmp(k, ((const struct tb_applet *)e)->name);
}

const struct tb_applet *
tb_applet_find(const char *name)
{
	return bsearch(name, applets, sizeof(applets) / sizeof(applets[0]),
	    sizeof(applets[0]), applet_cmp);
}

void
tb_applet_print_list(FILE *out)
{
	for (size_t i = 0; i < sizeof(applets) / sizeof(applets[0]); i++)
		fprintf(out, "%s\n", applets[i].name);
}

int
tb_applet_run(struct tb_io *io, int argc, char **argv)
{
	const struct tb_applet *a;
	const char *name = argv[0];

	if (strncmp(name, "/bin/", 5) == 0 || strncmp(name, "/usr/bin/", 9) == 0
	    || strncmp(name, "/sbin/", 6) == 0 ||
	    strncmp(name, "/usr/sbin/", 10) == 0)
		name = tb_basename(name);
	if ((a = tb_applet_find(name)) == NULL)
		return -1;
	return a->fn(io, argc, argv);
}
