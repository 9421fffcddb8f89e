/*
 * docker_fxsetup.c - wiring the fast exec path into the driver: where the
 * helper lives, adapting the create body, finding a computer's helper
 * and running a command through it (dock_fx_exec; the driver's Exec op,
 * with the Engine API exec as the fallback, is in docker_driver_exec.c).
 *
 * On the host, ROOT ($MSC_FAST_EXEC_DIR, else /run/mcp-sandbox-computer
 * as root, else $XDG_RUNTIME_DIR/mcp-sandbox-computer, else
 * /tmp/mcp-sandbox-computer-<uid>) holds only the helper binary, bind-
 * mounted read-only at /.msc-helper; it must be private to our uid
 * (docker_fxroot.c). Inside each container /.msc is a small tmpfs of its
 * own (DOCK_FX_TMPFS_OPTS: a few inodes, 64 KiB) where the helper makes
 * its socket: a computer can fill nothing on the host, sees no other
 * computer's socket, and nothing is left to clean when it goes. The
 * driver reaches the socket through the helper's /proc entry
 * (/proc/<pid>/root/.msc/sock), after checking that the process is in
 * that container's cgroup; the pid comes from the engine (State.Pid) and
 * is kept per container name.
 *
 * The fast path is off with MSC_FAST_EXEC=0 (or false, no, off), for a
 * non-unix engine (tcp://: the engine may not see our files), when the
 * helper binary is missing or ROOT is not private, and for images run
 * with --user (the helper could not create its socket in a 0700 tmpfs).
 * If a create with the helper fails, or its socket never appears (the
 * driver cannot see the engine's processes), the driver logs it, turns
 * the fast path off and goes on with the Engine API exec.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>

#include "docker_fastexec.h"
#include "msc_log.h"
#include "msc_main.h"
#include "msc_map.h"

#define FX_HELPER_NAME	"msc-exec-helper"
#define T_FX_INSPECT	10000

static bool
falsy(const char *s)
{
	return s != NULL && (strcmp(s, "0") == 0 ||
	    strcasecmp(s, "false") == 0 || strcasecmp(s, "no") == 0 ||
	    strcasecmp(s, "off") == 0);
}

static const char *
helper_source(void)
{
	static const char *const cands[] = {
#ifdef MSC_EXEC_HELPER_BUILD
		MSC_EXEC_HELPER_BUILD,
#endif
#ifdef MSC_EXEC_HELPER_INSTALLED
		MSC_EXEC_HELPER_INSTALLED,
#endif
		NULL };

	return msc_main_find_file("MSC_EXEC_HELPER", R_OK, cands);
}

/*
 * The driver reaches a helper through /proc/<pid>/root, which needs the
 * right to trace it: a driver that is not root cannot, in the containers
 * of an engine that runs as root (its socket owned by root). Said at
 * start instead of found by waiting for the first computer's socket.
 */
static bool
helper_reachable(struct dock_driver *d)
{
	const char *sock = d->engine ? dock_engine_socket(d->engine) : NULL;
	struct stat st;

	if (geteuid() == 0 || sock == NULL || stat(sock, &st) != 0 ||
	    st.st_uid != 0)
		return true;
	msc_log_info("fast exec off: the driver is not root and the engine "
		     "is (%s), so it cannot reach the exec helper inside its "
		     "containers; using the Engine API exec", sock);
	return false;
}

