/*
 * docker_proxy_acl.c - the addresses the allowlist proxy refuses to
 * connect to (squid's acl msc_blocked, docker_proxy.c): the blocked
 * ranges (msc_netpolicy.h), the sandbox bridge's subnet and every
 * address of the host itself, as `open` mode's rules refuse them.
 *
 * The list is squid's view at the proxy's start: an address the host
 * gains later is refused by the policy table's fib rule at each connect
 * (docker_policy.c), where the kernel checks the proxy's connections.
 *
 * squid reads an IPv4-mapped IPv6 address as the IPv4 address it maps:
 * the IPv4 ranges cover those, and ::ffff:0:0/96 would read as
 * 0.0.0.0/0, which squid drops with two warnings at every start. It
 * also warns of an entry inside another: an address already covered is
 * left out.
 */
#include "docker_driver_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"

#define ACL_EXTRA_MAX 64        /* host addresses and subnets listed */

struct prefix {
	int family;
	unsigned char a[16];
	unsigned bits;
};

/* The prefix length of a netmask (its leading ones). */
static unsigned
mask_bits(const unsigned char *m, size_t len)
{
	unsigned bits = 0;

	for (size_t i = 0; i < len; i++)
		for (unsigned b = 0; b < 8; b++) {
			if ((m[i] & (0x80u >> b)) == 0)
				return bits;
			bits++;
		}
	return bits;
}

/* Whether `x` is blocked already or inside one of the n kept so far. */
static bool
covered(const struct prefix *x, const struct prefix *kept, size_t n)
{
	size_t len = x->family == AF_INET ? 4 : 16;

	if (msc_net_blocked(x->family, x->a, x->bits))
		return true;
	for (size_t i = 0; i < n; i++)
		if (kept[i].family == x->family && msc_net_prefix_within(x->a,
		    x->bits, kept[i].a, kept[i].bits, len))
			return true;
	return false;
}

/* An interface address as a prefix: the host's (/32, /128), or its net. */
static bool
take(const struct ifaddrs *ifa, bool subnet, struct prefix *x)
{
	const struct sockaddr *sa = ifa->ifa_addr;
	const unsigned char *a, *m = NULL;
	size_t len;

	if (sa == NULL || (sa->sa_family != AF_INET &&
	    sa->sa_family != AF_INET6))
		return false;
	x->family = sa->sa_family;
	if (x->family == AF_INET) {
		a = (const void *)&((const struct sockaddr_in *)(const void *)
		    sa)->sin_addr;
		if (ifa->ifa_netmask != NULL)
			m = (const void *)&((const struct sockaddr_in *)
			    (const void *)ifa->ifa_netmask)->sin_addr;
		len = 4;
	} else {
		a = (const void *)&((const struct sockaddr_in6 *)(const void *)
		    sa)->sin6_addr;
		if (ifa->ifa_netmask != NULL)
			m = (const void *)&((const struct sockaddr_in6 *)
			    (const void *)ifa->ifa_netmask)->sin6_addr;
		len = 16;
	}
	memcpy(x->a, a, len);
	x->bits = (unsigned)len * 8;
	if (subnet) {
		if (m == NULL)
			return false;
		x->bits = mask_bits(m, len);
		for (size_t i = 0; i < len; i++)
			x->a[i] &= m[i];
	}
	return true;
}

char *
dock_proxy_blocked_of(const struct ifaddrs *list, const char *br)
{
	struct prefix kept[ACL_EXTRA_MAX], x;
	size_t n = 0, len = 0;
	char *s = NULL, text[INET6_ADDRSTRLEN];
	FILE *f;

	if ((f = open_memstream(&s, &len)) == NULL)
		return NULL;
	for (size_t i = 0; msc_net_blocked4[i] != NULL; i++)
		fprintf(f, "%s%s", i ? " " : "", msc_net_blocked4[i]);
	for (size_t i = 0; msc_net_blocked6[i] != NULL; i++)
		if (strncmp(msc_net_blocked6[i], "::ffff:", 7) != 0)
			fprintf(f, " %s", msc_net_blocked6[i]);
	/* The bridge's subnets first: its addresses then fall inside. */
	for (int pass = 0; pass < 2; pass++)
		for (const struct ifaddrs *ifa = list; ifa != NULL &&
		    n < ACL_EXTRA_MAX; ifa = ifa->ifa_next) {
			bool bridge = br != NULL && ifa->ifa_name != NULL &&
			    strcmp(ifa->ifa_name, br) == 0;

			if ((pass == 0 && !bridge) ||
			    !take(ifa, pass == 0, &x) || covered(&x, kept, n))
				continue;
			kept[n++] = x;
			inet_ntop(x.family, x.a, text, sizeof(text));
			fprintf(f, " %s/%u", text, x.bits);
		}
	if (n == ACL_EXTRA_MAX)
		msc_log_warn("proxy: squid's list holds the first %d of the "
		    "host's addresses and subnets; the rest are refused by the "
		    "policy table at each connect only", ACL_EXTRA_MAX);
	if (fclose(f) != 0) {
		free(s);
		return NULL;
	}
	return s;
}

char *
dock_proxy_blocked(const char *br)
{
	struct ifaddrs *list = NULL;
	char *s;

	if (getifaddrs(&list) != 0)
		return NULL;    /* not knowing the host's: no proxy */
	s = dock_proxy_blocked_of(list, br);
	freeifaddrs(list);
	return s;
}
