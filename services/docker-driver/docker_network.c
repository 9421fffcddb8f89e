/*
 * docker_network.c - the sandbox network: computers reach the internet
 * but not the host, each other, or the host's neighbourhood.
 *
 * With networking on and no --docker-run-flag --network from the
 * operator, computers join DOCK_NET_NAME, a bridge network the driver
 * creates if missing (labelled kilntainers=true, inter-container traffic
 * off, bridge interface DOCK_NET_BRIDGE). Before each create the driver
 * (re)loads its own nftables tables (DOCK_NFT_TABLE, families inet and
 * bridge, one atomic `nft -f -`), which drop what enters from that bridge
 * and is addressed to the host itself, to another port of the bridge,
 * or to private, shared, loopback, link-local (the cloud metadata
 * address), multicast and reserved ranges, IPv4 and IPv6. DNS (port 53)
 * to the host's own resolvers (/etc/resolv.conf) stays allowed: the
 * engine's resolver forwards from the container's namespace. The rules
 * live in the host's kernel, outside every container: code in a computer
 * cannot change them.
 *
 * Podman (--engine podman) gets a bridge and tables of its own names
 * (DOCK_NET_BRIDGE_PODMAN, DOCK_NFT_TABLE_PODMAN): with both engines on
 * one host, Podman would otherwise put its computers on Docker's bridge,
 * and each driver's load would replace the other's rules. Its compatible
 * API lists the network without options (no bridge name, no enable_icc),
 * so the driver reads Podman's own answer, which names the bridge; Podman
 * has no enable_icc, and the bridge table is what keeps computers apart
 * there. Podman makes the bridge with the network's first container, not
 * with the network: the rules, which match the bridge by name, are loaded
 * before it exists and the bridge is looked for once the container runs
 * (dock_net_confirm).
 *
 * Loading them (docker_netload.c) needs a local rootful engine and the
 * host's nft: a root driver runs nft itself, any other has the engine run
 * it in a short-lived container on the host's network (a user who may use
 * the engine's socket is root-equivalent already). Otherwise (a tcp://
 * or rootless engine, no nft, no access to the socket) the driver refuses
 * to start with networking on (dock_net_init), and a create fails when
 * the rules cannot be loaded.
 *
 * Below the network modes (docker_policy.c), which call dock_net_ensure:
 * what this file learns of the bridge and its gateway it tells them
 * through d->net_learnt.
 */
#include "docker_driver_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_log.h"

#define T_NET 30000
/* Podman's /info counts its storage: seconds on a busy host. */
#define T_INFO 30000

static bool
on_podman(const struct dock_driver *d)
{
	return strcmp(dock_engine_name(d->engine), "podman") == 0;
}

const char *
dock_net_bridge(const struct dock_driver *d)
{
	return on_podman(d) ? DOCK_NET_BRIDGE_PODMAN : DOCK_NET_BRIDGE;
}

static const char *
nft_table(const struct dock_driver *d)
{
	return on_podman(d) ? DOCK_NFT_TABLE_PODMAN : DOCK_NFT_TABLE;
}

/*
 * Whether the engine says it is rootless (its networks then live in a
 * user namespace the host's rules do not see): 1, 0, or a negative errno
 * when it does not answer.
 */
static int
engine_rootless(struct dock_driver *d, int timeout_ms)
{
	char err[DOCK_ERRLEN];
	json_t *info = NULL, *opt;
	size_t i;
	int rv;

	if ((rv = dock_engine_info(d->engine, timeout_ms, &info, err,
	    sizeof(err))) != 0)
		return rv;
	json_array_foreach(json_object_get(info, "SecurityOptions"), i, opt) {
		const char *o = json_string_value(opt);

		if (o != NULL && strstr(o, "rootless") != NULL)
			rv = 1;
	}
	json_decref(info);
	return rv;
}

