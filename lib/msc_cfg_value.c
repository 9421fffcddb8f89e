/*
 * msc_cfg_value.c - the words of option values that the parser, its
 * parts and every backend's checks read (msc_cfg.h): booleans and sizes,
 * and the error line they print. It calls nothing of the parser.
 */
#include "msc_cfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
msc_cfg_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool
msc_cfg_truthy(const char *s)
{
	return s != NULL &&
	    (strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 ||
		strcasecmp(s, "yes") == 0 || strcasecmp(s, "on") == 0);
}

int
msc_cfg_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmgt";
	const char *u;
	double v, mul = 1;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	/* Digits and a point only: no exponent, hex, inf or nan. */
	if (errno != 0 || !(v >= 0) ||
	    end != s + strspn(s, "0123456789."))
		return -EINVAL;
	if (*end != '\0' && (u = strchr(units, tolower(
	    (unsigned char)*end))) != NULL) {
		for (const char *p = units; p <= u; p++)
			mul *= 1024;
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0' || v * mul >= 0x1p63)
		return -EINVAL;
	*out = (uint64_t)(v * mul);
	return 0;
}

void
msc_cfg_size_text(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB",
		"TiB" };
	int u = 0;

	while (u < 4 && n >= 1024 && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu %s", (unsigned long long)n, units[u]);
}
