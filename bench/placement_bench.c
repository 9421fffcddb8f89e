/*
 * placement_bench.c - the inventory's cost per placement as the cluster
 * fills (issue 18): the real inventory service over inproc:// with three
 * fake drivers (tests/unit/fake_driver.c, in memory), N new temporary
 * computers asked for one after another. Prints, per tenth of the run,
 * the mean time of one placement (Acquire of a new computer) and, as the
 * baseline measured in the same run, the time of one List of every
 * driver at that size: what each placement used to wait for before the
 * inventory kept counts. Ratios are against the first tenth.
 *
 *   build/bench/placement_bench [N]          (default 1000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core_util.h"
#include "driver.pb-c.h"
#include "fake_driver.h"
#include "inventory.h"
#include "inventory.pb-c.h"
#include "msc_fleet.h"
#include "msc_time.h"

#define PB_DRIVERS 3
#define PB_BUCKETS 10
#define PB_CALL_MS 15000

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
call(struct msc_client *c, const ProtobufCServiceDescriptor *svc,
    const char *method, const ProtobufCMessage *req)
{
	ProtobufCMessage *resp = NULL;
	char msg[256];
	Msc__V1__Code code;

	code = msc_client_call_sync(c, svc, method, req, PB_CALL_MS, &resp, msg,
	    sizeof(msg));
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (code != MSC__V1__CODE__OK) {
		fprintf(stderr, "placement-bench: %s: %s\n", method, msg);
		return -1;
	}
	return 0;
}

/* One List of every driver, one after another; microseconds. */
static double
list_all_us(struct msc_fleet *fleet)
{
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	double t0 = now_us();

	for (size_t i = 0; i < msc_fleet_size(fleet); i++)
		if (call(msc_fleet_client(fleet, i), &msc__v1__driver__descriptor,
			"List", &e.base) != 0)
			return -1;
	return now_us() - t0;
}

/* One fill of an empty cluster; per-tenth figures into place/list. */
static int
run_once(int n, double *place_us, double *list_us, int *inv_lists)
{
	static const char *const urls[PB_DRIVERS] = { "inproc://pb-d1",
		"inproc://pb-d2", "inproc://pb-d3" };
	static const char *const ids[PB_DRIVERS] = { "d1", "d2", "d3" };
	const char *args[] = { "--driver-url", "d1=inproc://pb-d1",
		"--driver-url", "d2=inproc://pb-d2", "--driver-url",
		"d3=inproc://pb-d3", NULL };
	struct fake_driver *d[PB_DRIVERS] = { NULL };
	struct inv_service *inv = NULL;
	struct msc_fleet *fleet = NULL;
	struct msc_client *cli = NULL;
	struct msc_cfg cfg;
	int per = n / PB_BUCKETS, rv = 1;
	int lists = 0;

	for (int i = 0; i < PB_DRIVERS; i++)
		if (fake_driver_start(urls[i], ids[i], &d[i]) != 0)
			goto out;
	if (cu_cfg(&cfg, args) != 0)
		goto out;
	if (msc_fleet_open(&cfg, NULL, &fleet) != 0 ||
	    inv_start("inproc://pb-inventory", fleet, &inv) != 0 ||
	    msc_client_open("inproc://pb-inventory", NULL, &cli) != 0)
		goto out_cfg;
	for (int b = 0; b < PB_BUCKETS; b++) {
		double t0 = now_us();

		for (int k = 0; k < per; k++) {
			Msc__V1__AcquireRequest a = MSC__V1__ACQUIRE_REQUEST__INIT;

			a.computer_id = "";
			a.temporary = true;
			a.owner = "bench";
			if (call(cli, &msc__v1__inventory__descriptor, "Acquire",
				&a.base) != 0)
				goto out_cfg;
		}
		place_us[b] = (now_us() - t0) / per;
		/* The baseline at this size: three Lists of ~b*per/3 each. */
		list_us[b] = 0;
		for (int k = 0; k < 5; k++)
			list_us[b] += list_all_us(fleet) / 5;
		lists += 5;
	}
	for (int i = 0; i < PB_DRIVERS; i++) {
		inv_lists[i] = fake_driver_calls(d[i], FD_LIST) - lists;
		if (fake_driver_n_computers(d[i]) * 4 < (size_t)n) {
			fprintf(stderr, "placement-bench: d%d has only %zu\n",
			    i + 1, fake_driver_n_computers(d[i]));
			goto out_cfg;
		}
	}
	rv = 0;
out_cfg:
	msc_client_close(cli);
	inv_stop(inv);
	msc_fleet_close(fleet);
	msc_cfg_fini(&cfg);
out:
	for (int i = 0; i < PB_DRIVERS; i++)
		fake_driver_free(d[i]);
	return rv;
}

static int
by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define PB_RUNS 5

int
main(int argc, char **argv)
{
	static double place_us[PB_RUNS][PB_BUCKETS], list_us[PB_RUNS][PB_BUCKETS];
	double place_med[PB_BUCKETS], list_med[PB_BUCKETS], v[PB_RUNS];
	int n = argc > 1 ? atoi(argv[1]) : 1000, per, inv_lists[PB_DRIVERS];

	if (n < PB_BUCKETS || n > 3000) {
		fprintf(stderr, "usage: placement_bench [N: 10..3000]\n");
		return 2;
	}
	per = n / PB_BUCKETS;
	for (int r = 0; r < PB_RUNS; r++)
		if (run_once(n, place_us[r], list_us[r], inv_lists) != 0)
			return 1;
	for (int b = 0; b < PB_BUCKETS; b++) {
		for (int r = 0; r < PB_RUNS; r++)
			v[r] = place_us[r][b];
		qsort(v, PB_RUNS, sizeof(*v), by_value);
		place_med[b] = v[PB_RUNS / 2];
		for (int r = 0; r < PB_RUNS; r++)
			v[r] = list_us[r][b];
		qsort(v, PB_RUNS, sizeof(*v), by_value);
		list_med[b] = v[PB_RUNS / 2];
	}
	printf("| placements | mean us per placement | ratio to first "
	       "tenth | one List of every driver, us | ratio to first "
	       "tenth |\n| --- | ---: | ---: | ---: | ---: |\n");
	for (int b = 0; b < PB_BUCKETS; b++)
		printf("| %d-%d | %.1f | %.2f | %.1f | %.2f |\n", b * per + 1,
		    (b + 1) * per, place_med[b], place_med[b] / place_med[0],
		    list_med[b], list_med[b] / list_med[0]);
	printf("\nmedians of %d runs; Lists of d1, d2, d3 the inventory made "
	       "in the last run: %d, %d, %d\n", PB_RUNS, inv_lists[0],
	    inv_lists[1], inv_lists[2]);
	return 0;
}
