/*
 * fly_lease.h - the lease of a temporary Fly Machine (issue 17). Its main
 * process (config.init.exec) is the watch loop msc_lease_watch_sh instead
 * of `sleep inf`: it exits once /run/msc-lease has not changed for
 * --lease-timeout seconds, and with auto_destroy the Machine then stops
 * and is destroyed. While this
 * driver holds the computer (from create or attach until it is stopped,
 * reset or found gone) its renewer (msc_lease_renewer.h, d->lease, keyed by
 * computer id with the Machine id as ref) touches that file through the
 * exec API every third of the lease. The loop counts its own sleeps (a
 * jump of the Machine's clock changes nothing). An image without sh or
 * stat gets no lease (the loop becomes `sleep inf`): ending a computer by
 * mistake is worse than an orphan. The sandboxed code can touch the file too (keeping its own
 * orphan alive) or kill the loop (ending its own computer): a Machine has
 * no part the sandboxed code cannot reach.
 */
#ifndef FLY_LEASE_H
#define FLY_LEASE_H

#include <stdbool.h>

#include <jansson.h>

struct fly_driver;

/* Starts d->lease (msc_lease_renewer_stop stops it). */
int fly_lease_start(struct fly_driver *d);

/* Gives a temporary Machine's create body (borrowed) the watch loop. */
int fly_lease_body(struct fly_driver *d, json_t *body, bool temporary);

#endif /* FLY_LEASE_H */
