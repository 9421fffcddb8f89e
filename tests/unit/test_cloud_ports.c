/* test_cloud_ports.c - the cloud backends' table of exposed ports (issue
 * 30): bounds, a new sandbox of a computer, a restart that keeps them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cloud_ports.h"
#include "msc_driver.h"

static int
set(struct cloud_ports *p, const char *id, const char *sbx, uint32_t port,
    bool unexpose, Msc__V1__Preview *out, char *err)
{
	Msc__V1__SnapshotRequest req = MSC__V1__SNAPSHOT_REQUEST__INIT;

	req.computer_id = (char *)id;
	req.port = port;
	req.unexpose = unexpose;
	*out = (Msc__V1__Preview)MSC__V1__PREVIEW__INIT;
	return cloud_ports_set(p, &req, sbx, "https://x/", "a note", out, err,
	    256);
}

static size_t
listed(struct cloud_ports *p, const char *id, const char *sbx)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	size_t n;

	c.computer_id = (char *)id;
	c.sandbox_id = (char *)sbx;
	assert_int_equal(cloud_ports_fill(p, &c), 0);
	n = c.n_exposed_ports;
	free(c.exposed_ports);
	return n;
}

static void
test_bounds_and_sandboxes(void **state)
{
	struct cloud_ports *p;
	Msc__V1__Preview out;
	char err[256];

	(void)state;
	assert_int_equal(cloud_ports_new(&p), 0);
	/* At most CLOUD_PORTS_PER_COMPUTER; the same port again: no new row. */
	for (uint32_t port = 1; port <= CLOUD_PORTS_PER_COMPUTER; port++) {
		assert_int_equal(set(p, "a", "s1", port, false, &out, err), 0);
		assert_int_equal(out.n_ports, port);
		assert_string_equal(out.url, "https://x/");
		assert_string_equal(out.note, "a note");
		msc_preview_fini(&out);
	}
	assert_int_equal(set(p, "a", "s1", 1, false, &out, err), 0);
	assert_int_equal(out.n_ports, CLOUD_PORTS_PER_COMPUTER);
	msc_preview_fini(&out);
	assert_int_equal(set(p, "a", "s1", 1000, false, &out, err), -EDQUOT);
	assert_non_null(strstr(err, "at most 32 ports"));
	/* Another computer has its own share. */
	assert_int_equal(set(p, "b", "t1", 80, false, &out, err), 0);
	msc_preview_fini(&out);
	assert_int_equal(listed(p, "a", "s1"), CLOUD_PORTS_PER_COMPUTER);
	assert_int_equal(listed(p, "a", "other"), 0);
	/* Revoking: the port goes; twice is an error. */
	assert_int_equal(set(p, "a", "s1", 5, true, &out, err), 0);
	assert_string_equal(out.url, "");
	assert_int_equal(out.n_ports, CLOUD_PORTS_PER_COMPUTER - 1);
	msc_preview_fini(&out);
	assert_int_equal(set(p, "a", "s1", 5, true, &out, err), -ENOENT);
	assert_non_null(strstr(err, "Port 5 of computer 'a' is not exposed"));
	/* A restart into a new sandbox keeps the ports. */
	cloud_ports_moved(p, "a", "s2");
	assert_int_equal(listed(p, "a", "s2"), CLOUD_PORTS_PER_COMPUTER - 1);
	/* A sandbox the table did not hear of (made behind its back): the
	 * old sandbox's ports are dropped at the next exposure. */
	assert_int_equal(set(p, "a", "s3", 7, false, &out, err), 0);
	assert_int_equal(out.n_ports, 1);
	msc_preview_fini(&out);
	cloud_ports_forget(p, "a");
	assert_int_equal(listed(p, "a", "s3"), 0);
	assert_int_equal(listed(p, "b", "t1"), 1);
	cloud_ports_free(p);
}

static void
test_server_bound(void **state)
{
	struct cloud_ports *p;
	Msc__V1__Preview out;
	char err[256], id[32];
	int rv = 0;

	(void)state;
	assert_int_equal(cloud_ports_new(&p), 0);
	for (int i = 0; rv == 0 && i < CLOUD_PORTS_MAX; i++) {
		snprintf(id, sizeof(id), "c%d", i / CLOUD_PORTS_PER_COMPUTER);
		rv = set(p, id, "s",
		    (uint32_t)(i % CLOUD_PORTS_PER_COMPUTER) + 1, false, &out,
		    err);
		if (rv == 0)
			msc_preview_fini(&out);
	}
	assert_int_equal(rv, 0);
	assert_int_equal(set(p, "late", "s", 1, false, &out, err), -EDQUOT);
	cloud_ports_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_and_sandboxes),
		cmocka_unit_test(test_server_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
