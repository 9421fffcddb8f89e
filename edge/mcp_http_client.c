/*
 * mcp_http_client.c - whose share a connection counts in (the per-client
 * connection cap of mcp_http_conn.c): its peer's address, an IPv6 one by
 * its /64 (what one host is usually given); or, for a request that came
 * through a reverse proxy the operator trusts (--trusted-proxy,
 * KILNTAINERS_TRUSTED_PROXIES: addresses or ADDR/PREFIX), the client its
 * X-Forwarded-For header names, else its Forwarded header. From anyone
 * else those headers are ignored: a client cannot pick the share it is
 * counted in.
 *
 * A proxy appends the address it received the request from to what the
 * request already carried, so the list is read from its end: the first
 * address that is not a trusted proxy is the client; what lies to its
 * left was written by that client and is not believed. A proxy that
 * names no usable address (Forwarded's "unknown" or an obfuscated name)
 * leaves the request counted in the proxy's own share.
 */
#include "mcp_http_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "msc_cfg.h"

#define MAX_HEADER_LINES 16     /* of one forwarding header, read */

struct http_proxy {
	struct http_addr a;
	unsigned prefix;              /* leading bits that must match */
};

/* Parses a numeric address (v4, v6, v4-mapped v6 as v4). */
static bool
addr_parse(const char *s, size_t len, struct http_addr *a)
{
	char buf[INET6_ADDRSTRLEN];
	unsigned char v6[16];

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, buf, a->b) == 1) {
		a->family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, buf, v6) != 1)
		return false;
	if (IN6_IS_ADDR_V4MAPPED((struct in6_addr *)v6)) {
		a->family = AF_INET;
		memcpy(a->b, v6 + 12, 4);
	} else {
		a->family = AF_INET6;
		memcpy(a->b, v6, 16);
	}
	return true;
}

bool
http_addr_from_sockaddr(const struct sockaddr *sa, struct http_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa == NULL)
		return false;
	if (sa->sa_family == AF_INET) {
		a->family = AF_INET;
		memcpy(a->b, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	if (sa->sa_family != AF_INET6)
		return false;
	const struct in6_addr *v6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (IN6_IS_ADDR_V4MAPPED(v6)) {
		a->family = AF_INET;
		memcpy(a->b, v6->s6_addr + 12, 4);
	} else {
		a->family = AF_INET6;
		memcpy(a->b, v6->s6_addr, 16);
	}
	return true;
}

void
http_addr_owner(const struct http_addr *a, char *buf, size_t len)
{
	unsigned char net[16] = { 0 };
	char text[INET6_ADDRSTRLEN];

	if (a->family == AF_INET) {
		inet_ntop(AF_INET, a->b, text, sizeof(text));
		snprintf(buf, len, "%s", text);
		return;
	}
	memcpy(net, a->b, 8);         /* its /64 */
	inet_ntop(AF_INET6, net, text, sizeof(text));
	snprintf(buf, len, "%s/64", text);
}

static bool
proxy_match(const struct http_proxy *p, const struct http_addr *a)
{
	unsigned whole = p->prefix / 8, rest = p->prefix % 8;

	if (p->a.family != a->family || memcmp(p->a.b, a->b, whole) != 0)
		return false;
	return rest == 0 || ((p->a.b[whole] ^ a->b[whole]) &
	    (0xff << (8 - rest))) == 0;
}

bool
http_proxy_trusted(const struct edge_http *h, const struct http_addr *a)
{
	for (size_t i = 0; i < h->nproxies; i++)
		if (proxy_match(&h->proxies[i], a))
			return true;
	return false;
}

/* One "ADDR" or "ADDR/PREFIX" entry; false when it is neither. */
static bool
proxy_parse(const char *s, struct http_proxy *p)
{
	const char *slash = strchr(s, '/');
	size_t alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	unsigned max;
	char *end;
	long bits;

	if (!addr_parse(s, alen, &p->a))
		return false;
	max = p->a.family == AF_INET ? 32 : 128;
	p->prefix = max;
	if (slash == NULL)
		return true;
	/* A v4-mapped entry's prefix counts the v6 bits. */
	if (p->a.family == AF_INET && memchr(s, ':', alen) != NULL)
		max = 128;
	errno = 0;
	bits = strtol(slash + 1, &end, 10);
	if (slash[1] == '\0' || *end != '\0' || errno != 0 || bits < 0 ||
	    bits > (long)max)
		return false;
	if (max == 128 && p->a.family == AF_INET)
		bits = bits > 96 ? bits - 96 : 0;
	p->prefix = (unsigned)bits;
	return true;
}

/* Adds each entry of list (comma or space separated); -EINVAL on a bad one. */
static int
proxies_add(struct edge_http *h, size_t cap, const char *list,
    const char *from)
{
	char *copy = strdup(list), *save = NULL;

	if (copy == NULL)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ", ", &save); t != NULL;
	     t = strtok_r(NULL, ", ", &save)) {
		if (h->nproxies == cap ||
		    !proxy_parse(t, &h->proxies[h->nproxies])) {
			msc_cfg_error("%s: '%s' is not an IP address or "
			    "ADDR/PREFIX.", from, t);
			free(copy);
			return -EINVAL;
		}
		h->nproxies++;
	}
	free(copy);
	return 0;
}

