/*
 * mcp_http_guard.c - who may call /mcp: the Host and Origin allowlists
 * (loopback names, --allowed-host, --allowed-origin and their environment
 * forms), applied whatever address the server is bound to. The bearer
 * token and its principal: mcp_http_principals.c.
 */
#include "mcp_http_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const loopback_names[] = { "127.0.0.1", "localhost",
	"[::1]", NULL };

/*
 * Whether host ("name", "name:port", "[v6]" or "[v6]:port") is one of
 * names: an entry without a port allows any port, one with a port only
 * that one.
 */
static bool
host_in(const char *host, const char *const *names)
{
	const char *colon = host[0] == '[' ? strstr(host, "]:") : NULL;
	size_t nlen;

	if (host[0] == '[') {
		colon = colon != NULL ? colon + 1 : NULL;
		if (colon == NULL && host[strlen(host) - 1] != ']')
			return false;
	} else {
		colon = strchr(host, ':');
	}
	nlen = colon != NULL ? (size_t)(colon - host) : strlen(host);
	if (colon != NULL && (colon[1] == '\0' ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1)))
		return false;
	for (int i = 0; names[i] != NULL; i++) {
		size_t n = strlen(names[i]);

		if (strcasecmp(host, names[i]) == 0 ||
		    (n == nlen && strncasecmp(host, names[i], n) == 0))
			return true;
	}
	return false;
}

static bool
origin_allowed(const struct edge_http *h, const char *origin)
{
	const char *rest = NULL;
	size_t olen = strlen(origin);

	if (strncasecmp(origin, "http://", 7) == 0)
		rest = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		rest = origin + 8;
	if (rest != NULL && *rest != '\0' && host_in(rest, loopback_names))
		return true;
	for (int i = 0; h->origins[i] != NULL; i++) {
		size_t n = strlen(h->origins[i]);

		if (n > 0 && h->origins[i][n - 1] == '/')
			n--;
		if (n == olen && strncasecmp(origin, h->origins[i], n) == 0)
			return true;
	}
	return false;
}

/* The Host first, then the Origin. */
unsigned
http_guard(const struct edge_http *h, struct http_call *c)
{
	const char *host = http_header(c, "Host");
	const char *origin = http_header(c, "Origin");

	if (host != NULL && (*host == '\0' || !host_in(host, h->hosts)))
		return 421;
	if (origin != NULL && !origin_allowed(h, origin))
		return 403;
	return 0;
}

/* Appends the names of `list` (comma or space separated) to arr. */
static void
add_names(const char **arr, size_t *n, char *list)
{
	char *save = NULL;

	for (char *t = strtok_r(list, ", ", &save); t != NULL;
	     t = strtok_r(NULL, ", ", &save))
		arr[(*n)++] = t;
}

/* The lists, borrowed from cfg and from a copy of the environment. */
int
http_allowlists_init(struct edge_http *h)
{
	const struct msc_cfg *cfg = h->cfg;
	const char *eh = getenv("KILNTAINERS_ALLOWED_HOSTS");
	const char *eo = getenv("KILNTAINERS_ALLOWED_ORIGINS");
	size_t lh = eh ? strlen(eh) : 0, lo = eo ? strlen(eo) : 0, nh = 0,
	       no = 0;
	char *sh, *so;

	/* At most one name per two bytes of each list. */
	h->env_copy = malloc(lh + lo + 2);
	h->hosts = calloc(4 + cfg->n_allowed_hosts + lh / 2 + 2,
	    sizeof(*h->hosts));
	h->origins = calloc(cfg->n_allowed_origins + lo / 2 + 2,
	    sizeof(*h->origins));
	if (h->env_copy == NULL || h->hosts == NULL || h->origins == NULL)
		return -ENOMEM;
	sh = h->env_copy;
	so = h->env_copy + lh + 1;
	memcpy(sh, eh ? eh : "", lh + 1);
	memcpy(so, eo ? eo : "", lo + 1);
	for (int i = 0; loopback_names[i] != NULL; i++)
		h->hosts[nh++] = loopback_names[i];
	for (size_t i = 0; i < cfg->n_allowed_hosts; i++)
		h->hosts[nh++] = cfg->allowed_hosts[i];
	add_names(h->hosts, &nh, sh);
	for (size_t i = 0; i < cfg->n_allowed_origins; i++)
		h->origins[no++] = cfg->allowed_origins[i];
	add_names(h->origins, &no, so);
	return 0;
}
