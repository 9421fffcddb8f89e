/*
 * docker_netload.c - loading the sandbox network's nftables rules
 * (docker_network.c builds them) into the host's kernel.
 *
 * A root driver runs the host's `nft -f -` itself (dock_nft_local). A
 * driver that is not root but may use a local rootful engine (the docker
 * group: root-equivalent already, so this gains nothing the user lacks)
 * has the engine run it (dock_nft_engine): a short-lived container,
 * labelled kilntainers.netrules=true, of an empty image the driver makes
 * (LOADER_IMAGE: no files, no ENV, so nothing of the configured image or
 * any other runs with the loader's rights), with the host's root bound
 * read-only at /host and its /usr, /etc and program and library folders
 * where the empty image would have them; on the host's network (and user
 * namespace, should the engine remap users), with only the NET_ADMIN and
 * SYS_CHROOT capabilities, no new privileges and a read-only root. It
 * sleeps under `chroot /host` (AutoRemove: it goes away by itself should
 * the driver die) while the driver execs the host's own nft in it
 * (`chroot /host nft -f -`, the rules on stdin), bounded in time and
 * output, then removes it.
 *
 * The bridge table needs nftables' bridge meta match; where the kernel
 * lacks it, the inet forward rule drops port-to-port traffic once
 * br_netfilter passes bridged packets to the inet hooks. A root driver
 * turns those hooks on; the engine path only checks they are on (writing
 * /proc/sys from a container would take a privileged one).
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_time.h"

#define NFT_OUT_MAX 1024
#define T_LOADER 45000          /* the whole engine load, all steps */
#define T_LOADER_EXEC 15000     /* one nft run in the loader */
#define LOADER_LIFE "60"        /* seconds the loader lives unattended */
#define LOADER_IMAGE "kilntainers-netrules"    /* empty: no files, no ENV */
#define LOADER_TAG "empty"

extern char **environ;

static const char *const nft_paths[] = { "/usr/sbin/nft", "/sbin/nft",
	"/usr/bin/nft", NULL };

static const char bridge_nf_on[] =
    "grep -qx 1 /proc/sys/net/bridge/bridge-nf-call-iptables && "
    "grep -qx 1 /proc/sys/net/bridge/bridge-nf-call-ip6tables";

static const char no_isolation[] = "cannot keep computers apart: the "
    "kernel has neither nftables' bridge meta match nor br_netfilter's "
    "hooks on";

const char *
dock_nft_path(void)
{
	for (int i = 0; nft_paths[i] != NULL; i++)
		if (access(nft_paths[i], X_OK) == 0)
			return nft_paths[i];
	return NULL;
}

/* The first line of s, at most 300 bytes, into out. */
static void
first_line(const char *s, char *out, size_t len)
{
	int n = (int)strcspn(s != NULL ? s : "", "\n");

	snprintf(out, len, "%.*s", n > 300 ? 300 : n, s != NULL ? s : "");
}

