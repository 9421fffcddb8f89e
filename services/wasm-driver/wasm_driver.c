/*
 * wasm_driver.c - the msc.v1.Driver service for the wasm backends: the
 * shared service skeleton (lib/msc_driver.h) over wasm_computers.c and
 * wasm_exec.c, and the configuration: where computers live, which runner
 * runs commands, and the user module compiled once at startup.
 */
#include "wasm_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "msc_driver.h"
#include "msc_log.h"
#include "msc_main.h"
#include "wasm_cfg.h"
#include "wasm_compile.h"

MSC_DRIVER_OPS(wasm_ops_base, wasm, "wasm-driver", msc_driver_code,
    wasm_cfg_describe);

/* wasm_ops_base and the principal that made each computer. */
static struct msc_driver_ops wasm_ops;

static int
create_owned(void *be, const char *id, bool temporary, const char *principal,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return wasm_create_owned(be, id, temporary, principal, out, err,
	    errlen);
}

static int
owner(void *be, const char *id, char *tag, size_t taglen, char *err,
    size_t errlen)
{
	return wasm_owner(be, id, tag, taglen, err, errlen);
}

static int
snapshot(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Snapshot *out, char *err, size_t errlen)
{
	return wasm_snapshot(be, req, out, err, errlen);
}

static int
restore(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return wasm_restore(be, req, out, err, errlen);
}

static int
snapshots(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__SnapshotList *out, char *err, size_t errlen)
{
	return wasm_snapshots(be, req, out, err, errlen);
}

static int
snapshot_delete(void *be, const Msc__V1__SnapshotRequest *req, char *err,
    size_t errlen)
{
	return wasm_snapshot_delete(be, req, err, errlen);
}

static int
create_from(void *be, const Msc__V1__CreateRequest *req,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	return wasm_create_from(be, req, out, err, errlen);
}

#define STATE_DIR ".mcp-sandbox-computer-vm-for-ai"

/* mkdir -p with mode 0700 for the folders we make. */
static int
mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, 0700) == 0 || errno == EEXIST ? 0 : -errno;
}

/*
 * The folder of this backend's computers: KILNTAINERS_WASM_DIR, else
 * ~/.mcp-sandbox-computer-vm-for-ai/wasm, plus the backend name.
 */
static int
state_dir(struct wasm_driver *d)
{
	const char *env = getenv("KILNTAINERS_WASM_DIR");
	const char *home = getenv("HOME");
	int n;

	if (env != NULL && *env != '\0')
		n = asprintf(&d->dir, "%s/%s", env, d->backend);
	else
		n = asprintf(&d->dir, "%s/" STATE_DIR "/wasm/%s",
		    home != NULL && *home != '\0' ? home : ".", d->backend);
	if (n < 0) {
		d->dir = NULL;
		return -ENOMEM;
	}
	return mkdirs(d->dir);
}

/* Removes what a crash left half made (.new-*) or half removed (.gone-*). */
static void
sweep_leftovers(struct wasm_driver *d)
{
	struct dirent *e;
	DIR *dir = opendir(d->dir);

	if (dir == NULL)
		return;
	while ((e = readdir(dir)) != NULL)
		if (strncmp(e->d_name, ".gone-", 6) == 0 ||
		    strncmp(e->d_name, ".new-", 5) == 0)
			(void)wasm_rmtree_at(dirfd(dir), e->d_name);
	closedir(dir);
}

/* The first runner that exists: an environment override, built, installed. */
static char *
find_runner(const char *env, const char *built, const char *installed)
{
	const char *const cands[] = { built != NULL ? built : "", installed,
		NULL };
	const char *p = msc_main_find_file(env, X_OK, cands);

	return p != NULL ? strdup(p) : NULL;
}

