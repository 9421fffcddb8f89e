/*
 * wasm_lease.c - leases of temporary wasm computers (issue 17). No
 * process holds a computer's folder between commands, so each driver
 * that holds a temporary computer holds a shared flock on its folder's
 * `lease` file (made, locked, before the folder appears under its id).
 * The kernel drops the lock when the driver dies however it dies; the
 * next driver to start removes every temporary folder whose lease file
 * nobody locks. A folder without a lease file (an earlier build's) is
 * left alone: a lease, not a guess.
 */
#include "wasm_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_slug.h"

#define LEASE_FILE "lease"

int
wasm_lease_make(int folder_fd)
{
	int fd = openat(folder_fd, LEASE_FILE, O_RDWR | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int
wasm_lease_open(struct wasm_driver *d, const char *id)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/" LEASE_FILE, d->dir, id);
	if ((fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	/* Waits while a starting driver reaps it; then it is gone. */
	if (flock(fd, LOCK_SH) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

void
wasm_lease_hold(struct wasm_driver *d, const char *id, int fd)
{
	int *box;

	if (fd < 0)
		return;
	pthread_mutex_lock(&d->mu);
	box = msc_map_del(d->leases, id);
	if (box != NULL) {
		close(*box);
	} else if ((box = malloc(sizeof(*box))) == NULL) {
		pthread_mutex_unlock(&d->mu);
		close(fd);
		msc_log_warn("cannot hold the lease of %s: out of memory", id);
		return;
	}
	*box = fd;
	if (msc_map_put(d->leases, id, box) != 0) {
		close(fd);
		free(box);
	}
	pthread_mutex_unlock(&d->mu);
}

void
wasm_lease_drop(struct wasm_driver *d, const char *id)
{
	int *box;

	pthread_mutex_lock(&d->mu);
	box = msc_map_del(d->leases, id);
	pthread_mutex_unlock(&d->mu);
	if (box != NULL) {
		close(*box);
		free(box);
	}
}

bool
wasm_lease_held(struct wasm_driver *d, const char *id)
{
	bool held;

	pthread_mutex_lock(&d->mu);
	held = msc_map_get(d->leases, id) != NULL;
	pthread_mutex_unlock(&d->mu);
	return held;
}

static void
close_box(void *arg, const char *key, void *value)
{
	int *box = value;

	(void)arg;
	(void)key;
	close(*box);
	free(box);
}

void
wasm_lease_fini(struct wasm_driver *d)
{
	if (d->leases == NULL)
		return;
	msc_map_each(d->leases, close_box, NULL);
	msc_map_free(d->leases);
	d->leases = NULL;
}

void
wasm_lease_reap(struct wasm_driver *d)
{
	DIR *dir = opendir(d->dir);
	struct dirent *e;

	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		char path[4200];
		int fd, rv;

		if (!msc_slug_valid(e->d_name) || !wasm_is_temporary(d, e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/" LEASE_FILE, d->dir,
		    e->d_name);
		if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;       /* no lease: not ours to judge */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			/* Nobody holds it: its server is gone. */
			if ((rv = wasm_remove(d, e->d_name)) == 0)
				msc_log_info("removed %s: a temporary computer "
				    "whose server is gone (its lease lapsed)",
				    e->d_name);
			else
				msc_log_warn("cannot remove the orphaned %s: "
				    "%s", e->d_name, strerror(-rv));
		}
		close(fd);
	}
	closedir(dir);
}
