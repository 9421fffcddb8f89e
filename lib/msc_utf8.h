/* msc_utf8.h - UTF-8 checking and repair. */
#ifndef MSC_UTF8_H
#define MSC_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when buf[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
bool msc_utf8_valid(const char *buf, size_t len);

/*
 * Returns a new NUL-terminated copy of buf[0..len) in which every maximal
 * ill-formed subsequence is replaced by U+FFFD (as Python's
 * errors="replace" does) and NUL bytes are kept. Caller frees. *outlen
 * (optional) gets the length. NULL when out of memory.
 */
char *msc_utf8_repair(const char *buf, size_t len, size_t *outlen);

#endif /* MSC_UTF8_H */
