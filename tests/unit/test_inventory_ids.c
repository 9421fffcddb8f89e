/*
 * test_inventory_ids.c - a new random computer id never lands on a
 * computer that exists. The reference drew `<adj>-<noun>-<4 hex>` (about
 * 9.4 million ids) without looking: with a few thousand computers two
 * sessions met on one id, and the second one shared the first one's
 * temporary computer (a 2026 handle was refused "already has an active
 * sandbox_handle" instead). Here the draws are scripted (the test links
 * with --wrap=msc_slug_random), so a collision happens every run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "inv_harness.h"
#include "msc_slug.h"

#define D1 (ih.d[0])

/* The ids the next draws give, in order; then the real generator. */
static const char *scripted[8];
static int n_scripted, next_scripted;

void __real_msc_slug_random(char out[MSC_SLUG_MAX + 1]);

void
__wrap_msc_slug_random(char out[MSC_SLUG_MAX + 1])
{
	if (next_scripted < n_scripted)
		snprintf(out, MSC_SLUG_MAX + 1, "%s", scripted[next_scripted++]);
	else
		__real_msc_slug_random(out);
}

static void
script(int n, const char *const ids[])
{
	for (int i = 0; i < n; i++)
		scripted[i] = ids[i];
	n_scripted = n;
	next_scripted = 0;
}

static int
setup1(void **state)
{
	(void)state;
	n_scripted = next_scripted = 0;
	return ih_start(1, 0);
}

/* Acquires a new random computer for owner; returns its id (static). */
static const char *
acquire_fresh(const char *owner)
{
	static char id[MSC_SLUG_MAX + 1];
	Msc__V1__Computer *c = NULL;

	assert_int_equal(ih_acquire("", true, owner, &c), MSC__V1__CODE__OK);
	snprintf(id, sizeof(id), "%s", c->computer_id);
	ih_free_computer(c);
	return id;
}

/* Two sessions whose draws meet: each gets a computer of its own. */
static void
drawn_twice_two_computers(void **state)
{
	static const char *const ids[] = { "calm-otter-0001", "calm-otter-0001",
		"calm-otter-0002" };

	(void)state;
	script(3, ids);
	assert_string_equal(acquire_fresh("sa"), "calm-otter-0001");
	assert_string_equal(acquire_fresh("sb"), "calm-otter-0002");
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 2);
	/* sa is the only owner of its computer: its release removes it. */
	assert_int_equal(ih_release("calm-otter-0001", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_false(fake_driver_has(D1, "calm-otter-0001"));
	assert_true(fake_driver_has(D1, "calm-otter-0002"));
}

/* A driver has the drawn id (a permanent computer nobody holds). */
static void
drawn_id_on_a_driver_drawn_again(void **state)
{
	static const char *const ids[] = { "lucky-lynx-00aa", "lucky-lynx-00bb" };
	Msc__V1__Computer *c = NULL;

	(void)state;
	fake_driver_add(D1, "lucky-lynx-00aa", false);
	script(2, ids);
	assert_string_equal(acquire_fresh("sa"), "lucky-lynx-00bb");
	/* The permanent one is untouched and still found by its name. */
	assert_int_equal(ih_acquire("lucky-lynx-00aa", false, "sb", &c),
	    MSC__V1__CODE__OK);
	assert_false(c->temporary);
	ih_free_computer(c);
	assert_int_equal(ih_release("lucky-lynx-00bb", "sa", true, "d1"),
	    MSC__V1__CODE__OK);
	assert_false(fake_driver_has(D1, "lucky-lynx-00bb"));
	assert_true(fake_driver_has(D1, "lucky-lynx-00aa"));
}

/* Every draw taken: a clear error, nothing made. */
static void
every_draw_taken_refused(void **state)
{
	static const char *const ids[] = { "rapid-wolf-0001", "rapid-wolf-0001",
		"rapid-wolf-0001", "rapid-wolf-0001", "rapid-wolf-0001",
		"rapid-wolf-0001", "rapid-wolf-0001", "rapid-wolf-0001" };

	(void)state;
	script(1, ids);
	assert_string_equal(acquire_fresh("sa"), "rapid-wolf-0001");
	script(8, ids);
	assert_int_equal(ih_acquire("", true, "sb", NULL),
	    MSC__V1__CODE__RESOURCE_EXHAUSTED);
	assert_int_equal(fake_driver_calls(D1, FD_CREATE), 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup1, ih_stop)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(drawn_twice_two_computers),
		T(drawn_id_on_a_driver_drawn_again),
		T(every_draw_taken_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
