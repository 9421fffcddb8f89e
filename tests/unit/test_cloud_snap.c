/*
 * test_cloud_snap.c - the snapshot rules cloud providers share
 * (cloud_snap.c) over a provider of this file whose listing lags behind
 * its saves, and E2B's reading of its snapshot names and ids.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cloud_snap.h"
#include "e2b_driver_int.h"

#define HEX "0123456789abcdef0123456789abcdef"
#define ALICE "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define BOB "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* ---- a provider whose listing shows a save only when told ----------- */

struct lagging {
	struct cloud_snap_rec recs[16];
	bool listed[16];
	size_t n;
	int list_rv;            /* what list fails with, or 0 */
};

static int
l_save(void *be, struct cloud_snap_rec *r, char *err, size_t errlen)
{
	struct lagging *p = be;

	(void)err;
	(void)errlen;
	snprintf(r->ref, sizeof(r->ref), "ref-%s", r->id + 5);
	p->listed[p->n] = false;
	p->recs[p->n++] = *r;
	return 0;
}

static int
l_list(void *be, struct cloud_snap_rec **recsp, size_t *np, char *err,
    size_t errlen)
{
	struct lagging *p = be;
	struct cloud_snap_rec *out = calloc(p->n + 1, sizeof(*out));
	size_t n = 0;

	if (p->list_rv != 0) {
		free(out);
		snprintf(err, errlen, "the list failed");
		return p->list_rv;
	}
	assert_non_null(out);
	for (size_t i = 0; i < p->n; i++)
		if (p->listed[i])
			out[n++] = p->recs[i];
	*recsp = out;
	*np = n;
	return 0;
}

static int
l_get(void *be, const char *id, struct cloud_snap_rec *rec, char *err,
    size_t errlen)
{
	struct lagging *p = be;

	(void)err;
	(void)errlen;
	for (size_t i = 0; i < p->n; i++)
		if (p->listed[i] && strcmp(p->recs[i].id, id) == 0) {
			*rec = p->recs[i];
			return 0;
		}
	return -ENOENT;
}

static int
l_remove(void *be, const struct cloud_snap_rec *rec, char *err,
    size_t errlen)
{
	struct lagging *p = be;

	(void)err;
	(void)errlen;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->recs[i].id, rec->id) == 0) {
			p->recs[i] = p->recs[--p->n];
			p->listed[i] = p->listed[p->n];
			return 0;
		}
	return -ENOENT;
}

static const struct cloud_snap_ops lagging_ops = {
	.backend = "lagging",
	.save = l_save,
	.list = l_list,
	.get = l_get,
	.remove = l_remove,
};

static int
take(struct cloud_snap *s, const char *principal, char *id, char *err,
    size_t errlen)
{
	Msc__V1__SnapshotRequest req = MSC__V1__SNAPSHOT_REQUEST__INIT;
	Msc__V1__Snapshot out = MSC__V1__SNAPSHOT__INIT;
	int rv;

	req.principal = (char *)principal;
	req.name = "";
	req.computer_id = "calm-whale-ab39";
	rv = cloud_snap_take(s, &req, &out, err, errlen);
	if (rv == 0 && id != NULL)
		snprintf(id, MSC_SNAPSHOT_ID_LEN + 1, "%s", out.snapshot_id);
	msc_snapshot_fini(&out);
	return rv;
}

static int
delete(struct cloud_snap *s, const char *principal, const char *id)
{
	Msc__V1__SnapshotRequest req = MSC__V1__SNAPSHOT_REQUEST__INIT;
	char err[256];

	req.principal = (char *)principal;
	req.snapshot_id = (char *)id;
	return cloud_snap_delete(s, &req, err, sizeof(err));
}

static void
show_all(struct lagging *p)
{
	for (size_t i = 0; i < p->n; i++)
		p->listed[i] = true;
}

