/*
 * modal_lease.h - the lease of a temporary Modal sandbox (issue 17).
 * Modal cannot extend a sandbox's lifetime, but it ends one that is idle
 * for idle_timeout_secs (no command starting or running). A temporary
 * sandbox is created with idle_timeout_secs = --lease-timeout, and while
 * this driver holds it (from create or attach until it is stopped, reset
 * or found gone) its renewer (msc_lease_renewer.h, d->lease, keyed by
 * computer id) runs `true` in it every third of the lease. When the server or its driver dies, Modal ends the sandbox one
 * lease after its last command ended (a command still running keeps it
 * until the command's own timeout). Permanent sandboxes have no idle
 * timeout.
 */
#ifndef MODAL_LEASE_H
#define MODAL_LEASE_H

#include <stdbool.h>
#include <stdint.h>

struct modal_driver;

/* Starts d->lease (msc_lease_renewer_stop stops it). */
int modal_lease_start(struct modal_driver *d);

/* The idle timeout (s) a new sandbox gets: 0 for a permanent one. */
uint32_t modal_lease_idle_s(const struct modal_driver *d, bool temporary);

#endif /* MODAL_LEASE_H */
