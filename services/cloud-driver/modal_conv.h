/*
 * modal_conv.h - pure conversions of the Modal backend (no I/O): the
 * kilntainers tags, a listed sandbox as a Computer, a sandbox's end as
 * words, option values (cpu, memory, gpu, lifetime), a JWT's expiry, exec
 * ids and times. Unit-tested in tests/unit/test_modal_conv.c.
 */
#ifndef MODAL_CONV_H
#define MODAL_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "driver.pb-c.h"
#include "modal_client.pb-c.h"

/* The tags every computer's sandbox carries (the E2B metadata keys). */
#define MODAL_TAG_OWNED "kilntainers"
#define MODAL_TAG_ID "kilntainers-computer-id"
#define MODAL_TAG_TEMPORARY "kilntainers-temporary"
#define MODAL_TAG_IMAGE "kilntainers-image"
/* The principal tag (msc_principal.h) of the one who made it; absent: none. */
#define MODAL_TAG_PRINCIPAL "kilntainers-principal"

/* The value of tag `name` of a listed sandbox, or NULL (borrowed). */
const char *modal_conv_tag(const Modal__Client__SandboxInfo *s,
    const char *name);

/* Fills a Computer (backend "modal", strings malloc'd). */
int modal_conv_computer(const Modal__Client__SandboxInfo *s,
    const char *fallback_image, Msc__V1__Computer *out);

/* "2025-01-02T03:04:05Z" for a Unix time in seconds ("" for 0). */
void modal_conv_time(double t, char *buf, size_t len);

/*
 * Why a sandbox or task ended, in words for "... its Modal sandbox X
 * <words>": "was terminated", "reached its lifetime timeout (--sandbox-
 * timeout)", "failed: <exception>", ... NULL result: "is gone".
 */
void modal_conv_ended(const Modal__Client__GenericResult *r, char *buf,
    size_t len);

/* Whether a result means the sandbox or task ended (status set). */
bool modal_conv_finished(const Modal__Client__GenericResult *r);

/* CPU cores ("1.5") as milli-CPU, 0 < cores <= 1024. -EINVAL otherwise. */
int modal_conv_cpu(const char *s, uint32_t *millip);

/* A whole number in [lo, hi]. -EINVAL otherwise. */
int modal_conv_uint(const char *s, uint32_t lo, uint32_t hi, uint32_t *vp);

/* The most ports --modal-ports opens as tunnels. */
#define MODAL_PORTS_MAX 16

/*
 * --modal-ports: "3000,8080" -> ports (at most MODAL_PORTS_MAX, each 1 to
 * 65535, none twice; spaces around commas allowed); "" or NULL: none.
 * -EINVAL when bad.
 */
int modal_conv_ports(const char *s, uint32_t *ports, size_t *np);

/* "A10G", "h100:2" -> type (upper case) and count. -EINVAL when bad. */
int modal_conv_gpu(const char *s, char *type, size_t typelen,
    uint32_t *countp);

/* The `exp` claim of a JWT (Unix seconds), or 0 when it has none. */
int64_t modal_conv_jwt_exp(const char *jwt);

/* A random UUID (version 4), 36 characters and a NUL. Returns 0. */
int modal_conv_uuid(char out[37]);

#endif /* MODAL_CONV_H */
