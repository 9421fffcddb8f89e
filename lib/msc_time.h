/* msc_time.h - the clocks, in milliseconds. */
#ifndef MSC_TIME_H
#define MSC_TIME_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds: for deadlines and durations. */
uint64_t msc_now_ms(void);

/* CLOCK_REALTIME in milliseconds since the epoch: for timestamps. */
uint64_t msc_wall_ms(void);

#endif /* MSC_TIME_H */
