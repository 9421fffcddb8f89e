/*
 * msc_rpc.h - gRPC-style calls between services: protobuf-c messages in an
 * msc.v1.Envelope over NNG REQ/REP, asynchronous on both sides.
 *
 * A server serves one protobuf service (its ProtobufCServiceDescriptor)
 * on one URL (inproc://, ipc://, tcp://, tls+tcp://). Over tls+tcp:// a
 * call is answered PERMISSION_DENIED before dispatch unless the role in
 * the caller's certificate may call the method (msc_rpc_roles.h). Each
 * request is received on its own NNG context; the handler runs in an NNG
 * callback and must not block: it answers now or later, from any thread,
 * with msc_call_reply() or msc_call_fail(), exactly once. At most
 * `max_inflight` calls are open at once; later requests wait in NNG's
 * queues (backpressure).
 *
 * A client issues calls on one REQ socket, each on its own context, with
 * a deadline; the callback runs exactly once, on an NNG thread, unless
 * msc_client_call() itself returned an error.
 */
#ifndef MSC_RPC_H
#define MSC_RPC_H

#include <stdbool.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "envelope.pb-c.h"
#include "msc_reason.h"

struct msc_server;
struct msc_call;
struct msc_client;

typedef void (*msc_handler_fn)(void *state, struct msc_call *call,
    const ProtobufCMessage *req);

/* One row of a service's dispatch table; the table ends with {NULL}. */
struct msc_method {
	const char *name;   /* method name as in the .proto, e.g. "Exec" */
	msc_handler_fn fn;
};

/*
 * Listens on `url` and serves `svc` with `methods` (borrowed, must outlive
 * the server). Methods without a row are answered UNIMPLEMENTED, as gRPC
 * does. `state` is passed to the handlers. Returns 0 or a negative errno.
 */
int msc_server_start(const char *url, const ProtobufCServiceDescriptor *svc,
    const struct msc_method *methods, void *state, int max_inflight,
    struct msc_server **sp);

/*
 * Closes the socket and frees the server. Calls still open get up to
 * 2 s to answer first. Blocks. Accepts NULL.
 */
void msc_server_stop(struct msc_server *s);

/* Milliseconds left before the caller's deadline (at least 0). */
int msc_call_remaining_ms(const struct msc_call *call);

/*
 * Bounds the call to `budget_ms` from now (the service's own bound for the
 * method), or to its caller's deadline when that comes first. Returns the
 * milliseconds left afterwards (msc_call_remaining_ms). A call without a
 * caller's deadline is otherwise bounded to 30 s.
 */
int msc_call_bound_ms(struct msc_call *call, int budget_ms);

/* Kept back from a downstream call's deadline, to answer in (at most a
 * quarter of the time left). */
#define MSC_RPC_REPLY_MARGIN_MS 1000

/*
 * The timeout of a call made downstream with `remaining_ms` left of the
 * caller's time: that less the margin above, at most `step_ms` (0: no
 * bound of its own), and at least 1 ms. Deadlines flow down hop by hop,
 * so a call whose caller gave up does not run on below it.
 */
int msc_hop_ms(int remaining_ms, int step_ms);

/* msc_hop_ms of the call's remaining time (msc_call_remaining_ms). */
int msc_call_hop_ms(const struct msc_call *call, int step_ms);

/*
 * Answers the call with `resp` (borrowed: packed before returning) and
 * ends it; the request message is freed and `call` must not be used again.
 */
void msc_call_reply(struct msc_call *call, const ProtobufCMessage *resp);

