/*
 * wasm_lease.c - leases of temporary wasm computers (issue 17). No
 * process holds a computer's folder between commands, so each driver
 * that holds a temporary computer holds a shared flock on its folder's
 * `lease` file (made, locked, before the folder appears under its id).
 * The kernel drops the lock when the driver dies however it dies; the
 * next driver to start removes every temporary folder whose lease file
 * nobody locks (wasm_reap_lapsed, wasm_computers.c, asks
 * wasm_lease_lapsed). A folder without a lease file (an earlier build's)
 * is left alone: a lease, not a guess. Below the computers: calls only
 * wasm_fs.c.
 */
#include "wasm_driver_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_time.h"

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

/* id's lease file opened (oflags) and locked (op); its fd or -errno. */
static int
lease_lock(struct wasm_driver *d, const char *id, int oflags, int op)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/" LEASE_FILE, d->dir, id);
	if ((fd = open(path, oflags | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	if (flock(fd, op) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int
wasm_lease_open(struct wasm_driver *d, const char *id)
{
	/* Waits while a starting driver reaps it; then it is gone. */
	return lease_lock(d, id, O_RDWR, LOCK_SH);
}

bool
wasm_lease_hold(struct wasm_driver *d, const char *id, int fd)
{
	int *box;

	if (fd < 0)
		return true;
	pthread_mutex_lock(&d->mu);
	if (d->stopping) {
		pthread_mutex_unlock(&d->mu);
		close(fd);
		return false;
	}
	box = msc_map_del(d->leases, id);
	if (box != NULL) {
		close(*box);
	} else if ((box = malloc(sizeof(*box))) == NULL) {
		pthread_mutex_unlock(&d->mu);
		close(fd);
		msc_log_warn("cannot hold the lease of %s: out of memory", id);
		return true;
	}
	*box = fd;
	if (msc_map_put(d->leases, id, box) != 0) {
		close(fd);
		free(box);
	}
	pthread_mutex_unlock(&d->mu);
	return true;
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

int
wasm_lease_lapsed(struct wasm_driver *d, const char *id)
{
	/* No lease file: not ours to judge. Locked: nobody holds it, its
	 * server is gone. */
	return lease_lock(d, id, O_RDONLY, LOCK_EX | LOCK_NB);
}

/*
 * At stop, how long the held temporaries' folders may take to delete
 * (a host kills us a few seconds after its SIGTERM; deletion is bound by
 * the disk: 4-12 ms a folder on a loaded ext4 mounted with discard), and
 * with how many threads (deletions overlap their waits on the disk).
 */
#define STOP_REMOVE_MS 1500
#define STOP_REMOVE_THREADS 8

/* One temporary computer being removed at stop. */
struct held {
	STAILQ_ENTRY(held) next;
	int lease;              /* owned: closed by remove_hidden */
	int hidden;             /* hide_held's: 0, or -errno */
	char gone[128];
	char id[];
};
STAILQ_HEAD(held_list, held);

/* The hidden folders, deleted by a few threads until the deadline. */
struct removal {
	pthread_mutex_t mu;     /* guards todo and the counts */
	struct held_list todo;  /* owned; each taken by one thread */
	int dirfd;              /* owned by wasm_lease_remove_held, lent */
	uint64_t deadline_ms;
	size_t removed, late, failed;
	int error;              /* the first failure's errno */
};

static void
take_held(void *arg, const char *key, void *value)
{
	struct held_list *list = arg;
	int *box = value;
	struct held *h = malloc(sizeof(*h) + strlen(key) + 1);

	if (h == NULL) {
		close(*box);    /* its folder stays for the next start */
		free(box);
		return;
	}
	h->lease = *box;
	h->hidden = -EBADF;
	strcpy(h->id, key);
	free(box);
	STAILQ_INSERT_TAIL(list, h, next);
}

/*
 * Hides h's folder, if it is still the one whose lease we hold: a
 * release of the temporary computer can run on its lane meanwhile, and a
 * computer made by that id after it (refused once the driver stops, but
 * one may have started before) is not ours to remove: renamed back.
 */
static void
hide_held(int dirfd, struct held *h)
{
	struct stat ours, found;
	char lease[sizeof(h->gone) + sizeof("/" LEASE_FILE)];

	if ((h->hidden = wasm_hide(dirfd, h->id, h->gone,
	    sizeof(h->gone))) != 0)
		return;
	snprintf(lease, sizeof(lease), "%s/" LEASE_FILE, h->gone);
	if (fstat(h->lease, &ours) == 0 &&
	    fstatat(dirfd, lease, &found, AT_SYMLINK_NOFOLLOW) == 0 &&
	    ours.st_dev == found.st_dev && ours.st_ino == found.st_ino)
		return;
	if (renameat2(dirfd, h->gone, dirfd, h->id, RENAME_NOREPLACE) != 0)
		msc_log_warn("cannot give %s back its folder, hidden as %s at "
		    "stop: %s", h->id, h->gone, strerror(errno));
	else
		msc_log_info("%s was made again meanwhile: kept", h->id);
	h->hidden = -ENOENT;    /* ours is gone: nothing to remove */
}

static void *
remove_hidden(void *arg)
{
	struct removal *r = arg;
	struct held *h;

	pthread_mutex_lock(&r->mu);
	while ((h = STAILQ_FIRST(&r->todo)) != NULL) {
		int rv = h->hidden;

		STAILQ_REMOVE_HEAD(&r->todo, next);
		pthread_mutex_unlock(&r->mu);
		/* Late, what is left stays hidden for the next start. */
		if (rv == 0)
			rv = msc_now_ms() < r->deadline_ms
			    ? wasm_rmtree_until(r->dirfd, h->gone,
				  r->deadline_ms)
			    : -ETIMEDOUT;
		close(h->lease);
		free(h);
		pthread_mutex_lock(&r->mu);
		if (rv == 0 || rv == -ENOENT)
			r->removed++;
		else if (rv == -ETIMEDOUT)
			r->late++;
		else if (r->failed++ == 0)
			r->error = -rv;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

void
wasm_lease_remove_held(struct wasm_driver *d)
{
	struct removal r = { .mu = PTHREAD_MUTEX_INITIALIZER,
		.todo = STAILQ_HEAD_INITIALIZER(r.todo) };
	pthread_t threads[STOP_REMOVE_THREADS];
	struct msc_map *none = NULL;
	struct held *h;
	int n = 0, rv;

	if (d->leases == NULL)
		return;
	if ((rv = msc_map_new(&none)) != 0) {
		msc_log_warn("cannot remove the temporary computers at stop: "
		    "%s; the next start removes them", strerror(-rv));
		return;
	}
	pthread_mutex_lock(&d->mu);
	msc_map_each(d->leases, take_held, &r.todo);
	msc_map_free(d->leases);
	d->leases = none;
	pthread_mutex_unlock(&d->mu);
	if (STAILQ_EMPTY(&r.todo))
		return;
	r.deadline_ms = msc_now_ms() + STOP_REMOVE_MS;
	/* Out of sight first, in one quick pass (a rename each): killed
	 * after this, the next start sweeps every .gone-*. */
	if ((r.dirfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		STAILQ_FOREACH(h, &r.todo, next)
			hide_held(r.dirfd, h);
	else
		STAILQ_FOREACH(h, &r.todo, next)
			h->hidden = -errno;
	while (n < STOP_REMOVE_THREADS &&
	    pthread_create(&threads[n], NULL, remove_hidden, &r) == 0)
		n++;
	if (n == 0)
		(void)remove_hidden(&r);
	while (n > 0)
		pthread_join(threads[--n], NULL);
	pthread_mutex_destroy(&r.mu);
	if (r.dirfd >= 0)
		close(r.dirfd);
	msc_log_info("removed %zu temporary computer(s) at stop", r.removed);
	if (r.late > 0)
		msc_log_warn("%zu temporary computer(s) left hidden (.gone-*) "
		    "for the next start to remove: the disk deleted too "
		    "slowly (%d ms at stop)", r.late, STOP_REMOVE_MS);
	if (r.failed > 0)
		msc_log_warn("%zu temporary computer(s) left for the next "
		    "start to remove: %s", r.failed, strerror(r.error));
}
