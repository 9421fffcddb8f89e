/*
 * test_inventory_placement.c - the inventory service over inproc:// with
 * one to three fake drivers: one Create per id however many ask at once,
 * a new computer placed on the least loaded reachable driver (creations
 * under way counted), never on an unreachable one, a computer found on
 * the driver that has it, and a driver that is down making its computers
 * answer unavailable instead of being made a second time elsewhere.
 * Placement works from counts kept by the inventory: one List of every
 * driver for the first, none for the next ones (creates and removals move
 * the counts), and a refresh now and then that takes in what others did.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "inv_harness.h"
#include "msc_slug.h"

#define NCALLERS 32

static int
setup1(void **state)
{
	(void)state;
	return ih_start(1, 0);
}

static int
setup3(void **state)
{
	(void)state;
	return ih_start(3, 0);
}

/* Two drivers; d1 never listens. */
static int
setup2_first_absent(void **state)
{
	(void)state;
	return ih_start(2, 1u << 0);
}

static int
setup2(void **state)
{
	(void)state;
	return ih_start(2, 0);
}

static void
add_n(struct fake_driver *fd, const char *prefix, int n)
{
	char id[32];

	for (int i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s-%d", prefix, i);
		fake_driver_add(fd, id, true);
	}
}

/*
 * Many sessions ask for the same new id while the driver is creating
 * it: one Attach round, one Create, every caller answered with it.
 */
static void
one_create_per_id(void **state)
{
	static struct cu_answers ans;
	char owner[NCALLERS][16];

	(void)state;
	cu_answers_init(&ans);
	fake_driver_hold(ih.d[0], FD_CREATE);
	for (int i = 0; i < NCALLERS; i++) {
		snprintf(owner[i], sizeof(owner[i]), "s%d", i);
		ih_acquire_async("popular", true, owner[i], &ans);
	}
	assert_true(fake_driver_wait_held(ih.d[0], FD_CREATE, 1, CU_WAIT_MS));
	/* More callers, during or after the creation: none makes one. */
	for (int i = 0; i < NCALLERS; i++)
		ih_acquire_async("popular", true, "late", &ans);
	fake_driver_let_go(ih.d[0], FD_CREATE);
	assert_true(cu_wait_answers(&ans, 2 * NCALLERS));
	assert_int_equal(cu_count_code(&ans, MSC__V1__CODE__OK), 2 * NCALLERS);
	for (int i = 0; i < 2 * NCALLERS; i++)
		assert_string_equal(
		    ((Msc__V1__Computer *)ans.resps[i])->computer_id, "popular");
	assert_int_equal(fake_driver_calls(ih.d[0], FD_CREATE), 1);
	assert_int_equal(fake_driver_calls(ih.d[0], FD_ATTACH), 1);
	cu_answers_fini(&ans);
}

/* The callers that joined a creation in the other mode are refused. */
static void
joined_callers_in_other_mode_refused(void **state)
{
	static struct cu_answers first, others;

	(void)state;
	cu_answers_init(&first);
	cu_answers_init(&others);
	fake_driver_hold(ih.d[0], FD_CREATE);
	ih_acquire_async("modal", true, "sa", &first);
	assert_true(fake_driver_wait_held(ih.d[0], FD_CREATE, 1, CU_WAIT_MS));
	ih_acquire_async("modal", false, "sb", &others);
	ih_acquire_async("modal", false, "sc", &others);
	/* A later caller in the first mode is answered after them. */
	ih_acquire_async("modal", true, "sd", &first);
	fake_driver_let_go(ih.d[0], FD_CREATE);
	assert_true(cu_wait_answers(&first, 2));
	assert_true(cu_wait_answers(&others, 2));
	assert_int_equal(cu_count_code(&first, MSC__V1__CODE__OK), 2);
	assert_int_equal(cu_count_code(&others,
			     MSC__V1__CODE__FAILED_PRECONDITION),
	    2);
	assert_int_equal(fake_driver_calls(ih.d[0], FD_CREATE), 1);
	cu_answers_fini(&first);
	cu_answers_fini(&others);
}

/*
 * A failed Create fails the caller that started it, and every caller
 * that joined it, and leaves no record: a caller that came after it
 * (the test cannot tell which do) tries anew, and so does the next one.
 */
