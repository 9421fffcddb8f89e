/*
 * tbx_proc.c - toybox's processes and environment, in-process. WASI has no
 * fork or exec, and natively a toybox run is a forked child whose commands
 * must still be the toolbox's applets, so (tbx_shim.h maps the calls here):
 *
 * - xrun(argv) (find -exec): runs the command, returns its status;
 * - xexec(argv) (env): the command takes the run's place: it runs, and
 *   its status ends the run;
 * - XVFORK(), then xexec() in the child, then waitpid()/wait4()/wait() in
 *   the parent (xargs, time): vfork() enters a pretend child, whose changes
 *   to descriptors 0, 1 and 2 are for its command only (tbx_io.c puts them
 *   back when it has run); its xexec() returns into the parent's code, and
 *   the wait gives the command's status (pid 1);
 * - setenv()/unsetenv() and lib/env.c's xsetenv()/xunsetenv()/xclearenv()
 *   (lib/env.c is not built: it edits environ itself, behind the back of
 *   libc's setenv, which the shell uses) change the environment through
 *   libc, and each change is undone when the run ends (tbx_env_restore,
 *   called by bwk_run): a process's environment is its own, and here the
 *   caller's (the shell's variables) is the same one.
 *
 * Compiled like toybox's own files (tbx_shim.h ahead, toybox's headers).
 */
#include "toys.h"

#include "../toolbox.h"

#undef setenv
#undef unsetenv

extern char **environ;

/* The pretend child: 1 from vfork() to its xexec(). */
static int in_child;
/* The status of the command it ran until waited for, else -1. */
static int child_status = -1;

/* The environment's changes during this run: names, old values (NULL:
 * unset), in order. */
static struct env_undo {
	char	*name, *old;
} *undo;
static int n_undo;

static int
run(char **argv)
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
tbx_xrun(char **argv)
{
	return run(argv);
}

pid_t
tbx_vfork(void)
{
	tbx_io_std_save();
	in_child = 1;
	return 0;
}

void
tbx_xexec(char **argv)
{
	int rc = run(argv);

	if (in_child) {
		in_child = 0;
		tbx_io_std_restore();
		child_status = rc & 0xff;
		return;
	}
	toys.exitval = rc;
	xexit();
}

pid_t
tbx_waitpid(pid_t pid, int *status, int options)
{
	(void)pid, (void)options;
	if (child_status < 0) {
		errno = ECHILD;
		return -1;
	}
	if (status != NULL)
		*status = child_status << 8;
	child_status = -1;
	return 1;
}

pid_t
tbx_wait(int *status)
{
	return tbx_waitpid(-1, status, 0);
}

pid_t
tbx_wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	if (ru != NULL)
		memset(ru, 0, sizeof(*ru));
	return tbx_waitpid(pid, status, options);
}

/* Notes the value name (its first len bytes) has before a change. */
static void
env_note(const char *name, size_t len)
{
	char *old;

	undo = xrealloc(undo, (n_undo + 1) * sizeof(*undo));
	undo[n_undo].name = xstrndup((char *)name, len);
	old = getenv(undo[n_undo].name);
	undo[n_undo++].old = old != NULL ? xstrdup(old) : NULL;
}

int
tbx_setenv(const char *name, const char *val, int overwrite)
{
	env_note(name, strlen(name));
	return setenv(name, val, overwrite);
}

int
tbx_unsetenv(const char *name)
{
	env_note(name, strlen(name));
	return unsetenv(name);
}

void
tbx_env_restore(void)
{
	while (n_undo > 0) {
		struct env_undo *u = &undo[--n_undo];

		if (u->old != NULL)
			setenv(u->name, u->old, 1);
		else
			unsetenv(u->name);
	}
}

/* "NAME=VALUE" (val NULL), or NAME and val (NULL: unset). Returns NULL
 * (toybox's returns the new entry; no caller here reads it). */
char *
xsetenv(char *name, char *val)
{
	size_t len = strcspn(name, "=");
	char *n = xstrndup(name, len);

	if (name[len] == '=')
		val = name + len + 1;
	env_note(n, len);
	if (val != NULL ? setenv(n, val, 1) : unsetenv(n))
		perror_exit("setenv %s", n);
	free(n);
	return NULL;
}

void
xunsetenv(char *name)
{
	if (tbx_unsetenv(name) != 0)
		perror_exit("unsetenv %s", name);
}

void
xclearenv(void)
{
	char **names;
	int n, i;

	for (n = 0; environ[n] != NULL; n++)
		;
	names = xmalloc((n + 1) * sizeof(*names));
	for (i = 0; i < n; i++)
		names[i] = xstrndup(environ[i], strcspn(environ[i], "="));
	for (i = 0; i < n; i++) {
		tbx_unsetenv(names[i]);
		free(names[i]);
	}
	free(names);
}

/* What the environment takes of exec()'s room (find, xargs). */
long
environ_bytes(void)
{
	long bytes = sizeof(char *);

	for (char **e = environ; *e != NULL; e++)
		bytes += sizeof(char *) + strlen(*e) + 1;
	return bytes;
}
