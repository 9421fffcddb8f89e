/*
 * test_session_deadline.c - the session's own bounds, and each downstream
 * hop's share of what the caller has left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include <cmocka.h>

#include "session_deadline.h"

/* A command's timeout plus the session's steps: the edge's old sum. */
static void
exec_budget(void **state)
{
	(void)state;
	assert_int_equal(sess_exec_budget_ms(30), 30000 + 1260000);
	assert_int_equal(sess_exec_budget_ms(3600), 3600000 + 1260000);
	assert_int_equal(sess_exec_budget_ms(604800), 604800000 + 1260000);
	assert_int_equal(sess_exec_budget_ms(-1), 1260000);
	assert_int_equal(sess_exec_budget_ms(LONG_MAX / 1000), INT_MAX);
}

/* Each hop gets its step's bound, never more than is left less a margin. */
static void
hop_share(void **state)
{
	(void)state;
	/* Plenty left: the step's own bound. */
	assert_int_equal(sess_hop_ms(1290000, SESS_STEP_MS), SESS_STEP_MS);
	/* Little left: what is left, less the margin to answer in. */
	assert_int_equal(sess_hop_ms(61000, SESS_STEP_MS), 60000);
	/* No bound of the step's own. */
	assert_int_equal(sess_hop_ms(61000, 0), 60000);
	/* Nothing left: the hop fails at once rather than waiting forever. */
	assert_int_equal(sess_hop_ms(0, SESS_STEP_MS), 1);
	assert_int_equal(sess_hop_ms(500, 0), 1);
	/* An exec after a fast acquire gets its timeout and the slack. */
	assert_int_equal(sess_hop_ms(sess_exec_budget_ms(30) - 2000,
	    30000 + SESS_EXEC_SLACK_MS), 630000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exec_budget),
		cmocka_unit_test(hop_share),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
