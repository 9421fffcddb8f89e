/*
 * modal_lease.h - the lease of a temporary Modal sandbox (issue 17).
 * Modal cannot extend a sandbox's lifetime, but a sandbox ends when its
 * entrypoint exits, and when it is idle for idle_timeout_secs (no command
 * starting or running). A temporary sandbox's entrypoint is the watch
 * loop msc_lease_watch_sh (it exits once /run/msc-lease has not changed
 * for --lease-timeout seconds), and its idle_timeout_secs is the lease
 * too. While this driver holds it (from create or attach until it is
 * stopped, reset or found gone) its renewer (msc_lease_renewer.h,
 * d->lease, keyed by computer id) touches that file with a command every
 * third of the lease (the command also keeps it from idling). When the
 * server or its driver dies, the loop ends the sandbox one lease after
 * the last renewal, a command still running or not. An image without sh
 * or stat (the loop becomes `sleep inf`), or a sandbox made by an earlier
 * build, ends only when idle: one lease after its last command ended. The
 * sandboxed code can touch the file too (keeping its own orphan alive
 * while it runs) or kill the loop (ending its own computer), as on Fly.
 * Permanent sandboxes have neither.
 */
#ifndef MODAL_LEASE_H
#define MODAL_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include "modal_client.pb-c.h"

struct modal_driver;

/* The entrypoint's argv, owned by the caller while it uses the request. */
struct modal_lease_entry {
	char secs[24];
	char *argv[5];
};

/* Starts d->lease (msc_lease_renewer_stop stops it). */
int modal_lease_start(struct modal_driver *d);

/* Gives a temporary sandbox's definition the watch loop (kept in *e). */
void modal_lease_entrypoint(const struct modal_driver *d, bool temporary,
    struct modal_lease_entry *e, Modal__Client__Sandbox *def);

/* The idle timeout (s) a new sandbox gets: 0 for a permanent one. */
uint32_t modal_lease_idle_s(const struct modal_driver *d, bool temporary);

#endif /* MODAL_LEASE_H */
