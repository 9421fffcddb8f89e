/*
 * msc_netpolicy.h - a computer's network policy: its mode (none,
 * allowlist, open) and, in allowlist mode, the names it may reach and
 * those it may not, as the operator writes them: "pypi.example" (that
 * name only) or "*.pypi.example" (any name below it, not the name
 * itself). A deny entry wins over an allow entry.
 *
 * Names are ASCII host names (letters, digits, '-', dots between labels),
 * at most 253 bytes, compared without regard to case; an IP literal, a
 * trailing dot, an empty label or any other byte (an IDN is written in
 * its xn-- form) is not a name: a host that is not one is refused, an
 * entry that is not one is an error.
 */
#ifndef MSC_NETPOLICY_H
#define MSC_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>

enum msc_net_mode {
	MSC_NET_NONE = 0,
	MSC_NET_ALLOWLIST = 1,
	MSC_NET_OPEN = 2,
};

enum msc_net_verdict {
	MSC_NET_ALLOWED = 0,    /* an allow entry matched, no deny entry */
	MSC_NET_DENIED,         /* a deny entry matched */
	MSC_NET_UNLISTED,       /* no allow entry matched */
	MSC_NET_BAD_NAME,       /* not a host name (IP literal, ...) */
};

#define MSC_NET_NAME_MAX 253

/* "none", "allowlist", "open". */
const char *msc_net_mode_name(enum msc_net_mode m);
/* 0 and *out, or -EINVAL for another word. */
int msc_net_mode_parse(const char *s, enum msc_net_mode *out);
/* Whether `host` is a host name as above (not an IP literal). */
bool msc_net_host_valid(const char *host);
/* 0, or -EINVAL with why in err, for an allow or deny entry. */
int msc_net_entry_check(const char *entry, char *err, size_t errlen);
/* Whether `entry` (valid) covers `host` (valid). */
bool msc_net_entry_match(const char *entry, const char *host);
/*
 * The verdict for `host` under the lists; *which is the entry that
 * decided (borrowed from the lists) or NULL.
 */
/*
 * The entries of flag values such as "a.example,*.b.example" (commas or
 * spaces between entries), checked and lower-cased, into *out (owned:
 * free each and the array). 0, -EINVAL with why in err, or -ENOMEM.
 */
int msc_net_list_parse(const char *const *vals, size_t n, char ***out,
    size_t *nout, char *err, size_t errlen);
void msc_net_list_free(char **v, size_t n);

enum msc_net_verdict msc_net_decide(const char *const *allow, size_t nallow,
    const char *const *deny, size_t ndeny, const char *host,
    const char **which);

/*
 * The ranges no computer reaches, whatever its mode (the sandbox rules,
 * the policy table, the proxy): private, shared, loopback, link-local,
 * multicast and reserved, as CIDR text, NULL-terminated. The host's own
 * addresses come on top, found at run time.
 */
extern const char *const msc_net_blocked4[];
extern const char *const msc_net_blocked6[];
/*
 * Whether the prefix addr/bits (family AF_INET: 4 bytes, AF_INET6: 16)
 * lies inside one of those ranges. An IPv4-mapped IPv6 address is read
 * as the IPv4 address it maps.
 */
bool msc_net_blocked(int family, const void *addr, unsigned bits);
/* Whether addr/abits lies inside net/nbits (same family, `len` bytes). */
bool msc_net_prefix_within(const void *addr, unsigned abits, const void *net,
    unsigned nbits, size_t len);

#endif
