/*
 * docker_reap.h - leases of temporary computers whose container the exec
 * helper does not run (made by the reference or an earlier build, or with
 * the fast exec path off): nothing inside them can end them, so the
 * drivers do. Each driver process that holds one keeps a lock file for
 * it (flock, released by the kernel when the process dies however it
 * dies) in a folder private to the user: /run/mcp-sandbox-computer-leases
 * as root, else /tmp/mcp-sandbox-computer-<uid>-leases (MSC_LEASE_DIR
 * overrides), in a subfolder per engine and driver identity
 * (<driver id>-<hash of both>). Every driver, at its start and then every
 * third of --lease-timeout, removes the temporary containers whose lock
 * files in its subfolder are all unlocked: their holders are gone. A
 * driver of another engine or identity (Docker and Podman side by side)
 * never looks at them: to it they would be gone or not its own. A stopped (SIGSTOP) holder still
 * holds its lock: nothing it holds is removed. Servers sharing one engine
 * from different hosts do not see each other's locks; a computer only a
 * server on another host holds is never reaped here (it has no file
 * here), but one held here and there is reaped when its holder here dies.
 */
#ifndef DOCK_REAP_H
#define DOCK_REAP_H

#include <stdbool.h>

#include <jansson.h>

struct dock_driver;
struct dock_reap;

/* Opens the folder and starts the reaping thread; reaping is off (with a
 * warning) when the folder is not usable. 0 or -ENOMEM. */
int dock_reap_start(struct dock_driver *d, int period_ms,
    struct dock_reap **rp);
void dock_reap_stop(struct dock_reap *r);

/* This driver holds (drops) container `name`, of inspect JSON `ctr`. */
void dock_reap_hold(struct dock_reap *r, const char *name, json_t *ctr);
void dock_reap_drop(struct dock_reap *r, const char *name);
/* Whether this driver holds `name`'s lock file. */
bool dock_reap_holds(struct dock_reap *r, const char *name);

#endif /* DOCK_REAP_H */
