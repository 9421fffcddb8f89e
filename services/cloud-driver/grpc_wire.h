/*
 * grpc_wire.h - the pure parts of gRPC over HTTP/2 (no I/O): the
 * length-prefixed message framing, an incremental frame reader, the
 * grpc-timeout header, status codes and their names, the percent-encoded
 * grpc-message, the HTTP status fallback mapping and response header
 * lines (initial headers and trailers alike). Unit-tested in
 * tests/unit/test_grpc_wire.c.
 */
#ifndef GRPC_WIRE_H
#define GRPC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Status codes (google.rpc.Code). */
enum grpc_code {
	GRPC_OK = 0,
	GRPC_CANCELLED = 1,
	GRPC_UNKNOWN = 2,
	GRPC_INVALID_ARGUMENT = 3,
	GRPC_DEADLINE_EXCEEDED = 4,
	GRPC_NOT_FOUND = 5,
	GRPC_ALREADY_EXISTS = 6,
	GRPC_PERMISSION_DENIED = 7,
	GRPC_RESOURCE_EXHAUSTED = 8,
	GRPC_FAILED_PRECONDITION = 9,
	GRPC_ABORTED = 10,
	GRPC_OUT_OF_RANGE = 11,
	GRPC_UNIMPLEMENTED = 12,
	GRPC_INTERNAL = 13,
	GRPC_UNAVAILABLE = 14,
	GRPC_DATA_LOSS = 15,
	GRPC_UNAUTHENTICATED = 16,
};

/* Largest message we accept from a peer (the SDKs' limit is 100 MiB). */
#define GRPC_MAX_RECV (64u << 20)

/* "UNAVAILABLE", ...; "CODE_<n>" style text for unknown codes. */
const char *grpc_code_name(int code);

/* Whether a call that failed with `code` may be sent again. */
bool grpc_code_retryable(int code);

/* A negative errno for a status: -EACCES, -ENOENT, -EEXIST, ... */
int grpc_code_errno(int code);

/* The status for a non-200 HTTP reply without grpc-status (gRPC spec). */
int grpc_code_from_http(long http_status);

/*
 * Frames one message: flag byte 0, 4-byte big-endian length, the bytes.
 * *outp is malloc'd. 0, -EMSGSIZE or -ENOMEM.
 */
int grpc_frame(const uint8_t *msg, size_t len, uint8_t **outp,
    size_t *lenp);

/* The grpc-timeout value for ms ("1500m", "3600S": at most 8 digits). */
void grpc_timeout_value(uint64_t ms, char *buf, size_t len);

/* Decodes a percent-encoded grpc-message into buf (NUL-terminated). */
void grpc_message_decode(const char *in, size_t len, char *buf,
    size_t buflen);

/* An incremental reader of response frames. */
struct grpc_reader {
	uint8_t hdr[5];
	size_t hdr_have;
	uint8_t *msg;
	size_t need, have;
	size_t max;             /* 0: GRPC_MAX_RECV */
};

/*
 * Feeds bytes; calls fn(msg, len, arg) for each complete message (msg is
 * borrowed for the call). Returns 0, fn's non-zero result, -EPROTO for a
 * compressed frame, -EMSGSIZE for one over the limit, or -ENOMEM.
 */
int grpc_reader_feed(struct grpc_reader *r, const char *p, size_t len,
    int (*fn)(const uint8_t *, size_t, void *), void *arg);

/* Whether a frame is half read (a stream that ends there was cut). */
bool grpc_reader_partial(const struct grpc_reader *r);
void grpc_reader_fini(struct grpc_reader *r);

/* What the response headers and trailers said. */
struct grpc_status {
	long http;              /* ":status" of the reply, 0 until seen */
	int code;               /* grpc-status, -1 until seen */
	char message[512];      /* grpc-message, decoded */
	bool grpc_type;         /* content-type application/grpc[+...] */
};

void grpc_status_init(struct grpc_status *s);

/*
 * Reads one header or trailer line as libcurl hands it over ("HTTP/2
 * 200\r\n", "grpc-status: 0\r\n", ...) into s.
 */
void grpc_status_line(struct grpc_status *s, const char *line, size_t len);

#endif /* GRPC_WIRE_H */
