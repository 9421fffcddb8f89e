/*
 * docker_policy.c - each computer's network mode on the sandbox network
 * (docker_policy.h): the server's default and lists, the policy table in
 * the host's kernel, and the computer's policy file the proxy reads.
 */
#include "docker_driver_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_log.h"

#define T_POL 10000

/* Each flag value's entries, checked, into an owned list. */
static int
take_list(const char *flag, const char **vals, size_t n, char ***out,
    size_t *nout)
{
	char err[512];
	int rv = msc_net_list_parse(vals, n, out, nout, err, sizeof(err));

	if (rv == -EINVAL)
		msc_cfg_error("--%s: %s", flag, err);
	return rv;
}

int
dock_pol_init(struct dock_driver *d)
{
	struct dock_pol *p = &d->pol;
	const struct msc_cfg *c = d->cfg;
	int rv;

	if ((rv = take_list("network-allow", c->net_allow, c->n_net_allow,
	    &p->allow, &p->nallow)) != 0 ||
	    (rv = take_list("network-deny", c->net_deny, c->n_net_deny,
	    &p->deny, &p->ndeny)) != 0)
		return rv;
	if (dock_cfg(c)->proxy_dns != NULL) {
		unsigned char a[16];

		if (inet_pton(AF_INET, dock_cfg(c)->proxy_dns, a) != 1 &&
		    inet_pton(AF_INET6, dock_cfg(c)->proxy_dns, a) != 1) {
			msc_cfg_error("--proxy-dns-server must be an IP address, "
			    "got: %s", dock_cfg(c)->proxy_dns);
			return -EINVAL;
		}
	}
	if ((rv = dock_pol_creds_init(p, c)) != 0)
		return rv;
	if (p->ncreds > 0 && p->nallow == 0) {
		msc_cfg_error("--proxy-credential needs allowlist mode "
		    "(--network-allow): open computers do not use the proxy");
		return -EINVAL;
	}
	p->dns = dock_cfg(c)->proxy_dns;
	p->def_mode = !c->network ? MSC_NET_NONE : p->nallow > 0 ?
	    MSC_NET_ALLOWLIST : MSC_NET_OPEN;
	if (p->ndeny > 0 && p->nallow == 0) {
		msc_cfg_error("--network-deny needs --network-allow (a deny "
		    "list narrows an allowlist; open mode has none)");
		return -EINVAL;
	}
	if (p->def_mode == MSC_NET_ALLOWLIST && !d->net_sandbox) {
		msc_cfg_error("--network-allow needs the sandbox network: it "
		    "cannot be combined with --docker-run-flag --network");
		return -EINVAL;
	}
	return 0;
}

void
dock_pol_fini(struct dock_driver *d)
{
	struct dock_pol *p = &d->pol;

	dock_proxy_stop(d);
	msc_net_list_free(p->allow, p->nallow);
	msc_net_list_free(p->deny, p->ndeny);
	dock_pol_creds_fini(p);
	pthread_mutex_destroy(&p->mu);
}

void
dock_pol_network(struct dock_driver *d, const char *br, const char *gw)
{
	pthread_mutex_lock(&d->pol.mu);
	snprintf(d->pol.br, sizeof(d->pol.br), "%s", br);
	snprintf(d->pol.gw, sizeof(d->pol.gw), "%s", gw != NULL ? gw : "");
	pthread_mutex_unlock(&d->pol.mu);
}

enum msc_net_mode
dock_pol_default(const struct dock_driver *d)
{
	return d->pol.def_mode;
}