/* Runs `nft -f -` with `rules` on stdin; its messages go to err. */
static int
nft_load(const char *rules, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	const char *nft = dock_nft_path();
	char *argv[] = { (char *)"nft", (char *)"-f", (char *)"-", NULL };
	char out[NFT_OUT_MAX], line[320];
	int in[2], msg[2], st, rc;
	size_t got = 0, len = strlen(rules);
	pid_t pid;

	if (nft == NULL) {
		snprintf(err, errlen, "nft is not installed");
		return -ENOENT;
	}
	if (pipe2(in, O_CLOEXEC) != 0)
		return -errno;
	if (pipe2(msg, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	if ((rc = posix_spawn_file_actions_init(&fa)) == 0) {
		int fds[3] = { in[0], msg[1], msg[1] };

		for (int i = 0; rc == 0 && i < 3; i++)
			rc = posix_spawn_file_actions_adddup2(&fa, fds[i], i);
		if (rc == 0)
			rc = posix_spawn(&pid, nft, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(in[0]);
	close(msg[1]);
	if (rc != 0) {
		close(in[1]);
		close(msg[0]);
		snprintf(err, errlen, "cannot run %s: %s", nft, strerror(rc));
		return -rc;
	}
	/* The rules are a few KiB: the pipe holds them all. */
	rc = write(in[1], rules, len) == (ssize_t)len ? 0 : -EIO;
	close(in[1]);
	for (;;) {
		ssize_t n = read(msg[0], out + got, sizeof(out) - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (got += (size_t)n) == sizeof(out) - 1)
			break;
	}
	out[got] = '\0';
	close(msg[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (rc != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		first_line(out, line, sizeof(line));
		snprintf(err, errlen, "nft refused the sandbox rules: %s", line);
		return -EIO;
	}
	return 0;
}

/*
 * Writes "1" to a sysctl file unless it says so already (read first: in
 * a container /proc/sys is read-only).
 */
static int
sysctl_on(const char *path)
{
	char v = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (read(fd, &v, 1) == 1 && v == '1') {
		close(fd);
		return 0;
	}
	close(fd);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (write(fd, "1", 1) != 1)
		rc = -errno;
	close(fd);
	return rc;
}

int
dock_nft_local(const struct dock_nft_rules *r, char *err, size_t errlen)
{
	char ignore[DOCK_ERRLEN];
	int rv;

	if ((rv = nft_load(r->inet, err, errlen)) != 0)
		return rv;
	if (nft_load(r->bridge, ignore, sizeof(ignore)) == 0)
		return 0;
	if (sysctl_on("/proc/sys/net/bridge/bridge-nf-call-iptables") != 0 ||
	    sysctl_on("/proc/sys/net/bridge/bridge-nf-call-ip6tables") != 0) {
		snprintf(err, errlen, "%s (modprobe br_netfilter)",
		    no_isolation);
		return -ENOTSUP;
	}
	return 0;
}


/* What is left of the deadline, at least 1 ms, at most cap (if > 0). */
static int
left_ms(int64_t deadline, int cap)
{
	int64_t left = deadline - (int64_t)msc_now_ms();

	if (left < 1)
		left = 1;
	return cap > 0 && left > cap ? cap : (int)left;
}

/*
 * The loader's binds: the host's root at /host, and its programs,
 * libraries and /etc where the empty image would have them, so the
 * dynamic loader, chroot and everything after are the host's own (real
 * paths: on a merged-/usr host /lib is /usr/lib). A new reference or NULL.
 */
static json_t *
loader_binds(void)
{
	static const char *const dirs[] = { "/usr", "/etc", "/bin", "/sbin",
	    "/lib", "/lib32", "/lib64", "/libx32", NULL };
	json_t *binds = json_array();
	char real[PATH_MAX], bind[2 * PATH_MAX + 8];

	if (binds == NULL || json_array_append_new(binds,
	    json_string("/:/host:ro")) != 0)
		goto fail;
	for (int i = 0; dirs[i] != NULL; i++) {
		if (realpath(dirs[i], real) == NULL) {
			if (errno == ENOENT)
				continue;
			goto fail;
		}
		snprintf(bind, sizeof(bind), "%s:%s:ro", real, dirs[i]);
		if (json_array_append_new(binds, json_string(bind)) != 0)
			goto fail;
	}
	return binds;
fail:
	json_decref(binds);
	return NULL;
}

/* The loader container's create body (a new reference, or NULL). */
static json_t *
loader_body(struct dock_driver *d)
{
	json_t *binds = loader_binds();

	if (binds == NULL)
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:[s,s,s,s], s:[], s:[s],"
	    " s:{s:s, s:s}, s:{s:s, s:s, s:b, s:[s], s:[s,s], s:o, s:b,"
	    " s:b, s:I, s:I}}",
	    "Image", LOADER_IMAGE ":" LOADER_TAG, "User", "0:0",
	    "WorkingDir", "/",
	    "Entrypoint", "chroot", "/host", "sleep", LOADER_LIFE,
	    "Cmd",
	    "Env", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
	    "Labels", "kilntainers.netrules", "true",
	    "kilntainers.driver", d->cfg->driver_id != NULL ?
	    d->cfg->driver_id : "",
	    "HostConfig", "NetworkMode", "host", "UsernsMode", "host",
	    "AutoRemove", 1,
	    "CapDrop", "ALL", "CapAdd", "NET_ADMIN", "SYS_CHROOT",
	    "Binds", binds, "ReadonlyRootfs", 1, "Privileged", 0,
	    "PidsLimit", (json_int_t)32, "Memory", (json_int_t)(128 << 20));
}

/*
 * Runs argv in the loader with `input` (or nothing) on stdin: 0 when it
 * exited 0, 1 when it failed (its first line of output in msg), or a
 * negative errno when the exec itself failed (its message in msg).
 */
static int
loader_run(struct dock_driver *d, const char *name,
    const char *const *argv, const char *input, int64_t deadline,
    char *msg, size_t msglen)
{
	static const char *const env[] = {
	    "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
	struct dock_exec_req req = {
		.container = name, .argv = argv, .env = env,
		.stdin_data = input, .stdin_len = input ? strlen(input) : 0,
		.has_stdin = input != NULL,
		.timeout_ms = left_ms(deadline, T_LOADER_EXEC),
		.output_limit = NFT_OUT_MAX,
	};
	struct dock_exec_res res;
	char line[320];
	int rv;

	memset(&res, 0, sizeof(res));
	if ((rv = dock_exec_run(d->engine, &req, &res, msg, msglen)) != 0)
		return rv;
	if (res.outcome == DOCK_EXEC_EXITED && res.exit_code == 0)
		rv = 0;
	else {
		first_line(res.err != NULL && *res.err != '\0' ? res.err :
		    res.out, line, sizeof(line));
		if (res.outcome == DOCK_EXEC_TIMEOUT)
			snprintf(msg, msglen, "timed out");
		else if (res.outcome == DOCK_EXEC_LIMIT)
			snprintf(msg, msglen, "too much output: %s", line);
		else
			snprintf(msg, msglen, "exit %d: %s", res.exit_code,
			    line);
		rv = 1;
	}
	dock_exec_res_fini(&res);
	return rv;
}

/*
 * Loads the rules in the running loader `name`: 0, -EIO when nft refused
 * them, -ENOTSUP when computers cannot be kept apart, else what the
 * loader's exec failed with.
 */
static int
loader_load(struct dock_driver *d, const char *name,
    const struct dock_nft_rules *r, int64_t deadline, char *err,
    size_t errlen)
{
	static const char *const nft[] = { "chroot", "/host", "nft", "-f", "-",
	    NULL };
	static const char *const check[] = { "chroot", "/host", "sh", "-c",
	    bridge_nf_on, NULL };
	char msg[DOCK_ERRLEN];
	int rv;

	if ((rv = loader_run(d, name, nft, r->inet, deadline, msg,
	    sizeof(msg))) == 1) {
		snprintf(err, errlen, "the host's nft, run through the engine, "
		    "refused the sandbox rules (%s)", msg);
		return -EIO;
	}
	if (rv == 0 && (rv = loader_run(d, name, nft, r->bridge, deadline,
	    msg, sizeof(msg))) == 1 &&
	    (rv = loader_run(d, name, check, NULL, deadline, msg,
	    sizeof(msg))) == 1) {
		snprintf(err, errlen, "%s (as root, once: modprobe br_netfilter "
		    "&& sysctl -w net.bridge.bridge-nf-call-iptables=1 "
		    "net.bridge.bridge-nf-call-ip6tables=1)", no_isolation);
		return -ENOTSUP;
	}
	if (rv != 0)
		snprintf(err, errlen, "the container that loads the sandbox "
		    "rules failed: %s", msg);
	return rv;
}

int
dock_nft_engine(struct dock_driver *d, const struct dock_nft_rules *r,
    char *err, size_t errlen)
{
	int64_t deadline = (int64_t)msc_now_ms() + T_LOADER;
	char name[64], id[65], why[DOCK_ERRLEN];
	unsigned char rnd[4];
	json_t *body;
	int rv;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -errno;
	snprintf(name, sizeof(name), "kilntainers-netrules-%02x%02x%02x%02x",
	    rnd[0], rnd[1], rnd[2], rnd[3]);
	if ((rv = dock_image_empty(d->engine, LOADER_IMAGE, LOADER_TAG,
	    left_ms(deadline, 0), why, sizeof(why))) != 0) {
		snprintf(err, errlen, "cannot make the rule loader's empty "
		    "image " LOADER_IMAGE ":" LOADER_TAG ": %s", why);
		return rv == -ENOENT ? -EIO : rv;
	}
	if ((body = loader_body(d)) == NULL) {
		snprintf(err, errlen, "cannot describe the rule loader (out of "
		    "memory, or a host folder it binds cannot be resolved)");
		return -ENOMEM;
	}
	rv = dock_container_create(d->engine, name, body, left_ms(deadline, 0),
	    id, why, sizeof(why));
	json_decref(body);
	if (rv != 0) {
		snprintf(err, errlen, "the engine could not run the container "
		    "that loads the sandbox rules: %s", why);
		return rv == -ENOENT ? -EIO : rv;
	}
	rv = loader_load(d, id, r, deadline, err, errlen);
	if (dock_container_remove(d->engine, id, left_ms(deadline, 0) + 5000,
	    why, sizeof(why)) != 0)
		msc_log_warn("network: cannot remove the rule loader %s (it "
		    "removes itself within " LOADER_LIFE " s): %s", name, why);
	return rv;
}
