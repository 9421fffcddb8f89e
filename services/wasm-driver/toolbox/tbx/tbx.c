/*
 * tbx.c - toybox's applets run inside the toolbox: the entry point the
 * runner (bwk/bwk.c: streams, allocations, exit, variables put back) calls
 * for each run, xabspath() by name, and lib/tty.c's terminal_size()
 * (processes and the environment: tbx_proc.c).
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

/* Appends the components of path (made absolute from the current
 * directory) to *todo, last first, so that they pop in order. */
static void
push_components(struct string_list **todo, char *path)
{
	char *cwd = *path == '/' ? NULL : xgetcwd();
	char *full = cwd != NULL ? xmprintf("%s/%s", cwd, path) : xstrdup(path);
	char *s, *e;

	free(cwd);
	for (e = full + strlen(full); e > full;) {
		for (s = e; s > full && s[-1] != '/'; s--)
			;
		if (e > s) {
			struct string_list *n = xmalloc(sizeof(*n) + (e - s) + 1);

			memcpy(n->str, s, e - s);
			n->str[e - s] = 0;
			n->next = *todo;
			*todo = n;
		}
		e = s > full ? s - 1 : full;
	}
	free(full);
}

/*
 * xabspath() (lib/xwrap.c) by name: the absolute path with "." and ".."
 * gone and symlinks followed (flags as there: ABS_PATH all but the last
 * must exist, ABS_FILE the last too, ABS_KEEP / ABS_LAST do not follow
 * symlinks before / at the last). NULL with errno when it cannot.
 */
char *
tbx_xabspath(char *path, int flags)
{
	struct string_list *todo = NULL;
	char *done = xstrdup(""), *next, link[4096];
	int links = 0;

	if (flags & ABS_FILE)
		flags |= ABS_PATH;
	if (flags & ABS_KEEP)
		flags |= ABS_LAST;
	push_components(&todo, path);
	while (todo != NULL) {
		struct string_list *n = todo;
		int last = n->next == NULL;
		struct stat st;
		ssize_t len;

		todo = n->next;
		if (!strcmp(n->str, ".") || !strcmp(n->str, "..")) {
			if (n->str[1] == '.' && strrchr(done, '/') != NULL)
				*strrchr(done, '/') = 0;
			free(n);
			continue;
		}
		next = xmprintf("%s/%s", done, n->str);
		free(n);
		if (lstat(next, &st) != 0) {
			if ((last ? flags & ABS_FILE : flags & ABS_PATH) ||
			    errno != ENOENT)
				goto fail;
		} else if (S_ISLNK(st.st_mode) &&
		    !((flags & (last ? ABS_LAST : ABS_KEEP)))) {
			if (++links > 40) {
				errno = ELOOP;
				goto fail;
			}
			if ((len = readlink(next, link, sizeof(link) - 1)) < 0)
				goto fail;
			link[len] = 0;
			free(next);
			if (*link == '/')
				*done = 0;
			/* the link's components, relative to done */
			next = *link == '/' ? xstrdup(link) :
			    xmprintf("%s/%s", *done ? done : "/", link);
			push_components(&todo, next);
			free(next);
			*done = 0;
			continue;
		}
		free(done);
		done = next;
	}
	if (!*done) {
		free(done);
		done = xstrdup("/");
	}
	return done;
fail:
	free(next);
	free(done);
	llist_traverse(todo, free);
	return NULL;
}

int
applet_toybox(struct tb_io *io, int argc, char **argv)
{
	return bwk_run(io, argc, argv, tbx_main);
}
