/*
 * wasm_computers.c - computers of the wasm backends: one folder each,
 * <dir>/<id>/ holding root/ (the guest's "/") and meta.json (mode,
 * creation time and, made for a principal of --tokens-file, its tag). A
 * folder appears and disappears by one rename, so a crash never leaves a
 * half-made computer under a valid id. Here too: the command running in
 * each computer (so that a stop ends it; wasm_exec.c tracks its runner
 * here) and, at start, the removal of temporaries whose lease lapsed.
 * Above the leases (wasm_lease.c) and the folder helpers (wasm_fs.c).
 */
#include "wasm_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "msc_driver.h"
#include "msc_log.h"
#include "msc_principal.h"
#include "msc_random.h"
#include "msc_slug.h"

struct wasm_meta {
	bool temporary;
	char created_at[40];
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];      /* "": none */
};

static char *
dup_str(const char *s)
{
	return strdup(s != NULL ? s : "");
}

static int
fill_computer(struct wasm_driver *d, const char *id,
    const struct wasm_meta *m, Msc__V1__Computer *out)
{
	out->computer_id = dup_str(id);
	out->sandbox_id = dup_str(id);
	out->temporary = m->temporary;
	out->image = dup_str(d->image);
	out->state = dup_str("running");
	out->created_at = dup_str(m->created_at);
	out->backend = dup_str(d->backend);
	out->driver = dup_str(d->cfg->driver_id);
	out->disk = dup_str(d->disk_text);
	out->principal = dup_str(m->principal);
	if (!out->computer_id || !out->sandbox_id || !out->image ||
	    !out->state || !out->created_at || !out->backend || !out->driver ||
	    !out->disk || !out->principal) {
		msc_computer_fini(out);
		return -ENOMEM;
	}
	return 0;
}

static int
meta_read(struct wasm_driver *d, const char *id, struct wasm_meta *m)
{
	char path[4096];
	json_error_t jerr;
	json_t *j, *t, *c, *p;

	if (!msc_slug_valid(id))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s/meta.json", d->dir, id);
	if ((j = json_load_file(path, 0, &jerr)) == NULL)
		return access(path, F_OK) == 0 ? -EIO : -ENOENT;
	t = json_object_get(j, "temporary");
	c = json_object_get(j, "created_at");
	p = json_object_get(j, "principal");
	m->temporary = json_is_true(t);
	snprintf(m->created_at, sizeof(m->created_at), "%s",
	    json_is_string(c) ? json_string_value(c) : "");
	snprintf(m->principal, sizeof(m->principal), "%s",
	    json_is_string(p) ? json_string_value(p) : "");
	json_decref(j);
	return 0;
}

static int
meta_write(const char *path, const struct wasm_meta *m)
{
	json_t *j = json_pack("{s:b, s:s}", "temporary", m->temporary,
	    "created_at", m->created_at);
	int rv;

	if (j == NULL)
		return -ENOMEM;
	if (m->principal[0] != '\0' && json_object_set_new(j, "principal",
	    json_string(m->principal)) != 0) {
		json_decref(j);
		return -ENOMEM;
	}
	rv = json_dump_file(j, path, JSON_COMPACT) == 0 ? 0 : -EIO;
	json_decref(j);
	return rv;
}