/* Back to back while the list lags: the second is over the quota. */
static void
test_quota_counts_unlisted(void **state)
{
	struct msc_cfg cfg = { .max_snapshots = 1, .driver_id = "t" };
	struct lagging p = { .n = 0 };
	struct cloud_snap s;
	char id[MSC_SNAPSHOT_ID_LEN + 1], err[256];

	(void)state;
	assert_int_equal(cloud_snap_init(&s, &lagging_ops, &p, &cfg), 0);
	assert_int_equal(take(&s, "", id, err, sizeof(err)), 0);
	assert_int_equal(take(&s, "", NULL, err, sizeof(err)), -EDQUOT);
	assert_non_null(strstr(err, "--max-snapshots"));
	assert_int_equal(p.n, 1);
	/* Listed now: counted once, not twice. */
	show_all(&p);
	assert_int_equal(take(&s, "", NULL, err, sizeof(err)), -EDQUOT);
	assert_int_equal(delete(&s, "", id), 0);
	assert_int_equal(take(&s, "", id, err, sizeof(err)), 0);
	/* Deleted when listed at last: room again. */
	show_all(&p);
	assert_int_equal(delete(&s, "", id), 0);
	assert_int_equal(take(&s, "", NULL, err, sizeof(err)), 0);
	cloud_snap_fini(&s);
}

/* A principal's share counts its unlisted ones, not another's. */
static void
test_share_counts_unlisted(void **state)
{
	struct msc_cfg cfg = { .max_snapshots = 10,
	    .max_principal_snapshots = 1, .driver_id = "t" };
	struct lagging p = { .n = 0 };
	struct cloud_snap s;
	char err[256];

	(void)state;
	assert_int_equal(cloud_snap_init(&s, &lagging_ops, &p, &cfg), 0);
	assert_int_equal(take(&s, ALICE, NULL, err, sizeof(err)), 0);
	assert_int_equal(take(&s, ALICE, NULL, err, sizeof(err)), -EDQUOT);
	assert_non_null(strstr(err, "--max-principal-snapshots"));
	assert_int_equal(take(&s, BOB, NULL, err, sizeof(err)), 0);
	assert_int_equal(p.n, 2);
	cloud_snap_fini(&s);
}

/* A listing that fails fails the take: nothing counted from a part. */
static void
test_list_failure_refuses(void **state)
{
	struct msc_cfg cfg = { .max_snapshots = 5, .driver_id = "t" };
	struct lagging p = { .list_rv = -EDQUOT };
	struct cloud_snap s;
	char err[256];

	(void)state;
	assert_int_equal(cloud_snap_init(&s, &lagging_ops, &p, &cfg), 0);
	assert_int_equal(take(&s, "", NULL, err, sizeof(err)), -EDQUOT);
	assert_string_equal(err, "the list failed");
	assert_int_equal(p.n, 0);
	cloud_snap_fini(&s);
}

/*
 * A provider that lists at once (no lag), for the race of a take that
 * finishes between another's listing and its reservation: A saves; B
 * lists (A not in it yet) and then lingers; A's save returns meanwhile.
 * B must still count A: being made, or saved and not in B's listing
 * (the unseen records, merged after the listing, under the lock A's
 * turn from one to the other takes). Before, B counted A nowhere.
 */
struct racing {
	struct lagging l;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool a_saving, b_listed;
	int lists;
};

static int
r_save(void *be, struct cloud_snap_rec *r, char *err, size_t errlen)
{
	struct racing *p = be;
	int rv;

	pthread_mutex_lock(&p->mu);
	p->a_saving = true;
	pthread_cond_broadcast(&p->cv);
	while (!p->b_listed)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	rv = l_save(&p->l, r, err, errlen);
	p->l.listed[p->l.n - 1] = true;         /* listed at once */
	return rv;
}

static int
r_list(void *be, struct cloud_snap_rec **recsp, size_t *np, char *err,
    size_t errlen)
{
	struct racing *p = be;
	int rv, nth;

	pthread_mutex_lock(&p->mu);
	nth = ++p->lists;
	pthread_mutex_unlock(&p->mu);
	rv = l_list(&p->l, recsp, np, err, errlen);
	if (nth == 2) {         /* B's: A's save may end meanwhile */
		pthread_mutex_lock(&p->mu);
		p->b_listed = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		usleep(200000);
	}
	return rv;
}

