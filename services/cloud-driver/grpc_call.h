/*
 * grpc_call.h - a small gRPC client over libcurl: HTTP/2 (TLS with ALPN
 * for https://, prior knowledge h2c for http://), protobuf-c messages in
 * length-prefixed frames, the status from the trailers (or from the
 * headers of a Trailers-Only reply, or from the HTTP status), deadlines
 * sent as grpc-timeout and enforced with curl timeouts, bounded retries
 * with jittered back-off on transient codes, and a bounded receive size.
 *
 * One call is one easy handle: blocking (grpc_unary, grpc_stream) or
 * driven by the caller's curl_multi (grpc_call_*). Thread-safe: calls share
 * nothing. Metadata values (tokens) never appear in errors or logs.
 *
 * Errors are a negative errno (grpc_code_errno of the status; a peer
 * that cannot be reached is -ECONNREFUSED), *codep the gRPC status, and
 * err "<label> <Method>: <CODE>: <message>".
 */
#ifndef GRPC_CALL_H
#define GRPC_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <protobuf-c/protobuf-c.h>

#include "grpc_wire.h"
#include "msc_http.h"       /* msc_now_ms */

/* An endpoint: "https://host[:port]" or "http://host:port" (h2c). */
struct grpc_target {
	char *base;             /* no trailing slash */
	bool h2c;
};

/* -EINVAL for another scheme, -ENOMEM. */
int grpc_target_init(struct grpc_target *t, const char *url);
void grpc_target_fini(struct grpc_target *t);

/* One call's transfer state. */
struct grpc_call {
	CURL *easy;
	struct curl_slist *hdrs;
	char *url;
	uint8_t *body;
	size_t bodylen;
	struct grpc_reader rd;
	struct grpc_status st;
	int (*on_msg)(const uint8_t *, size_t, void *);
	void *arg;
	int cb_rv;              /* on_msg's non-zero result: it stopped */
	uint64_t timeout_ms;
	const char *label;      /* "Modal", in errors */
	const char *method;     /* short name, in errors */
	void *user;             /* the owner's */
};

/*
 * Prepares a call of `path` ("/modal.client.ModalClient/SandboxList")
 * with request `req`, metadata `md` (full header lines, borrowed until
 * fini), a deadline of timeout_ms, and on_msg for each reply message
 * (return non-zero to stop). The easy handle's CURLOPT_PRIVATE is c.
 */
int grpc_call_init(struct grpc_call *c, const struct grpc_target *t,
    const char *path, const ProtobufCMessage *req,
    const struct curl_slist *md, uint64_t timeout_ms, const char *label,
    int (*on_msg)(const uint8_t *, size_t, void *), void *arg);

/*
 * The outcome of a finished transfer (curl result cr): 0 for status OK,
 * on_msg's result when it stopped the call, else a negative errno with
 * *codep and err set.
 */
int grpc_call_result(struct grpc_call *c, CURLcode cr, int *codep,
    char *err, size_t errlen);

/* Frees everything (the easy handle must be out of any multi). */
void grpc_call_fini(struct grpc_call *c);

struct grpc_opts {
	const char *label;
	const struct curl_slist *md;
	uint64_t timeout_ms;    /* per attempt */
	uint64_t deadline_ms;   /* every attempt together; 0: 3 x timeout */
	bool retry;             /* false when it must not run twice */
};

/*
 * A unary call: one request, one reply unpacked into *respp (free with
 * protobuf_c_message_free_unpacked). Blocks.
 */
int grpc_unary(const struct grpc_target *t, const char *path,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    ProtobufCMessage **respp, const struct grpc_opts *o, int *codep,
    char *err, size_t errlen);

/*
 * A server-streaming call: fn(msg, arg) for each reply (borrowed; a
 * non-zero result stops and is returned). Not retried. Blocks.
 */
int grpc_stream(const struct grpc_target *t, const char *path,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    int (*fn)(const ProtobufCMessage *, void *), void *arg,
    const struct grpc_opts *o, int *codep, char *err, size_t errlen);

#endif /* GRPC_CALL_H */
