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
#include <stdint.h>

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
 * dock_fx_run in steps, for a caller that waits for many commands at
 * once (docker_fxloop.h). dock_fx_begin connects to the helper in `dir`
 * and sends the request (blocking, at most a few seconds): *cp is then
 * the command in flight; it fails as dock_fx_run before the request was
 * delivered. req's stdin stays borrowed until dock_fx_end; the rest of
 * req is not used after. Output is reported to `fn` when set
 * (dock_fx_on_output) and, with req->live, to the thread's current
 * command. Then, until it ends: poll dock_fx_fd for dock_fx_events
 * (computed anew each time) until dock_fx_deadline (msc_now_ms), and hand
 * what came to dock_fx_step: 0 to go on, 1 when it ended (res->outcome
 * set), or a negative errno with err set. dock_fx_end takes what the last
 * step returned (or 1 with res->outcome DOCK_EXEC_TIMEOUT or _CANCELLED
 * set by the caller), kills a command that did not exit, gives res its
 * output, and frees c: 0 or the negative errno, as dock_fx_run. res must
 * start zeroed, its exit_code -1.
 */
struct dock_fx;
int dock_fx_begin(const char *dir, const struct dock_exec_req *req,
    struct dock_fx **cp, char *err, size_t errlen);
void dock_fx_on_output(struct dock_fx *c, void (*fn)(void *arg,
    const void *p, size_t n), void *arg);
/*
 * The output that the commands sharing a budget may hold at once, over
 * all of them; with k principals' commands holding output
 * (dock_fx_for_principal; none counted for ""), each principal's at most
 * an equal share, 1/(k + 1) of it, and one such share left free for
 * another principal, so that principals together cannot take what a
 * newcomer's print.
 * A command charges its output as it comes; a charge that would pass
 * either ends it with -ENOBUFS and err naming --driver-output-buffer.
 * The charge moves with the output into the result (res->charge) and is
 * held until dock_exec_res_fini or dock_fx_charge_release, so a result
 * kept (a deferred end) still counts. Thread-safe. dock_fx_charge_add
 * charges n more bytes to ch (principal's, on its first charge).
 */
int dock_fx_budget_new(uint64_t cap, struct dock_fx_budget **bp);
/* After every charge against b is given back. Accepts NULL. */
void dock_fx_budget_free(struct dock_fx_budget *b);
int dock_fx_charge_add(struct dock_fx_budget *b, const char *principal,
    struct dock_fx_charge *ch, uint64_t n, char *err, size_t errlen);
void dock_fx_charge_release(struct dock_fx_charge *ch);
void dock_fx_set_budget(struct dock_fx *c, struct dock_fx_budget *b);
/* Whose command c runs (a principal tag, msc_principal.h); default "". */
void dock_fx_for_principal(struct dock_fx *c, const char *principal);
int dock_fx_fd(const struct dock_fx *c);
short dock_fx_events(struct dock_fx *c);
int64_t dock_fx_deadline(const struct dock_fx *c);
int dock_fx_step(struct dock_fx *c, short revents, struct dock_exec_res *res,
    char *err, size_t errlen);
int dock_fx_end(struct dock_fx *c, int rc, struct dock_exec_res *res,
    char *err, size_t errlen);

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
