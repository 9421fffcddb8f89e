/*
 * msc_hop.h - where one request's time goes, hop by hop (bench/hops.mjs):
 * MSC_HOP("name") marks a point on the path (the edge's read, each pack,
 * NNG hop and unpack, the driver's queue, the helper), and the edge's
 * MSC_HOP_DUMP() after the reply writes "HOPS name=us ..." (microseconds
 * since the mark before) to stderr. For one request at a time; compiled
 * only with -DMSC_HOP_TRACE (meson setup build-trace
 * -Dc_args=-DMSC_HOP_TRACE), else every mark is nothing.
 */
#ifndef MSC_HOP_H
#define MSC_HOP_H

#ifdef MSC_HOP_TRACE
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define MSC_HOPS_MAX 64

struct msc_hop {
	const char *what;
	long long ns;
};

extern struct msc_hop msc_hops[MSC_HOPS_MAX];   /* msc_time.c */
extern atomic_int msc_nhops;

static inline void
msc_hop(const char *what)
{
	struct timespec ts;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if ((i = atomic_fetch_add(&msc_nhops, 1)) < MSC_HOPS_MAX) {
		msc_hops[i].what = what;
		msc_hops[i].ns = ts.tv_sec * 1000000000LL + ts.tv_nsec;
	}
}

static inline void
msc_hop_dump(void)
{
	int n = atomic_load(&msc_nhops);
	char line[4096];
	size_t off = 0;

	if (n > MSC_HOPS_MAX)
		n = MSC_HOPS_MAX;
	for (int i = 1; i < n && off < sizeof(line) - 64; i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
		    "%s=%lld ", msc_hops[i].what,
		    (msc_hops[i].ns - msc_hops[i - 1].ns) / 1000);
	fprintf(stderr, "HOPS %s\n", off > 0 ? line : "");
	atomic_store(&msc_nhops, 0);
}

#define MSC_HOP(w) msc_hop(w)
#define MSC_HOP_DUMP() msc_hop_dump()
#define MSC_HOP_RESET() atomic_store(&msc_nhops, 0)
#else
#define MSC_HOP(w) ((void)0)
#define MSC_HOP_DUMP() ((void)0)
#define MSC_HOP_RESET() ((void)0)
#endif

#endif /* MSC_HOP_H */