void
dock_fx_init(struct dock_driver *d)
{
	const char *host = dock_cfg(d->cfg)->docker_host, *env;

	d->fx_on = false;
	if ((env = getenv("MSC_FAST_EXEC_DIR")) != NULL && *env == '/')
		snprintf(d->fx_root, sizeof(d->fx_root), "%s", env);
	else if (geteuid() == 0)
		snprintf(d->fx_root, sizeof(d->fx_root),
		    "/run/mcp-sandbox-computer");
	else if ((env = getenv("XDG_RUNTIME_DIR")) != NULL && *env == '/')
		snprintf(d->fx_root, sizeof(d->fx_root),
		    "%s/mcp-sandbox-computer", env);
	else
		snprintf(d->fx_root, sizeof(d->fx_root),
		    "/tmp/mcp-sandbox-computer-%u", (unsigned)geteuid());
	d->fx_src = helper_source();
	if (falsy(getenv("MSC_FAST_EXEC"))) {
		msc_log_info("fast exec off (MSC_FAST_EXEC); using the Engine "
			     "API exec");
		return;
	}
	if (host == NULL || *host == '\0')
		host = getenv("DOCKER_HOST");
	if (host != NULL && *host != '\0' && strncmp(host, "unix://", 7) != 0) {
		msc_log_info("fast exec off: the engine at %s is not local", host);
		return;
	}
	if (d->fx_src == NULL) {
		msc_log_warn("fast exec off: no %s binary found", FX_HELPER_NAME);
		return;
	}
	if (!helper_reachable(d))
		return;
	d->fx_on = true;
}

bool
dock_fx_enabled(struct dock_driver *d)
{
	bool on;

	pthread_mutex_lock(&d->mu);
	on = d->fx_on;
	pthread_mutex_unlock(&d->mu);
	return on;
}

void
dock_fx_disable(struct dock_driver *d, const char *why)
{
	pthread_mutex_lock(&d->mu);
	if (d->fx_on)
		msc_log_warn("fast exec off: %s; using the Engine API exec", why);
	d->fx_on = false;
	pthread_mutex_unlock(&d->mu);
}

int
dock_fx_prepare(struct dock_driver *d, char *err, size_t errlen)
{
	char why[DOCK_ERRLEN] = "";
	int rc;

	pthread_mutex_lock(&d->fx_mu);
	rc = dock_fx_root_install(d->fx_root, d->fx_src, why, sizeof(why));
	pthread_mutex_unlock(&d->fx_mu);
	if (rc != 0) {
		snprintf(err, errlen, "exec helper folder: %s", why);
		dock_fx_disable(d, err);
	}
	return rc;
}

#define FX_KEPT_MAX 256         /* helpers' /proc entries kept open, */
#define FX_KEPT_FD_SHARE 16     /* and at most this share of RLIMIT_NOFILE */

/* What the driver knows of a container's helper: its init process. */
struct fx_proc {
	pid_t pid;                  /* 0: the container has no helper */
	char cid[65];
	int pfd;                    /* its /proc entry once checked, or -1 */
};

/* Frees p (taken), closing its kept fd; under d->mu. */
static void
fx_proc_free(struct dock_driver *d, struct fx_proc *p)
{
	if (p != NULL && p->pfd >= 0) {
		close(p->pfd);
		d->fx_kept--;
	}
	free(p);
}

static void
fx_cache_put(struct dock_driver *d, const char *name, pid_t pid,
    const char *cid)
{
	struct fx_proc *p = calloc(1, sizeof(*p));

	pthread_mutex_lock(&d->mu);
	fx_proc_free(d, msc_map_del(d->fx_procs, name));
	if (p != NULL) {
		p->pid = pid;
		p->pfd = -1;
		snprintf(p->cid, sizeof(p->cid), "%s", cid);
		if (msc_map_put(d->fx_procs, name, p) != 0)
			free(p);
	}
	pthread_mutex_unlock(&d->mu);
}

static void
fx_proc_free_each(void *arg, const char *key, void *value)
{
	(void)key;
	fx_proc_free(arg, value);
}

void
dock_fx_procs_free(struct dock_driver *d)
{
	if (d->fx_procs == NULL)
		return;
	msc_map_each(d->fx_procs, fx_proc_free_each, d);
	msc_map_free(d->fx_procs);
	d->fx_procs = NULL;
}

void
dock_fx_track(struct dock_driver *d, const char *name, json_t *ctr)
{
	json_t *state = json_object_get(ctr, "State");
	const char *cid = json_string_value(json_object_get(ctr, "Id"));
	json_int_t pid = json_integer_value(json_object_get(state, "Pid"));

	if (!json_is_true(json_object_get(state, "Running"))) {
		/* Not running: its next pid is not known yet. */
		pthread_mutex_lock(&d->mu);
		fx_proc_free(d, msc_map_del(d->fx_procs, name));
		pthread_mutex_unlock(&d->mu);
	} else if (!dock_fx_uses_helper(ctr) || cid == NULL ||
	    dock_runtime_hides_helper(d, ctr) ||
	    strlen(cid) != 64 || pid <= 1 || pid > INT32_MAX)
		fx_cache_put(d, name, 0, "");
	else
		fx_cache_put(d, name, (pid_t)pid, cid);
}