int
dock_net_init(struct dock_driver *d)
{
	const char *mode = json_string_value(json_object_get(json_object_get(
	    d->create_template, "HostConfig"), "NetworkMode"));
	const char *sock = dock_engine_socket(d->engine);
	char why[512];
	int rl;

	d->net_sandbox = mode != NULL && strcmp(mode, DOCK_NET_NAME) == 0;
	if (!d->net_sandbox) {
		if (d->cfg->network &&
		    (mode == NULL || strcmp(mode, "none") != 0))
			msc_log_warn("network: the operator's --network %s is "
			    "used as is: no sandbox rules keep computers from "
			    "the host and its neighbourhood",
			    mode != NULL ? mode : "(default)");
		return 0;
	}
	d->net_via_engine = geteuid() != 0;
	/* Known before any create, for the policy rules of computers found
	 * again at start; dock_net_ensure says what the engine made. */
	if (d->net_learnt != NULL)
		d->net_learnt(d, dock_net_bridge(d), NULL);
	why[0] = '\0';
	if (sock == NULL)
		snprintf(why, sizeof(why), "the engine is not local");
	else if (dock_nft_path() == NULL)
		snprintf(why, sizeof(why), "nft (Debian package nftables) is "
		    "not installed");
	else if (d->net_via_engine &&
	    faccessat(AT_FDCWD, sock, R_OK | W_OK, AT_EACCESS) != 0)
		snprintf(why, sizeof(why), "the driver is not root and cannot "
		    "use the engine's socket %s: %s", sock, strerror(errno));
	else if ((rl = engine_rootless(d, T_INFO)) == 1)
		snprintf(why, sizeof(why), "the engine is rootless: its "
		    "networks live in a user namespace");
	else
		d->net_rootless_checked = rl == 0;
	if (why[0] == '\0')
		return 0;
	msc_cfg_error("networking is on but the host packet filter that keeps "
	    "computers from the host, each other and private addresses cannot "
	    "be installed (%s); run the server as root, or as a user in the "
	    "docker group, with a local rootful engine; or pass --no-network; "
	    "or knowingly go without these rules on a network of your own "
	    "with --docker-run-flag --network NAME", why);
	return -EPERM;
}

/* Appends "ip daddr X ... accept" lines for the host's DNS resolvers. */
static void
dns_rules(const char *br, char *p, size_t len)
{
	char line[256], addr[INET6_ADDRSTRLEN];
	unsigned char bin[16];
	FILE *f = fopen("/etc/resolv.conf", "re");
	size_t used = 0;

	p[0] = '\0';
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		bool v6;
		int n;

		if (sscanf(line, " nameserver %45s", addr) != 1)
			continue;
		v6 = strchr(addr, ':') != NULL;
		if (inet_pton(v6 ? AF_INET6 : AF_INET, addr, bin) != 1)
			continue;       /* also refuses scoped v6 (%eth0) */
		n = snprintf(p + used, len - used, "\t\tiifname \"%s\" %s "
		    "daddr %s meta l4proto { tcp, udp } th dport 53 accept\n",
		    br, v6 ? "ip6" : "ip", addr);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	fclose(f);
	p[used] = '\0';
}

/*
 * Traffic between two ports of the bridge never reaches the inet hooks
 * unless the kernel passes bridged packets to them (br_netfilter). A
 * bridge-family rule stops it at layer 2 where the kernel can match the
 * bridge (meta ibrname); else br_netfilter's hooks must be on, and the
 * inet forward rule (in and out the bridge) drops it (docker_netload.c).
 */
static void
bridge_rules(const char *tbl, const char *br, char *p, size_t len)
{
	snprintf(p, len,
	    "table bridge %s\n"
	    "delete table bridge %s\n"
	    "table bridge %s {\n"
	    "\tchain forward {\n"
	    "\t\ttype filter hook forward priority filter - 1; policy accept;\n"
	    "\t\tmeta ibrname \"%s\" meta obrname \"%s\" drop\n"
	    "\t}\n"
	    "}\n", tbl, tbl, tbl, br, br);
}

