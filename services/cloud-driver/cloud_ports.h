/*
 * cloud_ports.h - preview URLs on the cloud backends (issue 30): the
 * ports of computers exposed through the provider's own URLs (E2B's
 * `<port>-<sandbox>.<domain>` host, Modal's tunnels), without a proxy of
 * ours. The provider serves the URL; this table only remembers which
 * ports an agent exposed, on which sandbox, for computer_list and
 * computer_unexpose_port. In memory: a driver restart forgets it (the
 * URLs stay the provider's). Thread-safe.
 */
#ifndef CLOUD_PORTS_H
#define CLOUD_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.pb-c.h"

/* The most ports one computer exposes at once, and all computers. */
#define CLOUD_PORTS_PER_COMPUTER 32
#define CLOUD_PORTS_MAX 4096
/* The most one principal (SnapshotRequest.principal, when set) exposes. */
#define CLOUD_PORTS_PER_PRINCIPAL 512
/* How many ending sandboxes the table remembers (cloud_ports_retire). */
#define CLOUD_PORTS_RETIRED 64
/* The longest host name a URL gets (a DNS name's bound). */
#define CLOUD_PORTS_HOST_MAX 253

struct cloud_ports;

/* 0 or -ENOMEM; *pp on success. */
int cloud_ports_new(struct cloud_ports **pp);
/* Frees the table. Accepts NULL. */
void cloud_ports_free(struct cloud_ports *p);

/*
 * Port req->port of computer req->computer_id, on its sandbox `sbx`,
 * exposed (url, borrowed, copied into out) or, with req->unexpose,
 * forgotten; rows of an earlier sandbox of that computer (a reset, a
 * new sandbox) are dropped first. Fills out's port, computer_id, ports
 * (every port exposed now) and note (borrowed, copied). 0; -ENOENT
 * (unexpose of a port not exposed), -EDQUOT (too many), -ESTALE (sbx
 * is retired: the computer was reset or deleted since the caller
 * looked; look again) with err; or -ENOMEM.
 */
int cloud_ports_set(struct cloud_ports *p,
    const Msc__V1__SnapshotRequest *req, const char *sbx, const char *url,
    const char *note, Msc__V1__Preview *out, char *err, size_t errlen);

/* The ports of computer c->computer_id exposed on its sandbox
 * c->sandbox_id, into c->exposed_ports. 0 or -ENOMEM. p may be NULL. */
int cloud_ports_fill(struct cloud_ports *p, Msc__V1__Computer *c);

/* The table's stamp now: rows exposed or moved later are newer. */
uint64_t cloud_ports_mark(struct cloud_ports *p);

/* Every computer of list l, as cloud_ports_fill. With complete (l is
 * every computer of the provider, listed after cloud_ports_mark gave
 * mark), rows not older than mark stay and the others whose computer
 * and sandbox are not in l are dropped. p may be NULL. */
int cloud_ports_fill_list(struct cloud_ports *p, Msc__V1__ComputerList *l,
    bool complete, uint64_t mark);

/* Sandbox sbx is being ended (a reset, restart or delete): exposures on
 * it are refused from now on (-ESTALE). Call before ending it. */
void cloud_ports_retire(struct cloud_ports *p, const char *sbx);

/* Computer id is made again in sandbox sbx (a restart or reset that
 * ended sandbox old): its ports on old are kept, now of sbx (their URLs
 * are the new sandbox's); its rows of any other sandbox (an earlier
 * computer of that id) are dropped. p may be NULL. */
void cloud_ports_moved(struct cloud_ports *p, const char *id,
    const char *old, const char *sbx);

/* Whether host is dot-separated labels of [A-Za-z0-9-] (1 to 63 each,
 * no '-' at an end), at most CLOUD_PORTS_HOST_MAX in all: fit for a
 * URL's host. */
bool cloud_ports_host_ok(const char *host);

/* Computer id is gone: its rows are dropped. p may be NULL. */
void cloud_ports_forget(struct cloud_ports *p, const char *id);

#endif /* CLOUD_PORTS_H */
