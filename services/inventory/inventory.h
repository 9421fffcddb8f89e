/*
 * inventory.h - the inventory service (msc.v1.Inventory): which computers
 * are in use, by which sessions, in which lifecycle mode. It creates or
 * finds computers through a driver and stops temporary ones when their
 * last owner lets go. It keeps no database: a restarted inventory finds
 * permanent computers again through the driver's labels.
 */
#ifndef INV_INVENTORY_H
#define INV_INVENTORY_H

struct inv_service;

struct msc_fleet;

/*
 * Serves on `url`, calling the drivers of `fleet` (borrowed; it must
 * outlive the service). New computers go to the driver with the fewest
 * computers (those it reports plus creations under way). Returns 0 or a
 * negative errno; *sp is freed with inv_stop().
 */
int inv_start(const char *url, struct msc_fleet *fleet,
    struct inv_service **sp);
void inv_stop(struct inv_service *s);

#endif /* INV_INVENTORY_H */
