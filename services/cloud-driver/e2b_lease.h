/*
 * e2b_lease.h - the lease of a temporary E2B sandbox (issue 17): it is
 * created with a timeout of --lease-timeout seconds instead of
 * --e2b-sandbox-timeout, and while this driver holds it (from its create
 * or connect until it is stopped, reset or found gone) its renewer
 * (msc_lease_renewer.h, d->lease, keyed by computer id with the sandbox id
 * as ref) extends that timeout every third of the lease (POST
 * /sandboxes/{id}/timeout). When the server or its driver dies the extensions stop and
 * E2B kills the sandbox at its timeout. Permanent sandboxes keep the
 * configured timeout (and pause at it).
 */
#ifndef E2B_LEASE_H
#define E2B_LEASE_H

#include <stdbool.h>

struct e2b_driver;

/* Starts d->lease (msc_lease_renewer_stop stops it). */
int e2b_lease_start(struct e2b_driver *d);

/* The timeout (s) a sandbox gets at create, connect and each command. */
long e2b_lease_ttl(const struct e2b_driver *d, bool temporary);

#endif /* E2B_LEASE_H */
