/*
 * docker_preview.h - preview URLs of computers' ports (issue 30).
 *
 * docker_preview.c keeps the table capability -> (computer, port), in
 * memory and in a host file per computer (BASE/preview-<driver>/<id>,
 * BASE as dock_pol_base), so that a URL outlives the driver; it answers
 * Driver/ExposePort. docker_preview_proxy.c is the listener: one thread,
 * one poll loop, which routes each request by its Host header,
 * `<capability>.<preview domain>`, to the exposed port of that computer
 * at its address on the sandbox network, asked of the engine (by
 * docker_preview_resolve.c's thread, off the listener's loop).
 */
#ifndef DOCKER_PREVIEW_H
#define DOCKER_PREVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.pb-c.h"

struct dock_driver;
struct dock_preview;

/* The most ports one computer exposes at once, and all computers. */
#define DOCK_PREVIEW_PER_COMPUTER 32
#define DOCK_PREVIEW_MAX 4096
/* A capability: 128 random bits as 32 lowercase hex digits. */
#define DOCK_PREVIEW_CAP_LEN 32

/*
 * The listener the table starts on its first URL: `listen` on "HOST:PORT"
 * (its port into *portp), `stop`. The driver gives the table
 * docker_preview_proxy.c's at init, so the table (docker_preview.c) calls
 * its listener only through these and the listener calls the table.
 */
struct dock_proxy_loop;
struct dock_preview_listener {
	int (*listen)(struct dock_preview *p, const char *listen,
	    const char *domain, struct dock_proxy_loop **lp, uint16_t *portp,
	    char *err, size_t errlen);
	void (*stop)(struct dock_proxy_loop *l);
};

/* The listener (docker_preview_proxy.c): one thread, one poll loop. */
extern const struct dock_preview_listener dock_preview_proxy;

/* Loads the table from its files; starts the listener when it is not
 * empty. 0 or a negative errno (printed). */
int dock_preview_init(struct dock_driver *d,
    const struct dock_preview_listener *listener, struct dock_preview **pp);
void dock_preview_free(struct dock_preview *p);

/* Whether a driver listening at `url` serves other hosts: tcp:// or
 * tls+tcp:// on an address other than loopback. NULL: no. */
bool dock_preview_url_serves_hosts(const char *url);

/* Driver/ExposePort: req->port of req->computer_id exposed (or revoked). */
int dock_preview_expose(struct dock_driver *d,
    const Msc__V1__SnapshotRequest *req, Msc__V1__Preview *out, char *err,
    size_t errlen);

/*
 * The target of capability `cap`: *portp and the computer's address
 * (ip, at most iplen) on the sandbox network. 0; -ENOENT when the
 * capability is unknown or its computer gone (then forgotten);
 * -ENETUNREACH when the computer has no address (no network, stopped).
 * `fresh`: ask the engine again rather than use the kept address.
 * Blocking (an engine call at most).
 */
int dock_preview_target(struct dock_preview *p, const char *cap, bool fresh,
    char *ip, size_t iplen, uint16_t *portp);

/* Computer id is gone: its URLs are revoked, its file removed (their
 * open connections end within a second). p may be NULL. */
void dock_preview_forget(struct dock_preview *p, const char *id);

/* Computer id restarts or is made again: the address kept for its URLs
 * is dropped, so that the next request asks the engine (the old address
 * may be another computer's by then). p may be NULL. */
void dock_preview_moved(struct dock_preview *p, const char *id);
/* Computer id's rows of container old name container now (the same
 * computer made again: reset, restore); the others are forgotten. */
void dock_preview_renamed(struct dock_preview *p, const char *id,
    const char *old, const char *now);

/* The ports of computer id exposed now, sorted by exposure, into *ports
 * (malloc'd, NULL when none) and *n. 0 or -ENOMEM. p may be NULL. */
int dock_preview_ports(struct dock_preview *p, const char *id,
    uint32_t **ports, size_t *n);

/* Whether `cap` is still in the table (a revoked one closes its
 * connections). */
bool dock_preview_known(struct dock_preview *p, const char *cap);

/* The address kept for `cap` when it is fresh, without blocking: 0;
 * -ENOENT when the capability is unknown; -EAGAIN when the engine must
 * be asked (dock_preview_target, through the resolver). */
int dock_preview_kept(struct dock_preview *p, const char *cap, char *ip,
    size_t iplen, uint16_t *portp);

/*
 * The resolver (docker_preview_resolve.c): one thread that answers
 * dock_preview_target for the listener, whose loop must not block. An
 * answer names its question's serial; dock_resolver_fd is readable when
 * answers wait.
 */
#define DOCK_RESOLVE_MAX 1024
struct dock_resolver;
struct dock_resolved {
	uint64_t serial;
	int rv;                 /* dock_preview_target's */
	char ip[64];
	uint16_t port;
};
int dock_resolver_start(struct dock_preview *p, struct dock_resolver **rp);
int dock_resolver_fd(const struct dock_resolver *r);
/* false: too many questions (or no memory): answer 503. */
bool dock_resolver_ask(struct dock_resolver *r, uint64_t serial,
    const char *cap, bool fresh);
/* The next answer into *out; false when none waits. */
bool dock_resolver_answer(struct dock_resolver *r, struct dock_resolved *out);
void dock_resolver_stop(struct dock_resolver *r);


#endif /* DOCKER_PREVIEW_H */
