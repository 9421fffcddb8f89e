/*
 * docker_fastexec.h - the driver side of the fast exec path: run one
 * command through the exec helper listening in a folder: the computer's
 * /.msc, seen through the helper's /proc entry (helper/msc_exec_helper.c,
 * wire format in fastexec_wire.h).
 *
 * Everything the helper sends is untrusted (the sandboxed code can kill
 * or replace it): frames are bounded and validated, memory is bounded by
 * the output limit plus one frame, every wait has a deadline, and the
 * socket is opened without following symlinks (a socket the container
 * swapped for a symlink to a host socket is refused).
 */
#ifndef DOCK_FASTEXEC_H
#define DOCK_FASTEXEC_H

#include <stddef.h>

#include "docker_api.h"

/* Where the socket's tmpfs and the helper are inside the container. */
#define DOCK_FX_MOUNT_DIR	"/.msc"
#define DOCK_FX_MOUNT_HELPER	"/.msc-helper"
#define DOCK_FX_SOCK_NAME	"sock"

/*
 * Runs `req` (req->container is not used) through the helper whose socket
 * is `dir`/sock, with the result contract of dock_exec_run(): on success
 * res owns out/err (free with dock_exec_res_fini()), outcome says EXITED,
 * TIMEOUT or LIMIT, and on TIMEOUT/LIMIT the helper killed the command's
 * process group and every process carrying its marker. The helper is
 * given req->timeout_ms; the client waits DOCK_FX_GRACE_MS longer, then
 * gives up (reported as TIMEOUT; closing the connection makes a live
 * helper kill the command).
 *
 * Returns -ENOTCONN when the helper could not be reached before the
 * request was delivered (nothing ran: the caller may fall back to the
 * Engine API exec); after that, -ECONNRESET when the helper went away
 * mid-command and -EPROTO when it sent something invalid, with a one-line
 * message in err. Blocks; thread-safe.
 */
#define DOCK_FX_GRACE_MS	3000
int dock_fx_run(const char *dir, const struct dock_exec_req *req,
    struct dock_exec_res *res, char *err, size_t errlen);

/*
 * Whether a helper accepts connections in `dir` now: 0, or -ENOTCONN.
 * Does not block beyond a connect on a unix socket.
 */
int dock_fx_probe(const char *dir);

/*
 * Connects (non-blocking) to the socket `sock` in `dir` without following
 * a symlink there: the fd, or -ENOTCONN.
 */
int dock_fx_connect(const char *dir, const char *sock);

#endif /* DOCK_FASTEXEC_H */
