/*
 * docker_fxsetup.c - wiring the fast exec path into the driver: where the
 * host folders live, installing the helper binary there, adapting the
 * create body, per-container folders, and dock_exec(): an exec through
 * the helper with the Engine API exec as the fallback.
 *
 * Layout on the host (ROOT is $MSC_FAST_EXEC_DIR, else
 * /run/mcp-sandbox-computer as root, else $XDG_RUNTIME_DIR/
 * mcp-sandbox-computer, else /tmp/mcp-sandbox-computer-<uid>):
 *   ROOT/msc-exec-helper    the helper, copied from the build or install
 *                           (bind-mounted read-only at /.msc-helper)
 *   ROOT/<container name>/  0700, bind-mounted at /.msc; the helper's
 *                           socket is /.msc/sock
 * The path follows from the container name alone, so a later server finds
 * the socket of a computer it adopts.
 *
 * The fast path is off with MSC_FAST_EXEC=0 (or false, no, off), for a
 * non-unix engine (tcp://: the engine may not see our files), when the
 * helper binary is missing, and for images run with --user (the helper
 * could not create its socket in a 0700 folder). If a create with the
 * helper fails, or its socket never appears (the driver runs in a
 * container whose paths the engine does not see), the driver logs it,
 * turns the fast path off and goes on with the Engine API exec.
 */
#include "docker_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <stdint.h>
#include <unistd.h>

#include "docker_fastexec.h"
#include "msc_log.h"
#include "msc_main.h"

#define FX_HELPER_NAME	"msc-exec-helper"
#define FX_COPY_MAX	(16 << 20)
#define FX_RM_DEPTH	8

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

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