static int
parse_limits(struct wasm_driver *d, const struct msc_cfg *cfg)
{
	const struct wasm_cfg *wc = wasm_cfg(cfg);
	const char *mem = wc->wasm_max_memory ? wc->wasm_max_memory : "256";
	char *end;

	d->max_memory_mib = strtol(mem, &end, 10);
	if (*end != '\0' || d->max_memory_mib < 1 ||
	    d->max_memory_mib > 4096) {
		msc_cfg_error("argument --wasm-max-memory: invalid value: '%s' "
			      "(MiB, 1 to 4096)", mem);
		return -EINVAL;
	}
	if (msc_cfg_size(wc->disk_quota != NULL ? wc->disk_quota : "0",
	    &d->disk_quota) != 0) {
		msc_cfg_error("argument --disk-quota: invalid value: '%s' (a "
			      "size such as 500M, 1G or 1GiB; 0: no bound)",
		    wc->disk_quota);
		return -EINVAL;
	}
	if (d->disk_quota == 0)
		snprintf(d->disk_text, sizeof(d->disk_text),
		    "no quota (--disk-quota 0)");
	else
		msc_cfg_size_text(d->disk_quota, d->disk_text,
		    sizeof(d->disk_text));
	if (wc->wasm_fuel == NULL || *wc->wasm_fuel == '\0')
		return 0;
	d->fuel = strtoll(wc->wasm_fuel, &end, 10);
	if (*end != '\0' || d->fuel < 1) {
		msc_cfg_error("argument --wasm-fuel: invalid value: '%s' (a "
			      "positive integer)", wc->wasm_fuel);
		return -EINVAL;
	}
	return 0;
}

/* go_busybox: our toolbox, built into its runner; command mode by sh. */
static int
configure_busybox(struct wasm_driver *d)
{
	d->runner = find_runner("MSC_WASM_BUSYBOX",
#ifdef MSC_WASM_BUSYBOX_BUILD
	    MSC_WASM_BUSYBOX_BUILD,
#else
	    NULL,
#endif
#ifdef MSC_WASM_BUSYBOX_INSTALLED
	    MSC_WASM_BUSYBOX_INSTALLED
#else
	    NULL
#endif
	);
	if (d->runner == NULL) {
		msc_cfg_error("the go_busybox backend's runner msc-wasm-busybox "
			      "is not installed");
		return -ENOENT;
	}
	d->module_name = strdup("busybox");
	d->image = strdup("busybox");
	d->shell_mode = true;
	return d->module_name && d->image ? 0 : -ENOMEM;
}

