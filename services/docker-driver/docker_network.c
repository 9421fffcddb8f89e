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
 * The rules need root in the engine's network namespace and a local
 * engine; without them the driver refuses to start with networking on
 * (dock_net_init), and a create fails when the rules cannot be loaded.
 */
#include "docker_driver_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "msc_log.h"

#define T_NET 30000
#define NFT_OUT_MAX 1024

extern char **environ;

static const char *const nft_paths[] = { "/usr/sbin/nft", "/sbin/nft",
	"/usr/bin/nft", NULL };

static const char *
nft_path(void)
{
	for (int i = 0; nft_paths[i] != NULL; i++)
		if (access(nft_paths[i], X_OK) == 0)
			return nft_paths[i];
	return NULL;
}

static bool
engine_local(const char *host)
{
	if (host == NULL || *host == '\0')
		host = getenv("DOCKER_HOST");
	return host == NULL || *host == '\0' ||
	    strncmp(host, "unix://", 7) == 0;
}

int
dock_net_init(struct dock_driver *d)
{
	const char *mode = json_string_value(json_object_get(json_object_get(
	    d->create_template, "HostConfig"), "NetworkMode"));
	const char *why = NULL;

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
	if (geteuid() != 0)
		why = "the driver is not root";
	else if (!engine_local(d->cfg->docker_host))
		why = "the engine is not local";
	else if (nft_path() == NULL)
		why = "nft (Debian package nftables) is not installed";
	if (why == NULL)
		return 0;
	msc_cfg_error("networking is on but the host packet filter that keeps "
	    "computers from the host, each other and private addresses cannot "
	    "be installed (%s); run as root with a local engine, or pass "
	    "--no-network, or choose a network yourself with "
	    "--docker-run-flag --network NAME", why);
	return -EPERM;
}

/* Runs `nft -f -` with `rules` on stdin; its messages go to err. */
static int
nft_load(const char *rules, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	const char *nft = nft_path();
	char *argv[] = { (char *)"nft", (char *)"-f", (char *)"-", NULL };
	char out[NFT_OUT_MAX];
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
		out[strcspn(out, "\n")] = '\0';
		snprintf(err, errlen, "nft refused the sandbox rules: %s", out);
		return -EIO;
	}
	return 0;
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

/*
 * Traffic between two ports of the bridge never reaches the inet hooks
 * unless the kernel passes bridged packets to them (br_netfilter). A
 * bridge-family rule stops it at layer 2 where the kernel can match the
 * bridge (meta ibrname); else the driver turns br_netfilter's hooks on,
 * and the inet forward rule (in and out the bridge) drops it.
 */
static int
isolate_ports(const char *br, char *err, size_t errlen)
{
	char rules[1024], ignore[DOCK_ERRLEN];

	snprintf(rules, sizeof(rules),
	    "table bridge " DOCK_NFT_TABLE "\n"
	    "delete table bridge " DOCK_NFT_TABLE "\n"
	    "table bridge " DOCK_NFT_TABLE " {\n"
	    "\tchain forward {\n"
	    "\t\ttype filter hook forward priority filter - 1; policy accept;\n"
	    "\t\tmeta ibrname \"%s\" meta obrname \"%s\" drop\n"
	    "\t}\n"
	    "}\n", br, br);
	if (nft_load(rules, ignore, sizeof(ignore)) == 0)
		return 0;
	if (sysctl_on("/proc/sys/net/bridge/bridge-nf-call-iptables") != 0 ||
	    sysctl_on("/proc/sys/net/bridge/bridge-nf-call-ip6tables") != 0) {
		snprintf(err, errlen, "cannot keep computers apart: the kernel "
		    "has neither nftables' bridge meta match nor br_netfilter "
		    "(modprobe br_netfilter)");
		return -ENOTSUP;
	}
	return 0;
}

