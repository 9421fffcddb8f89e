#include "msc_time.h"

#include <time.h>

#include "msc_hop.h"

static uint64_t
clock_ms(clockid_t clock)
{
	struct timespec ts;

	/* Cannot fail for these clocks with a valid pointer. */
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
msc_now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

uint64_t
msc_wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}
#ifdef MSC_HOP_TRACE
struct msc_hop msc_hops[MSC_HOPS_MAX];
atomic_int msc_nhops;
#endif