void
dock_fx_init(struct dock_driver *d)
{
	const char *host = d->cfg->docker_host, *env;

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

void
dock_fx_dir(struct dock_driver *d, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", d->fx_root, name);
}

/* Reads a whole file (bounded); *lenp bytes in a malloc'd *bufp. */
static int
slurp(const char *path, char **bufp, size_t *lenp)
{
	struct stat st;
	char *b;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || st.st_size > FX_COPY_MAX ||
	    (b = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return -EIO;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	*bufp = b;
	*lenp = got;
	return 0;
}

/* Copies the helper to ROOT/msc-exec-helper unless it is already there. */
static int
install_helper(struct dock_driver *d)
{
	char dst[sizeof(d->fx_root) + 64], tmp[sizeof(dst) + 32];
	char *src = NULL, *old = NULL;
	size_t slen, olen;
	int fd, rc;

	if (mkdir(d->fx_root, 0755) != 0 && errno != EEXIST)
		return -errno;
	snprintf(dst, sizeof(dst), "%s/" FX_HELPER_NAME, d->fx_root);
	if ((rc = slurp(d->fx_src, &src, &slen)) != 0)
		return rc;
	if (slurp(dst, &old, &olen) == 0 && olen == slen &&
	    memcmp(old, src, slen) == 0) {
		rc = 0;
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", dst, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = write(fd, src, slen) == (ssize_t)slen ? 0 : -EIO;
	if (close(fd) != 0 || rc != 0 || fchmodat(AT_FDCWD, tmp, 0755, 0) ||
	    rename(tmp, dst) != 0) {
		rc = -EIO;
		(void)unlink(tmp);
	}
out:
	free(src);
	free(old);
	return rc;
}

int
dock_fx_prepare(struct dock_driver *d, const char *name)
{
	char dir[512];
	struct stat st;
	int rc = 0;

	pthread_mutex_lock(&d->mu);
	if (d->fx_src == NULL)
		rc = -ENOENT;
	else if (!d->fx_installed) {
		if ((rc = install_helper(d)) == 0)
			d->fx_installed = true;
	}
	pthread_mutex_unlock(&d->mu);
	if (rc != 0) {
		dock_fx_disable(d, "cannot install the exec helper");
		return rc;
	}
	dock_fx_dir(d, name, dir, sizeof(dir));
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return 0;
}

int
dock_fx_body(struct dock_driver *d, const char *name, json_t *body)
{
	const char *user = json_string_value(json_object_get(body, "User"));
	json_t *hc = json_object_get(body, "HostConfig"), *binds;
	char dir[512], bind[1200];

	if (!dock_fx_enabled(d) || (user != NULL && *user != '\0') ||
	    hc == NULL)
		return 1;
	if (dock_fx_prepare(d, name) != 0)
		return 1;
	dock_fx_dir(d, name, dir, sizeof(dir));
	json_object_set_new(body, "Entrypoint", json_pack("[ss]",
	    DOCK_FX_MOUNT_HELPER, DOCK_FX_MOUNT_DIR "/" DOCK_FX_SOCK_NAME));
	json_object_set_new(body, "Cmd", json_array());
	json_object_del(hc, "Init");
	if (!json_is_array(binds = json_object_get(hc, "Binds"))) {
		binds = json_array();
		json_object_set_new(hc, "Binds", binds);
	}
	snprintf(bind, sizeof(bind), "%s/" FX_HELPER_NAME ":"
	    DOCK_FX_MOUNT_HELPER ":ro", d->fx_root);
	json_array_append_new(binds, json_string(bind));
	snprintf(bind, sizeof(bind), "%s:" DOCK_FX_MOUNT_DIR, dir);
	json_array_append_new(binds, json_string(bind));
	return 0;
}

bool
dock_fx_uses_helper(json_t *ctr)
{
	json_t *ep = json_object_get(json_object_get(ctr, "Config"),
	    "Entrypoint");
	const char *p0 = json_string_value(json_array_get(ep, 0));

	return p0 != NULL && strcmp(p0, DOCK_FX_MOUNT_HELPER) == 0;
}

/* Removes what the container left in its folder; bounded depth. */
static void
rm_tree(int dfd, int depth)
{
	DIR *dir;
	struct dirent *de;
	int fd;

	if ((fd = dup(dfd)) < 0 || (dir = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dir)) != NULL) {
		int sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0 || depth >= FX_RM_DEPTH)
			continue;
		sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		rm_tree(sub, depth + 1);
		close(sub);
		(void)unlinkat(dfd, de->d_name, AT_REMOVEDIR);
	}
	closedir(dir);
}

void
dock_fx_remove(struct dock_driver *d, const char *name)
{
	char dir[512];
	int fd;

	if (d->fx_root[0] == '\0')
		return;
	dock_fx_dir(d, name, dir, sizeof(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	rm_tree(fd, 0);
	close(fd);
	(void)rmdir(dir);
}

int
dock_fx_wait(struct dock_driver *d, const char *name, int ms)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	char dir[512];

	dock_fx_dir(d, name, dir, sizeof(dir));
	for (int waited = 0;; waited += 2) {
		if (dock_fx_probe(dir) == 0)
			return 0;
		if (waited >= ms)
			return -ENOTCONN;
		nanosleep(&ts, NULL);
	}
}

int
dock_run(struct dock_driver *d, const char *name,
    const struct dock_exec_req *req, struct dock_exec_res *res,
    bool *fastp, char *err, size_t errlen)
{
	char dir[512];
	int rv;

	*fastp = false;
	if (d->fx_root[0] != '\0' && dock_fx_enabled(d)) {
		dock_fx_dir(d, name, dir, sizeof(dir));
		rv = dock_fx_run(dir, req, res, err, errlen);
		if (rv != -ENOTCONN) {
			*fastp = true;
			return rv;
		}
	}
	return dock_exec_run(d->engine, req, res, err, errlen);
}

/*
 * Whether the container of `id` still runs after a command failed (an
 * error counts as no). A command killed by a signal may have died with
 * its container, whose state lags the exec's end: look a few times.
 */
static bool
still_running(struct dock_driver *d, const char *id, int exit_code)
{
	char err[DOCK_ERRLEN];
	int tries = exit_code >= 128 ? 6 : 1;

	for (int i = 0; i < tries; i++) {
		json_t *ctr = NULL;
		bool running;

		if (i > 0)
			usleep(100 * 1000);
		if (dock_find(d, id, &ctr, err, sizeof(err)) != 0)
			return false;
		running = json_is_true(json_object_get(
		    json_object_get(ctr, "State"), "Running"));
		json_decref(ctr);
		if (!running)
			return false;
	}
	return true;
}

int
dock_exec(struct dock_driver *d, const Msc__V1__ExecRequest *r,
    Msc__V1__ExecResult *out, char *err, size_t errlen)
{
	char name[128];
	const char **argv;
	struct dock_exec_req req = { 0 };
	struct dock_exec_res res = { 0 };
	uint64_t start = now_ms();
	size_t n = 0;
	bool fast;
	int rv;

	snprintf(name, sizeof(name), DOCK_NAME_PREFIX "%s", r->computer_id);
	if ((argv = calloc(r->n_args + 4, sizeof(*argv))) == NULL)
		return -ENOMEM;
	if (r->n_args > 0)
		for (; n < r->n_args; n++)
			argv[n] = r->args[n];
	else {
		argv[n++] = d->cfg->shell;
		argv[n++] = "-c";
		argv[n++] = r->command;
	}
	req.container = name;
	req.argv = argv;
	req.workdir = r->working_directory[0] ? r->working_directory : NULL;
	req.has_stdin = r->has_stdin;
	req.stdin_data = r->stdin.data;
	req.stdin_len = r->stdin.len;
	req.timeout_ms = (int)(r->timeout_s > 0 ? r->timeout_s : 120) * 1000;
	req.output_limit = r->output_limit > 0 ? r->output_limit : 2097152;
	rv = dock_run(d, name, &req, &res, &fast, err, errlen);
	free(argv);
	/*
	 * The Engine path checks the container after any failure (an exec
	 * killed with its container ends with an exit code); a helper that
	 * answered was alive, so the fast path checks signal deaths only, and
	 * a helper lost mid-command.
	 */
	if (rv == -EBUSY || rv == -ENOENT ||
	    ((rv == -ECONNRESET || rv == -EPROTO) &&
		!still_running(d, r->computer_id, 255)) ||
	    (rv == 0 && res.outcome == DOCK_EXEC_EXITED && res.exit_code != 0 &&
		(!fast || res.exit_code >= 128) &&
		!still_running(d, r->computer_id, res.exit_code))) {
		dock_exec_res_fini(&res);
		snprintf(err, errlen, "Computer '%s' died during command "
				      "execution: its container stopped or was "
				      "removed. The next call starts it again.",
		    r->computer_id);
		return -ECONNABORTED;
	}
	if (rv == -ECONNRESET || rv == -EPROTO) {
		char why[DOCK_ERRLEN];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Computer '%s': %s. The command may have "
		    "been cut short; the next call runs normally.",
		    r->computer_id, why);
		msc_log_warn("%s", err);
		return -EIO;
	}
	if (rv != 0)
		return rv;
	out->stdout.data = (uint8_t *)res.out;
	out->stdout.len = res.out_len;
	out->stderr.data = (uint8_t *)res.err;
	out->stderr.len = res.err_len;
	out->exit_code = res.exit_code;
	out->duration_ms = now_ms() - start;
	out->outcome = res.outcome == DOCK_EXEC_TIMEOUT
	    ? MSC__V1__EXEC_OUTCOME__TIMED_OUT
	    : res.outcome == DOCK_EXEC_LIMIT ? MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT
					     : MSC__V1__EXEC_OUTCOME__EXITED;
	return 0;
}
