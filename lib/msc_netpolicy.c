/*
 * msc_netpolicy.c - network policy names and lists (msc_netpolicy.h).
 */
#include "msc_netpolicy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const mode_names[] = { "none", "allowlist", "open" };

const char *
msc_net_mode_name(enum msc_net_mode m)
{
	return (unsigned)m < 3 ? mode_names[m] : "none";
}

int
msc_net_mode_parse(const char *s, enum msc_net_mode *out)
{
	for (unsigned i = 0; s != NULL && i < 3; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*out = (enum msc_net_mode)i;
			return 0;
		}
	return -EINVAL;
}

static bool
ldh(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-';
}

bool
msc_net_host_valid(const char *host)
{
	size_t len, label = 0, labels = 0;
	const char *last = host;
	bool digits_only = true;

	if (host == NULL || (len = strlen(host)) == 0 ||
	    len > MSC_NET_NAME_MAX)
		return false;
	for (const char *p = host;; p++) {
		if (*p == '.' || *p == '\0') {
			/* No empty label (and so no trailing dot), none
			 * over 63 bytes, none starting or ending in '-'. */
			if (label == 0 || label > 63 || p[-1] == '-' ||
			    *(p - label) == '-')
				return false;
			labels++;
			if (*p == '\0')
				break;
			last = p + 1;
			label = 0;
			continue;
		}
		if (!ldh(*p))
			return false;
		label++;
	}
	/* A last label of digits only is an IP literal (or a disguise of
	 * one: 0x7f.1, 2130706433); a single label is no public name. */
	for (const char *p = last; *p != '\0'; p++)
		if (!(*p >= '0' && *p <= '9'))
			digits_only = false;
	if (strncasecmp(last, "0x", 2) == 0)
		digits_only = true;
	return labels >= 2 && !digits_only;
}

int
msc_net_entry_check(const char *entry, char *err, size_t errlen)
{
	const char *name = entry;

	if (entry != NULL && strncmp(entry, "*.", 2) == 0)
		name = entry + 2;
	if (msc_net_host_valid(name))
		return 0;
	snprintf(err, errlen, "'%s' is not a domain name or a wildcard such "
	    "as *.pypi.example (ASCII letters, digits, '-' and dots, no IP "
	    "address, no trailing dot; write an IDN as xn--)",
	    entry != NULL ? entry : "");
	return -EINVAL;
}

bool
msc_net_entry_match(const char *entry, const char *host)
{
	size_t hl = strlen(host), el;

	if (strncmp(entry, "*.", 2) != 0)
		return strcasecmp(entry, host) == 0;
	entry++;                        /* ".pypi.example" */
	el = strlen(entry);
	return hl > el && strcasecmp(host + hl - el, entry) == 0;
}

enum msc_net_verdict
msc_net_decide(const char *const *allow, size_t nallow,
    const char *const *deny, size_t ndeny, const char *host,
    const char **which)
{
	*which = NULL;
	if (!msc_net_host_valid(host))
		return MSC_NET_BAD_NAME;
	for (size_t i = 0; i < ndeny; i++)
		if (msc_net_entry_match(deny[i], host)) {
			*which = deny[i];
			return MSC_NET_DENIED;
		}
	for (size_t i = 0; i < nallow; i++)
		if (msc_net_entry_match(allow[i], host)) {
			*which = allow[i];
			return MSC_NET_ALLOWED;
		}
	return MSC_NET_UNLISTED;
}

void
msc_net_list_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int
msc_net_list_parse(const char *const *vals, size_t n, char ***out,
    size_t *nout, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		char *copy = strdup(vals[i]), *save = NULL, *tok;

		if (copy == NULL)
			return -ENOMEM;
		for (tok = strtok_r(copy, ", ", &save); tok != NULL;
		    tok = strtok_r(NULL, ", ", &save)) {
			char **grown, *e;

			if (msc_net_entry_check(tok, err, errlen) != 0) {
				free(copy);
				return -EINVAL;
			}
			grown = realloc(*out, (*nout + 1) * sizeof(**out));
			if (grown != NULL)
				*out = grown;
			if (grown == NULL || (e = strdup(tok)) == NULL) {
				free(copy);
				return -ENOMEM;
			}
			for (char *p = e; *p != '\0'; p++)
				if (*p >= 'A' && *p <= 'Z')
					*p = (char)(*p - 'A' + 'a');
			(*out)[(*nout)++] = e;
		}
		free(copy);
	}
	return 0;
}

const char *const msc_net_blocked4[] = { "0.0.0.0/8", "10.0.0.0/8",
	"100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
	"192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/3",
	NULL };
const char *const msc_net_blocked6[] = { "::/127", "::ffff:0:0/96",
	"64:ff9b:1::/48", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
	NULL };

bool
msc_net_prefix_within(const void *addr, unsigned abits, const void *net,
    unsigned nbits, size_t len)
{
	const unsigned char *a = addr, *n = net;

	if (abits < nbits || nbits > len * 8)
		return false;
	for (unsigned i = 0; i < nbits; i++) {
		unsigned mask = 0x80u >> (i % 8);

		if ((a[i / 8] & mask) != (n[i / 8] & mask))
			return false;
	}
	return true;
}

/* "ADDR/BITS" of `family` into net and *bits; -EINVAL if it is not one. */
static int
parse_cidr(int family, const char *cidr, unsigned char *net, unsigned *bits)
{
	char text[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(cidr, '/');
	size_t n = slash != NULL ? (size_t)(slash - cidr) : 0;

	if (slash == NULL || n >= sizeof(text))
		return -EINVAL;
	memcpy(text, cidr, n);
	text[n] = '\0';
	*bits = (unsigned)strtoul(slash + 1, NULL, 10);
	return inet_pton(family, text, net) == 1 ? 0 : -EINVAL;
}

bool
msc_net_blocked(int family, const void *addr, unsigned bits)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0xff, 0xff };
	const char *const *list = family == AF_INET ? msc_net_blocked4 :
	    msc_net_blocked6;
	size_t len = family == AF_INET ? 4 : 16;
	unsigned char net[16];
	unsigned nbits;

	if (family == AF_INET6 && bits >= 96 && memcmp(addr, mapped, 12) == 0)
		return msc_net_blocked(AF_INET, (const unsigned char *)addr + 12,
		    bits - 96);
	for (size_t i = 0; list[i] != NULL; i++)
		if (parse_cidr(family, list[i], net, &nbits) == 0 &&
		    msc_net_prefix_within(addr, bits, net, nbits, len))
			return true;
	return false;
}
