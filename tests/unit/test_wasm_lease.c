/*
 * test_wasm_lease.c - the wasm driver's removal at stop of the temporary
 * computers it holds (wasm_lease_remove_held), on a folder of its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "msc_map.h"
#include "msc_time.h"
#include "wasm_driver_int.h"

static char dir[128];

/* Makes <dir>/<id> holding a lease, held by d as a temporary's is. */
static void
make_held(struct wasm_driver *d, const char *id)
{
	char path[256];
	int fd, lease;

	snprintf(path, sizeof(path), "%s/%s", dir, id);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_true((fd = open(path, O_RDONLY | O_DIRECTORY)) >= 0);
	assert_true((lease = wasm_lease_make(fd)) >= 0);
	close(fd);
	assert_true(wasm_lease_hold(d, id, lease));
}

/* The entries of dir, but "." and "..". */
static int
entries(void)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(dp);
	while ((e = readdir(dp)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(dp);
	return n;
}

/*
 * The stop takes the held leases, then hides each folder by its id
 * while the workers still run: a release of temporary x and a create of
 * a permanent x on x's lane in between left a new folder there that the
 * stop hid and deleted. The stop now removes only the folder whose lease
 * it holds: the permanent x stays, y (held) goes, nothing stays hidden.
 */
static void
test_stop_keeps_a_folder_made_again(void **state)
{
	struct wasm_driver d = { .dir = dir };
	char path[256];
	int fd;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/wasmlease.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(pthread_mutex_init(&d.mu, NULL), 0);
	assert_int_equal(msc_map_new(&d.leases), 0);
	make_held(&d, "x");
	make_held(&d, "y");
	/* x released (its folder removed) and made again, permanent (no
	 * lease), while its old lease is still in the stop's hands. */
	snprintf(path, sizeof(path), "%s/x/lease", dir);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/x", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/x/meta.json", dir);
	assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) >= 0);
	assert_int_equal(write(fd, "{}", 2), 2);
	close(fd);

	d.stopping = true;
	wasm_lease_remove_held(&d);

	assert_int_equal(access(path, F_OK), 0);        /* x/meta.json */
	snprintf(path, sizeof(path), "%s/y", dir);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(entries(), 1);                 /* x alone */

	snprintf(path, sizeof(path), "%s/x", dir);
	assert_int_equal(wasm_rmtree_at(AT_FDCWD, path), 0);
	assert_int_equal(rmdir(dir), 0);
	wasm_lease_fini(&d);
	pthread_mutex_destroy(&d.mu);
}

/*
 * The stop's removal keeps its deadline inside a folder too (it was
 * checked before each folder only, so one big folder overran it): with
 * the deadline passed, a folder of files is left whole, -ETIMEDOUT;
 * without, it goes.
 */
static void
test_rmtree_until_deadline(void **state)
{
	char path[256];

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/wasmlease.XXXXXX");
	assert_non_null(mkdtemp(dir));
	for (int i = 0; i < 3; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		assert_true((fd = open(path, O_WRONLY | O_CREAT, 0600)) >= 0);
		close(fd);
	}
	assert_int_equal(wasm_rmtree_until(AT_FDCWD, dir, msc_now_ms()),
	    -ETIMEDOUT);
	assert_int_equal(entries(), 3);
	assert_int_equal(wasm_rmtree_until(AT_FDCWD, dir,
	    msc_now_ms() + 60000), 0);
	assert_int_equal(access(dir, F_OK), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stop_keeps_a_folder_made_again),
		cmocka_unit_test(test_rmtree_until_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
