/* applets.c - the applet table and dispatch by name. */
#include "toolbox.h"

#include <stdlib.h>
#include <string.h>

/* Sorted by name (strcmp order): looked up with bsearch. */
static const struct tb_applet applets[] = {
	{ "[", applet_test },
	{ "ash", applet_sh },
	{ "awk", applet_awk },
	{ "base64", applet_base64 },
	{ "basename", applet_basename },
	{ "bash", applet_sh },
	{ "cat", applet_cat },
	{ "cp", applet_cp },
	{ "cut", applet_cut },
	{ "date", applet_date },
	{ "diff", applet_diff },
	{ "dirname", applet_dirname },
	{ "du", applet_du },
	{ "echo", applet_echo },
	{ "env", applet_env },
	{ "false", applet_false },
	{ "find", applet_find },
	{ "grep", applet_grep },
	{ "head", applet_head },
	{ "ln", applet_ln },
	{ "ls", applet_ls },
	{ "md5sum", applet_md5sum },
	{ "mkdir", applet_mkdir },
	{ "mv", applet_mv },
	{ "nl", applet_nl },
	{ "nproc", applet_nproc },
	{ "paste", applet_paste },
	{ "printf", applet_printf },
	{ "pwd", applet_pwd },
	{ "readlink", applet_readlink },
	{ "realpath", applet_realpath },
	{ "rev", applet_rev },
	{ "rm", applet_rm },
	{ "rmdir", applet_rmdir },
	{ "sed", applet_sed },
	{ "seq", applet_seq },
	{ "sh", applet_sh },
	{ "sha256sum", applet_sha256sum },
	{ "sleep", applet_sleep },
	{ "sort", applet_sort },
	{ "stat", applet_stat },
	{ "tac", applet_tac },
	{ "tail", applet_tail },
	{ "tee", applet_tee },
	{ "test", applet_test },
	{ "time", applet_time },
	{ "touch", applet_touch },
	{ "tr", applet_tr },
	{ "true", applet_true },
	{ "uname", applet_uname },
	{ "uniq", applet_uniq },
	{ "wc", applet_wc },
	{ "xargs", applet_xargs },
	{ "yes", applet_yes },
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

const struct tb_applet *
tb_applet_table(size_t *np)
{
	*np = sizeof(applets) / sizeof(applets[0]);
	return applets;
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
