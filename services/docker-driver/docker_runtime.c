/*
 * docker_runtime.c - the OCI runtime computers run under (--runtime NAME,
 * env KILNTAINERS_RUNTIME; issue 32): runc by default, or gVisor's runsc,
 * whose computers talk to a kernel of its own instead of the host's.
 *
 * The name goes in each create body (HostConfig.Runtime) and in the label
 * kilntainers.runtime, so that computer_list says it, also for computers
 * a server started under another runtime finds again (without --runtime,
 * the reference's labels only: computer_list says the engine's default). The engine must
 * know the name: GET /info lists its runtimes, asked at start (a missing
 * one stops the start with what to do) and with each validation (an
 * engine reloaded without it: creates fail saying so).
 *
 * Under gVisor the container's files, /.msc among them, live in gVisor's
 * own kernel: the driver cannot reach the exec helper's socket through
 * /proc/<pid>/root. Its computers still run the helper (PID 1, zombies,
 * background processes) but get the Engine API exec, and their leases are
 * kept by the reaper (docker_reap.c) instead of the helper.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "msc_log.h"

/* Podman's /info counts its storage: seconds on a busy host. */
#define T_INFO 30000
#define RT_LABEL "kilntainers.runtime"

static const char *
template_runtime(json_t *body)
{
	const char *rt = json_string_value(json_object_get(json_object_get(
	    body, "HostConfig"), "Runtime"));

	return rt != NULL && *rt != '\0' ? rt : NULL;
}

