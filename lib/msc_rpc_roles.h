/*
 * msc_rpc_roles.h - which cluster roles may call which methods over
 * tls+tcp:// (the role is the one the caller's certificate names; see
 * msc_tls.h). Derived from who calls what: the edge calls every Session
 * method; the session service calls every Inventory method and Driver
 * Exec; the inventory calls the other Driver methods; the operator (the
 * command line with --driver-url, and an all-in-one server whose drivers
 * are remote: its inventory and session share the links) calls every
 * Driver method. A driver calls nobody. inproc://, ipc:// and tcp://
 * (with --allow-plain-tcp) links carry no role and are not checked.
 */
#ifndef MSC_RPC_ROLES_H
#define MSC_RPC_ROLES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Whether `role` may call `method` of `service` (full proto name, e.g.
 * "msc.v1.Driver"). Unknown services and methods allow nobody. When not,
 * writes the roles that may into allowed[len] ("" for none).
 */
bool msc_rpc_role_allowed(const char *service, const char *method,
    const char *role, char *allowed, size_t len);

#endif /* MSC_RPC_ROLES_H */
