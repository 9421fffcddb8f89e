/*
 * docker_policy_state.c - a policy set on a running computer (the
 * operator's `network ID MODE`, docker_network_cmd.c), kept in a host
 * file so that it outlives the driver and every driver on the host sees
 * it; the mode a computer gets at its creation (Driver/SetNetwork).
 *
 * BASE/computers/<id>: "mode MODE" then "allow ENTRY" and "deny ENTRY"
 * lines. BASE is MSC_PROXY_DIR, else /run/mcp-sandbox-computer-proxy for
 * root, else /tmp/msc-proxy-<uid>.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "msc_log.h"
#include "msc_slug.h"

int
dock_pol_base(char *out, size_t len)
{
	const char *env = getenv("MSC_PROXY_DIR");
	int n;

	if (env != NULL && *env == '/')
		n = snprintf(out, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(out, len, "/run/mcp-sandbox-computer-proxy");
	else
		n = snprintf(out, len, "/tmp/msc-proxy-%u", (unsigned)geteuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int
state_path(const char *id, char *out, size_t len)
{
	char base[256];
	int rv;

	if (id == NULL || !msc_slug_valid(id))
		return -EINVAL;
	if ((rv = dock_pol_base(base, sizeof(base))) != 0)
		return rv;
	snprintf(out, len, "%s/computers/%s", base, id);
	return 0;
}

void
dock_pol_lists_free(struct dock_pol_lists *l)
{
	for (size_t i = 0; i < l->nallow; i++)
		free(l->allow[i]);
	for (size_t i = 0; i < l->ndeny; i++)
		free(l->deny[i]);
	free(l->allow);
	free(l->deny);
	memset(l, 0, sizeof(*l));
}

static int
push(char ***arr, size_t *n, const char *v)
{
	char **grown = realloc(*arr, (*n + 1) * sizeof(**arr));

	if (grown == NULL)
		return -ENOMEM;
	*arr = grown;
	if ((grown[*n] = strdup(v)) == NULL)
		return -ENOMEM;
	(*n)++;
	return 0;
}

int
dock_pol_state_load(const char *id, struct dock_pol_lists *l)
{
	char path[512], line[512], word[16], val[300], err[256];
	FILE *f;
	int rv = 0;
	bool moded = false;

	memset(l, 0, sizeof(*l));
	if ((rv = state_path(id, path, sizeof(path))) != 0)
		return rv;
	if ((f = fopen(path, "re")) == NULL)
		return -ENOENT;
	while (rv == 0 && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%15s %299s", word, val) != 2)
			continue;
		if (strcmp(word, "mode") == 0)
			moded = msc_net_mode_parse(val, &l->mode) == 0;
		else if (strcmp(word, "container") == 0)
			snprintf(l->cid, sizeof(l->cid), "%.64s", val);
		else if (strcmp(word, "proxied") == 0)
			l->proxied = strcmp(val, "yes") == 0;
		else if (msc_net_entry_check(val, err, sizeof(err)) != 0)
			continue;       /* a damaged line: not an entry */
		else if (strcmp(word, "allow") == 0)
			rv = push(&l->allow, &l->nallow, val);
		else if (strcmp(word, "deny") == 0)
			rv = push(&l->deny, &l->ndeny, val);
	}
	fclose(f);
	if (rv == 0 && !moded)
		l->mode = MSC_NET_NONE;         /* unreadable: closed */
	if (rv != 0)
		dock_pol_lists_free(l);
	return rv;
}

int
dock_pol_state_save(const char *id, const struct dock_pol_lists *l)
{
	char path[512], tmp[560], dir[512];
	FILE *f;
	int fd, rv;

	if ((rv = state_path(id, path, sizeof(path))) != 0)
		return rv;
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if (mkdir(dir, 0755) != 0 && errno == ENOENT) {
		char *slash = strrchr(dir, '/');

		*slash = '\0';
		(void)mkdir(dir, 0755);
		*slash = '/';
		(void)mkdir(dir, 0755);
	}
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if ((f = fdopen(fd, "w")) == NULL) {
		rv = -errno;
		close(fd);
		unlink(tmp);
		return rv;
	}
	fprintf(f, "mode %s\n", msc_net_mode_name(l->mode));
	if (l->cid[0] != '\0')
		fprintf(f, "container %s\nproxied %s\n", l->cid,
		    l->proxied ? "yes" : "no");
	for (size_t i = 0; i < l->nallow; i++)
		fprintf(f, "allow %s\n", l->allow[i]);
	for (size_t i = 0; i < l->ndeny; i++)
		fprintf(f, "deny %s\n", l->deny[i]);
	rv = fflush(f) != 0 || ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && rv == 0)
		rv = -EIO;
	if (rv == 0 && rename(tmp, path) != 0)
		rv = -errno;
	if (rv != 0)
		unlink(tmp);
	return rv;
}

void
dock_pol_state_remove(const char *id)
{
	char path[512];

	if (state_path(id, path, sizeof(path)) == 0)
		(void)unlink(path);
}

