/*
 * docker_pool.h - the warm pool (--warm-pool N, docker_pool.c): started,
 * ready containers of the configured image, flags and helper, waiting for
 * new temporary computers.
 *
 * How a pooled computer carries its id: labels are fixed when a container
 * is made, so a pool container is made without an id (name
 * kilntainers-pool-<driver>-<hex>, labels kilntainers=true,
 * kilntainers.pool=<driver>, kilntainers.temporary=true,
 * kilntainers.image=<image>) and taking it renames it to
 * kilntainer-<id> (right after the answer, docker_pool_rename.c): the
 * name carries the id. Finding (dock_find), listing
 * (dock_list) and removing a computer accept such a container as the
 * computer of its name. Permanent computers keep the cold path and the
 * reference's exact labels (kilntainers.computer-id included).
 */
#ifndef DOCK_POOL_H
#define DOCK_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "driver.pb-c.h"

#define DOCK_POOL_LABEL "kilntainers.pool"
#define DOCK_POOL_PREFIX "kilntainers-pool-"

struct dock_driver;

/*
 * What the pool asks of the computer layer (docker_computers.c, which
 * calls the pool): the engine and image checked once, a container's
 * readiness check, a Computer filled from a container's JSON. Given at
 * start (docker_computers.c's dock_pool_computers), so the pool calls
 * that file only through these.
 */
struct dock_pool_computers {
	int (*validate)(struct dock_driver *d, char *err, size_t errlen);
	int (*readiness)(struct dock_driver *d, const char *name, bool helper,
	    bool created, char *err, size_t errlen);
	int (*fill)(struct dock_driver *d, json_t *ctr, const char *id,
	    Msc__V1__Computer *out, const char *fallback_image,
	    const char *driver_id);
};
extern const struct dock_pool_computers dock_pool_computers;

/*
 * Starts the refill threads when the pool is on (removing first, in the
 * background, the pool containers an earlier run of this driver left).
 * 0 or a negative errno.
 */
int dock_pool_start(struct dock_driver *d,
    const struct dock_pool_computers *computers);
/* Stops refilling and removes the waiting containers. Blocks. */
void dock_pool_drain(struct dock_driver *d);
/* Frees the pool (after dock_pool_drain and the driver's jobs). */
void dock_pool_free(struct dock_driver *d);

/*
 * Makes a waiting container computer `id` (temporary): 0 with *out
 * filled, 1 when the pool has none ready (or is off: take the cold path),
 * or a negative errno with a message (-EEXIST: the name is taken).
 * Each container is checked first: one that died, is paused or stopped,
 * has not answered within 5 s (the refill threads ask each waiting one
 * again), or was made from an image the configured name no longer points
 * to, is removed, never handed out. With none ready it waits (once, at
 * most 5 s) for a refill under way that no other take waits for. Blocking.
 */
int dock_pool_take(struct dock_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);

/*
 * Waits (at most 30 s) until no taken pool container is still to be
 * renamed to `name` (kilntainer-<id>; NULL: to any name), so that the
 * engine knows it by it.
 */
void dock_pool_wait_named(struct dock_driver *d, const char *name);

/*
 * A command on container `name` ended: when it was the first of the
 * computer taken last, the pool's engine work held back for it resumes.
 */
void dock_pool_ran(struct dock_driver *d, const char *name);

/* A cold creation starts (+1) or ends (-1): refills yield to them. */
void dock_pool_cold(struct dock_driver *d, int delta);

/*
 * Appends to `out` the taken pool containers of this driver (computers
 * named by their container's name, filled by computers->fill; the pool
 * need not be started). 0 or a negative errno.
 */
int dock_pool_list_taken(struct dock_driver *d,
    const struct dock_pool_computers *computers, Msc__V1__ComputerList *out,
    char *err, size_t errlen);

#endif /* DOCK_POOL_H */
