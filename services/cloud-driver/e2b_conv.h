/*
 * e2b_conv.h - pure conversions of the E2B backend (no I/O): the create
 * body, the metadata list filter, sandboxes to protobuf, base64, the
 * Connect envelope framing and process events. Unit-tested in
 * tests/unit/test_e2b_conv.c.
 */
#ifndef E2B_CONV_H
#define E2B_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "driver.pb-c.h"

#define E2B_META_OWNED "kilntainers"
#define E2B_META_ID "kilntainers-computer-id"
#define E2B_META_TEMPORARY "kilntainers-temporary"
#define E2B_META_TEMPLATE "kilntainers-template"
/* The principal tag (msc_principal.h) of the one who made it; absent: none. */
#define E2B_META_PRINCIPAL "kilntainers-principal"

/* Splits "k=v" items (at the first '='; items without '=' dropped). */
json_t *e2b_conv_pairs(const char *const *items, size_t n);

/*
 * The POST /sandboxes body for computer `id`: templateID, timeout,
 * metadata (user pairs, then the kilntainers keys), envVars, secure,
 * allow_internet_access and autoPause (permanent ones). New reference.
 */
json_t *e2b_conv_create_body(const char *template_id, long timeout_s,
    json_t *metadata, json_t *envs, bool network, const char *id,
    bool temporary);

/* The `metadata` query value for key=value, escaped twice. */
/*
 * Allowlist mode (--network-allow): the sandbox may reach the allow
 * domains only (network.allowOut, everything else denied).
 */
int e2b_conv_network(json_t *body, char *const *allow, size_t n);
int e2b_conv_meta_query(const char *key, const char *value, char *buf,
    size_t len);

/* Metadata value `key` of a sandbox object, or NULL (borrowed). */
const char *e2b_conv_meta(json_t *sbx, const char *key);

/* Fills a Computer from a sandbox object (strings malloc'd). */
int e2b_conv_computer(json_t *sbx, const char *fallback_template,
    Msc__V1__Computer *out);

/* Base64 (standard alphabet). *outp malloc'd, NUL-terminated. */
int e2b_conv_b64encode(const void *in, size_t len, char **outp);
int e2b_conv_b64decode(const char *in, size_t len, char **outp,
    size_t *lenp);

/* One Connect envelope: flags, 4-byte big-endian length, message. */
int e2b_conv_envelope(uint8_t flags, const char *msg, size_t len,
    char **outp, size_t *lenp);

/* An incremental envelope reader. */
struct e2b_frames {
	uint8_t hdr[5];
	size_t hdr_have;
	char *msg;
	size_t need, have;
};

#define E2B_MAX_FRAME (16u << 20)

/*
 * Feeds bytes; calls fn(flags, msg, len, arg) for each complete
 * envelope (msg NUL-terminated). Returns 0, fn's non-zero result,
 * -EPROTO for an oversized frame or -ENOMEM.
 */
int e2b_frames_feed(struct e2b_frames *f, const char *p, size_t len,
    int (*fn)(uint8_t, const char *, size_t, void *), void *arg);
void e2b_frames_fini(struct e2b_frames *f);

enum e2b_ev_kind { E2B_EV_START, E2B_EV_STDOUT, E2B_EV_STDERR,
	E2B_EV_KEEPALIVE, E2B_EV_END, E2B_EV_OTHER };

struct e2b_event {
	enum e2b_ev_kind kind;
	int64_t pid;          /* START */
	char *data;           /* STDOUT/STDERR, malloc'd */
	size_t len;
	int exit_code;        /* END: 128 + signal when killed */
	char error[256];      /* END: envd's error text, if any */
};

/* Parses one StartResponse message. -EPROTO when malformed. */
int e2b_conv_event(const char *msg, size_t len, struct e2b_event *ev);

/*
 * An end-of-stream message: 0 when it has no error, else 1 with the
 * Connect code ("deadline_exceeded", ...) and message. -EPROTO if bad.
 */
int e2b_conv_eos(const char *msg, size_t len, char *code, size_t codelen,
    char *text, size_t textlen);

/* Exit code of an end event: exitCode, or 128 + signal from status. */
int e2b_conv_exit_code(json_t *end);

#endif /* E2B_CONV_H */