void
dock_fx_forget(struct dock_driver *d, const char *name)
{
	int rc;

	pthread_mutex_lock(&d->mu);
	fx_proc_free(d, msc_map_del(d->fx_procs, name));
	pthread_mutex_unlock(&d->mu);
	if ((rc = dock_fx_remove_legacy(d, name)) != 0 && rc != -ENOENT)
		msc_log_warn("cannot remove the old exec folder of %s: %s",
		    name, strerror(-rc));
}

/* File `path` (at dirfd): up to len - 1 bytes into buf, NUL-ended; its
 * length or a negative errno. */
static ssize_t
read_small(int dirfd, const char *path, char *buf, size_t len)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -EIO : -ENODATA;
	buf[n] = '\0';
	return n;
}

/* How many /proc entries may be kept: a small share of the fd limit. */
static int
kept_max(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 0;
	if (rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / FX_KEPT_FD_SHARE < FX_KEPT_MAX)
		return (int)(rl.rlim_cur / FX_KEPT_FD_SHARE);
	return FX_KEPT_MAX;
}

/*
 * The checked /proc entry of `name`'s helper, duplicated, while the
 * process lives (a dead one's entry answers no lookup, even when its pid
 * is reused); -ESRCH (and forgotten) once it died, -ENOENT when none was
 * kept.
 */
static int
fx_proc_kept(struct dock_driver *d, const char *name)
{
	struct fx_proc *c;
	int fd = -ENOENT;

	pthread_mutex_lock(&d->mu);
	if ((c = msc_map_get(d->fx_procs, name)) != NULL && c->pfd >= 0) {
		if ((fd = fcntl(c->pfd, F_DUPFD_CLOEXEC, 0)) < 0)
			fd = -ENOENT;
		else if (faccessat(fd, "stat", F_OK, 0) != 0) {
			close(fd);
			close(c->pfd);
			c->pfd = -1;
			d->fx_kept--;
			fd = -ESRCH;
		}
	}
	pthread_mutex_unlock(&d->mu);
	return fd;
}

/*
 * Opens /proc/<pid> of the helper of `name` after checking that the
 * process is still in that container (its cgroup path names the container
 * id; the fd keeps naming that process even if the pid is reused), once:
 * the checked entry is kept for the next calls (fx_proc_kept).
 * Returns the fd, -ENOTSUP for a container without helper, -ENOENT when
 * nothing is known, -ESRCH when what is known is stale.
 */
