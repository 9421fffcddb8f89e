/*
 * docker_reap.c - the drivers' reaping of orphaned temporary containers
 * that no exec helper can end; see docker_reap.h.
 */
#include "docker_reap.h"

#include "docker_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_random.h"

#define REAP_T_INSPECT	10000
#define REAP_T_REMOVE	20000
#define REAP_MAX_FILES	4096    /* looked at per round */

struct hold {
	int fd;                 /* locked (LOCK_EX) while held */
	char file[160];
};

struct dock_reap {
	struct dock_driver *d;
	int dfd;                /* the folder; -1: reaping off */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct msc_map *held;   /* container name -> struct hold */
	pthread_t thread;
	bool running, stopping;
	int period_ms;
};

/* One lock file of a round. */
struct lfile {
	char file[160];         /* its name in the folder */
	char name[128];         /* the container name */
	char cid[65];
	bool live;
};

static const char *
lease_dir(char *buf, size_t len)
{
	const char *env = getenv("MSC_LEASE_DIR");

	if (env != NULL && *env == '/')
		snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		snprintf(buf, len, "/run/mcp-sandbox-computer-leases");
	else
		snprintf(buf, len, "/tmp/mcp-sandbox-computer-%u-leases",
		    (unsigned)geteuid());
	return buf;
}

/*
 * Where the engine is, one spelling per engine: a unix socket's folder
 * through realpath (/var/run/docker.sock and /run/docker.sock are one
 * engine; the folder exists while the engine is down), a tcp engine's URL.
 */
static void
engine_place(const struct dock_engine *e, char *buf, size_t len)
{
	const char *sock = dock_engine_socket(e);
	const char *slash = sock != NULL ? strrchr(sock, '/') : NULL;
	char dir[PATH_MAX], real[PATH_MAX];

	if (slash == NULL || (size_t)(slash - sock) >= sizeof(dir)) {
		snprintf(buf, len, "%s", sock != NULL ? sock :
		    dock_engine_url(e));
		return;
	}
	memcpy(dir, sock, (size_t)(slash - sock));
	dir[slash - sock] = '\0';
	if (realpath(slash == sock ? "/" : dir, real) == NULL)
		snprintf(real, sizeof(real), "%s", dir);
	snprintf(buf, len, "%s%s", strcmp(real, "/") == 0 ? "" : real, slash);
}

/*
 * The subfolder of this engine and driver identity: "<driver id>-<hash>".
 * Lock files are judged only by drivers of the same engine and identity:
 * to another engine a container is "gone", to another identity "not
 * ours", and either would drop the file of a live orphan for good.
 */