/* The sandbox rules for bridge `br` in tables `tbl`, whoever loads them. */
static int
build_rules(const char *tbl, const char *br, struct dock_nft_rules *r,
    char *err, size_t errlen)
{
	char dns[2048];
	int n;

	dns_rules(br, dns, sizeof(dns));
	n = snprintf(r->inet, sizeof(r->inet),
	    "table inet %s\n"
	    "delete table inet %s\n"
	    "table inet %s {\n"
	    "\tset blocked4 { type ipv4_addr; flags interval; elements = {\n"
	    "\t\t0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8,\n"
	    "\t\t169.254.0.0/16, 172.16.0.0/12, 192.0.0.0/24,\n"
	    "\t\t192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/3 } }\n"
	    "\tset blocked6 { type ipv6_addr; flags interval; elements = {\n"
	    "\t\t::/127, ::ffff:0:0/96, 64:ff9b:1::/48, fc00::/7,\n"
	    "\t\tfe80::/10, fec0::/10, ff00::/8 } }\n"
	    "\tchain input {\n"
	    "\t\ttype filter hook input priority filter - 1; policy accept;\n"
	    "\t\tiifname \"%s\" ct state established,related accept\n"
	    "\t\tiifname \"%s\" icmpv6 type { nd-neighbor-solicit, "
	    "nd-neighbor-advert, nd-router-solicit } accept\n"
	    "\t\tiifname \"%s\" meta mark " DOCK_POL_MARK_IN " accept\n"
	    "\t\tiifname \"%s\" drop\n"
	    "\t}\n"
	    "\tchain forward {\n"
	    "\t\ttype filter hook forward priority filter - 1; policy accept;\n"
	    "\t\tiifname \"%s\" ct state established,related accept\n"
	    "\t\tiifname \"%s\" oifname \"%s\" drop\n"
	    "%s"
	    "\t\tiifname \"%s\" ip daddr @blocked4 drop\n"
	    "\t\tiifname \"%s\" ip6 daddr @blocked6 drop\n"
	    "\t}\n"
	    "}\n",
	    tbl, tbl, tbl, br, br, br, br, br, br, br, dns, br, br);
	if (n < 0 || (size_t)n >= sizeof(r->inet)) {
		snprintf(err, errlen, "the sandbox rules do not fit");
		return -E2BIG;
	}
	bridge_rules(tbl, br, r->bridge, sizeof(r->bridge));
	return 0;
}

static int
install_rules(struct dock_driver *d, const char *br, char *err,
    size_t errlen)
{
	struct dock_nft_rules r;
	int rv;

	if ((rv = build_rules(nft_table(d), br, &r, err, errlen)) != 0)
		return rv;
	if (!d->net_via_engine)
		return dock_nft_local(&r, err, errlen);
	if ((rv = dock_nft_engine(d, &r, err, errlen)) == 0 &&
	    !d->net_engine_logged) {
		msc_log_info("network: loaded the sandbox rules through the "
		    "engine (the driver is not root)");
		d->net_engine_logged = true;
	}
	return rv;
}

/* Makes DOCK_NET_NAME; a concurrent maker's network is fine too. */
static int
net_create(struct dock_driver *d, char *err, size_t errlen)
{
	json_t *body = json_pack("{s:s, s:s, s:b, s:b, s:{s:s}, s:{s:s, s:s}}",
	    "Name", DOCK_NET_NAME, "Driver", "bridge", "CheckDuplicate", 1,
	    "Internal", 0, "Labels", "kilntainers", "true", "Options",
	    "com.docker.network.bridge.enable_icc", "false",
	    "com.docker.network.bridge.name", dock_net_bridge(d));
	int rv;

	if (body == NULL)
		return -ENOMEM;
	rv = dock_network_create(d->engine, body, T_NET, err, errlen);
	json_decref(body);
	if (rv == 0)
		msc_log_info("created the sandbox network %s", DOCK_NET_NAME);
	return rv == -EEXIST ? 0 : rv;
}

/* Whether an interface name can go into the rules as is. */
static bool
bridge_name_ok(const char *name)
{
	return name != NULL && *name != '\0' && strlen(name) < IF_NAMESIZE &&
	    strpbrk(name, "\"\\ \n") == NULL;
}

/*
 * What keeps DOCK_NET_NAME (an inspect answer) from being the network
 * this server makes, or NULL when it is; then *brp and *gwp (borrowed
 * from net, *gwp maybe NULL) are its bridge and gateway. Docker's answer
 * (GET /networks) carries the options; Podman's own (libpod) names the
 * bridge, and Podman has no enable_icc to check.
 */
