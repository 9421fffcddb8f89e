/*
 * docker_driver.h - the docker-driver service: msc.v1.Driver on top of the
 * Docker Engine API (docker_api.h). Engine calls block, so handlers queue
 * them on a bounded worker pool; execs are serialized per computer and
 * run in parallel across computers.
 */
#ifndef DOCK_DRIVER_H
#define DOCK_DRIVER_H

#include <stdio.h>

#include "msc_cfg.h"

struct dock_driver;

/*
 * Starts the service on `url` with the docker options of `cfg` (borrowed;
 * must outlive the driver). Checks the --docker-run-flag list; a bad flag
 * prints "kilntainers: error: ..." and returns -EINVAL. Does not contact
 * the engine (a dead engine is reported on the first call), but for a
 * thread that restores allowlist computers' proxy in the background
 * (docker_policy_restore.c; a dead engine: a warning).
 */
int dock_driver_start(const struct msc_cfg *cfg, const char *url,
    struct dock_driver **dp);
/*
 * The same for the operator's command line, which runs one command: it
 * starts no allowlist proxy and finds no computers again at start (the
 * server does: docker_policy_restore.c).
 */
int dock_driver_start_tool(const struct msc_cfg *cfg, const char *url,
    struct dock_driver **dp);

/* Stops serving, finishes queued jobs and frees. Accepts NULL. */
void dock_driver_stop(struct dock_driver *d);

/*
 * The operator's network commands (the command line's `network` and
 * `network-log`): shows computer `id`'s policy, or, with `mode`, sets it
 * (lists from the cfg's --network-allow and --network-deny) on the
 * running computer, effective from its next connection. 0 with the
 * policy in msg, or a negative errno with the reason in msg.
 */
int dock_driver_network(struct dock_driver *d, const char *id,
    const char *mode, char *msg, size_t msglen);
/* Prints the allowlist proxies' decisions (of computer `id`, or all). */
int dock_driver_network_log(const char *id, FILE *out);

#endif /* DOCK_DRIVER_H */