/* Answers the call with a non-OK status and ends it, like msc_call_reply. */
void msc_call_fail(struct msc_call *call, Msc__V1__Code code,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* msc_call_fail with a machine-readable `reason` in the status. */
void msc_call_fail_reason(struct msc_call *call, Msc__V1__Code code,
    Msc__V1__Reason reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Fails the call with `code`, `reason` and the reason's text. */
void msc_call_fail_as(struct msc_call *call, Msc__V1__Code code,
    Msc__V1__Reason reason);

/*
 * How the message of a call that failed on the way (not answered by the
 * service: the connection broke, the deadline passed) begins.
 */
#define MSC_RPC_CALL_FAILED MSC_REASON_CALL_FAILED

/*
 * The outcome of a client call; `message` is borrowed for the callback.
 * `reason` says why (the service's, or REASON_NOT_SENT, _MAYBE_RAN or
 * _DEADLINE when the call failed on the way: msc_reason_call_failed).
 */
struct msc_status {
	Msc__V1__Code code;
	const char *message;
	Msc__V1__Reason reason;
};

/*
 * `resp` is the unpacked reply (the caller of the callback gives it away:
 * free it with protobuf_c_message_free_unpacked(resp, NULL)), or NULL when
 * st->code is not OK.
 */
typedef void (*msc_reply_fn)(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp);

/*
 * Dials `url` (in the background; the peer may come later). Over
 * tls+tcp:// the server must show a certificate naming `peer_role`
 * ("session", "inventory", "driver:<id>"; msc_tls.h), which is then
 * required; other transports ignore it (NULL is fine).
 */
int msc_client_open(const char *url, const char *peer_role,
    struct msc_client **cp);

/*
 * Whether a connection to the peer is up now. One down for a few seconds
 * is dialed anew in the background (as msc_client_call does when it
 * returns -ENOTCONN), so a periodic check keeps an idle client trying;
 * one down for ten seconds is dialed anew anyway. Does not block.
 */
bool msc_client_up(struct msc_client *c);

/*
 * How many times a connection to the peer came up since the client was
 * opened: a change means the peer may have restarted (and lost what it
 * held in memory).
 */
uint64_t msc_client_connections(struct msc_client *c);

/*
 * Ends the open calls (UNAVAILABLE, their callbacks run on NNG threads)
 * and refuses every later call (-ESHUTDOWN), without waiting: a service
 * that stops ends its own calls this way while its state is still there
 * for their callbacks. c stays valid until msc_client_close.
 */
void msc_client_shutdown(struct msc_client *c);

/*
 * msc_client_shutdown, then waits up to 5 s for the callbacks, then
 * closes the socket. Accepts NULL.
 */
void msc_client_close(struct msc_client *c);

/*
 * Sends `req` (borrowed, packed before returning) to `svc`'s method
 * `method`. `cb(arg, ...)` runs once when the reply arrives or the
 * deadline `timeout_ms` passes (DEADLINE_EXCEEDED), or the peer is gone
 * (UNAVAILABLE). `timeout_ms` 0 sets no deadline of the caller's: the
 * service applies its own bound (msc_call_bound_ms). Returns 0, -ENOENT for an unknown method, -EAGAIN when
 * too many calls are open, -ENOTCONN when the peer has been unreachable
 * for a few seconds (no waiting for the deadline), -ESHUTDOWN after
 * msc_client_shutdown, or -ENOMEM; then cb never runs.
 */
int msc_client_call(struct msc_client *c,
    const ProtobufCServiceDescriptor *svc, const char *method,
    const ProtobufCMessage *req, int timeout_ms, msc_reply_fn cb,
    void *arg);

/*
 * A reply callback for a call whose outcome nobody waits for (a cancel, a
 * release sent on the way out): frees the reply, if any.
 */
void msc_reply_ignore(void *arg, const struct msc_status *st,
    ProtobufCMessage *resp);

/*
 * The blocking form, for command-line tools and tests. On OK, *respp is
 * the reply (caller frees). `msgbuf` receives the status message.
 * Returns the status code.
 */
Msc__V1__Code msc_client_call_sync(struct msc_client *c,
    const ProtobufCServiceDescriptor *svc, const char *method,
    const ProtobufCMessage *req, int timeout_ms, ProtobufCMessage **respp,
    char *msgbuf, size_t msglen);

#endif /* MSC_RPC_H */
