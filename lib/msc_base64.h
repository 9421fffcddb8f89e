/*
 * msc_base64.h - strict base64 (RFC 4648: the standard alphabet, padded,
 * no line breaks) decoding and encoding.
 */
#ifndef MSC_BASE64_H
#define MSC_BASE64_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes in[0..len) into *out (malloc'd, NUL-terminated after *outlen
 * bytes; the caller frees). 0, -EINVAL when it is not strict base64, or
 * -ENOMEM.
 */
int msc_base64_decode(const char *in, size_t len, uint8_t **out,
    size_t *outlen);

/*
 * Encodes in[0..len) into *out (malloc'd, NUL-terminated; the caller
 * frees): the standard alphabet, padded, no line breaks. 0 or -ENOMEM.
 */
int msc_base64_encode(const uint8_t *in, size_t len, char **out);

#endif /* MSC_BASE64_H */