int
dock_pol_body(struct dock_driver *d, enum msc_net_mode mode, json_t *body,
    char *err, size_t errlen)
{
	static const char *const vars[] = { "http_proxy", "https_proxy",
	    "HTTP_PROXY", "HTTPS_PROXY", NULL };
	json_t *labels = json_object_get(body, "Labels"), *env;
	char url[64], var[96];
	int rv;

	if (labels != NULL)
		json_object_set_new(labels, DOCK_POL_LABEL,
		    json_string(msc_net_mode_name(mode)));
	if (mode != MSC_NET_ALLOWLIST)
		return 0;
	pthread_mutex_lock(&d->pol.mu);
	rv = dock_proxy_ensure(d, 0, err, errlen);
	snprintf(url, sizeof(url), "http://%s:%d", d->pol.gw,
	    d->pol.proxy_port);
	pthread_mutex_unlock(&d->pol.mu);
	if (rv != 0)
		return rv;
	if ((env = json_object_get(body, "Env")) == NULL) {
		env = json_array();
		json_object_set_new(body, "Env", env);
	}
	for (int i = 0; vars[i] != NULL; i++) {
		snprintf(var, sizeof(var), "%s=%s", vars[i], url);
		json_array_append_new(env, json_string(var));
	}
	json_array_append_new(env, json_string("no_proxy=localhost,127.0.0.1"));
	json_array_append_new(env, json_string("NO_PROXY=localhost,127.0.0.1"));
	return 0;
}

/* Writes DIR/<ip> (the proxy's view of the computer) atomically. */
static int
write_policy_file(const char *dir, const char *id, const char *ip,
    const struct dock_pol_lists *l)
{
	char path[1024], tmp[1100];
	FILE *f;
	int fd, rv = 0;

	snprintf(path, sizeof(path), "%.900s/%s", dir, ip);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		return -errno;
	if ((f = fdopen(fd, "w")) == NULL) {
		rv = -errno;
		close(fd);
		unlink(tmp);
		return rv;
	}
	fprintf(f, "id %s\n", id);
	for (size_t i = 0; i < l->nallow; i++)
		fprintf(f, "allow %s\n", l->allow[i]);
	for (size_t i = 0; i < l->ndeny; i++)
		fprintf(f, "deny %s\n", l->deny[i]);
	if (fflush(f) != 0 || ferror(f))
		rv = -EIO;
	if (fclose(f) != 0 && rv == 0)
		rv = -EIO;
	if (rv == 0 && rename(tmp, path) != 0)
		rv = -errno;
	if (rv != 0)
		unlink(tmp);
	return rv;
}

int
dock_pol_proxy_port(json_t *ctr)
{
	json_t *env = json_object_get(json_object_get(ctr, "Config"), "Env"),
	    *v;
	size_t i;

	json_array_foreach(env, i, v) {
		const char *e = json_string_value(v), *colon;
		long port;

		if (e == NULL || strncmp(e, "http_proxy=http://", 18) != 0 ||
		    (colon = strrchr(e + 18, ':')) == NULL)
			continue;
		port = strtol(colon + 1, NULL, 10);
		return port >= DOCK_PROXY_PORT_MIN && port < DOCK_PROXY_PORT_MIN +
		    DOCK_PROXY_PORT_SPAN ? (int)port : 0;
	}
	return 0;
}

/*
 * The policy folder of the proxy that container `ctr` was given (its
 * http_proxy variable names the port): 0, or -ENOENT when it has none.
 */
static int
proxy_policy_dir(json_t *ctr, char *dir, size_t len)
{
	char base[256];
	int port = dock_pol_proxy_port(ctr);

	if (port == 0 || dock_pol_base(base, sizeof(base)) != 0)
		return -ENOENT;
	snprintf(dir, len, "%s/%d/policy", base, port);
	return 0;
}

/* Appends to r->inet at *used: 0 or -E2BIG. */
static int
rules_add(struct dock_nft_rules *r, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(r->inet + *used, sizeof(r->inet) - *used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(r->inet) - *used)
		return -E2BIG;
	*used += (size_t)n;
	return 0;
}

/* "add element T SET { a, b, ... }" of a NULL-terminated list. */
static int
rules_set(struct dock_nft_rules *r, size_t *used, const char *set,
    const char *const *list)
{
	int rv = rules_add(r, used, "add element inet " DOCK_POL_TABLE
	    " %s { ", set);

	for (size_t i = 0; rv == 0 && list[i] != NULL; i++)
		rv = rules_add(r, used, "%s%s", i ? ", " : "", list[i]);
	return rv != 0 ? rv : rules_add(r, used, " }\n");
}

/*
 * The policy table (made if missing, its chains rewritten, its sets
 * kept) and `ip`'s membership: in `mode`'s set, out of the other. The
 * proxy's connections out (its mark) are refused, at each connect, to
 * the blocked ranges, to any address of the host itself (fib: every
 * interface's, as they are now) and to the sandbox bridge.
 */