static int
fx_proc_open(struct dock_driver *d, const char *name)
{
	struct fx_proc p = { 0 }, *c;
	char path[64], buf[8192];
	int pfd;

	if ((pfd = fx_proc_kept(d, name)) != -ENOENT)
		return pfd;
	pthread_mutex_lock(&d->mu);
	if ((c = msc_map_get(d->fx_procs, name)) != NULL)
		p = *c;
	pthread_mutex_unlock(&d->mu);
	if (c == NULL)
		return -ENOENT;
	if (p.pid == 0)
		return -ENOTSUP;
	snprintf(path, sizeof(path), "/proc/%ld", (long)p.pid);
	if ((pfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -ESRCH;
	if (read_small(pfd, "cgroup", buf, sizeof(buf)) < 0 ||
	    strstr(buf, p.cid) == NULL) {
		close(pfd);
		return -ESRCH;
	}
	/* Kept when what is known is still this process, within a bound
	 * on the descriptors spent on it. */
	pthread_mutex_lock(&d->mu);
	if (d->fx_kept < kept_max() &&
	    (c = msc_map_get(d->fx_procs, name)) != NULL && c->pfd < 0 &&
	    c->pid == p.pid && strcmp(c->cid, p.cid) == 0 &&
	    (c->pfd = fcntl(pfd, F_DUPFD_CLOEXEC, 0)) >= 0)
		d->fx_kept++;
	pthread_mutex_unlock(&d->mu);
	return pfd;
}

/*
 * The helper's folder of `name` as seen through its /proc entry: returns
 * an fd that must stay open while `dir` is used, or a negative errno
 * (nothing to reach: use the Engine API). Asks the engine once when what
 * is known is missing or stale.
 */
static int
fx_open(struct dock_driver *d, const char *name, char *dir, size_t len)
{
	int pfd = fx_proc_open(d, name);

	if (pfd == -ENOENT || pfd == -ESRCH) {
		char err[DOCK_ERRLEN];
		json_t *ctr;

		if (dock_container_inspect(d->engine, name, T_FX_INSPECT, &ctr,
			err, sizeof(err)) != 0)
			return -ENOENT;
		dock_fx_track(d, name, ctr);
		json_decref(ctr);
		pfd = fx_proc_open(d, name);
	}
	if (pfd >= 0)
		snprintf(dir, len, "/proc/self/fd/%d/root" DOCK_FX_MOUNT_DIR,
		    pfd);
	return pfd;
}

int
dock_fx_reach(struct dock_driver *d, const char *name, bool ask_engine,
    char *dir, size_t len)
{
	int pfd;

	if (ask_engine)
		return fx_open(d, name, dir, len);
	if ((pfd = fx_proc_open(d, name)) >= 0)
		snprintf(dir, len, "/proc/self/fd/%d/root" DOCK_FX_MOUNT_DIR,
		    pfd);
	return pfd;
}

int
dock_fx_body(struct dock_driver *d, json_t *body)
{
	const char *user = json_string_value(json_object_get(body, "User"));
	json_t *hc = json_object_get(body, "HostConfig"), *binds, *tmpfs;
	char err[DOCK_ERRLEN], bind[sizeof(d->fx_root) + 64];

	if (!dock_fx_enabled(d) || (user != NULL && *user != '\0') ||
	    hc == NULL)
		return 1;
	if (dock_fx_prepare(d, err, sizeof(err)) != 0)
		return 1;
	json_object_set_new(body, "Entrypoint", json_pack("[ss]",
	    DOCK_FX_MOUNT_HELPER, DOCK_FX_MOUNT_DIR "/" DOCK_FX_SOCK_NAME));
	json_object_set_new(body, "Cmd", json_array());
	json_object_del(hc, "Init");
	if (!json_is_array(binds = json_object_get(hc, "Binds"))) {
		binds = json_array();
		json_object_set_new(hc, "Binds", binds);
	}
	dock_fx_helper_path(d, bind, sizeof(bind));
	strncat(bind, ":" DOCK_FX_MOUNT_HELPER ":ro",
	    sizeof(bind) - strlen(bind) - 1);
	json_array_append_new(binds, json_string(bind));
	if (!json_is_object(tmpfs = json_object_get(hc, "Tmpfs"))) {
		tmpfs = json_object();
		json_object_set_new(hc, "Tmpfs", tmpfs);
	}
	json_object_set_new(tmpfs, DOCK_FX_MOUNT_DIR, json_string(
	    strcmp(dock_engine_name(d->engine), "podman") == 0
		? DOCK_FX_TMPFS_OPTS_PODMAN
		: DOCK_FX_TMPFS_OPTS));
	return 0;
}

bool
dock_fx_mounts_helper(json_t *ctr)
{
	json_t *ep = json_object_get(json_object_get(ctr, "Config"),
	    "Entrypoint");
	const char *p0 = json_string_value(json_array_get(ep, 0));

	return p0 != NULL && strcmp(p0, DOCK_FX_MOUNT_HELPER) == 0;
}

bool
dock_fx_uses_helper(json_t *ctr)
{
	json_t *tmpfs = json_object_get(json_object_get(ctr, "HostConfig"),
	    "Tmpfs");

	return dock_fx_mounts_helper(ctr) &&
	    json_object_get(tmpfs, DOCK_FX_MOUNT_DIR) != NULL;
}

int
dock_fx_wait(struct dock_driver *d, const char *name, int ms)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	char dir[64];

	for (int waited = 0;; waited += 2) {
		int pfd = fx_open(d, name, dir, sizeof(dir)), rc = -ENOTCONN;

		if (pfd >= 0) {
			rc = dock_fx_probe(dir);
			close(pfd);
		}
		if (rc == 0)
			return 0;
		if (waited >= ms || pfd == -ENOTSUP)
			return -ENOTCONN;
		nanosleep(&ts, NULL);
	}
}


/*
 * Whether the cgroup of the process behind /proc entry pfd is frozen
 * (docker pause): 1 or 0, or a negative errno when it cannot be told
 * here. cgroup v1's freezer ("N:freezer:/path": freezer.state) where it
 * is mounted, else v2 ("0::/path": "frozen 1" in cgroup.events, under
 * /sys/fs/cgroup or a hybrid host's /sys/fs/cgroup/unified).
 */
static int
cgroup_frozen(int pfd)
{
	static const char *const v2_roots[] = { "/sys/fs/cgroup",
		"/sys/fs/cgroup/unified" };
	char buf[4096], path[4200], *v1 = NULL, *v2 = NULL, *line, *save;
	ssize_t n;

	if ((n = read_small(pfd, "cgroup", buf, sizeof(buf))) < 0)
		return (int)n;
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		char *c = strchr(line, ':');

		if (c == NULL)
			continue;
		if (strncmp(c, ":freezer:/", 10) == 0)
			v1 = c + 9;
		else if (strncmp(c, "::/", 3) == 0)
			v2 = c + 2;
	}
	if ((v1 != NULL && strstr(v1, "/..") != NULL) ||
	    (v2 != NULL && strstr(v2, "/..") != NULL))
		return -EINVAL;
	if (v1 != NULL) {
		/* Paused there, whatever v2 says (a hybrid host's frozen
		 * 0): unreadable is unknown. */
		snprintf(path, sizeof(path), "/sys/fs/cgroup/freezer%s/"
		    "freezer.state", v1);
		if ((n = read_small(AT_FDCWD, path, buf, sizeof(buf))) < 0)
			return (int)n;
		return strncmp(buf, "THAWED", 6) != 0;
	}
	for (size_t i = 0; v2 != NULL && i < 2; i++) {
		char *f;

		snprintf(path, sizeof(path), "%s%s/cgroup.events", v2_roots[i],
		    v2);
		if ((n = read_small(AT_FDCWD, path, buf, sizeof(buf))) < 0)
			continue;
		if (strncmp(buf, "frozen ", 7) == 0)
			return buf[7] == '1';
		if ((f = strstr(buf, "\nfrozen ")) != NULL)
			return f[8] == '1';
	}
	return -ENOTSUP;
}

