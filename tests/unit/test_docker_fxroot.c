/*
 * test_docker_fxroot.c - the exec helper's host folder (docker_fxroot.c):
 * another local user's folder at the predictable path is refused (the
 * attack: plant or swap the helper that runs as PID 1 of every computer),
 * so are group/other-writable folders and symlinks; and an old per-
 * computer folder is removed completely, however deep, without following
 * its links out. Runs as root (as CI does): it chowns folders to 65534
 * and runs the driver's side as uid 65534 in a child.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker_driver_int.h"

#define NOBODY 65534

static char base[64];

static void
sh(const char *fmt, const char *arg)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), fmt, arg);
	assert_int_equal(system(cmd), 0);
}

static int
setup(void **state)
{
	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "test_docker_fxroot needs root (chown to %d)\n",
		    NOBODY);
		return -1;
	}
	snprintf(base, sizeof(base), "/tmp/fxroot-test-XXXXXX");
	if (mkdtemp(base) == NULL || chmod(base, 0755) != 0)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	sh("rm -rf --one-file-system %s", base);
	return 0;
}

static void
test_refuses_foreign_or_open_folders(void **state)
{
	char root[128], link[128], err[512];
	struct stat st;
	int fd;

	(void)state;
	snprintf(root, sizeof(root), "%s/theirs", base);
	assert_int_equal(mkdir(root, 0700), 0);
	assert_int_equal(chown(root, NOBODY, NOBODY), 0);
	assert_int_equal(dock_fx_root_open(root, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "owned by uid 65534"));

	snprintf(root, sizeof(root), "%s/open", base);
	assert_int_equal(mkdir(root, 0700), 0);
	assert_int_equal(chmod(root, 0777), 0);
	assert_int_equal(dock_fx_root_open(root, err, sizeof(err)), -EPERM);
	assert_int_equal(chmod(root, 0720), 0);
	assert_int_equal(dock_fx_root_open(root, err, sizeof(err)), -EPERM);

	/* A link to a private folder of ours is still refused. */
	snprintf(root, sizeof(root), "%s/mine", base);
	snprintf(link, sizeof(link), "%s/link", base);
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(symlink(root, link), 0);
	assert_true(dock_fx_root_open(link, err, sizeof(err)) < 0);

	/* Ours and not writable by others: accepted, made 0700. */
	fd = dock_fx_root_open(root, err, sizeof(err));
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(root, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
}

/*
 * As uid 65534 with no XDG_RUNTIME_DIR, the driver's folder is
 * /tmp/mcp-sandbox-computer-65534. Root (here: the other local user) made
 * it first, writable for all, so that it could swap the helper later. The
 * driver must refuse it and write nothing there; once the planted folder
 * is gone it makes its own, private one.
 */
