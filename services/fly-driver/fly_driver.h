/*
 * fly_driver.h - the fly-driver service: msc.v1.Driver on top of the Fly
 * Machines REST API (fly_api.h), without flyctl. API calls block, so
 * handlers queue them on a bounded worker pool; commands are serialized
 * per computer and run in parallel across computers.
 */
#ifndef FLY_DRIVER_H
#define FLY_DRIVER_H

#include "msc_cfg.h"

struct fly_driver;

/*
 * Starts the service on `url` with the --fly-* options of `cfg`
 * (borrowed; must outlive the driver). Checks the sizes (--fly-cpus,
 * --fly-memory, --fly-rootfs-size) and prints "kilntainers: error: ..."
 * with -EINVAL when one is wrong. Does not contact Fly: credentials, the
 * app and the organization are resolved on the first call, once.
 */
int fly_driver_start(const struct msc_cfg *cfg, const char *url,
    struct fly_driver **dp);

/* Stops serving, finishes queued jobs and frees. Accepts NULL. */
void fly_driver_stop(struct fly_driver *d);

#endif /* FLY_DRIVER_H */
