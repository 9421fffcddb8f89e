/*
 * cloud_helper.h - the exec helper's plain-command modes (background
 * processes, issue 28; file tools, issue 29) on a cloud sandbox.
 *
 * The edge asks for them as an Exec of "/.msc-helper --process|--file
 * ...", which the docker backend mounts in its computers. A cloud sandbox
 * has no such mount, so the driver copies the same static helper binary
 * into the sandbox on first need (a plain command with the binary on its
 * stdin, into /tmp under a name that carries its digest) and runs the
 * asked mode from there. The state (process folders, logs) lives in the
 * sandbox as on Docker, so it outlives the call, the connection and the
 * server.
 */
#ifndef CLOUD_HELPER_H
#define CLOUD_HELPER_H

#include <stddef.h>

#include "driver.pb-c.h"

/* A driver's own Exec (borrowed request; res filled on 0). */
typedef int (*cloud_exec_fn)(void *be, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *res, char *err, size_t errlen);

/*
 * Runs req through exec: unchanged unless it names the helper (args[0] is
 * "/.msc-helper"), which then runs from its copy in the sandbox, copied
 * there first when missing. Same contract as exec.
 */
int cloud_helper_exec(cloud_exec_fn exec, void *be,
    const Msc__V1__ExecRequest *req, Msc__V1__ExecResult *res, char *err,
    size_t errlen);

/*
 * The background processes running in computer id (for Restart, Reset
 * and Delete: Computer.processes_ended), through the helper's list; a
 * negative errno when not known (-ENOENT: the helper was never copied
 * in, so none were started). Never copies the helper in.
 */
int cloud_helper_processes(cloud_exec_fn exec, void *be, const char *id);

#endif /* CLOUD_HELPER_H */