static void
folder_of(const struct dock_driver *d, char *buf, size_t len)
{
	char place[PATH_MAX + 64];
	const char *id = d->cfg->driver_id != NULL ? d->cfg->driver_id : "";
	uint64_t h = 14695981039346656037ULL;   /* FNV-1a */
	size_t n = 0;

	engine_place(d->engine, place, sizeof(place));
	for (const char *p = id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ '\n') * 1099511628211ULL;
	for (const char *p = place; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (const char *p = id; *p && n < 48 && n + 1 < len; p++)
		buf[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' &&
		    *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		    *p == '_' ? *p : '_';
	snprintf(buf + n, len - n, "%s%016llx", n > 0 ? "-" : "",
	    (unsigned long long)h);
}

/* Opens (making it) this engine and identity's folder of lock files. */
static int
folder_open(const struct dock_driver *d, char *err, size_t errlen)
{
	char top[256], sub[80], path[400];
	int fd = dock_fx_root_open(lease_dir(top, sizeof(top)), err, errlen);

	if (fd < 0)
		return fd;
	close(fd);
	folder_of(d, sub, sizeof(sub));
	snprintf(path, sizeof(path), "%s/%s", top, sub);
	return dock_fx_root_open(path, err, errlen);
}

/* "kilntainer-x.<hex>" -> "kilntainer-x"; false for other names. */
static bool
name_of(const char *file, char *name, size_t len)
{
	const char *dot = strrchr(file, '.');
	size_t n;

	if (dot == NULL || file[0] == '.' ||
	    strncmp(file, DOCK_NAME_PREFIX, strlen(DOCK_NAME_PREFIX)) != 0)
		return false;
	n = (size_t)(dot - file);
	if (n >= len)
		return false;
	memcpy(name, file, n);
	name[n] = '\0';
	return true;
}

/*
 * Looks at every lock file: a locked one is live; an unlocked one (its
 * holder died) is returned as dead, and stays until its container is
 * settled (reap_round). Fills fs (up to cap); returns how many.
 */
static size_t
scan(struct dock_reap *r, struct lfile *fs, size_t cap)
{
	int dup_fd = dup(r->dfd);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	size_t n = 0;

	if (dir == NULL) {
		if (dup_fd >= 0)
			close(dup_fd);
		return 0;
	}
	rewinddir(dir);
	while (n < cap && (e = readdir(dir)) != NULL) {
		struct lfile *f = &fs[n];
		ssize_t got;
		int fd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		fd = openat(r->dfd, e->d_name, O_RDONLY | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(f, 0, sizeof(*f));
		if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
			f->live = true;
		} else {
			/* Dead holder (or a half-made file of one). */
			got = read(fd, f->cid, 64);
			f->cid[got == 64 ? 64 : 0] = '\0';
		}
		close(fd);
		if (snprintf(f->file, sizeof(f->file), "%s", e->d_name) <
			(int)sizeof(f->file) &&
		    name_of(e->d_name, f->name, sizeof(f->name)))
			n++;
		else if (!f->live)
			(void)unlinkat(r->dfd, e->d_name, 0);   /* not ours */
	}
	closedir(dir);
	return n;
}

static bool
is_live(const struct lfile *fs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (fs[i].live && strcmp(fs[i].name, name) == 0)
			return true;
	return false;
}

/*
 * Removes container cid if it still is our temporary computer `name`.
 * Returns whether that is settled (removed, gone, or not ours): else the
 * engine did not answer and the next round tries again.
 */
static bool
reap_one(struct dock_reap *r, const char *name, const char *cid)
{
	struct dock_driver *d = r->d;
	char err[DOCK_ERRLEN];
	json_t *ctr = NULL, *labels;
	const char *tmp, *cname;
	bool settled = true;
	int rv;

	if ((rv = dock_container_inspect(d->engine, cid, REAP_T_INSPECT, &ctr,
		err, sizeof(err))) != 0)
		return rv == -ENOENT;   /* gone already, or the engine is away */
	labels = json_object_get(json_object_get(ctr, "Config"), "Labels");
	tmp = json_string_value(json_object_get(labels,
	    "kilntainers.temporary"));
	cname = json_string_value(json_object_get(ctr, "Name"));
	if (tmp != NULL && strcmp(tmp, "true") == 0 && dock_mine(d, labels) &&
	    cname != NULL && strcmp(cname + (*cname == '/'), name) == 0) {
		if (dock_container_remove(d->engine, cid, REAP_T_REMOVE, err,
			sizeof(err)) == 0)
			msc_log_info("removed %s: a temporary computer whose "
			    "server is gone (its lease lapsed)", name);
		else {
			msc_log_warn("cannot remove the orphaned %s: %s", name,
			    err);
			settled = false;
		}
	}
	json_decref(ctr);
	return settled;
}

static void
reap_round(struct dock_reap *r)
{
	struct lfile *fs = calloc(REAP_MAX_FILES, sizeof(*fs));
	size_t n;

	if (fs == NULL)
		return;
	n = scan(r, fs, REAP_MAX_FILES);
	for (size_t i = 0; i < n; i++) {
		struct lfile *f = &fs[i];

		if (f->live)
			continue;
		/* Another server holds it still: only the dead file goes. */
		if (f->cid[0] == '\0' || is_live(fs, n, f->name) ||
		    reap_one(r, f->name, f->cid))
			(void)unlinkat(r->dfd, f->file, 0);
	}
	free(fs);
}

static void *
reap_main(void *arg)
{
	struct dock_reap *r = arg;

	pthread_mutex_lock(&r->mu);
	while (!r->stopping) {
		struct timespec ts;

		pthread_mutex_unlock(&r->mu);
		reap_round(r);
		pthread_mutex_lock(&r->mu);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += r->period_ms / 1000;
		ts.tv_nsec += (long)(r->period_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!r->stopping &&
		    pthread_cond_timedwait(&r->cv, &r->mu, &ts) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int
dock_reap_start(struct dock_driver *d, int period_ms, struct dock_reap **rp)
{
	struct dock_reap *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;
	char err[DOCK_ERRLEN];

	if (r == NULL)
		return -ENOMEM;
	if (msc_map_new(&r->held) != 0) {
		free(r);
		return -ENOMEM;
	}
	r->d = d;
	r->period_ms = period_ms;
	pthread_mutex_init(&r->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	r->dfd = folder_open(d, err, sizeof(err));
	if (r->dfd < 0)
		msc_log_warn("orphaned temporaries without exec helper are not "
		    "reaped: %s", err);
	else if (pthread_create(&r->thread, NULL, reap_main, r) == 0)
		r->running = true;
	*rp = r;
	return 0;
}

static void
free_hold(void *arg, const char *key, void *value)
{
	struct dock_reap *r = arg;
	struct hold *h = value;

	(void)key;
	(void)unlinkat(r->dfd, h->file, 0);
	close(h->fd);
	free(h);
}

void
dock_reap_stop(struct dock_reap *r)
{
	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->stopping = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	if (r->running)
		pthread_join(r->thread, NULL);
	msc_map_each(r->held, free_hold, r);
	msc_map_free(r->held);
	if (r->dfd >= 0)
		close(r->dfd);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/*
 * Makes a locked file <name>.<hex> holding cid: written under a dot name
 * first, renamed when locked (a reaper never takes a final name for a
 * dead holder's before it is locked). 0 or a negative errno.
 */
static int
make_hold(struct dock_reap *r, const char *name, const char *cid,
    struct hold *h)
{
	for (int tries = 0; tries < 3; tries++) {
		char hex[17], tmp[170];
		int fd;

		msc_random_hex(hex, 8);
		snprintf(h->file, sizeof(h->file), "%s.%s", name, hex);
		snprintf(tmp, sizeof(tmp), ".%s", h->file);
		fd = openat(r->dfd, tmp, O_RDWR | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) != 0 ||
		    write(fd, cid, 64) != 64 ||
		    renameat(r->dfd, tmp, r->dfd, h->file) != 0) {
			/* A reaper took it in between: again. */
			(void)unlinkat(r->dfd, tmp, 0);
			close(fd);
			continue;
		}
		h->fd = fd;
		return 0;
	}
	return -EAGAIN;
}

void
dock_reap_hold(struct dock_reap *r, const char *name, json_t *ctr)
{
	const char *cid = json_string_value(json_object_get(ctr, "Id"));
	struct hold *h;
	int rc;

	if (r->dfd < 0 || cid == NULL || strlen(cid) != 64)
		return;
	pthread_mutex_lock(&r->mu);
	if (msc_map_get(r->held, name) != NULL) {
		pthread_mutex_unlock(&r->mu);
		return;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL)
		rc = -ENOMEM;
	else if ((rc = make_hold(r, name, cid, h)) == 0 &&
	    (rc = msc_map_put(r->held, name, h)) != 0) {
		(void)unlinkat(r->dfd, h->file, 0);
		close(h->fd);
	}
	if (rc != 0)
		free(h);
	pthread_mutex_unlock(&r->mu);
	if (rc != 0)
		msc_log_warn("cannot hold %s: %s", name, strerror(-rc));
}

void
dock_reap_drop(struct dock_reap *r, const char *name)
{
	struct hold *h;

	pthread_mutex_lock(&r->mu);
	h = msc_map_del(r->held, name);
	pthread_mutex_unlock(&r->mu);
	if (h != NULL)
		free_hold(r, name, h);
}

bool
dock_reap_holds(struct dock_reap *r, const char *name)
{
	bool held;

	pthread_mutex_lock(&r->mu);
	held = msc_map_get(r->held, name) != NULL;
	pthread_mutex_unlock(&r->mu);
	return held;
}
