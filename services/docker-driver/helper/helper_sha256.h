/*
 * helper_sha256.h - SHA-256 for the exec helper's file commands
 * (helper_file.c; the wasm runners run them too, host/runner_files.c):
 * static, libc only, streamed in pieces.
 */
#ifndef MSC_HELPER_SHA256_H
#define MSC_HELPER_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct hx_sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t nbuf;
};

void hx_sha256_init(struct hx_sha256 *s);
void hx_sha256_add(struct hx_sha256 *s, const void *p, size_t n);
/* Finishes s and writes the lowercase hex digest, NUL-terminated. */
void hx_sha256_hex(struct hx_sha256 *s, char out[65]);

#endif /* MSC_HELPER_SHA256_H */
