/*
 * docker_runflags.h - maps `docker run` flags given with --docker-run-flag
 * onto a Docker Engine API create body.
 *
 * The reference passes each flag verbatim to the docker CLI; we speak the
 * API, so we translate the common flags (see the table in docker_runflags.c
 * and README.md) and refuse any other one with a clear startup error.
 * Flags come one per --docker-run-flag, as "--flag=value", "--flag value",
 * "-f value" or a bare boolean "--flag".
 */
#ifndef DOCK_RUNFLAGS_H
#define DOCK_RUNFLAGS_H

#include <stddef.h>

#include <jansson.h>

/*
 * Applies `n` flags (borrowed) to `body` (the /containers/create JSON;
 * borrowed, modified in place: top-level Env, User, WorkingDir, Labels and
 * HostConfig.* keys). Returns 0, or -EINVAL with a message in err such as
 * "unsupported --docker-run-flag '--foo': supported flags are ...".
 * Pure: no I/O, so it can be checked at startup with an empty body.
 */
int dock_runflags_apply(const char *const *flags, size_t n, json_t *body,
    char *err, size_t errlen);

#endif /* DOCK_RUNFLAGS_H */
