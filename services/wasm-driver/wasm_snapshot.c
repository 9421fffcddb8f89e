/*
 * wasm_snapshot.c - snapshots on the wasm backends (issue 31): a copy of
 * a computer's folder tree (its root/, the guest's "/") in
 * <dir>/.snapshots/<snap-id>/root, with meta.json saying which snapshot
 * it is, who made it (a principal's tag, never a credential), of which
 * computer, when, by which driver and how big. Everything is found again
 * from those folders: a server that restarts lists the same snapshots.
 *
 * What a snapshot holds: the files, folders and symlinks (modes and
 * times kept; fifos, sockets and devices, which no guest makes, left
 * out), copied while commands may run (they are not disturbed; a file
 * being written at that moment may be caught half-way). A copy is
 * reflinked where the file system can. It is bounded by the computer's
 * --disk-quota (a tree bigger than a computer may hold is refused) and
 * by the host's free space; a copy that fails leaves nothing.
 *
 * A restore copies the snapshot into the computer's folder beside its
 * root and swaps the two in one rename (RENAME_EXCHANGE), so a failure
 * leaves the computer as it was; a fork (create_from) is a new computer
 * whose empty root is swapped the same way. Both pin the snapshot
 * (msc_snap_pin) while they read it, and a delete is refused meanwhile.
 */
#include "wasm_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "msc_driver.h"
#include "msc_log.h"
#include "msc_principal.h"
#include "msc_random.h"
#include "msc_snapshot.h"

struct snap_meta {
	char id[MSC_SNAPSHOT_ID_LEN + 1];
	char name[MSC_SNAPSHOT_NAME_MAX + 1];
	char computer_id[128];
	char owner[128];
	char created_at[40];
	char driver[128];
	uint64_t size;
};

int
wasm_snap_init(struct wasm_driver *d)
{
	struct dirent *e;
	DIR *dir;
	int rv;

	if (asprintf(&d->snap_dir, "%s/.snapshots", d->dir) < 0) {
		d->snap_dir = NULL;
		return -ENOMEM;
	}
	if (mkdir(d->snap_dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	if ((rv = msc_snap_pins_new(&d->pins)) != 0)
		return rv;
	/* What a crash left half made or half removed. */
	if ((dir = opendir(d->snap_dir)) == NULL)
		return -errno;
	while ((e = readdir(dir)) != NULL)
		if (strncmp(e->d_name, ".new-", 5) == 0 ||
		    strncmp(e->d_name, ".gone-", 6) == 0)
			(void)wasm_rmtree_at(dirfd(dir), e->d_name);
	closedir(dir);
	return 0;
}

void
wasm_snap_fini(struct wasm_driver *d)
{
	msc_snap_pins_free(d->pins);
	free(d->snap_dir);
}

static int
not_found(const char *id, char *err, size_t errlen)
{
	snprintf(err, errlen, MSC_SNAPSHOT_NOT_FOUND, id);
	return -ENOENT;
}

static void
copy_field(json_t *j, const char *key, char *out, size_t len)
{
	json_t *v = json_object_get(j, key);

	snprintf(out, len, "%s", json_is_string(v) ? json_string_value(v) :
	    "");
}

/* Reads snapshot id's meta.json (id valid); -ENOENT when there is none. */
static int
meta_read(struct wasm_driver *d, const char *id, struct snap_meta *m)
{
	char path[4200];
	json_error_t jerr;
	json_t *j, *size;

	snprintf(path, sizeof(path), "%s/%s/meta.json", d->snap_dir, id);
	if ((j = json_load_file(path, 0, &jerr)) == NULL)
		return -ENOENT;
	copy_field(j, "snapshot_id", m->id, sizeof(m->id));
	copy_field(j, "name", m->name, sizeof(m->name));
	copy_field(j, "computer_id", m->computer_id, sizeof(m->computer_id));
	copy_field(j, "owner", m->owner, sizeof(m->owner));
	copy_field(j, "created_at", m->created_at, sizeof(m->created_at));
	copy_field(j, "driver", m->driver, sizeof(m->driver));
	size = json_object_get(j, "size_bytes");
	m->size = json_is_integer(size) && json_integer_value(size) > 0 ?
	    (uint64_t)json_integer_value(size) : 0;
	json_decref(j);
	return strcmp(m->id, id) == 0 ? 0 : -ENOENT;
}

static int
meta_write(const char *path, const struct snap_meta *m)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I}",
	    "snapshot_id", m->id, "name", m->name, "computer_id",
	    m->computer_id, "owner", m->owner, "created_at", m->created_at,
	    "driver", m->driver, "size_bytes", (json_int_t)m->size);
	int rv;

	if (j == NULL)
		return -ENOMEM;
	rv = json_dump_file(j, path, JSON_COMPACT) == 0 ? 0 : -EIO;
	json_decref(j);
	return rv;
}

