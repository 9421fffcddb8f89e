/*
 * test_wasm_escape.c - a guest tries to leave its root: "..", absolute
 * paths, /proc, its own symlinks to "../../.." and "/etc", host-made
 * symlinks that point outside, rename/link/unlink/mkdir/write aimed
 * outside, directory fds, and working directories "/../../.." or through
 * a symlink. Each must fail or stay inside the root, and the files next
 * to the root must be untouched.
 *
 * usage: test_wasm_escape RUNNER PROBE.wasm CACHE_DIR
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasm_harness.h"

#define ARGS(...) (const char *const[]){ __VA_ARGS__, NULL }
#define OPTS(...) (const char *const[]){ __VA_ARGS__, NULL }

static struct wh w;
static char outside[400], secret[450];
static int passed, total;

/* Runs the probe; its first output line must start with want. */
static void
expect(const char *const opts[], const char *const args[], const char *want)
{
	struct wh_run r;

	wh_guest(&w, &r, opts, args, NULL);
	total++;
	if (strncmp(r.out, want, strlen(want)) == 0 && r.code == 0) {
		passed++;
	} else {
		fprintf(stderr, "escape case '%s %s %s': got '%s' (status "
				"'%s'), want '%s'\n", args[0],
		    args[1] ? args[1] : "", args[1] && args[2] ? args[2] : "",
		    r.out, r.status, want);
		wh_failures++;
	}
	wh_run_free(&r);
}

static void
host_path(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", w.base, rel);
}