int
dock_runtime_body(const struct msc_cfg *cfg, json_t *body)
{
	const char *flag = template_runtime(body);
	const char *rt = dock_cfg(cfg)->runtime;

	if (rt == NULL)
		return 0;
	if (*rt == '\0' || strlen(rt) > 64 || strspn(rt, "abcdefghijklmnop"
	    "qrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != strlen(rt)) {
		msc_cfg_error("argument --runtime: invalid value: '%s' (a "
		    "runtime name the engine knows, such as runc or runsc)", rt);
		return -EINVAL;
	}
	if (flag != NULL && strcmp(flag, rt) != 0) {
		msc_cfg_error("--runtime %s and --docker-run-flag --runtime=%s "
		    "disagree: give one", rt, flag);
		return -EINVAL;
	}
	json_object_set_new(json_object_get(body, "HostConfig"), "Runtime",
	    json_string(rt));
	return 0;
}

const char *
dock_runtime_name(const struct dock_driver *d)
{
	return template_runtime(d->create_template);
}

/* Whether runtime `name` is gVisor: its name, or its path in /info. */
static bool
is_gvisor(const char *name, const char *path)
{
	const char *base = path != NULL ? strrchr(path, '/') : NULL;

	base = base != NULL ? base + 1 : path;
	return (name != NULL && strncmp(name, "runsc", 5) == 0) ||
	    (base != NULL && strncmp(base, "runsc", 5) == 0);
}

/* The stanza the operator adds, for the message of a missing runtime. */
static void
missing_text(struct dock_driver *d, const char *rt, json_t *runtimes,
    char *out, size_t len)
{
	char known[256] = "";
	const char *k;
	json_t *v;
	bool podman = strcmp(dock_engine_name(d->engine), "podman") == 0;
	size_t n;

	json_object_foreach (runtimes, k, v) {
		n = strlen(known);
		snprintf(known + n, sizeof(known) - n, "%s%s", n ? ", " : "", k);
	}
	if (runtimes == NULL)
		snprintf(known, sizeof(known), "not said");
	if (podman)
		snprintf(out, len, "the engine (podman) has no usable OCI "
		    "runtime '%s' (it knows: %s). For gVisor: apt-get install "
		    "runsc, make it the default in containers.conf ([engine] "
		    "runtime = \"runsc\": Podman's compatible API runs its "
		    "default runtime only) and restart the Podman service; or "
		    "leave --runtime out for the default runtime", rt,
		    known[0] ? known : "none");
	else
		snprintf(out, len, "the engine (docker) has no OCI runtime '%s' "
		    "(it knows: %s). For gVisor: apt-get install runsc, add to "
		    "/etc/docker/daemon.json \"runtimes\": {\"runsc\": {\"path\": "
		    "\"/usr/bin/runsc\", \"runtimeArgs\": [\"--network=host\"]}} "
		    "(the source tree's scripts/register-runsc.sh does it), "
		    "then reload the engine "
		    "(kill -HUP $(pidof dockerd), or systemctl reload docker); or "
		    "leave --runtime out for the default runtime", rt,
		    known[0] ? known : "none");
}

int
dock_runtime_check(struct dock_driver *d, bool at_start, char *err,
    size_t errlen)
{
	const char *rt = dock_runtime_name(d), *def, *k, *path = NULL;
	json_t *info = NULL, *runtimes, *v;
	const char *sock = dock_engine_socket(d->engine);
	struct stat st;
	int rv;

	if ((rv = dock_engine_info(d->engine, T_INFO, &info, err,
	    errlen)) != 0) {
		if (at_start && rt != NULL)
			msc_log_warn("--runtime %s: the engine did not answer (%s);"
			    " checked again at the first computer", rt, err);
		return at_start ? 0 : rv;
	}
	runtimes = json_object_get(info, "Runtimes");
	def = json_string_value(json_object_get(info, "DefaultRuntime"));
	pthread_mutex_lock(&d->mu);
	snprintf(d->rt_default, sizeof(d->rt_default), "%s",
	    def != NULL ? def : "");
	d->n_rt_gvisor = 0;
	json_object_foreach (runtimes, k, v) {
		const char *p = json_string_value(json_object_get(v, "path"));

		if (is_gvisor(k, p) && d->n_rt_gvisor < DOCK_RT_GVISOR_MAX &&
		    strlen(k) < sizeof(d->rt_gvisor[0]))
			snprintf(d->rt_gvisor[d->n_rt_gvisor++],
			    sizeof(d->rt_gvisor[0]), "%s", k);
	}
	pthread_mutex_unlock(&d->mu);
	if (rt != NULL && (v = json_object_get(runtimes, rt)) != NULL)
		path = json_string_value(json_object_get(v, "path"));
	/*
	 * Podman lists the runtimes it would look for, installed or not:
	 * on a local engine an absolute path must exist.
	 */
	if (rt != NULL && (v == NULL || (path != NULL && path[0] == '/' &&
	    sock != NULL && stat(path, &st) != 0)))
		missing_text(d, rt, runtimes, err, errlen);
	/*
	 * Podman's Docker-compatible create (4.3) ignores HostConfig.Runtime
	 * and runs the service's default runtime: only that one can be had.
	 */
	else if (rt != NULL && strcmp(dock_engine_name(d->engine),
	    "podman") == 0 && (def == NULL || strcmp(def, rt) != 0))
		snprintf(err, errlen, "Podman's Docker-compatible API runs every "
		    "container under its service's default runtime (%s), not "
		    "one named per container: make '%s' the default (in "
		    "containers.conf, [engine] runtime = \"%s\") and restart "
		    "the Podman service, then --runtime %s names it",
		    def != NULL ? def : "not said", rt, rt, rt);
	else
		rt = NULL;
	json_decref(info);
	if (rt == NULL)
		return 0;
	if (at_start)
		msc_cfg_error("%s", err);
	return -EINVAL;
}

bool
dock_runtime_gvisor(struct dock_driver *d, const char *rt)
{
	bool yes;

	if (rt == NULL || *rt == '\0')
		return false;
	yes = is_gvisor(rt, NULL);
	pthread_mutex_lock(&d->mu);
	for (size_t i = 0; !yes && i < d->n_rt_gvisor; i++)
		yes = strcmp(d->rt_gvisor[i], rt) == 0;
	pthread_mutex_unlock(&d->mu);
	return yes;
}

/*
 * A container's runtime from its inspect JSON, or NULL when it does not
 * say: Podman's compatible inspect says "oci" for every runtime.
 */
static const char *
inspect_runtime(json_t *ctr)
{
	const char *rt = json_string_value(json_object_get(json_object_get(
	    ctr, "HostConfig"), "Runtime"));

	return rt == NULL || *rt == '\0' || strcmp(rt, "oci") == 0 ? NULL
								    : rt;
}

bool
dock_runtime_hides_helper(struct dock_driver *d, json_t *ctr)
{
	const char *rt = inspect_runtime(ctr);
	char def[sizeof(d->rt_default)];

	if (rt != NULL)
		return dock_runtime_gvisor(d, rt);
	pthread_mutex_lock(&d->mu);
	snprintf(def, sizeof(def), "%s", d->rt_default);
	pthread_mutex_unlock(&d->mu);
	return dock_runtime_gvisor(d, def);
}

void
dock_runtime_label(json_t *body)
{
	const char *rt = template_runtime(body);
	json_t *labels = json_object_get(body, "Labels");

	/* Without a runtime of its own: the reference's labels, exactly. */
	if (rt == NULL)
		return;
	if (!json_is_object(labels)) {
		labels = json_object();
		json_object_set_new(body, "Labels", labels);
	}
	json_object_set_new(labels, RT_LABEL, json_string(rt));
}

char *
dock_runtime_of(struct dock_driver *d, json_t *ctr, json_t *labels)
{
	const char *rt = json_string_value(json_object_get(labels, RT_LABEL));
	char *out;

	if (rt == NULL)
		rt = inspect_runtime(ctr);
	if (rt != NULL && *rt != '\0')
		return strdup(rt);
	/* Made without a runtime of its own: the engine's default. */
	pthread_mutex_lock(&d->mu);
	out = strdup(d->rt_default);
	pthread_mutex_unlock(&d->mu);
	return out;
}

void
dock_runtime_explain(struct dock_driver *d, const char *id, char *err,
    size_t errlen)
{
	const char *rt = dock_runtime_name(d);
	char why[DOCK_ERRLEN];

	if (strstr(err, "cannot run with network enabled in root network "
	    "namespace") != NULL) {
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Cannot create computer '%s': gVisor (%s) "
		    "could not start its network: this runsc tells network "
		    "namespaces apart by /proc/sys/net/core/rmem_default, which "
		    "kernels from 6.10 on show in every namespace. Register it "
		    "with \"runtimeArgs\": [\"--network=host\"] (gVisor then "
		    "uses the network namespace the engine made for the "
		    "computer), or use a runsc from 2024-08 or later. (%s)", id,
		    rt != NULL ? rt : "runsc", why);
	} else if (rt != NULL && (strstr(err, "nknown runtime") != NULL ||
	    (strstr(err, "OCI runtime") != NULL &&
	    strstr(err, "is not available") != NULL))) {
		char fix[DOCK_ERRLEN];

		snprintf(why, sizeof(why), "%s", err);
		missing_text(d, rt, NULL, fix, sizeof(fix));
		snprintf(err, errlen, "Cannot create computer '%s': %s (the "
		    "engine said: %s)", id, fix, why);
	}
}
