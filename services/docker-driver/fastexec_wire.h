/*
 * fastexec_wire.h - the wire format between the docker-driver and the exec
 * helper that runs as PID 1 inside each container (helper/msc_exec_helper.c).
 *
 * One exec is one connection to the helper's unix socket. Everything is a
 * frame: an 8-byte header (byte 0 the type, bytes 1-3 zero, bytes 4-7 the
 * payload length, big-endian) and a payload of at most the type's maximum.
 *
 *   driver -> helper: REQ, then STDIN* and STDIN_EOF (when FX_F_STDIN),
 *                     KILL at any time (the driver gave up).
 *   helper -> driver: STDOUT* / STDERR* interleaved, then one EXIT or ERROR.
 *
 * Closing the connection before EXIT makes the helper kill the command.
 * The parser is strict: nonzero reserved bytes, an unknown type, a type
 * sent in the wrong direction, or a length over the type's maximum are
 * -EPROTO, so neither side ever buffers more than FX_REQ_MAX bytes for one
 * frame. Used by both sides; depends on libc only (the helper is static).
 */
#ifndef FASTEXEC_WIRE_H
#define FASTEXEC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FX_MAGIC	0x4d534358u	/* "MSCX" */
#define FX_VERSION	1u
#define FX_HDR_LEN	8
#define FX_DATA_MAX	65536u		/* STDIN, STDOUT, STDERR payloads */
#define FX_REQ_MAX	(4u << 20)	/* argv + env + workdir */
#define FX_ERR_MAX	4096u		/* ERROR text */
#define FX_EXIT_LEN	8u
#define FX_STRS_MAX	65536u		/* argv + env entries */
#define FX_MARKER_VAR	"KILNTAINERS_EXEC"

enum fx_type {
	FX_REQ = 1,
	FX_STDIN = 2,
	FX_STDIN_EOF = 3,
	FX_KILL = 4,
	FX_STDOUT = 17,
	FX_STDERR = 18,
	FX_EXIT = 19,
	FX_ERROR = 20,
};

/* REQ flags. */
#define FX_F_STDIN	1u	/* STDIN frames follow; else stdin is empty */

/* EXIT outcomes (the same values as enum dock_exec_outcome). */
enum fx_outcome { FX_EXITED = 0, FX_TIMEOUT = 1, FX_LIMIT = 2 };

struct fx_req {
	uint32_t flags;
	uint32_t timeout_ms;		/* 0: none */
	uint64_t output_limit;		/* combined stdout+stderr bytes */
	const char *workdir;		/* NULL or "": the helper's cwd */
	const char *const *argv;	/* NULL-terminated, at least one */
	const char *const *env;		/* NULL-terminated "K=V" or NULL */
};

/* A decoded REQ: the pointers point into `block`, owned by the struct. */
struct fx_req_dec {
	struct fx_req req;
	char **argv;
	char **env;
	void *block;
};

/*
 * Writes a header. Returns 0, or -EINVAL when len is over the type's
 * maximum (or the type unknown).
 */
int fx_hdr_encode(uint8_t out[FX_HDR_LEN], int type, uint32_t len);

/*
 * Reads a header. `from_helper` says which direction is expected. Returns
 * 0 with *typep and *lenp, or -EPROTO.
 */
int fx_hdr_decode(const uint8_t in[FX_HDR_LEN], bool from_helper,
    int *typep, uint32_t *lenp);

/* The largest payload a frame of `type` may carry, 0 for unknown types. */
uint32_t fx_type_max(int type);

/*
 * Encodes a whole REQ frame (header included) into a malloc'd buffer the
 * caller frees. -EINVAL for a request that cannot be sent (no argv, a
 * string over the size bounds, an env entry without '='), -ENOMEM.
 */
int fx_req_encode(const struct fx_req *r, uint8_t **bufp, size_t *lenp);

/*
 * Decodes a REQ payload (no header), validating every length, count and
 * string (no NUL inside, argv non-empty, env entries "K=V", workdir empty
 * or absolute). On success the caller owns *out and frees it with
 * fx_req_dec_fini(). -EPROTO for a malformed payload, -ENOMEM.
 */
int fx_req_decode(const uint8_t *p, size_t len, struct fx_req_dec *out);
void fx_req_dec_fini(struct fx_req_dec *d);

/* EXIT payload: outcome and exit status (0..255). */
void fx_exit_encode(uint8_t out[FX_EXIT_LEN], int outcome, int code);
/* -EPROTO unless outcome is known and 0 <= code <= 255. */
int fx_exit_decode(const uint8_t *p, size_t len, int *outcomep, int *codep);

/*
 * An incremental frame reader with bounded memory: feed it bytes as they
 * arrive; it hands back whole frames. The payload buffer grows to the
 * largest frame seen, never past fx_type_max() of its type.
 */
struct fx_parser {
	bool from_helper;
	uint8_t hdr[FX_HDR_LEN];
	size_t hdr_have;
	int type;
	uint32_t len, got;
	uint8_t *buf;
	size_t cap;
};

struct fx_frame {
	int type;
	const uint8_t *p;		/* borrowed from the parser */
	uint32_t len;
};

void fx_parser_init(struct fx_parser *ps, bool from_helper);
void fx_parser_fini(struct fx_parser *ps);

/*
 * Consumes bytes from data[0..n) into the parser, stopping after one whole
 * frame. *usedp says how many bytes were consumed. Returns 1 with *f set
 * (valid until the next call), 0 when all n bytes were consumed without
 * completing a frame, -EPROTO for a bad header, -ENOMEM.
 */
int fx_parse(struct fx_parser *ps, const uint8_t *data, size_t n,
    size_t *usedp, struct fx_frame *f);

#endif /* FASTEXEC_WIRE_H */
