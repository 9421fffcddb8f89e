/*
 * test_fxbudget.c - the bound on the output waiting commands hold
 * (--driver-output-buffer, docker_fxbudget.c), charged directly: its
 * principals' shares split it evenly and leave room for one more, so
 * principals together cannot fill it for another (issue 27).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "docker_fastexec.h"

#define MIB (1u << 20)

/* Charges commands of `principal` of `each` bytes until one is refused:
 * how many fitted (their charges in ch[], held), the refusal's text in
 * err. */
static int
fill(struct dock_fx_budget *b, const char *principal, uint64_t each,
    struct dock_fx_charge *ch, int max, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < max; i++) {
		memset(&ch[i], 0, sizeof(ch[i]));
		if (dock_fx_charge_add(b, principal, &ch[i], each, err,
		    errlen) != 0) {
			dock_fx_charge_release(&ch[i]);     /* killed: gone */
			return i;
		}
	}
	return i;
}

static void
release_all(struct dock_fx_charge *ch, int n)
{
	for (int i = 0; i < n; i++)
		dock_fx_charge_release(&ch[i]);
}

/*
 * The attack: principal A's commands (100 KB each, waiting) take all
 * they may, then B's, then C prints 50 KB. Before, A took three
 * quarters and B the rest: C's command was killed. Now A holds at most
 * half (a share with one more), B what leaves a share free, and C's
 * output fits; a fourth principal still finds room after C's.
 */
static void
test_two_cannot_fill(void **state)
{
	struct dock_fx_budget *b;
	struct dock_fx_charge a[16], bb[16], c[2], d[1];
	char err[512];
	int na, nb;

	(void)state;
	assert_int_equal(dock_fx_budget_new(MIB, &b), 0);
	na = fill(b, "aaaa", 100000, a, 16, err, sizeof(err));
	assert_int_equal(na, 5);                /* 500 KB of 512 KiB */
	assert_non_null(strstr(err, "your share"));
	assert_non_null(strstr(err, "512 KiB"));
	assert_non_null(strstr(err, "--driver-output-buffer"));
	nb = fill(b, "bbbb", 100000, bb, 16, err, sizeof(err));
	assert_int_equal(nb, 1);        /* 600 KB of the 2/3 kept for two */
	assert_non_null(strstr(err, "one share of --driver-output-buffer "
	    "stays free"));
	assert_int_equal(fill(b, "cccc", 50000, c, 1, err, sizeof(err)), 1);
	assert_int_equal(fill(b, "dddd", 10000, d, 1, err, sizeof(err)), 1);
	release_all(d, 1);
	release_all(c, 1);
	release_all(bb, nb);
	release_all(a, na);
	dock_fx_budget_free(b);
}

/*
 * Shares are even between the principals holding output: alone, one
 * holds half; with a second holding, a third of the bound each; when the
 * second's commands end, the first may grow to half again.
 */
static void
test_even_shares(void **state)
{
	struct dock_fx_budget *b;
	struct dock_fx_charge a[2], x[1];
	char err[512];

	(void)state;
	assert_int_equal(dock_fx_budget_new(3 * MIB, &b), 0);
	memset(a, 0, sizeof(a));
	memset(x, 0, sizeof(x));
	assert_int_equal(dock_fx_charge_add(b, "bbbb", &x[0], 1000, err,
	    sizeof(err)), 0);
	/* Two hold: a third each (1 MiB). */
	assert_int_equal(dock_fx_charge_add(b, "aaaa", &a[0], MIB, err,
	    sizeof(err)), 0);
	assert_int_equal(dock_fx_charge_add(b, "aaaa", &a[0], 1, err,
	    sizeof(err)), -ENOBUFS);
	assert_non_null(strstr(err, "between the 2 principals"));
	assert_non_null(strstr(err, "1 MiB"));
	dock_fx_charge_release(&x[0]);
	/* Alone: half (1.5 MiB). */
	assert_int_equal(dock_fx_charge_add(b, "aaaa", &a[1], MIB / 2, err,
	    sizeof(err)), 0);
	assert_int_equal(dock_fx_charge_add(b, "aaaa", &a[1], 1, err,
	    sizeof(err)), -ENOBUFS);
	release_all(a, 2);
	dock_fx_budget_free(b);
}

/* The one principal of a server without principals ("") is bound by
 * the whole bound only, as before. */
static void
test_unnamed_whole(void **state)
{
	struct dock_fx_budget *b;
	struct dock_fx_charge ch = { 0 };
	char err[512];

	(void)state;
	assert_int_equal(dock_fx_budget_new(MIB, &b), 0);
	assert_int_equal(dock_fx_charge_add(b, "", &ch, MIB, err,
	    sizeof(err)), 0);
	assert_int_equal(dock_fx_charge_add(b, "", &ch, 1, err,
	    sizeof(err)), -ENOBUFS);
	assert_non_null(strstr(err, "hold its bound"));
	dock_fx_charge_release(&ch);
	dock_fx_budget_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_cannot_fill),
		cmocka_unit_test(test_even_shares),
		cmocka_unit_test(test_unnamed_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
