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

static const char *principal = "";

static int
set(struct cloud_ports *p, const char *id, const char *sbx, uint32_t port,
    bool unexpose, Msc__V1__Preview *out, char *err)
{
	Msc__V1__SnapshotRequest req = MSC__V1__SNAPSHOT_REQUEST__INIT;

	req.principal = (char *)principal;
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
	cloud_ports_moved(p, "a", "s1", "s2");
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

/* One principal cannot fill the server's table for all others. */
static void
test_principal_bound(void **state)
{
	struct cloud_ports *p;
	Msc__V1__Preview out;
	char err[256], id[32];
	int rv = 0;

	(void)state;
	assert_int_equal(cloud_ports_new(&p), 0);
	principal = "mallory";
	for (int i = 0; rv == 0 && i < CLOUD_PORTS_PER_PRINCIPAL; i++) {
		snprintf(id, sizeof(id), "m%d", i / CLOUD_PORTS_PER_COMPUTER);
		rv = set(p, id, "s",
		    (uint32_t)(i % CLOUD_PORTS_PER_COMPUTER) + 1, false, &out,
		    err);
		if (rv == 0)
			msc_preview_fini(&out);
	}
	assert_int_equal(rv, 0);
	assert_int_equal(set(p, "more", "s", 1, false, &out, err), -EDQUOT);
	assert_non_null(strstr(err, "A principal exposes at most 512"));
	principal = "alice";
	assert_int_equal(set(p, "a", "s", 1, false, &out, err), 0);
	msc_preview_fini(&out);
	principal = "";
	cloud_ports_free(p);
}

/* Rows of a computer gone behind the table's back (a provider's
 * timeout) go at the next full listing, and a new computer of that id
 * does not get them at its reset. */
static void
test_stale_rows(void **state)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT, *cs[1] = { &c };
	Msc__V1__ComputerList l = MSC__V1__COMPUTER_LIST__INIT;
	struct cloud_ports *p;
	Msc__V1__Preview out;
	char err[256];
	uint64_t mark;

	(void)state;
	assert_int_equal(cloud_ports_new(&p), 0);
	assert_int_equal(set(p, "a", "old", 80, false, &out, err), 0);
	msc_preview_fini(&out);
	assert_int_equal(set(p, "b", "t1", 81, false, &out, err), 0);
	msc_preview_fini(&out);
	/* "a" made again (sandbox s1) and reset into s2: old's rows are
	 * an earlier computer's, not moved. */
	cloud_ports_moved(p, "a", "s1", "s2");
	assert_int_equal(listed(p, "a", "s2"), 0);
	assert_int_equal(listed(p, "a", "old"), 0);
	/* b timed out: a listing without it drops its rows, but not one
	 * exposed after the listing began. */
	mark = cloud_ports_mark(p);
	assert_int_equal(set(p, "c", "u1", 82, false, &out, err), 0);
	msc_preview_fini(&out);
	c.computer_id = (char *)"a";
	c.sandbox_id = (char *)"s2";
	l.computers = cs;
	l.n_computers = 1;
	assert_int_equal(cloud_ports_fill_list(p, &l, false, mark), 0);
	free(c.exposed_ports);
	c.exposed_ports = NULL;
	assert_int_equal(listed(p, "b", "t1"), 1);      /* not complete */
	assert_int_equal(cloud_ports_fill_list(p, &l, true, mark), 0);
	free(c.exposed_ports);
	assert_int_equal(listed(p, "b", "t1"), 0);
	assert_int_equal(listed(p, "c", "u1"), 1);
	cloud_ports_free(p);
}

/* An exposure that looked up a sandbox a reset then ended is refused
 * (it would name a dead URL and drop the moved rows). */
static void
test_retired(void **state)
{
	struct cloud_ports *p;
	Msc__V1__Preview out;
	char err[256];

	(void)state;
	assert_int_equal(cloud_ports_new(&p), 0);
	assert_int_equal(set(p, "a", "s1", 80, false, &out, err), 0);
	msc_preview_fini(&out);
	cloud_ports_retire(p, "s1");
	cloud_ports_moved(p, "a", "s1", "s2");
	assert_int_equal(set(p, "a", "s1", 81, false, &out, err), -ESTALE);
	assert_non_null(strstr(err, "being reset"));
	assert_int_equal(set(p, "a", "s1", 80, true, &out, err), -ESTALE);
	assert_int_equal(listed(p, "a", "s2"), 1);
	assert_int_equal(set(p, "a", "s2", 81, false, &out, err), 0);
	assert_int_equal(out.n_ports, 2);
	msc_preview_fini(&out);
	cloud_ports_free(p);
}

static void
test_host_ok(void **state)
{
	char long_label[80], long_host[300];

	(void)state;
	assert_true(cloud_ports_host_ok("e2b.app"));
	assert_true(cloud_ports_host_ok("i8abc-123.modal.host"));
	assert_true(cloud_ports_host_ok("localhost"));
	assert_false(cloud_ports_host_ok(""));
	assert_false(cloud_ports_host_ok(NULL));
	assert_false(cloud_ports_host_ok("a..b"));
	assert_false(cloud_ports_host_ok("a.b."));
	assert_false(cloud_ports_host_ok("-a.b"));
	assert_false(cloud_ports_host_ok("evil.com/x"));
	assert_false(cloud_ports_host_ok("user@evil.com"));
	assert_false(cloud_ports_host_ok("evil.com:80"));
	assert_false(cloud_ports_host_ok("a_b.com"));
	assert_false(cloud_ports_host_ok("a b"));
	memset(long_label, 'a', 64);
	long_label[64] = '\0';
	assert_false(cloud_ports_host_ok(long_label));
	for (size_t i = 0; i < 127; i++)
		memcpy(long_host + 2 * i, "a.", 2);
	memcpy(long_host + 254, "a", 2);
	assert_false(cloud_ports_host_ok(long_host));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_and_sandboxes),
		cmocka_unit_test(test_server_bound),
		cmocka_unit_test(test_principal_bound),
		cmocka_unit_test(test_stale_rows),
		cmocka_unit_test(test_retired),
		cmocka_unit_test(test_host_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