static int
policy_rules(struct dock_pol *p, const char *ip, enum msc_net_mode mode,
    struct dock_nft_rules *r)
{
	static const char *const sets[] = { "offline4", "proxied4" };
	const char *in = mode == MSC_NET_NONE ? sets[0] :
	    mode == MSC_NET_ALLOWLIST ? sets[1] : NULL;
	size_t used = 0;
	int rv;

#define T "inet " DOCK_POL_TABLE
	rv = rules_add(r, &used,
	    "add table " T "\n"
	    "add set " T " offline4 { type ipv4_addr; }\n"
	    "add set " T " proxied4 { type ipv4_addr; }\n"
	    "add set " T " proxyports { type inet_service; }\n"
	    "add set " T " blocked4 { type ipv4_addr; flags interval; }\n"
	    "flush set " T " blocked4\n"
	    "add set " T " blocked6 { type ipv6_addr; flags interval; }\n"
	    "flush set " T " blocked6\n");
	if (rv == 0)
		rv = rules_set(r, &used, "blocked4", msc_net_blocked4);
	if (rv == 0)
		rv = rules_set(r, &used, "blocked6", msc_net_blocked6);
	if (rv == 0)
		rv = rules_add(r, &used,
	    "add chain " T " input { type filter hook input priority filter "
	    "- 2; policy accept; }\n"
	    "add chain " T " forward { type filter hook forward priority "
	    "filter - 2; policy accept; }\n"
	    "add chain " T " output { type filter hook output priority "
	    "filter - 2; policy accept; }\n"
	    "flush chain " T " input\n"
	    "flush chain " T " forward\n"
	    "flush chain " T " output\n"
	    "add rule " T " input iifname \"%s\" ip saddr @offline4 drop\n"
	    "add rule " T " input iifname \"%s\" ip saddr @proxied4 tcp dport "
	    "@proxyports meta mark set " DOCK_POL_MARK_IN " accept\n"
	    "add rule " T " input iifname \"%s\" ip saddr @proxied4 drop\n"
	    "add rule " T " forward iifname \"%s\" ip saddr @offline4 drop\n"
	    "add rule " T " forward iifname \"%s\" ip saddr @proxied4 drop\n"
	    "add rule " T " output meta mark " DOCK_POL_MARK_OUT " ip daddr "
	    "@blocked4 counter reject\n"
	    "add rule " T " output meta mark " DOCK_POL_MARK_OUT " ip6 daddr "
	    "@blocked6 counter reject\n"
	    "add rule " T " output meta mark " DOCK_POL_MARK_OUT " fib daddr "
	    "type local counter reject comment \"the host itself\"\n"
	    "add rule " T " output meta mark " DOCK_POL_MARK_OUT " oifname "
	    "\"%s\" counter reject comment \"the computers\"\n"
	    "add rule " T " output meta mark " DOCK_POL_MARK_OUT " tcp flags "
	    "syn counter comment \"the proxy's connections out\"\n",
	    p->br, p->br, p->br, p->br, p->br, p->br);
	if (rv == 0 && p->proxy_port > 0)
		rv = rules_add(r, &used, "add element " T " proxyports { %d }\n",
		    p->proxy_port);
	for (int i = 0; rv == 0 && i < 2; i++)
		rv = in == sets[i] ?
		    rules_add(r, &used, "add element " T " %s { %s }\n",
		    sets[i], ip) :
		    rules_add(r, &used, "add element " T " %s { %s }\n"
		    "delete element " T " %s { %s }\n", sets[i], ip, sets[i],
		    ip);
#undef T
	r->bridge[0] = '\0';
	return rv;
}

/* The address of container (inspect JSON) on the sandbox network. */
static const char *
ctr_address(json_t *ctr)
{
	return json_string_value(json_object_get(json_object_get(
	    json_object_get(json_object_get(ctr, "NetworkSettings"),
	    "Networks"), DOCK_NET_NAME), "IPAddress"));
}

