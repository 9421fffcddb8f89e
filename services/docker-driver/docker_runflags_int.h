/*
 * docker_runflags_int.h - value converters and helpers of
 * docker_runflags_conv.c, which docker_runflags.c (the flag table) and
 * docker_runflags_mount.c (--mount) call; they call nothing back.
 */
#ifndef DOCK_RUNFLAGS_INT_H
#define DOCK_RUNFLAGS_INT_H

#include <stddef.h>

#include <jansson.h>

/*
 * A converter applies one flag value. `body` is the create body and `dst`
 * the object the flag's table row points at (body or its HostConfig).
 * Returns 0, -ENOMEM, or -EINVAL with a detail (without the flag name) in
 * err.
 */
typedef int rf_conv_fn(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen);

rf_conv_fn	rf_conv_add_host;
rf_conv_fn	rf_conv_cpus;
rf_conv_fn	rf_conv_device;
rf_conv_fn	rf_conv_env;
rf_conv_fn	rf_conv_gpus;
rf_conv_fn	rf_conv_label;
rf_conv_fn	rf_conv_log_driver;
rf_conv_fn	rf_conv_log_opt;
rf_conv_fn	rf_conv_mount;
rf_conv_fn	rf_conv_tmpfs;
rf_conv_fn	rf_conv_ulimit;
rf_conv_fn	rf_conv_volume;

/* A base-10 integer, all of v; -EINVAL otherwise. */
int	rf_parse_int(const char *v, long long *out);
/* "512m", "1.5g", "100k", "2GiB": bytes; -EINVAL otherwise. */
int	rf_parse_size(const char *v, long long *out);

/* Get-or-create helpers (docker_runflags_conv.c); NULL on allocation
 * failure. */
json_t	*rf_object(json_t *parent, const char *key);
json_t	*rf_array(json_t *parent, const char *key);

#endif /* DOCK_RUNFLAGS_INT_H */