static const char *
net_foreign(bool podman, json_t *net, const char **brp, const char **gwp)
{
	json_t *opts = json_object_get(net, "Options");
	const char *icc = json_string_value(json_object_get(opts,
	    "com.docker.network.bridge.enable_icc"));
	const char *label = json_string_value(json_object_get(json_object_get(
	    net, podman ? "labels" : "Labels"), "kilntainers"));
	const char *drv = json_string_value(json_object_get(net,
	    podman ? "driver" : "Driver"));

	if (podman) {
		*brp = json_string_value(json_object_get(net,
		    "network_interface"));
		*gwp = json_string_value(json_object_get(json_array_get(
		    json_object_get(net, "subnets"), 0), "gateway"));
	} else {
		*brp = json_string_value(json_object_get(opts,
		    "com.docker.network.bridge.name"));
		*gwp = json_string_value(json_object_get(json_array_get(
		    json_object_get(json_object_get(net, "IPAM"), "Config"), 0),
		    "Gateway"));
	}
	if (label == NULL || strcmp(label, "true") != 0)
		return "it has no label kilntainers=true";
	if (drv == NULL || strcmp(drv, "bridge") != 0)
		return "it is not a bridge network";
	if (!bridge_name_ok(*brp))
		return "it names no bridge interface";
	if (!podman && (icc == NULL || strcmp(icc, "false") != 0))
		return "it lets its containers reach each other "
		    "(enable_icc is not false)";
	return NULL;
}

/* Inspects DOCK_NET_NAME the way that shows its bridge on this engine. */
static int
net_inspect(struct dock_driver *d, json_t **netp, char *err, size_t errlen)
{
	if (on_podman(d))
		return dock_network_inspect_libpod(d->engine, DOCK_NET_NAME,
		    T_NET, netp, err, errlen);
	return dock_network_inspect(d->engine, DOCK_NET_NAME, T_NET, netp,
	    err, errlen);
}

static int
net_ensure(struct dock_driver *d, char *err, size_t errlen)
{
	const char *eng = dock_engine_name(d->engine), *why, *name, *gw;
	char br[IF_NAMESIZE], cerr[DOCK_ERRLEN];
	json_t *net = NULL;
	bool here;
	int rv, crv;

	if (!d->net_rootless_checked) {
		if ((rv = engine_rootless(d, T_NET)) == 1) {
			snprintf(err, errlen, "the engine is rootless: its "
			    "networks live in a user namespace the host's "
			    "packet filter does not see");
			return -ENOTSUP;
		}
		d->net_rootless_checked = rv == 0;
	}
	rv = net_inspect(d, &net, err, errlen);
	if (rv == -ENOENT) {
		/* Another driver may make it at the same time: look again. */
		crv = net_create(d, cerr, sizeof(cerr));
		rv = net_inspect(d, &net, err, errlen);
		if (rv != 0 && crv != 0) {
			snprintf(err, errlen, "%s", cerr);
			return crv;
		}
	}
	if (rv != 0)
		return rv;
	if ((why = net_foreign(on_podman(d), net, &name, &gw)) != NULL) {
		snprintf(err, errlen, "network %s exists but was not made by "
		    "this server: %s. Remove it (%s network rm %s, once no "
		    "container uses it) and the next computer makes it anew",
		    DOCK_NET_NAME, why, eng, DOCK_NET_NAME);
		json_decref(net);
		return -EEXIST;
	}
	snprintf(br, sizeof(br), "%s", name);
	if (d->net_learnt != NULL)
		d->net_learnt(d, br, gw);
	json_decref(net);
	here = if_nametoindex(br) != 0;
	if (!here && !on_podman(d)) {
		snprintf(err, errlen, "the sandbox network's bridge %s is not "
		    "in this driver's network namespace: its packet filter "
		    "cannot be installed from here", br);
		return -ENXIO;
	}
	snprintf(d->net_br, sizeof(d->net_br), "%s", br);
	d->net_br_unseen = !here;
	return install_rules(d, br, err, errlen);
}

int
dock_net_ensure(struct dock_driver *d, char *err, size_t errlen)
{
	int rv;

	if (!d->net_sandbox)
		return 0;
	pthread_mutex_lock(&d->net_mu);
	rv = net_ensure(d, err, errlen);
	pthread_mutex_unlock(&d->net_mu);
	return rv;
}

int
dock_net_confirm(struct dock_driver *d, char *err, size_t errlen)
{
	int rv = 0;

	if (!d->net_sandbox)
		return 0;
	pthread_mutex_lock(&d->net_mu);
	if (d->net_br_unseen && if_nametoindex(d->net_br) == 0) {
		snprintf(err, errlen, "the sandbox network's bridge %s is not "
		    "in this driver's network namespace once a computer "
		    "runs on it: its packet filter cannot be installed from "
		    "here", d->net_br);
		rv = -ENXIO;
	} else
		d->net_br_unseen = false;
	pthread_mutex_unlock(&d->net_mu);
	return rv;
}
