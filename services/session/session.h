/*
 * session.h - the session service (msc.v1.Session): one record per MCP
 * session with its default and owned computers; it validates
 * terminal_execute, resolves the computer through the inventory, runs the
 * command through the driver and shapes the result (timeout and output
 * limit markers, UTF-8 repair).
 */
#ifndef SESS_SESSION_H
#define SESS_SESSION_H

#include "msc_cfg.h"

struct sess_service;

struct msc_fleet;

/*
 * cfg and fleet are borrowed and must outlive the service. Commands go
 * straight to the driver that has the computer.
 */
int sess_start(const struct msc_cfg *cfg, const char *url,
    const char *inventory_url, struct msc_fleet *fleet,
    struct sess_service **sp);
void sess_stop(struct sess_service *s);

#endif /* SESS_SESSION_H */