/* Whether this driver made it (or no driver is recorded). */
static bool
snap_mine(const struct wasm_driver *d, const struct snap_meta *m)
{
	return m->driver[0] == '\0' || strcmp(m->driver, d->cfg->driver_id) ==
	    0;
}

static bool
snap_visible(const struct wasm_driver *d, const struct snap_meta *m,
    const char *principal, bool for_delete)
{
	if (d->cfg->share_snapshots && !for_delete)
		return true;
	return strcmp(m->owner, principal) == 0;
}

/* Snapshot id as principal sees it; one text for every refusal. */
static int
snap_find(struct wasm_driver *d, const char *id, const char *principal,
    bool for_delete, struct snap_meta *m, char *err, size_t errlen)
{
	if (!msc_snapshot_id_valid(id)) {
		snprintf(err, errlen, "%s", MSC_SNAPSHOT_ID_ERROR);
		return -EINVAL;
	}
	if (meta_read(d, id, m) != 0 || !snap_mine(d, m) ||
	    !snap_visible(d, m, principal, for_delete))
		return not_found(id, err, errlen);
	return 0;
}

static int
fill_snapshot(struct wasm_driver *d, const struct snap_meta *m,
    Msc__V1__Snapshot *out)
{
	out->snapshot_id = strdup(m->id);
	out->name = strdup(m->name);
	out->computer_id = strdup(m->computer_id);
	out->principal = strdup(m->owner);
	out->created_at = strdup(m->created_at);
	out->backend = strdup(d->backend);
	out->driver = strdup(d->cfg->driver_id);
	out->size_bytes = m->size;
	out->own_bytes = m->size;       /* a whole copy: all its own */
	if (!out->snapshot_id || !out->name || !out->computer_id ||
	    !out->principal || !out->created_at || !out->backend ||
	    !out->driver)
		return -ENOMEM;
	return 0;
}

/* This driver's snapshots now. */
/* This driver's snapshots, and in *by those `principal` made. */
static size_t
count_mine(struct wasm_driver *d, const char *principal, size_t *by)
{
	struct dirent *e;
	struct snap_meta m;
	size_t n = 0;
	DIR *dir = opendir(d->snap_dir);

	*by = 0;
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL)
		if (msc_snapshot_id_valid(e->d_name) &&
		    meta_read(d, e->d_name, &m) == 0 && snap_mine(d, &m)) {
			n++;
			if (strcmp(m.owner, principal) == 0)
				(*by)++;
		}
	closedir(dir);
	return n;
}

/*
 * Counts one more snapshot being made by `principal`; -EDQUOT at
 * --max-snapshots or at its share (--max-principal-snapshots).
 */
static int
quota_take(struct wasm_driver *d, const char *principal, char *err,
    size_t errlen)
{
	size_t by, n = count_mine(d, principal, &by);

	return msc_snap_reserve_as(d->pins, principal, n, by,
	    d->cfg->max_snapshots, d->cfg->max_principal_snapshots, err,
	    errlen);
}

/* Opens <dir>/<id>/root, never through a symlink; -errno. */
static int
open_root(struct wasm_driver *d, const char *base, const char *id)
{
	char path[4300];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/root", base, id);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	(void)d;
	return fd < 0 ? -errno : fd;
}

