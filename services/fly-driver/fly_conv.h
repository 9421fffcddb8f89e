/*
 * fly_conv.h - pure conversions of the fly-driver (no I/O): Machine
 * create bodies, exec argv wrappers, replies to protobuf, the state file
 * and the flyctl config. Unit-tested in tests/unit/test_fly_conv.c.
 */
#ifndef FLY_CONV_H
#define FLY_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "driver.pb-c.h"

#define FLY_META_OWNED "kilntainers"
#define FLY_META_ID "kilntainers-computer-id"
#define FLY_META_TEMPORARY "kilntainers-temporary"
#define FLY_META_IMAGE "kilntainers-image"
/* The principal tag (msc_principal.h) of the one who made it; absent: none. */
#define FLY_META_PRINCIPAL "kilntainers-principal"

/* Machine settings taken from the --fly-* flags. */
struct fly_guest {
	const char *image;      /* as the user wrote it */
	const char *region;     /* NULL: Fly picks */
	const char *cpu_kind;   /* shared or performance */
	long cpus;
	long memory_mb;         /* a multiple of 256 */
	long rootfs_size_gb;    /* 0: Fly's default */
};

/*
 * Parses and checks the --fly-* sizes of cfg into g (strings borrowed).
 * Writes the reference's message into err and returns -EINVAL.
 */
int fly_conv_guest(const char *image, const char *region, const char *kind,
    const char *cpus, const char *memory, const char *rootfs_size,
    struct fly_guest *g, char *err, size_t errlen);

/*
 * The POST /v1/apps/{app}/machines body for computer `id`: name = id,
 * metadata with the kilntainers keys, init.exec keeping it alive, guest,
 * rootfs.persist (never/always), restart policy (no/always) and
 * auto_destroy for temporary ones. New reference or NULL.
 */
json_t *fly_conv_machine_body(const struct fly_guest *g, const char *id,
    bool temporary);

/*
 * The exec argv for a request: [shell, "-c", command] or args, wrapped
 * in a "cd -- $1" shell for a working directory (positional arguments,
 * no quoting), under `env KILNTAINERS_EXEC=<tok> timeout -s KILL <T>s` when
 * timeout_s > 0. New array or NULL.
 */
json_t *fly_conv_exec_argv(const char *shell, const char *command,
    char *const *args, size_t n_args, const char *workdir, const char *tok,
    unsigned timeout_s);

/*
 * Reads an exec reply {stdout, stderr, exit_code?, exit_signal?}: a
 * missing exit_code is 0; a signal without a code becomes 128 + signal.
 * out/err are malloc'd copies (NUL-terminated). -EPROTO if malformed.
 */
int fly_conv_exec_reply(json_t *reply, char **outp, size_t *out_lenp,
    char **errp, size_t *err_lenp, int *exit_codep);

/* Metadata value `key` of a Machine object, or NULL (borrowed). */
const char *fly_conv_meta(json_t *machine, const char *key);

/* Whether a Machine state counts as gone (destroyed, destroying, ...). */
bool fly_conv_state_gone(const char *state);

/*
 * Fills a Computer from a Machine object (strings malloc'd; free with
 * msc_computer_fini). `fallback_image` is used without the image key.
 */
int fly_conv_computer(json_t *machine, const char *fallback_image,
    Msc__V1__Computer *out);

/* Decodes base64 (whitespace ignored). *outp malloc'd. -EINVAL if bad. */
int fly_conv_b64decode(const char *in, size_t len, char **outp,
    size_t *lenp);

/*
 * The access_token of a flyctl config.yml (~/.fly/config.yml), quotes
 * removed. Returns 0, -ENOENT when absent, -ENOSPC when too long.
 */
int fly_conv_yaml_token(const char *text, char *buf, size_t len);

/* The app name in a state file's text, or -ENOENT. */
int fly_conv_state_app(const char *text, char *buf, size_t len);

#endif /* FLY_CONV_H */