int
http_proxies_init(struct edge_http *h)
{
	const struct msc_cfg *cfg = h->cfg;
	const char *env = getenv("KILNTAINERS_TRUSTED_PROXIES");
	size_t cap = env != NULL ? strlen(env) / 2 + 1 : 0;
	int rv = 0;

	/* At most one entry per two bytes of each list. */
	for (size_t i = 0; i < cfg->n_trusted_proxies; i++)
		cap += strlen(cfg->trusted_proxies[i]) / 2 + 1;
	if (cap == 0)
		return 0;
	if ((h->proxies = calloc(cap, sizeof(*h->proxies))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; rv == 0 && i < cfg->n_trusted_proxies; i++)
		rv = proxies_add(h, cap, cfg->trusted_proxies[i],
		    "--trusted-proxy");
	if (rv == 0 && env != NULL)
		rv = proxies_add(h, cap, env, "KILNTAINERS_TRUSTED_PROXIES");
	return rv;
}

/*
 * The values of one header, its last MAX_HEADER_LINES lines in order
 * (borrowed): the proxies' own are the last, whatever a client wrote
 * before them.
 */
struct header_lines {
	const char *name;
	const char *v[MAX_HEADER_LINES];
	int n;
	bool cut;                     /* earlier lines were dropped */
};

static enum MHD_Result
collect_line(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct header_lines *hl = cls;

	(void)kind;
	if (strcasecmp(key, hl->name) != 0 || value == NULL)
		return MHD_YES;
	if (hl->n == MAX_HEADER_LINES) {
		memmove(&hl->v[0], &hl->v[1], (MAX_HEADER_LINES - 1) *
		    sizeof(hl->v[0]));
		hl->n--;
		hl->cut = true;
	}
	hl->v[hl->n++] = value;
	return MHD_YES;
}

/*
 * The node of one element of a forwarding list (s, len: trimmed):
 * X-Forwarded-For's is the element ("a.b.c.d", "v6", "[v6]:port",
 * "a.b.c.d:port"); Forwarded's is its for= parameter, maybe quoted.
 */
static bool
element_addr(const char *s, size_t len, bool forwarded, struct http_addr *a)
{
	const char *end = s + len, *colon;

	if (forwarded) {
		const char *p = s;

		s = NULL;
		while (p < end) {   /* pairs separated by ';' */
			const char *semi = memchr(p, ';', (size_t)(end - p));
			const char *pe = semi != NULL ? semi : end;

			while (p < pe && (*p == ' ' || *p == '\t'))
				p++;
			if (pe - p > 4 && strncasecmp(p, "for=", 4) == 0) {
				s = p + 4;
				end = pe;
				break;
			}
			p = pe + 1;
		}
		if (s == NULL)
			return false;
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end - s >= 2 && *s == '"' && end[-1] == '"') {
			s++;
			end--;
		}
	}
	if (s < end && *s == '[') {
		const char *close = memchr(s, ']', (size_t)(end - s));

		if (close == NULL)
			return false;
		return addr_parse(s + 1, (size_t)(close - s - 1), a);
	}
	/* One colon: a v4 address and its port; more: a bare v6 one. */
	colon = memchr(s, ':', (size_t)(end - s));
	if (colon != NULL && memchr(colon + 1, ':', (size_t)(end - colon - 1))
	    == NULL)
		end = colon;
	return addr_parse(s, (size_t)(end - s), a);
}

/*
 * Walks the elements of the header lines from the last one back: sets
 * *client to the first that is not a trusted proxy and returns true;
 * false when an element names no address (then the proxy's own share
 * counts). Every element trusted: the first one is the client.
 */
static bool
forwarded_client(const struct edge_http *h, const struct header_lines *hl,
    bool forwarded, struct http_addr *client)
{
	bool any = false;

	for (int i = hl->n - 1; i >= 0; i--) {
		const char *v = hl->v[i];
		const char *e = v + strlen(v);

		while (e > v) {
			const char *comma = e;
			const char *s, *t;
			struct http_addr a;

			while (comma > v && comma[-1] != ',')
				comma--;
			s = comma;
			t = e;
			e = comma > v ? comma - 1 : v;
			while (s < t && (*s == ' ' || *s == '\t'))
				s++;
			while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
				t--;
			if (s == t)
				continue;       /* an empty element */
			if (!element_addr(s, (size_t)(t - s), forwarded, &a))
				return false;
			*client = a;
			any = true;
			if (!http_proxy_trusted(h, &a))
				return true;
		}
	}
	/* Only trusted proxies: the leftmost is the client, if it was read. */
	return any && !hl->cut;
}

/*
 * The client a trusted proxy forwarded c from; false when the headers
 * name none (c then counts as the proxy's own).
 */
static bool
client_forwarded(struct http_call *c, struct http_addr *client)
{
	struct header_lines hl = { .name = "X-Forwarded-For" };
	bool forwarded = false;

	MHD_get_connection_values(c->conn, MHD_HEADER_KIND, collect_line, &hl);
	if (hl.n == 0) {
		hl.name = "Forwarded";
		forwarded = true;
		MHD_get_connection_values(c->conn, MHD_HEADER_KIND,
		    collect_line, &hl);
	}
	if (hl.n == 0)
		return false;
	return forwarded_client(c->h, &hl, forwarded, client);
}

bool
http_client_forwarded_owner(struct http_call *c, char *owner, size_t len)
{
	const union MHD_ConnectionInfo *ci;
	struct http_addr peer, client;

	if (c->h->nproxies == 0)
		return false;
	ci = MHD_get_connection_info(c->conn,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci == NULL || !http_addr_from_sockaddr(ci->client_addr, &peer) ||
	    !http_proxy_trusted(c->h, &peer))
		return false;   /* counted in its address's share already */
	if (!client_forwarded(c, &client))
		client = peer;
	http_addr_owner(&client, owner, len);
	return true;
}