static void
test_fallback_folder_planted_by_another_user(void **state)
{
	const char *planted = "/tmp/mcp-sandbox-computer-65534";
	char helper[128], cmd[256];
	struct stat st;
	pid_t pid;
	int status;

	(void)state;
	sh("rm -rf --one-file-system %s", planted);
	assert_int_equal(mkdir(planted, 0777), 0);
	assert_int_equal(chmod(planted, 0777), 0);
	snprintf(helper, sizeof(helper), "%s/helper", base);
	snprintf(cmd, sizeof(cmd), "cp " FX_HELPER_PATH " %s", helper);
	assert_int_equal(system(cmd), 0);
	for (int round = 0; round < 2; round++) {
		if ((pid = fork()) == 0) {
			struct msc_cfg cfg = { 0 };
			struct dock_driver d = { .cfg = &cfg };
			char err[512];
			int rc;

			if (setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
			    setresuid(NOBODY, NOBODY, NOBODY) != 0)
				_exit(10);
			unsetenv("XDG_RUNTIME_DIR");
			unsetenv("MSC_FAST_EXEC_DIR");
			unsetenv("MSC_FAST_EXEC");
			unsetenv("DOCKER_HOST");
			setenv("MSC_EXEC_HELPER", helper, 1);
			pthread_mutex_init(&d.mu, NULL);
			pthread_mutex_init(&d.fx_mu, NULL);
			dock_fx_init(&d);
			if (strcmp(d.fx_root, planted) != 0 || !d.fx_on)
				_exit(11);
			rc = dock_fx_prepare(&d, err, sizeof(err));
			fprintf(stderr, "round %d: prepare %d %s\n", round, rc,
			    rc != 0 ? err : "");
			/* Refused, and the fast path is off, in round 0. */
			if (round == 0)
				_exit(rc == -EPERM && !d.fx_on ? 0 : 12);
			_exit(rc == 0 && d.fx_on ? 0 : 13);
		}
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
		if (round == 0) {
			snprintf(cmd, sizeof(cmd), "%s/msc-exec-helper",
			    planted);
			assert_int_equal(access(cmd, F_OK), -1);
			assert_int_equal(rmdir(planted), 0);
		}
	}
	assert_int_equal(lstat(planted, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(cmd, sizeof(cmd), "%s/msc-exec-helper", planted);
	assert_int_equal(access(cmd, X_OK), 0);
	sh("rm -rf --one-file-system %s", planted);
}

/*
 * An earlier build's per-computer folder, as a computer could leave it:
 * 3000 nested folders (deeper than PATH_MAX), links out to a host folder
 * and to "/", a link loop, a fifo, a socket and files. All of it goes;
 * nothing outside is touched.
 */
static void
test_legacy_folder_removed_without_following_links(void **state)
{
	struct msc_cfg cfg = { 0 };
	struct dock_driver d = { .cfg = &cfg };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[300], canary[100], path[320];
	int fd, sub, s;

	(void)state;
	snprintf(d.fx_root, sizeof(d.fx_root), "%s/root", base);
	snprintf(canary, sizeof(canary), "%s/outside", base);
	assert_int_equal(mkdir(canary, 0755), 0);
	sh("echo keep > %s/canary", canary);
	assert_int_equal(mkdir(d.fx_root, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/kilntainer-x", d.fx_root);
	assert_int_equal(mkdir(dir, 0700), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(symlinkat(canary, fd, "out"), 0);
	assert_int_equal(symlinkat("/", fd, "slash"), 0);
	assert_int_equal(symlinkat("loop", fd, "loop"), 0);
	assert_int_equal(mkfifoat(fd, "fifo", 0600), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.90s/sock", dir);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(s);
	for (int i = 0; i < 3000; i++) {
		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		if (i % 500 == 0) {
			assert_int_equal(symlinkat(canary, fd, "o"), 0);
			close(openat(fd, "f", O_WRONLY | O_CREAT, 0600));
		}
		sub = openat(fd, "d", O_RDONLY | O_DIRECTORY);
		assert_true(sub >= 0);
		close(fd);
		fd = sub;
	}
	close(fd);
	assert_int_equal(dock_fx_remove_legacy(&d, "kilntainer-x"), 0);
	assert_int_equal(access(dir, F_OK), -1);
	snprintf(path, sizeof(path), "%s/canary", canary);
	assert_int_equal(access(path, R_OK), 0);
	assert_int_equal(access("/etc/hostname", F_OK) == 0 ||
	    access("/etc/passwd", F_OK) == 0, 1);
	/* Gone already is fine; a name with a slash is refused. */
	assert_int_equal(dock_fx_remove_legacy(&d, "kilntainer-x"), 0);
	assert_int_equal(dock_fx_remove_legacy(&d, "../outside"), -EINVAL);
	assert_int_equal(access(path, R_OK), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuses_foreign_or_open_folders),
		cmocka_unit_test(test_fallback_folder_planted_by_another_user),
		cmocka_unit_test(
		    test_legacy_folder_removed_without_following_links),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
