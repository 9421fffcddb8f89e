/*
 * e2b_driver.h - the cloud-driver's E2B backend: msc.v1.Driver on top of
 * E2B's control-plane REST API and envd's process API (Connect protocol,
 * JSON codec) over libcurl. Computers carry kilntainers* metadata, so
 * they are found again after a restart; permanent ones are paused at
 * Stop and resumed on Attach, temporary ones are killed.
 */
#ifndef E2B_DRIVER_H
#define E2B_DRIVER_H

#include "msc_cfg.h"

struct e2b_driver;

/*
 * Starts the service on `url` with the --e2b-* options of `cfg`
 * (borrowed). The key comes from --e2b-api-key or E2B_API_KEY; the
 * endpoints from E2B_API_URL, E2B_SANDBOX_URL and E2B_DOMAIN. Does not
 * contact E2B: a missing or wrong key is reported on the first call.
 */
int e2b_driver_start(const struct msc_cfg *cfg, const char *url,
    struct e2b_driver **dp);

/* Stops serving and frees. Accepts NULL. */
void e2b_driver_stop(struct e2b_driver *d);

#endif /* E2B_DRIVER_H */
