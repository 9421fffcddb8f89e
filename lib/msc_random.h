/* msc_random.h - random bytes from getrandom(2), as bytes, hex or a number. */
#ifndef MSC_RANDOM_H
#define MSC_RANDOM_H

#include <stddef.h>
#include <stdint.h>

/* Fills buf with n random bytes. Does not fail (Linux >= 3.17). */
void msc_random_bytes(void *buf, size_t n);

/*
 * Writes n random bytes as 2n lowercase hex digits and a NUL to out,
 * which must hold 2n + 1 characters.
 */
void msc_random_hex(char *out, size_t n);

/* A uniformly random number in [0, bound); 0 when bound is 0. */
uint32_t msc_random_uniform(uint32_t bound);

#endif /* MSC_RANDOM_H */