static const struct cloud_snap_ops racing_ops = {
	.backend = "racing",
	.save = r_save,
	.list = r_list,
	.get = l_get,
	.remove = l_remove,
};

struct taker {
	struct cloud_snap *s;
	int rv;
	char err[256];
};

static void *
taker(void *arg)
{
	struct taker *t = arg;

	t->rv = take(t->s, "", NULL, t->err, sizeof(t->err));
	return NULL;
}

static void
test_quota_race(void **state)
{
	struct msc_cfg cfg = { .max_snapshots = 1, .driver_id = "t" };
	struct racing p = { .lists = 0 };
	struct cloud_snap s;
	struct taker a, b;
	pthread_t ta, tb;

	(void)state;
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	assert_int_equal(cloud_snap_init(&s, &racing_ops, &p, &cfg), 0);
	a.s = b.s = &s;
	assert_int_equal(pthread_create(&ta, NULL, taker, &a), 0);
	pthread_mutex_lock(&p.mu);
	while (!p.a_saving)
		pthread_cond_wait(&p.cv, &p.mu);
	pthread_mutex_unlock(&p.mu);
	assert_int_equal(pthread_create(&tb, NULL, taker, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	assert_int_equal(a.rv, 0);
	assert_int_equal(b.rv, -EDQUOT);
	assert_int_equal(p.l.n, 1);
	cloud_snap_fini(&s);
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
}

/* ---- E2B's names and ids --------------------------------------------- */

static void
test_e2b_name_time(void **state)
{
	struct cloud_snap_rec r;

	(void)state;
	memset(&r, 0, sizeof(r));
	assert_true(e2b_snap_parse_name("team/kt-" HEX "-x-1700000000-calm-"
	    "whale-ab39:default", &r));
	assert_string_equal(r.id, "snap-" HEX);
	assert_string_equal(r.owner, "");
	assert_string_equal(r.created, "2023-11-14T22:13:20Z");
	assert_string_equal(r.computer, "calm-whale-ab39");
	assert_true(e2b_snap_parse_name("kt-" HEX "-" ALICE "-253402300799-c",
	    &r));
	assert_string_equal(r.created, "9999-12-31T23:59:59Z");
	assert_string_equal(r.owner, ALICE);
	/* Saturating strtoll (gmtime_r NULL), past year 9999, not a number. */
	assert_false(e2b_snap_parse_name("kt-" HEX "-x-99999999999999999999-c",
	    &r));
	assert_false(e2b_snap_parse_name("kt-" HEX "-x-9223372036854775807-c",
	    &r));
	assert_false(e2b_snap_parse_name("kt-" HEX "-x-253402300800-c", &r));
	assert_false(e2b_snap_parse_name("kt-" HEX "-x-12a-c", &r));
	assert_false(e2b_snap_parse_name("kt-" HEX "-x-+-c", &r));
}

static void
test_e2b_ref(void **state)
{
	(void)state;
	assert_true(e2b_snap_ref_ok("fake-team/kt-" HEX "-x-1-c:default"));
	assert_true(e2b_snap_ref_ok("a1b2c3d4e5:default"));
	assert_false(e2b_snap_ref_ok(".."));
	assert_false(e2b_snap_ref_ok("."));
	assert_false(e2b_snap_ref_ok("a/../b"));
	assert_false(e2b_snap_ref_ok("team/..:default"));
	assert_false(e2b_snap_ref_ok(""));
	assert_false(e2b_snap_ref_ok("/x"));
	assert_false(e2b_snap_ref_ok("x/"));
	assert_false(e2b_snap_ref_ok("a//b"));
	assert_false(e2b_snap_ref_ok("a/b/c"));
	assert_false(e2b_snap_ref_ok("a%2fb"));
	assert_false(e2b_snap_ref_ok("a?b"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_counts_unlisted),
		cmocka_unit_test(test_share_counts_unlisted),
		cmocka_unit_test(test_list_failure_refuses),
		cmocka_unit_test(test_quota_race),
		cmocka_unit_test(test_e2b_name_time),
		cmocka_unit_test(test_e2b_ref),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
