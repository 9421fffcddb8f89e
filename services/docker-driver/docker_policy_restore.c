/*
 * docker_policy_restore.c - allowlist computers found again when the
 * driver starts (docker_policy.h). The proxy ended with the driver that
 * ran it; a permanent computer (or a temporary one whose lease holds)
 * keeps running, its variables naming that proxy's address and port. One
 * thread, at start: each running computer of this driver made in
 * allowlist mode is applied again (dock_pol_apply starts the proxy on
 * its port and rewrites its policy file with this server's lists), so it
 * has its network back before anyone runs a command on it. Then the
 * proxy's files of addresses that none of them has (computers removed
 * while no driver ran) are removed: the next container given such an
 * address starts from nothing. The thread then waits for the driver's
 * end: a proxy it started ends with the thread that started it.
 */
#include "docker_driver_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "msc_log.h"

#define T_RESTORE_LIST 30000

/* Whether `ip` is one of the n addresses in `kept`. */
static bool
kept_address(char (*kept)[16], size_t n, const char *ip)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(kept[i], ip) == 0)
			return true;
	return false;
}

/* Removes the files of our proxy's policy folder not named in `kept`. */
static void
sweep(struct dock_driver *d, char (*kept)[16], size_t n)
{
	char dir[300], path[600];
	struct dirent *e;
	DIR *dp;

	pthread_mutex_lock(&d->pol.mu);
	snprintf(dir, sizeof(dir), "%.250s/policy", d->pol.dir);
	pthread_mutex_unlock(&d->pol.mu);
	if (strcmp(dir, "/policy") == 0 || (dp = opendir(dir)) == NULL)
		return;         /* no proxy of ours: nothing of ours to sweep */
	while ((e = readdir(dp)) != NULL) {
		if (e->d_name[0] == '.' || strchr(e->d_name, '.') == NULL ||
		    strstr(e->d_name, ".tmp") != NULL ||
		    kept_address(kept, n, e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (unlink(path) == 0)
			msc_log_info("network: removed the proxy's policy of "
			    "%s (no computer of this driver has it)",
			    e->d_name);
	}
	closedir(dp);
}

/*
 * Whether a proxy answers on the port container `cid`'s variables name:
 * a server of the same --driver-id that runs (tests, a second server
 * misconfigured) keeps its computers' files itself. One that stops
 * answering within 2 s was our earlier run's, ending. Each port is
 * looked at once (seen: 0 not yet, 1 alive, -1 not).
 */
static bool
proxy_alive(struct dock_driver *d, const char *cid, signed char *seen)
{
	char err[DOCK_ERRLEN];
	json_t *ctr = NULL;
	int port, i;
	bool alive = true;

	if (dock_net_ensure(d, err, sizeof(err)) != 0 ||
	    dock_container_inspect(d->engine, cid, T_RESTORE_LIST, &ctr, err,
	    sizeof(err)) != 0) {
		json_decref(ctr);
		return false;
	}
	port = dock_pol_proxy_port(ctr);
	json_decref(ctr);
	if (port == 0)
		return false;
	if (seen[port - DOCK_PROXY_PORT_MIN] != 0)
		return seen[port - DOCK_PROXY_PORT_MIN] > 0;
	for (i = 0; i < 40 && alive; i++) {
		pthread_mutex_lock(&d->pol.mu);
		alive = d->pol.proxy_port != port && dock_proxy_answers(d, port);
		pthread_mutex_unlock(&d->pol.mu);
		if (alive && i < 39)
			nanosleep(&(struct timespec){ 0, 50 * 1000000 }, NULL);
	}
	seen[port - DOCK_PROXY_PORT_MIN] = alive ? 1 : -1;
	return alive;
}

static void *
restore_main(void *arg)
{
	struct dock_driver *d = arg;
	char err[DOCK_ERRLEN], (*kept)[16] = NULL;
	signed char seen[DOCK_PROXY_PORT_SPAN] = { 0 };
	json_t *arr = NULL, *row;
	size_t i, n = 0;
	int rv;

	if ((rv = dock_container_list(d->engine, DOCK_POL_LABEL "=allowlist",
	    T_RESTORE_LIST, &arr, err, sizeof(err))) != 0) {
		msc_log_warn("network: cannot list the allowlist computers to "
		    "restore their proxy: %s", err);
		return NULL;
	}
	if ((kept = calloc(json_array_size(arr) + 1, sizeof(*kept))) == NULL) {
		json_decref(arr);
		return NULL;
	}
	json_array_foreach(arr, i, row) {
		json_t *labels = json_object_get(row, "Labels");
		const char *id = json_string_value(json_object_get(labels,
		    "kilntainers.computer-id"));
		const char *cid = json_string_value(json_object_get(row, "Id"));
		const char *ip = json_string_value(json_object_get(
		    json_object_get(json_object_get(json_object_get(row,
		    "NetworkSettings"), "Networks"), DOCK_NET_NAME),
		    "IPAddress"));
		const char *state = json_string_value(json_object_get(row,
		    "State"));

		if (id == NULL || cid == NULL || !dock_mine(d, labels) ||
		    state == NULL || strcmp(state, "running") != 0)
			continue;
		if (ip != NULL && strlen(ip) < sizeof(*kept))
			snprintf(kept[n++], sizeof(*kept), "%s", ip);
		if (proxy_alive(d, cid, seen))
			continue;       /* its server runs: its files are current */
		if (dock_pol_apply(d, id, cid, err, sizeof(err)) != 0)
			msc_log_warn("network: computer %s, found again in "
			    "allowlist mode, has no network: %s", id, err);
	}
	json_decref(arr);
	sweep(d, kept, n);
	free(kept);
	/* A proxy it started dies with it (PDEATHSIG): it lives as long. */
	pthread_mutex_lock(&d->pol.mu);
	while (!d->pol.restore_stop)
		pthread_cond_wait(&d->pol.restore_cv, &d->pol.mu);
	pthread_mutex_unlock(&d->pol.mu);
	return NULL;
}

int
dock_pol_restore_start(struct dock_driver *d)
{
	int rv;

	if (!d->net_sandbox)
		return 0;
	pthread_cond_init(&d->pol.restore_cv, NULL);
	if ((rv = pthread_create(&d->pol.restorer, NULL, restore_main, d)) != 0) {
		pthread_cond_destroy(&d->pol.restore_cv);
		return -rv;
	}
	d->pol.restoring = true;
	return 0;
}

void
dock_pol_restore_wait(struct dock_driver *d)
{
	if (!d->pol.restoring)
		return;
	pthread_mutex_lock(&d->pol.mu);
	d->pol.restore_stop = true;
	pthread_cond_signal(&d->pol.restore_cv);
	pthread_mutex_unlock(&d->pol.mu);
	pthread_join(d->pol.restorer, NULL);
	pthread_cond_destroy(&d->pol.restore_cv);
	d->pol.restoring = false;
}
