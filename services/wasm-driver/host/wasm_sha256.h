/* wasm_sha256.h - SHA-256 (FIPS 180-4), for the compiled-module cache. */
#ifndef WASM_SHA256_H
#define WASM_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct wasm_sha256 {
	uint32_t h[8];
	uint64_t len;           /* bytes hashed so far */
	uint8_t block[64];
	size_t used;            /* bytes waiting in block */
};

void wasm_sha256_init(struct wasm_sha256 *s);
void wasm_sha256_update(struct wasm_sha256 *s, const void *data, size_t len);

/* Finishes s and writes the digest as 64 lowercase hex digits and a NUL. */
void wasm_sha256_hex(struct wasm_sha256 *s, char out[65]);

#endif /* WASM_SHA256_H */
