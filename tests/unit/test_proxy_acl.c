/*
 * test_proxy_acl.c - the addresses the allowlist proxy refuses
 * (services/docker-driver/docker_proxy_acl.c) and the blocked ranges
 * (lib/msc_netpolicy): the host's own addresses and the sandbox bridge's
 * subnet on top of the fixed ranges, nothing squid would warn about.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "docker_policy.h"

struct fake_if {
	struct ifaddrs ifa;
	struct sockaddr_storage addr, mask;
};

/* An interface address "ADDR/BITS" named `name`, linked after `next`. */
static struct fake_if *
fake(const char *name, const char *cidr, struct fake_if *next)
{
	struct fake_if *f = calloc(1, sizeof(*f));
	char text[64];
	unsigned bits;
	const char *slash = strchr(cidr, '/');
	bool v6 = strchr(cidr, ':') != NULL;
	unsigned char *a, *m;
	size_t len = v6 ? 16 : 4;

	assert_non_null(f);
	snprintf(text, sizeof(text), "%.*s", (int)(slash - cidr), cidr);
	bits = (unsigned)atoi(slash + 1);
	f->addr.ss_family = f->mask.ss_family = v6 ? AF_INET6 : AF_INET;
	a = v6 ? (void *)&((struct sockaddr_in6 *)&f->addr)->sin6_addr :
	    (void *)&((struct sockaddr_in *)&f->addr)->sin_addr;
	m = v6 ? (void *)&((struct sockaddr_in6 *)&f->mask)->sin6_addr :
	    (void *)&((struct sockaddr_in *)&f->mask)->sin_addr;
	assert_int_equal(inet_pton(f->addr.ss_family, text, a), 1);
	for (size_t i = 0; i < len; i++)
		m[i] = bits >= (i + 1) * 8 ? 0xff : bits > i * 8 ?
		    (unsigned char)(0xff00u >> (bits - i * 8)) : 0;
	f->ifa.ifa_name = (char *)name;
	f->ifa.ifa_addr = (struct sockaddr *)&f->addr;
	f->ifa.ifa_netmask = (struct sockaddr *)&f->mask;
	f->ifa.ifa_next = next != NULL ? &next->ifa : NULL;
	return f;
}

static bool
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

static void
blocked_ranges(void **state)
{
	unsigned char a[16];

	(void)state;
	inet_pton(AF_INET, "169.254.169.254", a);
	assert_true(msc_net_blocked(AF_INET, a, 32));
	inet_pton(AF_INET, "172.17.0.1", a);
	assert_true(msc_net_blocked(AF_INET, a, 32));
	inet_pton(AF_INET, "172.17.0.0", a);
	assert_true(msc_net_blocked(AF_INET, a, 16));
	assert_false(msc_net_blocked(AF_INET, a, 8));   /* wider than 172.16/12 */
	inet_pton(AF_INET, "192.0.2.2", a);
	assert_false(msc_net_blocked(AF_INET, a, 32));
	inet_pton(AF_INET6, "::ffff:10.1.2.3", a);
	assert_true(msc_net_blocked(AF_INET6, a, 128));
	inet_pton(AF_INET6, "::ffff:198.51.100.1", a);
	assert_false(msc_net_blocked(AF_INET6, a, 128));
	inet_pton(AF_INET6, "fe80::1", a);
	assert_true(msc_net_blocked(AF_INET6, a, 128));
	inet_pton(AF_INET6, "2001:db8::5", a);
	assert_false(msc_net_blocked(AF_INET6, a, 128));
}

static void
host_addresses(void **state)
{
	struct fake_if *list = NULL, *f;
	char *s;

	(void)state;
	list = fake("lo", "127.0.0.1/8", list);
	list = fake("lo", "::1/128", list);
	list = fake("eth0", "192.0.2.2/24", list);
	list = fake("eth0", "2001:db8::5/64", list);
	list = fake("eth0", "fe80::5/64", list);
	list = fake("docker0", "172.17.0.1/16", list);
	list = fake("msc-sandbox0", "203.0.113.1/24", list);
	list = fake("eth1", "203.0.113.9/32", list);    /* inside the bridge's */
	list = fake("eth1", "198.51.100.7/32", list);
	s = dock_proxy_blocked_of(&list->ifa, "msc-sandbox0");
	assert_non_null(s);
	for (size_t i = 0; msc_net_blocked4[i] != NULL; i++)
		assert_true(has_word(s, msc_net_blocked4[i]));
	assert_true(has_word(s, "fc00::/7"));
	/* squid reads it as 0.0.0.0/0 and drops it, with warnings. */
	assert_false(has_word(s, "::ffff:0:0/96"));
	assert_true(has_word(s, "192.0.2.2/32"));
	assert_true(has_word(s, "2001:db8::5/128"));
	assert_true(has_word(s, "203.0.113.0/24"));
	assert_true(has_word(s, "198.51.100.7/32"));
	/* Covered already: squid would warn of an entry inside another. */
	assert_false(has_word(s, "203.0.113.1/32"));
	assert_false(has_word(s, "203.0.113.9/32"));
	assert_null(strstr(s, "127.0.0.1"));
	assert_null(strstr(s, "172.17.0.1"));
	assert_null(strstr(s, "fe80::5"));
	assert_null(strstr(s, "::1/128"));
	free(s);
	/* No interfaces: the fixed ranges. */
	s = dock_proxy_blocked_of(NULL, "msc-sandbox0");
	assert_non_null(s);
	assert_true(has_word(s, "10.0.0.0/8"));
	assert_false(has_word(s, "::ffff:0:0/96"));
	free(s);
	while (list != NULL) {
		f = list;
		list = f->ifa.ifa_next != NULL ? (struct fake_if *)(void *)
		    f->ifa.ifa_next : NULL;
		free(f);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(blocked_ranges),
		cmocka_unit_test(host_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