void
dock_pol_current(struct dock_driver *d, const char *id, const char *cid,
    json_t *labels, struct dock_pol_lists *l, bool *owned)
{
	if (dock_pol_state_load(id, l) == 0) {
		if (l->cid[0] == '\0' || cid == NULL ||
		    strcmp(l->cid, cid) == 0) {
			*owned = true;
			return;
		}
		msc_log_info("network: forgot the policy of computer %s's "
		    "container %.12s, removed behind the driver's back", id,
		    l->cid);
		dock_pol_lists_free(l);
		dock_pol_state_remove(id);
	}
	*owned = false;
	memset(l, 0, sizeof(*l));
	if (msc_net_mode_parse(json_string_value(json_object_get(labels,
	    DOCK_POL_LABEL)), &l->mode) != 0)
		l->mode = d->pol.def_mode;      /* made before modes */
	l->allow = d->pol.allow;
	l->nallow = d->pol.nallow;
	l->deny = d->pol.deny;
	l->ndeny = d->pol.ndeny;
}

char *
dock_pol_describe(const struct dock_pol_lists *l)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	fputs(msc_net_mode_name(l->mode), f);
	if (l->mode == MSC_NET_ALLOWLIST) {
		fputs(":", f);
		for (size_t i = 0; i < l->nallow; i++)
			fprintf(f, "%s %s", i ? "," : "", l->allow[i]);
		for (size_t i = 0; i < l->ndeny; i++)
			fprintf(f, "%s%s", i ? ", " : "; deny: ", l->deny[i]);
	}
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

#define POLICY_ENTRIES_MAX 256

/* Checks the entries of one list of a request; err names the list. */
static int
check_list(char *const *v, size_t n, const char *what, char *err,
    size_t errlen)
{
	char why[400];

	if (n > POLICY_ENTRIES_MAX) {
		snprintf(err, errlen, "network.%s has more than %d entries",
		    what, POLICY_ENTRIES_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (msc_net_entry_check(v[i], why, sizeof(why)) != 0) {
			snprintf(err, errlen, "network.%s: %s", what, why);
			return -EINVAL;
		}
	return 0;
}

int
dock_pol_set_create(void *be, const char *id,
    const Msc__V1__NetworkPolicy *np, char *err, size_t errlen)
{
	struct dock_driver *d = be;
	struct dock_pol_lists l;
	int rv;

	memset(&l, 0, sizeof(l));
	if (msc_net_mode_parse(np->mode, &l.mode) != 0) {
		snprintf(err, errlen, "network.mode must be none, allowlist or "
		    "open, got: %.40s", np->mode);
		return -EINVAL;
	}
	if ((rv = check_list(np->allow, np->n_allow, "allow", err,
	    errlen)) != 0 || (rv = check_list(np->deny, np->n_deny, "deny",
	    err, errlen)) != 0)
		return rv;
	if (l.mode != MSC_NET_ALLOWLIST && (np->n_allow || np->n_deny)) {
		snprintf(err, errlen, "network.allow and network.deny need "
		    "mode allowlist");
		return -EINVAL;
	}
	if (l.mode != MSC_NET_NONE && !d->net_sandbox) {
		snprintf(err, errlen, "this server's computers have no network "
		    "(--no-network) or use the operator's (--docker-run-flag "
		    "--network): only mode none");
		return -EINVAL;
	}
	if (l.mode == MSC_NET_ALLOWLIST) {
		bool own = np->n_allow > 0;

		l.allow = own ? np->allow : d->pol.allow;
		l.nallow = own ? np->n_allow : d->pol.nallow;
		l.deny = own ? np->deny : d->pol.deny;
		l.ndeny = own ? np->n_deny : d->pol.ndeny;
		if (l.nallow == 0) {
			snprintf(err, errlen, "mode allowlist needs network.allow "
			    "(domains such as api.example or *.pypi.example)");
			return -EINVAL;
		}
	}
	if (!d->net_sandbox)
		return 0;       /* none, and none it is already */
	if ((rv = dock_pol_state_save(id, &l)) != 0)
		snprintf(err, errlen, "cannot record the network policy of "
		    "computer %s: %s", id, strerror(-rv));
	return rv;
}

enum msc_net_mode
dock_pol_mode_for(struct dock_driver *d, const char *id)
{
	struct dock_pol_lists l;
	enum msc_net_mode m;

	if (dock_pol_state_load(id, &l) != 0)
		return d->pol.def_mode;
	/* Bound: a container of that id was removed behind our back. */
	m = l.cid[0] == '\0' ? l.mode : d->pol.def_mode;
	dock_pol_lists_free(&l);
	return m;
}

const char *const *
dock_pol_exec_env(struct dock_driver *d, const char *id)
{
	static const char *const blank[] = { "http_proxy=", "https_proxy=",
	    "HTTP_PROXY=", "HTTPS_PROXY=", NULL };
	struct dock_pol_lists l;
	bool keep;

	if (!d->net_sandbox || dock_pol_state_load(id, &l) != 0)
		return NULL;
	keep = l.mode == MSC_NET_ALLOWLIST || !l.proxied;
	dock_pol_lists_free(&l);
	return keep ? NULL : blank;
}