/* Makes <dir>/<id> with an empty root/ (and root/tmp), atomically. */
static int
make_folder(struct wasm_driver *d, const char *id, const struct wasm_meta *m,
    int *leasep, char *err, size_t errlen)
{
	char tmp[4096], path[4096], sub[4200];
	unsigned char rnd[6];
	int dirfd, rv;

	msc_random_bytes(rnd, sizeof(rnd));
	snprintf(tmp, sizeof(tmp), "%s/.new-%s-%02x%02x%02x%02x%02x%02x",
	    d->dir, id, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	snprintf(path, sizeof(path), "%s/%s", d->dir, id);
	if (mkdir(tmp, 0700) != 0) {
		rv = -errno;
		snprintf(err, errlen, "cannot create a folder in %s: %s",
		    d->dir, strerror(-rv));
		return rv;
	}
	snprintf(sub, sizeof(sub), "%s/root", tmp);
	rv = mkdir(sub, 0700) == 0 ? 0 : -errno;
	snprintf(sub, sizeof(sub), "%s/root/tmp", tmp);
	if (rv == 0 && mkdir(sub, 0700) != 0)
		rv = -errno;
	snprintf(sub, sizeof(sub), "%s/meta.json", tmp);
	if (rv == 0)
		rv = meta_write(sub, m);
	*leasep = -1;
	if (rv == 0 && m->temporary) {
		/* Locked before it appears: never reaped as an orphan. */
		int tfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		rv = tfd < 0 ? -errno : wasm_lease_make(tfd);
		if (tfd >= 0)
			close(tfd);
		if (rv >= 0) {
			*leasep = rv;
			rv = 0;
		}
	}
	if (rv == 0 && rename(tmp, path) != 0)
		rv = errno == ENOTEMPTY ? -EEXIST : -errno;
	if (rv != 0 && *leasep >= 0) {
		close(*leasep);
		*leasep = -1;
	}
	if (rv != 0) {
		if ((dirfd = open(d->dir, O_RDONLY | O_DIRECTORY)) >= 0) {
			(void)wasm_rmtree_at(dirfd, strrchr(tmp, '/') + 1);
			close(dirfd);
		}
		if (rv == -EEXIST)
			snprintf(err, errlen, "Computer '%s' already exists.",
			    id);
		else
			snprintf(err, errlen, "cannot create computer '%s': "
			    "%s", id, strerror(-rv));
	}
	return rv;
}

/* Removes <dir>/<id> (or <dir>/<id>/root when only_root) for good. */
static int
remove_folder(struct wasm_driver *d, const char *id, bool only_root)
{
	char name[128];
	int dirfd, rv;

	if ((dirfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (only_root) {
		char from[128];

		wasm_gone_name(id, name, sizeof(name));
		snprintf(from, sizeof(from), "%s/root", id);
		rv = renameat(dirfd, from, dirfd, name) == 0 ? 0 : -errno;
	} else
		rv = wasm_hide(dirfd, id, name, sizeof(name));
	if (rv == 0)
		rv = wasm_rmtree_at(dirfd, name);
	close(dirfd);
	return rv;
}

static void
now_iso(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int
wasm_create(struct wasm_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return wasm_create_owned(d, id, temporary, "", out, err, errlen);
}

int
wasm_create_owned(struct wasm_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen)
{
	struct wasm_meta m = { .temporary = temporary };
	bool stopping;
	int rv, lease;

	snprintf(m.principal, sizeof(m.principal), "%s", principal);
	if (!msc_slug_valid(id)) {
		snprintf(err, errlen, "%s", MSC_SLUG_ERROR);
		return -EINVAL;
	}
	/* None once the driver stops: its stop hides the folders of the
	 * temporaries it held by id, and must meet no new computer there. */
	pthread_mutex_lock(&d->mu);
	stopping = d->stopping;
	pthread_mutex_unlock(&d->mu);
	if (stopping) {
		snprintf(err, errlen, "%s is stopping", d->backend);
		return -ESHUTDOWN;
	}
	now_iso(m.created_at, sizeof(m.created_at));
	if ((rv = make_folder(d, id, &m, &lease, err, errlen)) != 0)
		return rv;
	if (lease >= 0 && !wasm_lease_hold(d, id, lease)) {
		/* The driver stops: its temporaries are being removed. */
		(void)remove_folder(d, id, false);
		snprintf(err, errlen, "%s is stopping", d->backend);
		return -ESHUTDOWN;
	}
	return fill_computer(d, id, &m, out);
}

int
wasm_attach(struct wasm_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	struct wasm_meta m;
	int rv;

	if ((rv = meta_read(d, id, &m)) != 0) {
		snprintf(err, errlen, rv == -ENOENT
		    ? "Computer '%s' not found." : "Computer '%s' is damaged "
		    "(unreadable meta.json).", id);
		return rv;
	}
	if (m.temporary && !wasm_lease_held(d, id)) {
		int fd = wasm_lease_open(d, id);

		if (fd >= 0 && !wasm_lease_hold(d, id, fd)) {
			snprintf(err, errlen, "%s is stopping", d->backend);
			return -ESHUTDOWN;
		} else if (fd < 0 && fd != -ENOENT)
			msc_log_warn("cannot hold the lease of %s: %s", id,
			    strerror(-fd));
		/* Reaped meanwhile: gone. */
		if (fd >= 0 && meta_read(d, id, &m) != 0) {
			wasm_lease_drop(d, id);
			snprintf(err, errlen, "Computer '%s' not found.", id);
			return -ENOENT;
		}
	}
	return fill_computer(d, id, &m, out);
}

int
wasm_owner(struct wasm_driver *d, const char *id, char *tag, size_t taglen,
    char *err, size_t errlen)
{
	struct wasm_meta m;
	int rv;

	if ((rv = meta_read(d, id, &m)) != 0) {
		snprintf(err, errlen, rv == -ENOENT
		    ? "Computer '%s' not found." : "Computer '%s' is damaged "
		    "(unreadable meta.json).", id);
		return rv;
	}
	snprintf(tag, taglen, "%s", m.principal);
	return 0;
}

static bool
is_temporary(struct wasm_driver *d, const char *id)
{
	struct wasm_meta m;

	return meta_read(d, id, &m) == 0 && m.temporary;
}

int
wasm_remove(struct wasm_driver *d, const char *id)
{
	return remove_folder(d, id, false);
}

bool
wasm_exists(struct wasm_driver *d, const char *id)
{
	struct wasm_meta m;

	return meta_read(d, id, &m) == 0;
}

/* Lets Stop, Delete, Restart and Reset end the command (w is borrowed). */
void
wasm_running_track(struct wasm_driver *d, const char *id,
    struct wasm_running *w)
{
	pthread_mutex_lock(&d->mu);
	if (d->stopping) {      /* killed with the others */
		w->ended = true;
		kill(w->pid, SIGKILL);
	} else if (msc_map_put(d->running, id, w) != 0)
		msc_log_warn("wasm: cannot track the command in %s; only its "
			     "deadline can end it", id);
	pthread_mutex_unlock(&d->mu);
}

/*
 * Forgets the command before it is reaped, so that a kill from
 * wasm_end_running can only reach our child (or its zombie).
 */
void
wasm_running_untrack(struct wasm_driver *d, const char *id)
{
	pthread_mutex_lock(&d->mu);
	(void)msc_map_del(d->running, id);
	pthread_mutex_unlock(&d->mu);
}

void
wasm_end_running(struct wasm_driver *d, const char *id)
{
	struct wasm_running *w;

	pthread_mutex_lock(&d->mu);
	if ((w = msc_map_get(d->running, id)) != NULL && w->pid > 0) {
		w->ended = true;
		kill(w->pid, SIGKILL);
	}
	pthread_mutex_unlock(&d->mu);
}

void
wasm_reap_lapsed(struct wasm_driver *d)
{
	DIR *dir = opendir(d->dir);
	struct dirent *e;

	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL) {
		int fd, rv;

		if (!msc_slug_valid(e->d_name) || !is_temporary(d, e->d_name))
			continue;
		if ((fd = wasm_lease_lapsed(d, e->d_name)) < 0)
			continue;
		/* Nobody holds it: its server is gone. */
		if ((rv = wasm_remove(d, e->d_name)) == 0)
			msc_log_info("removed %s: a temporary computer whose "
			    "server is gone (its lease lapsed)", e->d_name);
		else
			msc_log_warn("cannot remove the orphaned %s: %s",
			    e->d_name, strerror(-rv));
		close(fd);
	}
	closedir(dir);
}

/* A restart ends whatever runs; the files stay. */
int
wasm_restart(struct wasm_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	wasm_end_running(d, id);
	return wasm_attach(d, id, out, err, errlen);
}

/* A factory reset ends whatever runs and empties the root. */
int
wasm_reset(struct wasm_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen)
{
	char root[4096], tmp[4200];
	int rv;

	if ((rv = wasm_attach(d, id, out, err, errlen)) != 0)
		return rv;
	wasm_end_running(d, id);
	if ((rv = remove_folder(d, id, true)) != 0 && rv != -ENOENT)
		goto fail;
	if ((rv = wasm_computer_root(d, id, root, sizeof(root))) != 0)
		goto fail;
	rv = mkdir(root, 0700) == 0 || errno == EEXIST ? 0 : -errno;
	snprintf(tmp, sizeof(tmp), "%s/tmp", root);
	if (rv == 0 && mkdir(tmp, 0700) != 0 && errno != EEXIST)
		rv = -errno;
	if (rv == 0)
		return 0;
fail:
	msc_computer_fini(out);
	snprintf(err, errlen, "cannot reset computer '%s': %s", id,
	    strerror(-rv));
	return rv;
}

/*
 * The last session let go (remove false): a temporary computer's folder
 * goes, a permanent one stays. Delete (remove true) always removes.
 */
int
wasm_stop(struct wasm_driver *d, const char *id, bool remove, char *err,
    size_t errlen)
{
	struct wasm_meta m;
	int rv;

	if ((rv = meta_read(d, id, &m)) != 0) {
		if (rv == -ENOENT && !remove)
			return 0;
		snprintf(err, errlen, "Computer '%s' not found.", id);
		return rv == -EIO ? remove_folder(d, id, false) : rv;
	}
	wasm_end_running(d, id);
	if (!remove && !m.temporary)
		return 0;
	wasm_lease_drop(d, id);
	if ((rv = remove_folder(d, id, false)) != 0 && rv != -ENOENT) {
		snprintf(err, errlen, "cannot remove computer '%s': %s", id,
		    strerror(-rv));
		return rv;
	}
	return 0;
}

static int
list_add(Msc__V1__ComputerList *out, size_t *cap, Msc__V1__Computer *c)
{
	if (out->n_computers == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		Msc__V1__Computer **n = realloc(out->computers,
		    ncap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		out->computers = n;
		*cap = ncap;
	}
	out->computers[out->n_computers++] = c;
	return 0;
}

int
wasm_list(struct wasm_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen)
{
	struct dirent *e;
	size_t cap = 0;
	DIR *dir;
	int rv = 0;

	if ((dir = opendir(d->dir)) == NULL) {
		rv = -errno;
		snprintf(err, errlen, "cannot list %s: %s", d->dir,
		    strerror(-rv));
		return rv;
	}
	while (rv == 0 && (e = readdir(dir)) != NULL) {
		struct wasm_meta m;
		Msc__V1__Computer *c;

		if (!msc_slug_valid(e->d_name) ||
		    meta_read(d, e->d_name, &m) != 0)
			continue;
		if ((c = malloc(sizeof(*c))) == NULL) {
			rv = -ENOMEM;
			break;
		}
		msc__v1__computer__init(c);
		if ((rv = fill_computer(d, e->d_name, &m, c)) == 0 &&
		    (rv = list_add(out, &cap, c)) != 0)
			msc_computer_fini(c);
		if (rv != 0)
			free(c);
	}
	closedir(dir);
	if (rv != 0) {
		msc_computer_list_fini(out);
		snprintf(err, errlen, "cannot list computers: %s",
		    strerror(-rv));
	}
	return rv;
}