/* wasm: the user's module, compiled once (cached by content hash). */
static int
configure_module(struct wasm_driver *d, const struct msc_cfg *cfg)
{
	const struct wasm_cfg *wc = wasm_cfg(cfg);
	char err[1024], cache[4200], *stem, *dot, *copy;
	uint64_t t0;
	struct timespec ts;
	int rv;

	if (wc->wasm_path == NULL || *wc->wasm_path == '\0') {
		msc_cfg_error("the wasm backend needs --wasm-path FILE (a WASI "
			      "preview1 module)");
		return -EINVAL;
	}
	if (access(wc->wasm_path, R_OK) != 0) {
		msc_cfg_error("WASM file not found: '%s'", wc->wasm_path);
		return -ENOENT;
	}
	d->runner = find_runner("MSC_WASM_EXEC",
#ifdef MSC_WASM_EXEC_BUILD
	    MSC_WASM_EXEC_BUILD,
#else
	    NULL,
#endif
#ifdef MSC_WASM_EXEC_INSTALLED
	    MSC_WASM_EXEC_INSTALLED
#else
	    NULL
#endif
	);
	if (d->runner == NULL) {
		msc_cfg_error("the wasm backend's runner msc-wasm-exec is not "
			      "installed");
		return -ENOENT;
	}
	/* Next to the backends' folders: <state>/cache. */
	snprintf(cache, sizeof(cache), "%.*s/cache",
	    (int)(strrchr(d->dir, '/') - d->dir), d->dir);
	if ((rv = mkdirs(cache)) != 0)
		return rv;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if ((rv = wasm_compile_module(wc->wasm_path, cache, &d->module_so,
		 err, sizeof(err))) != 0) {
		msc_cfg_error("%s", err);
		return rv;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	msc_log_info("wasm: module %s ready in %llu ms (%s)", wc->wasm_path,
	    (unsigned long long)((uint64_t)ts.tv_sec * 1000 +
		(uint64_t)ts.tv_nsec / 1000000 - t0), d->module_so);
	if ((copy = strdup(wc->wasm_path)) == NULL)
		return -ENOMEM;
	stem = basename(copy);
	if ((dot = strrchr(stem, '.')) != NULL && dot != stem)
		*dot = '\0';
	d->module_name = strdup(stem);
	d->image = strdup(wc->wasm_path);
	free(copy);
	/* The reference: a --shell other than the default is a command. */
	d->shell_mode = cfg->shell != NULL && strcmp(cfg->shell,
	    "/bin/bash") != 0;
	return d->module_name && d->image ? 0 : -ENOMEM;
}

int
wasm_driver_start(const struct msc_cfg *cfg, const char *url,
    struct wasm_driver **dp)
{
	struct wasm_driver *d;
	int rv;

	/* Checked here, not in wasm_cfg.c: the all-in-one's session checks
	 * its own --output-limit first, in the reference's order. */
	if (wasm_cfg(cfg)->output_limit < 1) {
		msc_cfg_error("--output-limit must be at least 1 byte.");
		return -EINVAL;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	d->backend = strcmp(cfg->backend, "wasm") == 0 ? "wasm" : "go_busybox";
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->ending_cv, NULL);
	if ((rv = parse_limits(d, cfg)) != 0)
		goto fail;
	if ((rv = state_dir(d)) != 0) {
		msc_cfg_error("cannot create the computers' folder %s: %s",
		    d->dir ? d->dir : "", strerror(-rv));
		goto fail;
	}
	sweep_leftovers(d);
	if ((rv = wasm_snap_init(d)) != 0) {
		msc_cfg_error("cannot use the snapshots' folder %s: %s",
		    d->snap_dir ? d->snap_dir : "", strerror(-rv));
		goto fail;
	}
	if ((rv = msc_map_new(&d->leases)) != 0)
		goto fail;
	/* A restarted server removes at once what its dead one held. */
	wasm_reap_lapsed(d);
	rv = strcmp(d->backend, "wasm") == 0 ? configure_module(d, cfg)
					      : configure_busybox(d);
	if (wasm_ops.create == NULL) {  /* once, before any service */
		wasm_ops = wasm_ops_base;
		wasm_ops.create_owned = create_owned;
		wasm_ops.owner = owner;
		wasm_ops.snapshot = snapshot;
		wasm_ops.restore = restore;
		wasm_ops.snapshots = snapshots;
		wasm_ops.snapshot_delete = snapshot_delete;
		wasm_ops.create_from = create_from;
		wasm_ops.preview_refusal = strcmp(d->backend, "wasm") == 0
		    ? wasm_preview_refusal : busybox_preview_refusal;
	}
	if (rv != 0 || (rv = msc_map_new(&d->running)) != 0 ||
	    (rv = msc_driver_start(url, &wasm_ops, d, (int)cfg->driver_workers,
		 &d->svc)) != 0)
		goto fail;
	msc_driver_limit_owners(d->svc, (int)cfg->driver_owner_workers);
	msc_driver_exec_defaults(d->svc, (uint32_t)cfg->timeout,
	    (uint64_t)wasm_cfg(cfg)->output_limit);
	*dp = d;
	return 0;
fail:
	wasm_driver_stop(d);
	return rv;
}

static void
kill_running(void *arg, const char *key, void *value)
{
	struct wasm_running *w = value;

	(void)arg;
	(void)key;
	if (w->pid > 0) {
		w->ended = true;
		kill(w->pid, SIGKILL);
	}
}

void
wasm_driver_stop(struct wasm_driver *d)
{
	if (d == NULL)
		return;
	/* Runners first, then the temporary computers' folders, at once:
	 * a host may SIGKILL us soon after its SIGTERM, and the queued
	 * Stops would take their turns at the workers. */
	pthread_mutex_lock(&d->mu);
	d->stopping = true;
	if (d->running != NULL)
		msc_map_each(d->running, kill_running, NULL);
	pthread_mutex_unlock(&d->mu);
	wasm_runner_fini(d);
	wasm_lease_remove_held(d);
	if (!msc_driver_stop(d->svc))
		return;         /* a job still runs and uses d: the process ends */
	msc_map_free(d->running);
	wasm_lease_fini(d);
	wasm_snap_fini(d);
	free(d->dir);
	free(d->runner);
	free(d->module_so);
	free(d->module_name);
	free(d->image);
	pthread_cond_destroy(&d->ending_cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