int
dock_pol_proxy_view(json_t *ctr, struct dock_pol_lists *l)
{
	char dir[512], path[600], line[512], word[16], val[300], why[256];
	const char *ip = ctr_address(ctr);
	FILE *f;
	int rv = 0;

	memset(l, 0, sizeof(*l));
	if (ip == NULL || proxy_policy_dir(ctr, dir, sizeof(dir)) != 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s", dir, ip);
	if ((f = fopen(path, "re")) == NULL)
		return -ENOENT;
	l->mode = MSC_NET_ALLOWLIST;
	while (rv == 0 && fgets(line, sizeof(line), f) != NULL) {
		char ***arr;
		size_t *n;

		if (sscanf(line, "%15s %299s", word, val) != 2 ||
		    msc_net_entry_check(val, why, sizeof(why)) != 0)
			continue;
		if (strcmp(word, "allow") == 0) {
			arr = &l->allow;
			n = &l->nallow;
		} else if (strcmp(word, "deny") == 0) {
			arr = &l->deny;
			n = &l->ndeny;
		} else
			continue;
		if ((rv = msc_net_list_parse((const char *[]){ val }, 1, arr, n,
		    why, sizeof(why))) != 0)
			break;
	}
	fclose(f);
	if (rv != 0)
		dock_pol_lists_free(l);
	return rv;
}

/* Whether the sandbox network's gateway is known (dock_net_ensure). */
static bool
gateway_known(struct dock_pol *p)
{
	bool known;

	pthread_mutex_lock(&p->mu);
	known = p->gw[0] != '\0';
	pthread_mutex_unlock(&p->mu);
	return known;
}

/*
 * The proxy that an allowlist computer's variables name (`port`): ours
 * is started when it is not running, there (a computer found again after
 * the driver restarted). 0, or a negative errno with err; a computer
 * whose port ours cannot take is logged and left with no network.
 */
static int
serve_computer(struct dock_driver *d, const char *id, int port, bool mine,
    char *err, size_t errlen)
{
	int rv;

	if (d->tool)
		return 0;       /* the server's proxy, or none until it runs */
	if (!gateway_known(&d->pol) && (rv = dock_net_ensure(d, err,
	    errlen)) != 0)
		return rv;
	pthread_mutex_lock(&d->pol.mu);
	rv = dock_proxy_serve(d, port, mine, err, errlen);
	pthread_mutex_unlock(&d->pol.mu);
	if (rv == -EADDRINUSE) {
		msc_log_warn("network: computer %s gets no network: %s (reset "
		    "it)", id, err);
		return 0;
	}
	return rv > 0 ? 0 : rv;
}

/* dock_pol_apply with the container's inspect JSON (taken). */
static int
apply(struct dock_driver *d, const char *id, json_t *ctr, char *err,
    size_t errlen)
{
	struct dock_pol *p = &d->pol;
	struct dock_pol_lists l;
	struct dock_nft_rules *r = NULL;
	json_t *labels;
	const char *ctr_id = "", *a = ctr_address(ctr);
	char ip[INET_ADDRSTRLEN], dir[512], path[600];
	unsigned char bin[4];
	bool owned = false, has_dir;
	int rv = 0, port;

	if (a == NULL || inet_pton(AF_INET, a, bin) != 1) {
		json_decref(ctr);
		return 0;       /* off the network: nothing leaves */
	}
	snprintf(ip, sizeof(ip), "%s", a);
	labels = json_object_get(json_object_get(ctr, "Config"), "Labels");
	dock_pol_current(d, id, json_string_value(json_object_get(ctr, "Id")),
	    labels, &l, &owned);
	port = dock_pol_proxy_port(ctr);
	has_dir = proxy_policy_dir(ctr, dir, sizeof(dir)) == 0;
	if (owned && l.cid[0] == '\0') {
		/* Recorded before its container existed: bind it to this one. */
		json_unpack(ctr, "{s?s}", "Id", &ctr_id);
		snprintf(l.cid, sizeof(l.cid), "%s", ctr_id);
		l.proxied = port > 0;
		if ((rv = dock_pol_state_save(id, &l)) != 0) {
			snprintf(err, errlen, "cannot record the network policy "
			    "of computer %s: %s", id, strerror(-rv));
			json_decref(ctr);
			goto out;
		}
	}
	/*
	 * An open computer of a driver that is not root: loading the table
	 * takes a container run, so a computer that was never given a mode
	 * is left as the sandbox rules have it (an address a removed
	 * computer left in a set stays closed, never open).
	 */
	if (l.mode == MSC_NET_OPEN && !owned && d->net_via_engine &&
	    p->def_mode == MSC_NET_OPEN) {
		json_decref(ctr);
		return 0;
	}
	if (l.mode == MSC_NET_ALLOWLIST && !has_dir) {
		/* Made without the proxy's variables: closed, not open. */
		msc_log_warn("network: computer %s was made without the "
		    "allowlist proxy; it gets no network (reset it to make it "
		    "again in allowlist mode)", id);
		l.mode = MSC_NET_NONE;
	}
	if (l.mode == MSC_NET_ALLOWLIST)
		rv = serve_computer(d, id, port, dock_mine(d, labels) &&
		    json_object_get(labels, "kilntainers.driver") != NULL, err,
		    errlen);
	json_decref(ctr);
	if (rv != 0)
		goto out;
	if ((r = malloc(sizeof(*r))) == NULL) {
		rv = -ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&p->mu);
	if (l.mode == MSC_NET_ALLOWLIST &&
	    (rv = write_policy_file(dir, id, ip, &l)) != 0)
		snprintf(err, errlen, "cannot write the network policy of "
		    "computer %s: %s", id, strerror(-rv));
	if (rv == 0 && l.mode != MSC_NET_ALLOWLIST && has_dir) {
		snprintf(path, sizeof(path), "%s/%s", dir, ip);
		(void)unlink(path);
	}
	if (rv == 0 && l.mode != MSC_NET_ALLOWLIST && p->dir[0] != '\0') {
		/* One a removed computer of that address left to our proxy. */
		snprintf(path, sizeof(path), "%s/policy/%s", p->dir, ip);
		(void)unlink(path);
	}
	if (rv == 0 && p->br[0] == '\0')
		snprintf(p->br, sizeof(p->br), "%s", DOCK_NET_BRIDGE);
	if (rv == 0 && (rv = policy_rules(p, ip, l.mode, r)) != 0)
		snprintf(err, errlen, "the network policy rules do not fit");
	pthread_mutex_unlock(&p->mu);
	if (rv == 0)
		rv = d->net_via_engine ? dock_nft_engine(d, r, err, errlen) :
		    dock_nft_local(r, err, errlen);
	if (rv == 0)
		msc_log_info("network: computer %s (%s) is in %s mode", id, ip,
		    msc_net_mode_name(l.mode));
out:
	free(r);
	if (owned)
		dock_pol_lists_free(&l);
	return rv;
}

int
dock_pol_apply(struct dock_driver *d, const char *id, const char *cid,
    char *err, size_t errlen)
{
	json_t *ctr = NULL;
	int rv;

	if (!d->net_sandbox)
		return 0;
	if ((rv = dock_container_inspect(d->engine, cid, T_POL, &ctr, err,
	    errlen)) != 0)
		return rv == -ENOENT ? 0 : rv;  /* gone: nothing leaves */
	return apply(d, id, ctr, err, errlen);
}

void
dock_pol_release(struct dock_driver *d, json_t *ctr)
{
	struct dock_pol *p = &d->pol;
	struct dock_nft_rules *r;
	const char *ip = ctr_address(ctr);
	unsigned char bin[4];
	char err[DOCK_ERRLEN], path[512];
	int rv;

	if (!d->net_sandbox || ip == NULL || inet_pton(AF_INET, ip, bin) != 1 ||
	    (r = malloc(sizeof(*r))) == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	if (p->dir[0] != '\0') {
		snprintf(path, sizeof(path), "%s/policy/%s", p->dir, ip);
		(void)unlink(path);
	}
	dock_pol_state_remove(json_string_value(json_object_get(
	    json_object_get(json_object_get(ctr, "Config"), "Labels"),
	    "kilntainers.computer-id")));
	rv = p->br[0] != '\0' ? policy_rules(p, ip, MSC_NET_OPEN, r) : -ENXIO;
	pthread_mutex_unlock(&p->mu);
	if (rv == 0 && (d->net_via_engine ? dock_nft_engine(d, r, err,
	    sizeof(err)) : dock_nft_local(r, err, sizeof(err))) != 0)
		msc_log_warn("network: cannot release address %s: %s", ip, err);
	free(r);
}