static int
install_rules(const char *br, char *err, size_t errlen)
{
	char dns[2048], rules[6144];
	int n;

	dns_rules(br, dns, sizeof(dns));
	n = snprintf(rules, sizeof(rules),
	    "table inet " DOCK_NFT_TABLE "\n"
	    "delete table inet " DOCK_NFT_TABLE "\n"
	    "table inet " DOCK_NFT_TABLE " {\n"
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
	    br, br, br, br, br, br, dns, br, br);
	if (n < 0 || (size_t)n >= sizeof(rules)) {
		snprintf(err, errlen, "the sandbox rules do not fit");
		return -E2BIG;
	}
	if ((n = nft_load(rules, err, errlen)) != 0)
		return n;
	return isolate_ports(br, err, errlen);
}

/* Makes DOCK_NET_NAME; a concurrent maker's network is fine too. */
static int
net_create(struct dock_driver *d, char *err, size_t errlen)
{
	json_t *body = json_pack("{s:s, s:s, s:b, s:b, s:{s:s}, s:{s:s, s:s}}",
	    "Name", DOCK_NET_NAME, "Driver", "bridge", "CheckDuplicate", 1,
	    "Internal", 0, "Labels", "kilntainers", "true", "Options",
	    "com.docker.network.bridge.enable_icc", "false",
	    "com.docker.network.bridge.name", DOCK_NET_BRIDGE);
	int rv;

	if (body == NULL)
		return -ENOMEM;
	rv = dock_network_create(d->engine, body, T_NET, err, errlen);
	json_decref(body);
	if (rv == 0)
		msc_log_info("created the sandbox network %s", DOCK_NET_NAME);
	return rv == -EEXIST ? 0 : rv;
}

/* Checks that an existing DOCK_NET_NAME is ours and as made; its bridge. */
static int
net_check(json_t *net, char *br, size_t brlen, char *err, size_t errlen)
{
	json_t *opts = json_object_get(net, "Options");
	const char *label = json_string_value(json_object_get(json_object_get(
	    net, "Labels"), "kilntainers"));
	const char *icc = json_string_value(json_object_get(opts,
	    "com.docker.network.bridge.enable_icc"));
	const char *name = json_string_value(json_object_get(opts,
	    "com.docker.network.bridge.name"));
	const char *drv = json_string_value(json_object_get(net, "Driver"));

	if (label == NULL || strcmp(label, "true") != 0 || drv == NULL ||
	    strcmp(drv, "bridge") != 0 || icc == NULL ||
	    strcmp(icc, "false") != 0 || name == NULL || *name == '\0' ||
	    strlen(name) >= brlen || strpbrk(name, "\"\\ \n") != NULL) {
		snprintf(err, errlen, "network %s exists but was not made by "
		    "this server (label kilntainers=true, bridge driver, "
		    "enable_icc=false, a bridge name): remove it",
		    DOCK_NET_NAME);
		return -EEXIST;
	}
	snprintf(br, brlen, "%s", name);
	return 0;
}

static int
net_ensure(struct dock_driver *d, char *err, size_t errlen)
{
	char br[IF_NAMESIZE], cerr[DOCK_ERRLEN];
	json_t *net = NULL;
	int rv, crv;

	rv = dock_network_inspect(d->engine, DOCK_NET_NAME, T_NET, &net, err,
	    errlen);
	if (rv == -ENOENT) {
		/* Another driver may make it at the same time: look again. */
		crv = net_create(d, cerr, sizeof(cerr));
		rv = dock_network_inspect(d->engine, DOCK_NET_NAME, T_NET, &net,
		    err, errlen);
		if (rv != 0 && crv != 0) {
			snprintf(err, errlen, "%s", cerr);
			return crv;
		}
	}
	if (rv != 0)
		return rv;
	rv = net_check(net, br, sizeof(br), err, errlen);
	json_decref(net);
	if (rv != 0)
		return rv;
	if (if_nametoindex(br) == 0) {
		snprintf(err, errlen, "the sandbox network's bridge %s is not "
		    "in this driver's network namespace: its packet filter "
		    "cannot be installed from here", br);
		return -ENXIO;
	}
	return install_rules(br, err, errlen);
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
