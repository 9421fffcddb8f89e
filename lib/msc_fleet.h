/*
 * msc_fleet.h - the driver services a session or inventory service talks
 * to, each known by its identity (the label its computers carry).
 */
#ifndef MSC_FLEET_H
#define MSC_FLEET_H

#include <stddef.h>

#include "msc_cfg.h"
#include "msc_rpc.h"

#define MSC_FLEET_MAX 64

struct msc_fleet;

/*
 * Opens a client per --driver-url of cfg; without any, one driver named
 * cfg->driver_id at `default_url`. Returns 0 or a negative errno.
 */
int msc_fleet_open(const struct msc_cfg *cfg, const char *default_url,
    struct msc_fleet **fp);
/*
 * Opens new clients to f's drivers: a service that must end its own
 * calls when it stops (msc_client_shutdown) calls through clients it
 * owns, not ones it shares. Returns 0 or a negative errno.
 */
int msc_fleet_reopen(const struct msc_fleet *f, struct msc_fleet **fp);
/* Closes the clients (their open calls end first: msc_client_close). */
void msc_fleet_close(struct msc_fleet *f);
/* msc_client_shutdown on every client of f. */
void msc_fleet_shutdown(struct msc_fleet *f);

size_t msc_fleet_size(const struct msc_fleet *f);
const char *msc_fleet_id(const struct msc_fleet *f, size_t i);
struct msc_client *msc_fleet_client(const struct msc_fleet *f, size_t i);

/* The driver named `id` (the first one for NULL or ""), or -1. */
int msc_fleet_index(const struct msc_fleet *f, const char *id);

#endif /* MSC_FLEET_H */
