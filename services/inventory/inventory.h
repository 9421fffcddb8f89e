/*
 * inventory.h - the inventory service (msc.v1.Inventory): which computers
 * are in use, by which sessions, in which lifecycle mode. It creates or
 * finds computers through a driver and stops temporary ones when their
 * last owner lets go. It keeps no database: a restarted inventory finds
 * permanent computers again through the driver's labels.
 */
#ifndef INV_INVENTORY_H
#define INV_INVENTORY_H

#include <stdint.h>

struct inv_service;

struct msc_fleet;

/*
 * Serves on `url`, calling the drivers of `fleet` (borrowed; it must
 * outlive the service). New computers go to the driver with the fewest
 * computers (as counted by its List now and then, moved by every create
 * and removal made here, plus creations under way). Returns 0 or a
 * negative errno; *sp is freed with inv_stop().
 */
int inv_start(const char *url, struct msc_fleet *fleet,
    struct inv_service **sp);
void inv_stop(struct inv_service *s);

/* How often the counts are refreshed by a List (default 60 s). */
void inv_set_count_refresh_ms(struct inv_service *s, int ms);
/* Lists of every driver made so far to count their computers. */
uint64_t inv_count_lists(struct inv_service *s);

#endif /* INV_INVENTORY_H */
