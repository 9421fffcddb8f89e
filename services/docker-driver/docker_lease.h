/*
 * docker_lease.h - the leases of temporary computers, driver side (the
 * helper's side is helper/helper_lease.c, the wire lease_wire.h).
 *
 * A temporary computer made with the exec helper carries a lease of
 * --lease-timeout seconds from its start; while a session holds it (from
 * its Create or Attach to its Stop) this driver renews it every third of
 * that on its lease renewer's thread (msc_lease_renewer.h), never behind
 * commands or engine calls.
 * When the server or this driver dies, renewals stop and the helper ends
 * the container (AutoRemove removes it). Permanent computers have none.
 */
#ifndef DOCK_LEASE_H
#define DOCK_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "driver.pb-c.h"

struct dock_driver;

/* Starts the renewing thread (d->lease): 0 or a negative errno. */
int dock_lease_start(struct dock_driver *d);
/* Stops it and frees d->lease. Accepts d->lease NULL. */
void dock_lease_stop(struct dock_driver *d);

/*
 * Gives a create body that runs the helper (dock_fx_body) the lease of a
 * temporary computer: `--lease-ms` after the helper's socket.
 */
int dock_lease_body(struct dock_driver *d, json_t *body, bool temporary);

/*
 * Container `name` (a temporary computer, inspect JSON `ctr`, borrowed)
 * is held by a session of this server: renew its lease from now on, or,
 * when its helper has none (no helper, an earlier build), hold its lock
 * file (docker_reap.h). dock_lease_drop: it is not held any more.
 */
void dock_lease_hold(struct dock_driver *d, const char *name, json_t *ctr);
void dock_lease_drop(struct dock_driver *d, const char *name);

/*
 * Sets c->lease and c->lease_left_ms for container `name` (a running
 * temporary computer): HELD when this driver renews it (or holds its lock
 * file), EXPIRING with what its helper says is left when not, NONE when
 * it has no lease or its helper does not answer. Asks the helper (may
 * inspect the container once). Blocking (bounded).
 */
void dock_lease_describe(struct dock_driver *d, const char *name,
    Msc__V1__Computer *c);

/*
 * Whether the helper of container `name` (known to the fast path) answers
 * a lease query within wait_ms: its main loop runs (a paused or wedged
 * container's does not). Asks no engine; blocking (bounded).
 */
bool dock_lease_answers(struct dock_driver *d, const char *name,
    int wait_ms);

#endif /* DOCK_LEASE_H */