/* base holds only root/ and outside/, outside only the intact secret. */
static void
untouched(void)
{
	struct dirent *e;
	char *s = wh_read(secret);
	int nbase = 0, nout = 0;
	DIR *d;

	WH_CHECK(s != NULL && strcmp(s, "SECRET\n") == 0);
	free(s);
	if ((d = opendir(w.base)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.')
				nbase++;
		closedir(d);
	}
	if ((d = opendir(outside)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.')
				nout++;
		closedir(d);
	}
	WH_CHECK(nbase == 2 && nout == 1);
}

static void
setup(void)
{
	char p[1024];

	host_path(outside, sizeof(outside), "outside");
	mkdir(outside, 0755);
	snprintf(secret, sizeof(secret), "%s/secret.txt", outside);
	wh_write(secret, "SECRET\n");
	/* Host-made links inside the root that point outside it. */
	snprintf(p, sizeof(p), "%s/hostlink", w.root);
	WH_CHECK(symlink("../outside", p) == 0);
	snprintf(p, sizeof(p), "%s/abslink", w.root);
	WH_CHECK(symlink(outside, p) == 0);
	snprintf(p, sizeof(p), "%s/abssecret", w.root);
	WH_CHECK(symlink(secret, p) == 0);
	snprintf(p, sizeof(p), "%s/inside.txt", w.root);
	wh_write(p, "INSIDE\n");
	snprintf(p, sizeof(p), "%s/sub", w.root);
	mkdir(p, 0755);
}

static void
reads(void)
{
	char abs[512];

	expect(NULL, ARGS("read", "../outside/secret.txt"), "ERR");
	expect(NULL, ARGS("read", "/../outside/secret.txt"), "ERR");
	expect(NULL, ARGS("read", "../../../../../../etc/passwd"), "ERR");
	expect(NULL, ARGS("read", "/etc/passwd"), "ERR");
	expect(NULL, ARGS("read", "/proc/self/environ"), "ERR");
	expect(NULL, ARGS("read", "/proc/self/root/etc/passwd"), "ERR");
	expect(NULL, ARGS("read", "/dev/null"), "ERR");
	expect(NULL, ARGS("read", secret), "ERR");      /* host abs path */
	expect(NULL, ARGS("read", "hostlink/secret.txt"), "ERR");
	expect(NULL, ARGS("read", "abslink/secret.txt"), "ERR");
	expect(NULL, ARGS("read", "abssecret"), "ERR");
	expect(NULL, ARGS("stat", "hostlink/secret.txt"), "ERR");
	expect(NULL, ARGS("openat", "/sub", "../../outside/secret.txt"), "ERR");
	expect(NULL, ARGS("openat", "/sub", "../inside.txt"), "DATA INSIDE");
	expect(NULL, ARGS("ls", ".."), "ENTRIES 5");    /* the root itself */
	expect(NULL, ARGS("readlink", "hostlink"), "LINK ../outside");
	snprintf(abs, sizeof(abs), "%s/outside/secret.txt", w.base);
	expect(NULL, ARGS("read", abs), "ERR");
}

static void
guest_symlinks(void)
{
	char p[1024];

	expect(NULL, ARGS("symlink", "../../../..", "up"), "OK");
	expect(NULL, ARGS("read", "up/etc/passwd"), "ERR");
	expect(NULL, ARGS("read", "up/outside/secret.txt"), "ERR");
	expect(NULL, ARGS("symlink", "/etc", "etcl"), "OK");
	expect(NULL, ARGS("read", "etcl/passwd"), "ERR");
	expect(NULL, ARGS("symlink", secret, "s2"), "OK");
	expect(NULL, ARGS("read", "s2"), "ERR");
	/* Confined, not refused: /etc of the root is what "etcl" reaches. */
	snprintf(p, sizeof(p), "%s/etc", w.root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/etc/passwd", w.root);
	wh_write(p, "INROOT\n");
	expect(NULL, ARGS("read", "etcl/passwd"), "DATA INROOT");
	expect(NULL, ARGS("read", "up/etc/passwd"), "DATA INROOT");
	/* Writes through a guest link land in the root too. */
	expect(NULL, ARGS("write", "up/made-through-up", "x"), "OK");
	snprintf(p, sizeof(p), "%s/made-through-up", w.root);
	WH_CHECK(wh_exists(p));
}

static void
changes(void)
{
	char p[1024];

	expect(NULL, ARGS("write", "../outside/new.txt", "x"), "ERR");
	expect(NULL, ARGS("write", "hostlink/new.txt", "x"), "ERR");
	/* The link's target resolves in the root, where its parent is
	 * missing. */
	expect(NULL, ARGS("write", "abssecret", "OVERWRITTEN"), "ERR");
	snprintf(p, sizeof(p), "%s%s", w.root, outside);
	WH_CHECK(!wh_exists(p));
	expect(NULL, ARGS("rename", "inside.txt", "../outside/moved.txt"),
	    "ERR");
	expect(NULL, ARGS("rename", "inside.txt", "hostlink/moved.txt"),
	    "ERR");
	expect(NULL, ARGS("rename", "hostlink/secret.txt", "stolen"), "ERR");
	expect(NULL, ARGS("rename", "..", "x"), "ERR");
	expect(NULL, ARGS("link", "hostlink/secret.txt", "stolen"), "ERR");
	expect(NULL, ARGS("link", "abssecret", "hard"), "OK"); /* the link */
	expect(NULL, ARGS("read", "hard"), "ERR");
	expect(NULL, ARGS("stat", "hard"), "STAT link");
	expect(NULL, ARGS("unlink", "../outside/secret.txt"), "ERR");
	expect(NULL, ARGS("unlink", "hostlink/secret.txt"), "ERR");
	expect(NULL, ARGS("unlink", "abslink/secret.txt"), "ERR");
	expect(NULL, ARGS("rmdir", ".."), "ERR");
	expect(NULL, ARGS("rmdir", "/"), "ERR");
	expect(NULL, ARGS("rmdir", "sub/.."), "ERR");
	expect(NULL, ARGS("mkdir", "../../escape"), "OK");     /* = /escape */
	snprintf(p, sizeof(p), "%s/escape", w.root);
	WH_CHECK(wh_exists(p));
	expect(NULL, ARGS("unlink", "hostlink"), "OK");  /* the link only */
	untouched();
}

static void
working_dirs(void)
{
	char p[1024];
	struct wh_run r;

	expect(OPTS("--cwd", "/../../.."), ARGS("pwd"), "PWD /\n");
	expect(OPTS("--cwd", "/../../.."), ARGS("write", "cwdfile", "x"), "OK");
	snprintf(p, sizeof(p), "%s/cwdfile", w.root);
	WH_CHECK(wh_exists(p));
	expect(OPTS("--cwd", "../../x/../../y"), ARGS("pwd"), "PWD /y\n");
	snprintf(p, sizeof(p), "%s/y", w.root);
	WH_CHECK(wh_exists(p));

	/* A cwd through a symlink that points out: confined or refused. */
	snprintf(p, sizeof(p), "%s/cwdlink", w.root);
	WH_CHECK(symlink("../outside", p) == 0);
	wh_guest(&w, &r, OPTS("--cwd", "/cwdlink/deeper"), ARGS("write",
	    "f", "x"), NULL);
	total++;
	if (r.code == 125 && strstr(r.status, "not a directory") != NULL)
		passed++;
	else
		wh_failures++;
	wh_run_free(&r);
	snprintf(p, sizeof(p), "%s/outside/deeper", w.base);
	WH_CHECK(!wh_exists(p));
	snprintf(p, sizeof(p), "%s/abscwd", w.root);
	WH_CHECK(symlink(outside, p) == 0);
	wh_guest(&w, &r, OPTS("--cwd", "/abscwd"), ARGS("pwd"), NULL);
	total++;
	if (r.code == 125)
		passed++;
	else
		wh_failures++;
	wh_run_free(&r);
	untouched();
}

int
main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s RUNNER PROBE.wasm CACHE\n", argv[0]);
		return 2;
	}
	if (wh_setup(&w, argv[1], wh_compile(argv[2], argv[3], NULL)) != 0) {
		perror("setup");
		return 2;
	}
	setup();
	reads();
	guest_symlinks();
	changes();
	working_dirs();
	untouched();
	printf("escape cases: %d of %d passed\n", passed, total);
	printf("%s: %d failed checks\n", argv[0], wh_failures);
	return wh_failures != 0;
}
