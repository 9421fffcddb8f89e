/*
 * test_policy_state.c - a computer's policy file
 * (services/docker-driver/docker_policy_state.c): bound to the container
 * it was set for, forgotten when another container of that id is seen
 * (one removed behind the driver's back), and the proxy variables
 * emptied for the commands of a computer switched away from allowlist.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "docker_driver_int.h"

static char base[64];

static int
setup(void **state)
{
	struct dock_driver *d = calloc(1, sizeof(*d));

	snprintf(base, sizeof(base), "/tmp/msc-test-polstate-XXXXXX");
	if (d == NULL || mkdtemp(base) == NULL)
		return -1;
	setenv("MSC_PROXY_DIR", base, 1);
	pthread_mutex_init(&d->pol.mu, NULL);
	d->net_sandbox = true;
	d->pol.def_mode = MSC_NET_ALLOWLIST;
	*state = d;
	return 0;
}

static int
teardown(void **state)
{
	struct dock_driver *d = *state;
	char cmd[128];

	pthread_mutex_destroy(&d->pol.mu);
	free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static void
save(const char *id, enum msc_net_mode mode, const char *cid, bool proxied)
{
	struct dock_pol_lists l;

	memset(&l, 0, sizeof(l));
	l.mode = mode;
	snprintf(l.cid, sizeof(l.cid), "%s", cid);
	l.proxied = proxied;
	assert_int_equal(dock_pol_state_save(id, &l), 0);
}

static bool
exists(const char *id)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/computers/%s", base, id);
	return access(path, F_OK) == 0;
}

static void
bound_to_its_container(void **state)
{
	struct dock_driver *d = *state;
	struct dock_pol_lists l;
	json_t *labels = json_pack("{s:s}", DOCK_POL_LABEL, "allowlist");
	bool owned;

	save("c1", MSC_NET_NONE, "aaaa", true);
	dock_pol_current(d, "c1", "aaaa", labels, &l, &owned);
	assert_true(owned);
	assert_int_equal(l.mode, MSC_NET_NONE);
	assert_string_equal(l.cid, "aaaa");
	assert_true(l.proxied);
	dock_pol_lists_free(&l);
	/* Made again under that id: bound to the one removed, not this one. */
	assert_int_equal(dock_pol_mode_for(d, "c1"), MSC_NET_ALLOWLIST);
	dock_pol_current(d, "c1", "bbbb", labels, &l, &owned);
	assert_false(owned);
	assert_int_equal(l.mode, MSC_NET_ALLOWLIST);
	assert_false(exists("c1"));
	/* Recorded before the container exists (a create's): it applies. */
	save("c2", MSC_NET_NONE, "", false);
	assert_int_equal(dock_pol_mode_for(d, "c2"), MSC_NET_NONE);
	dock_pol_current(d, "c2", "cccc", labels, &l, &owned);
	assert_true(owned);
	assert_int_equal(l.mode, MSC_NET_NONE);
	dock_pol_lists_free(&l);
	json_decref(labels);
}

static void
proxy_variables(void **state)
{
	struct dock_driver *d = *state;
	const char *const *env;

	assert_null(dock_pol_exec_env(d, "c3"));        /* no file */
	save("c3", MSC_NET_OPEN, "dddd", true);
	env = dock_pol_exec_env(d, "c3");
	assert_non_null(env);
	for (size_t i = 0; i < 4; i++)
		assert_non_null(env[i]);
	assert_string_equal(env[0], "http_proxy=");
	assert_string_equal(env[3], "HTTPS_PROXY=");
	assert_null(env[4]);
	save("c3", MSC_NET_NONE, "dddd", true);
	assert_non_null(dock_pol_exec_env(d, "c3"));
	save("c3", MSC_NET_ALLOWLIST, "dddd", true);
	assert_null(dock_pol_exec_env(d, "c3"));
	/* Made open: its own variables (an image's proxy) are left alone. */
	save("c3", MSC_NET_OPEN, "dddd", false);
	assert_null(dock_pol_exec_env(d, "c3"));
	d->net_sandbox = false;
	save("c3", MSC_NET_OPEN, "dddd", true);
	assert_null(dock_pol_exec_env(d, "c3"));
	d->net_sandbox = true;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bound_to_its_container),
		cmocka_unit_test(proxy_variables),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