/* Whether the process behind /proc entry pfd is stopped (SIGSTOP, a
 * tracer) or a zombie: 1 or 0, or a negative errno. */
static int
proc_stopped(int pfd)
{
	char buf[1024], *rp;
	ssize_t n;

	if ((n = read_small(pfd, "stat", buf, sizeof(buf))) < 0)
		return (int)n;
	/* "pid (comm) S ...": comm may hold anything but ends at the last
	 * ')'. */
	if ((rp = strrchr(buf, ')')) == NULL || rp[1] != ' ' || rp[2] == '\0')
		return -EIO;
	return strchr("TtZX", rp[2]) != NULL;
}

int
dock_fx_awake(struct dock_driver *d, const char *name)
{
	int pfd = fx_proc_open(d, name), rc;

	if (pfd < 0)
		return pfd;
	if ((rc = proc_stopped(pfd)) == 0)
		rc = cgroup_frozen(pfd);
	close(pfd);
	return rc < 0 ? rc : rc == 0;
}

int
dock_fx_exec(struct dock_driver *d, const char *name,
    const struct dock_exec_req *req, struct dock_exec_res *res, char *err,
    size_t errlen)
{
	char dir[64];
	int pfd, rv;

	if (!dock_fx_enabled(d) ||
	    (pfd = fx_open(d, name, dir, sizeof(dir))) < 0)
		return -ENOTCONN;
	rv = dock_fx_run(dir, req, res, err, errlen);
	close(pfd);
	return rv;
}
