/*
 * msc_principal.c - a principal's tag (msc_principal.h): the first 128
 * bits of SHA-256 over a fixed prefix and the name, in hex.
 */
#include "msc_principal.h"

#include <stdio.h>
#include <string.h>

#include <mbedtls/sha256.h>

#define TAG_PREFIX "kilntainers principal\n"

void
msc_principal_tag(const char *name, char out[MSC_PRINCIPAL_TAG_LEN + 1])
{
	mbedtls_sha256_context c;
	unsigned char sum[32];

	out[0] = '\0';
	if (name == NULL || name[0] == '\0')
		return;
	mbedtls_sha256_init(&c);
	mbedtls_sha256_starts_ret(&c, 0);
	mbedtls_sha256_update_ret(&c, (const unsigned char *)TAG_PREFIX,
	    strlen(TAG_PREFIX));
	mbedtls_sha256_update_ret(&c, (const unsigned char *)name,
	    strlen(name));
	mbedtls_sha256_finish_ret(&c, sum);
	mbedtls_sha256_free(&c);
	for (int i = 0; i < MSC_PRINCIPAL_TAG_LEN / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", sum[i]);
}

bool
msc_principal_may(const char *owner, const char *caller)
{
	if (owner == NULL || owner[0] == '\0' || caller == NULL ||
	    caller[0] == '\0')
		return true;
	return caller != NULL && strcmp(owner, caller) == 0;
}

bool
msc_principal_valid(const char *p)
{
	size_t n = strnlen(p, 65);

	return n <= 64 && strspn(p, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@") == n;
}