/* Whether computer id's root is still folder fd (not swapped or gone). */
static bool
same_root(struct wasm_driver *d, const char *id, int fd)
{
	struct stat a, b;
	char path[4300];

	snprintf(path, sizeof(path), "%s/%s/root", d->dir, id);
	return fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Whether `need` more bytes fit on the file system of folder fd, with a
 * margin; -ENOSPC when they do not.
 */
static int
room_for(int fd, uint64_t need)
{
	struct statvfs sv;

	if (fstatvfs(fd, &sv) != 0)
		return 0;       /* not known: the copy itself will say */
	return (uint64_t)sv.f_bavail * sv.f_frsize < need + (need >> 4) +
	    (16u << 20) ? -ENOSPC : 0;
}

/* The message for a copy that failed with rv. */
static void
copy_error(int rv, const char *what, const char *cid, char *err,
    size_t errlen)
{
	if (rv == -ENOSPC || rv == -EDQUOT)
		snprintf(err, errlen, "Cannot %s computer '%s': the host is out "
		    "of disk space (delete snapshots or computers, then "
		    "retry).", what, cid);
	else if (rv == -ELOOP)
		snprintf(err, errlen, "Cannot %s computer '%s': its folders "
		    "nest deeper than %d levels.", what, cid,
		    WASM_TREE_MAX_DEPTH);
	else
		snprintf(err, errlen, "Cannot %s computer '%s': %s", what, cid,
		    strerror(-rv));
}

int
wasm_snapshot(struct wasm_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen)
{
	struct snap_meta m = { .size = 0 };
	char tmp[MSC_SNAPSHOT_ID_LEN + 8], path[4300];
	int src = -1, dst = -1, sdir = -1, rv;
	uint64_t size = 0;
	struct tm tm;
	time_t now = time(NULL);

	if (!msc_principal_valid(req->principal)) {
		snprintf(err, errlen, "not a principal's name");
		return -EINVAL;
	}
	if (!wasm_exists(d, req->computer_id)) {
		snprintf(err, errlen, "Computer '%s' not found.",
		    req->computer_id);
		return -ENOENT;
	}
	if ((rv = quota_take(d, req->principal, err, errlen)) != 0)
		return rv;
	msc_snapshot_id_new(m.id);
	snprintf(m.name, sizeof(m.name), "%s", req->name);
	snprintf(m.computer_id, sizeof(m.computer_id), "%s", req->computer_id);
	snprintf(m.owner, sizeof(m.owner), "%s", req->principal);
	snprintf(m.driver, sizeof(m.driver), "%s", d->cfg->driver_id);
	gmtime_r(&now, &tm);
	strftime(m.created_at, sizeof(m.created_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(tmp, sizeof(tmp), ".new-%s", m.id);
	if ((sdir = open(d->snap_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(sdir, tmp, 0700) != 0) {
		rv = -errno;
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/root", tmp);
	if (mkdirat(sdir, path, 0700) != 0 ||
	    (dst = openat(sdir, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rv = -errno;
		goto fail;
	}
	if ((src = open_root(d, d->dir, req->computer_id)) < 0) {
		rv = src;
		goto fail;
	}
	/* Measured first: bounded by the quota and the free space. */
	if ((rv = wasm_tree_size(src, &size)) != 0)
		goto fail;
	if (d->disk_quota > 0 && size > d->disk_quota + (8u << 20)) {
		snprintf(err, errlen, "Cannot snapshot computer '%s': it holds "
		    "more than its disk quota (%s).", req->computer_id,
		    d->disk_text);
		rv = -ENOSPC;
		goto out;
	}
	if ((rv = room_for(sdir, size)) != 0 ||
	    (rv = wasm_copy_tree(src, dst, d->disk_quota > 0 ?
	    d->disk_quota + (16u << 20) : 0, &m.size)) != 0)
		goto fail;
	/* A reset, restore or delete meanwhile put another root in place
	 * (or none): what was copied may be half of it. */
	if (!same_root(d, req->computer_id, src)) {
		snprintf(err, errlen, MSC_SNAPSHOT_WENT, req->computer_id);
		rv = -ECONNABORTED;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s/meta.json", d->snap_dir, tmp);
	if ((rv = meta_write(path, &m)) != 0)
		goto fail;
	if (renameat(sdir, tmp, sdir, m.id) != 0) {
		rv = -errno;
		goto fail;
	}
	rv = fill_snapshot(d, &m, out);
	msc_log_info("snapshot %s of computer %s made (%llu bytes)", m.id,
	    req->computer_id, (unsigned long long)m.size);
	goto out;
fail:
	/* Gone, or its root swapped by a reset or restore (a file that
	 * vanished mid-copy, or no root at the moment of the open). */
	if (!wasm_exists(d, req->computer_id) || (src >= 0 ?
	    !same_root(d, req->computer_id, src) : rv == -ENOENT)) {
		snprintf(err, errlen, MSC_SNAPSHOT_WENT, req->computer_id);
		rv = -ECONNABORTED;
	} else
		copy_error(rv, "snapshot", req->computer_id, err, errlen);
out:
	if (rv != 0 && sdir >= 0)
		(void)wasm_rmtree_at(sdir, tmp);        /* nothing half-made */
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	if (sdir >= 0)
		close(sdir);
	msc_snap_unreserve_as(d->pins, req->principal);
	return rv;
}

/*
 * Puts snapshot snap's tree in place of computer cid's root: a copy
 * beside it, then one exchange; the old root goes. On failure the
 * computer is as it was.
 */
static int
put_root(struct wasm_driver *d, const char *cid, const char *snap,
    const char *what, char *err, size_t errlen)
{
	char path[4300], tmp[32];
	int cfd = -1, src = -1, dst = -1, rv;
	uint64_t size = 0, bytes;

	snprintf(path, sizeof(path), "%s/%s", d->dir, cid);
	{
		unsigned char rnd[6];

		msc_random_bytes(rnd, sizeof(rnd));
		snprintf(tmp, sizeof(tmp), ".snapin-%02x%02x%02x%02x%02x%02x",
		    rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	}
	if ((cfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0 || mkdirat(cfd, tmp, 0700) != 0 ||
	    (dst = openat(cfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0) {
		rv = -errno;
		goto out;
	}
	if ((src = open_root(d, d->snap_dir, snap)) < 0) {
		rv = src;
		goto out;
	}
	if ((rv = wasm_tree_size(src, &size)) != 0 ||
	    (rv = room_for(cfd, size)) != 0 ||
	    (rv = wasm_copy_tree(src, dst, 0, &bytes)) != 0)
		goto out;
	if (renameat2(cfd, tmp, cfd, "root", RENAME_EXCHANGE) != 0)
		rv = -errno;
out:
	if (rv != 0)
		copy_error(rv, what, cid, err, errlen);
	if (cfd >= 0)
		(void)wasm_rmtree_at(cfd, tmp); /* the old root, or the copy */
	if (src >= 0)
		close(src);
	if (dst >= 0)
		close(dst);
	if (cfd >= 0)
		close(cfd);
	return rv;
}

int
wasm_restore(struct wasm_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	struct snap_meta m;
	int rv;

	if ((rv = snap_find(d, req->snapshot_id, req->principal, false, &m,
	    err, errlen)) != 0)
		return rv;
	if ((rv = msc_snap_pin(d->pins, req->snapshot_id)) != 0)
		return rv == -ENOENT ? not_found(req->snapshot_id, err, errlen)
				     : rv;
	if ((rv = wasm_attach(d, req->computer_id, out, err, errlen)) == 0) {
		wasm_end_running(d, req->computer_id);
		if ((rv = put_root(d, req->computer_id, req->snapshot_id,
		    "restore", err, errlen)) != 0)
			msc_computer_fini(out);
	}
	msc_snap_unpin(d->pins, req->snapshot_id);
	if (rv == 0)
		msc_log_info("restored computer %s from %s", req->computer_id,
		    req->snapshot_id);
	return rv;
}

int
wasm_create_from(struct wasm_driver *d, const Msc__V1__CreateRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	struct snap_meta m;
	int rv;

	if ((rv = snap_find(d, req->from_snapshot, req->principal, false, &m,
	    err, errlen)) != 0)
		return rv;
	if ((rv = msc_snap_pin(d->pins, req->from_snapshot)) != 0)
		return rv == -ENOENT ? not_found(req->from_snapshot, err,
		    errlen) : rv;
	rv = wasm_create_owned(d, req->computer_id, req->temporary,
	    req->principal, out, err, errlen);
	if (rv == 0 && (rv = put_root(d, req->computer_id, req->from_snapshot,
	    "create", err, errlen)) != 0) {
		/* Nothing half-made: the new computer goes again. */
		msc_computer_fini(out);
		wasm_lease_drop(d, req->computer_id);
		(void)wasm_remove(d, req->computer_id);
	}
	msc_snap_unpin(d->pins, req->from_snapshot);
	return rv;
}

int
wasm_snapshots(struct wasm_driver *d, const Msc__V1__SnapshotRequest *req,
    Msc__V1__SnapshotList *out, char *err, size_t errlen)
{
	struct dirent *e;
	size_t cap = 0;
	DIR *dir;
	int rv = 0;

	if ((dir = opendir(d->snap_dir)) == NULL) {
		rv = -errno;
		snprintf(err, errlen, "cannot list the snapshots: %s",
		    strerror(-rv));
		return rv;
	}
	while (rv == 0 && (e = readdir(dir)) != NULL) {
		struct snap_meta m;
		Msc__V1__Snapshot *s;

		if (!msc_snapshot_id_valid(e->d_name) ||
		    meta_read(d, e->d_name, &m) != 0 || !snap_mine(d, &m) ||
		    !snap_visible(d, &m, req->principal, false))
			continue;
		if (out->n_snapshots == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			Msc__V1__Snapshot **n = realloc(out->snapshots,
			    ncap * sizeof(*n));

			if (n == NULL) {
				rv = -ENOMEM;
				break;
			}
			out->snapshots = n;
			cap = ncap;
		}
		if ((s = malloc(sizeof(*s))) == NULL) {
			rv = -ENOMEM;
			break;
		}
		*s = (Msc__V1__Snapshot)MSC__V1__SNAPSHOT__INIT;
		out->snapshots[out->n_snapshots++] = s;
		rv = fill_snapshot(d, &m, s);
	}
	closedir(dir);
	return rv;
}

int
wasm_snapshot_delete(struct wasm_driver *d,
    const Msc__V1__SnapshotRequest *req, char *err, size_t errlen)
{
	struct snap_meta m;
	char gone[MSC_SNAPSHOT_ID_LEN + 8];
	int sdir, rv;

	if ((rv = snap_find(d, req->snapshot_id, req->principal, true, &m, err,
	    errlen)) != 0)
		return rv;
	if (msc_snap_claim(d->pins, req->snapshot_id) != 0) {
		snprintf(err, errlen, MSC_SNAPSHOT_PINNED, req->snapshot_id);
		return -EEXIST;
	}
	snprintf(gone, sizeof(gone), ".gone-%s", req->snapshot_id + 5);
	if ((sdir = open(d->snap_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rv = -errno;
	else if (renameat(sdir, req->snapshot_id, sdir, gone) != 0)
		rv = errno == ENOENT ? not_found(req->snapshot_id, err,
		    errlen) : -errno;
	else
		(void)wasm_rmtree_at(sdir, gone);
	if (sdir >= 0)
		close(sdir);
	msc_snap_release(d->pins, req->snapshot_id);
	if (rv == 0)
		msc_log_info("snapshot %s deleted", req->snapshot_id);
	else if (rv != -ENOENT)
		snprintf(err, errlen, "cannot delete snapshot '%s': %s",
		    req->snapshot_id, strerror(-rv));
	return rv;
}