static void
failed_create_fails_all_and_is_retried(void **state)
{
	static struct cu_answers first, others;
	int ok, failed;

	(void)state;
	cu_answers_init(&first);
	cu_answers_init(&others);
	fake_driver_hold(ih.d[0], FD_CREATE);
	ih_acquire_async("flaky", true, "sa", &first);
	assert_true(fake_driver_wait_held(ih.d[0], FD_CREATE, 1, CU_WAIT_MS));
	ih_acquire_async("flaky", true, "sb", &others);
	ih_acquire_async("flaky", true, "sc", &others);
	fake_driver_let_go_fail(ih.d[0], FD_CREATE,
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_true(cu_wait_answers(&first, 1));
	assert_true(cu_wait_answers(&others, 2));
	assert_int_equal(first.codes[0], MSC__V1__CODE__RESOURCE_EXHAUSTED);
	ok = cu_count_code(&others, MSC__V1__CODE__OK);
	failed = cu_count_code(&others, MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_int_equal(ok + failed, 2);
	assert_int_equal(fake_driver_calls_for(ih.d[0], FD_CREATE, "flaky"),
	    ok > 0 ? 2 : 1);
	assert_int_equal(ih_acquire("flaky", true, "sd", NULL),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(ih.d[0], FD_CREATE, "flaky"), 2);
	assert_true(fake_driver_has(ih.d[0], "flaky"));
	cu_answers_fini(&first);
	cu_answers_fini(&others);
}

/* A new computer goes to the driver with the fewest computers. */
static void
placed_on_least_loaded(void **state)
{
	Msc__V1__Computer *c = NULL;

	(void)state;
	add_n(ih.d[0], "a", 2);
	add_n(ih.d[2], "c", 1);
	assert_int_equal(ih_acquire("", true, "sa", &c), MSC__V1__CODE__OK);
	assert_string_equal(c->driver, "d2");
	assert_true(fake_driver_has(ih.d[1], c->computer_id));
	ih_free_computer(c);
	assert_int_equal(fake_driver_calls(ih.d[0], FD_CREATE), 0);
	assert_int_equal(fake_driver_calls(ih.d[2], FD_CREATE), 0);
}

/* A named new id is placed the same way, after no driver had it. */
static void
named_id_placed_on_least_loaded(void **state)
{
	Msc__V1__Computer *c = NULL;

	(void)state;
	add_n(ih.d[0], "a", 1);
	add_n(ih.d[1], "b", 1);
	assert_int_equal(ih_acquire("brand-new", true, "sa", &c),
	    MSC__V1__CODE__OK);
	assert_string_equal(c->driver, "d3");
	ih_free_computer(c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fake_driver_calls_for(ih.d[i], FD_ATTACH,
				     "brand-new"),
		    1);
	assert_true(fake_driver_has(ih.d[2], "brand-new"));
}

/*
 * A creation under way counts as a computer on its driver: two new
 * computers asked for one after the other while d2 is still creating
 * the first go to d2 and d3, not both to d2.
 */
static void
placement_counts_creations_under_way(void **state)
{
	static struct cu_answers ans;
	const char *d_first, *d_second;

	(void)state;
	cu_answers_init(&ans);
	add_n(ih.d[0], "a", 1);
	fake_driver_hold(ih.d[1], FD_CREATE);
	fake_driver_hold(ih.d[2], FD_CREATE);
	ih_acquire_async("", true, "sa", &ans);
	assert_true(fake_driver_wait_held(ih.d[1], FD_CREATE, 1, CU_WAIT_MS));
	ih_acquire_async("", true, "sb", &ans);
	assert_true(fake_driver_wait_held(ih.d[2], FD_CREATE, 1, CU_WAIT_MS));
	fake_driver_let_go(ih.d[1], FD_CREATE);
	fake_driver_let_go(ih.d[2], FD_CREATE);
	assert_true(cu_wait_answers(&ans, 2));
	assert_int_equal(cu_count_code(&ans, MSC__V1__CODE__OK), 2);
	d_first = ((Msc__V1__Computer *)ans.resps[0])->driver;
	d_second = ((Msc__V1__Computer *)ans.resps[1])->driver;
	assert_string_not_equal(d_first, d_second);
	assert_int_equal(fake_driver_calls(ih.d[0], FD_CREATE), 0);
	assert_int_equal(fake_driver_calls(ih.d[1], FD_CREATE), 1);
	assert_int_equal(fake_driver_calls(ih.d[2], FD_CREATE), 1);
	cu_answers_fini(&ans);
}

/* An existing computer is found on its driver, whatever the load. */
static void
existing_found_on_its_driver(void **state)
{
	Msc__V1__Computer *c = NULL;

	(void)state;
	add_n(ih.d[2], "c", 5);
	fake_driver_add(ih.d[2], "home", true);
	assert_int_equal(ih_acquire("home", true, "sa", &c),
	    MSC__V1__CODE__OK);
	assert_string_equal(c->driver, "d3");
	ih_free_computer(c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(fake_driver_calls(ih.d[i], FD_CREATE), 0);
	/* And its last release stops it there. */
	assert_int_equal(ih_release("home", "sa", true, "d3"),
	    MSC__V1__CODE__OK);
	assert_int_equal(fake_driver_calls_for(ih.d[2], FD_STOP, "home"), 1);
}

/* An unreachable driver, however empty, gets no new computer. */
static void
unreachable_driver_not_chosen(void **state)
{
	Msc__V1__Computer *c = NULL;

	(void)state;
	add_n(ih.d[1], "b", 3);
	assert_int_equal(ih_acquire("", true, "sa", &c), MSC__V1__CODE__OK);
	assert_string_equal(c->driver, "d2");
	ih_free_computer(c);
	assert_int_equal(fake_driver_calls(ih.d[1], FD_CREATE), 1);
}

/*
 * A driver that is down may have the computer: the Acquire answers
 * unavailable and makes no second one on the driver that is up. Once
 * the driver is back, the computer is found there.
 */
static void
down_driver_computer_unavailable(void **state)
{
	Msc__V1__Computer *c = NULL;
	Msc__V1__Code code;

	(void)state;
	fake_driver_add(ih.d[1], "stranded", true);
	fake_driver_down(ih.d[1]);
	code = ih_acquire("stranded", true, "sa", NULL);
	assert_int_equal(code, MSC__V1__CODE__UNAVAILABLE);
	assert_int_equal(fake_driver_calls(ih.d[0], FD_CREATE), 0);
	assert_false(fake_driver_has(ih.d[0], "stranded"));
	assert_int_equal(fake_driver_up(ih.d[1]), 0);
	/* Until the inventory's client has dialed it again. */
	for (int i = 0; i < 100; i++) {
		code = ih_acquire("stranded", true, "sa", &c);
		if (code == MSC__V1__CODE__OK)
			break;
		ih_free_computer(c);
		c = NULL;
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
	assert_int_equal(code, MSC__V1__CODE__OK);
	assert_string_equal(c->driver, "d2");
	ih_free_computer(c);
	assert_int_equal(fake_driver_calls(ih.d[0], FD_CREATE), 0);
}

/* No driver reachable: a new computer is refused as unavailable. */
static void
no_reachable_driver_unavailable(void **state)
{
	(void)state;
	fake_driver_down(ih.d[0]);
	fake_driver_down(ih.d[1]);
	assert_int_equal(ih_acquire("", true, "sa", NULL),
	    MSC__V1__CODE__UNAVAILABLE);
}

/* Places a new temporary computer; returns its driver's index. */
static int
place_one(const char *owner, char *id_out)
{
	Msc__V1__Computer *c = NULL;
	int d;

	assert_int_equal(ih_acquire("", true, owner, &c), MSC__V1__CODE__OK);
	d = c->driver[1] - '1';
	if (id_out != NULL)
		strcpy(id_out, c->computer_id);
	ih_free_computer(c);
	return d;
}

/*
 * 90 new computers one after another: one List of each driver (the
 * first placement), none after; 30 on each, from the counts the creates
 * moved. Removing 10 of d1's makes the next 10 go there, still listing
 * nothing.
 */
static void
placement_does_not_list(void **state)
{
	static char ids[90][MSC_SLUG_MAX + 1];
	int per[3] = { 0, 0, 0 }, d1_seen = 0;

	(void)state;
	for (int i = 0; i < 90; i++)
		per[place_one("sa", ids[i])]++;
	for (int d = 0; d < 3; d++) {
		assert_int_equal(per[d], 30);
		assert_int_equal(fake_driver_calls(ih.d[d], FD_LIST), 1);
		assert_int_equal(fake_driver_calls(ih.d[d], FD_CREATE), 30);
	}
	assert_int_equal(inv_count_lists(ih.inv), 1);
	for (int i = 0; i < 90 && d1_seen < 10; i++) {
		if (!fake_driver_has(ih.d[0], ids[i]))
			continue;
		assert_int_equal(ih_release(ids[i], "sa", true, "d1"),
		    MSC__V1__CODE__OK);
		d1_seen++;
	}
	assert_int_equal(fake_driver_n_computers(ih.d[0]), 20);
	for (int i = 0; i < 10; i++)
		assert_int_equal(place_one("sb", NULL), 0);
	for (int d = 0; d < 3; d++)
		assert_int_equal(fake_driver_calls(ih.d[d], FD_LIST), 1);
}

/*
 * Computers made behind the inventory's back (another inventory, an
 * earlier run) are taken in by the refresh: once the counts are stale a
 * placement starts a List in the background, and the driver it finds
 * full gets no more.
 */
static void
counts_refreshed_now_and_then(void **state)
{
	(void)state;
	inv_set_count_refresh_ms(ih.inv, 50);
	assert_int_equal(place_one("sa", NULL), 0);
	add_n(ih.d[1], "b", 6);
	nanosleep(&(struct timespec){ 0, 80000000L }, NULL);
	/* Placed from the stale counts; starts the refresh. */
	assert_int_equal(place_one("sa", NULL), 1);
	for (int i = 0; i < 200 && inv_count_lists(ih.inv) < 2; i++)
		nanosleep(&(struct timespec){ 0, 10000000L }, NULL);
	assert_int_equal(inv_count_lists(ih.inv), 2);
	inv_set_count_refresh_ms(ih.inv, 60000);
	for (int i = 0; i < 4; i++)
		assert_int_not_equal(place_one("sa", NULL), 1);
	assert_int_equal(fake_driver_calls(ih.d[1], FD_CREATE), 1);
	assert_int_equal(fake_driver_calls(ih.d[0], FD_LIST), 2);
}

/*
 * A driver that stops answering Creates is left out until a refresh
 * reaches it again; the others take the new computers meanwhile.
 */
static void
driver_failing_create_left_out(void **state)
{
	(void)state;
	assert_int_equal(place_one("sa", NULL), 0);   /* counts known */
	assert_int_equal(place_one("sa", NULL), 1);
	fake_driver_fail_next(ih.d[2], FD_CREATE, 1, MSC__V1__CODE__UNAVAILABLE);
	assert_int_equal(ih_acquire("", true, "sa", NULL),
	    MSC__V1__CODE__UNAVAILABLE);
	for (int i = 0; i < 4; i++)
		assert_int_not_equal(place_one("sa", NULL), 2);
	assert_int_equal(fake_driver_calls(ih.d[2], FD_CREATE), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(one_create_per_id, setup1,
		    ih_stop),
		cmocka_unit_test_setup_teardown(
		    joined_callers_in_other_mode_refused, setup1, ih_stop),
		cmocka_unit_test_setup_teardown(
		    failed_create_fails_all_and_is_retried, setup1, ih_stop),
		cmocka_unit_test_setup_teardown(placed_on_least_loaded, setup3,
		    ih_stop),
		cmocka_unit_test_setup_teardown(named_id_placed_on_least_loaded,
		    setup3, ih_stop),
		cmocka_unit_test_setup_teardown(
		    placement_counts_creations_under_way, setup3, ih_stop),
		cmocka_unit_test_setup_teardown(existing_found_on_its_driver,
		    setup3, ih_stop),
		cmocka_unit_test_setup_teardown(unreachable_driver_not_chosen,
		    setup2_first_absent, ih_stop),
		cmocka_unit_test_setup_teardown(down_driver_computer_unavailable,
		    setup2, ih_stop),
		cmocka_unit_test_setup_teardown(no_reachable_driver_unavailable,
		    setup2, ih_stop),
		cmocka_unit_test_setup_teardown(placement_does_not_list, setup3,
		    ih_stop),
		cmocka_unit_test_setup_teardown(counts_refreshed_now_and_then,
		    setup3, ih_stop),
		cmocka_unit_test_setup_teardown(driver_failing_create_left_out,
		    setup3, ih_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
