/*
 * docker_proxy_cred.c - credentials added on the way out: each
 * --proxy-credential DOMAIN=HEADER:ENVVAR (or line of
 * --proxy-credential-file) makes the allowlist proxy add "HEADER: value"
 * to the plain HTTP requests it forwards to DOMAIN (that name exactly),
 * the value read once at start from the server's environment variable
 * ENVVAR. A header of that name the computer sent itself is dropped
 * first. The value lives in the driver's memory (wiped at the end) and
 * in squid.conf (mode 0600, outside every container): never in a
 * computer, its environment, a log line or a reply. HTTPS requests get
 * nothing: the proxy tunnels them (CONNECT) without terminating TLS.
 */
#include "docker_driver_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CRED_LINE_MAX 1024

static bool
token(const char *s, size_t n, bool env)
{
	if (n == 0 || n > 128)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!(isalnum(c) || (env ? c == '_' : c == '-')))
			return false;
	}
	return !env || !isdigit((unsigned char)s[0]);
}

/* A value squid.conf can quote: printable, no quote, no backslash. */
static bool
value_ok(const char *v)
{
	if (*v == '\0')
		return false;
	for (; *v != '\0'; v++)
		if (*v < 0x20 || *v > 0x7e || *v == '"' || *v == '\\')
			return false;
	return true;
}

static int
add_one(struct dock_pol *p, const char *spec, const char *where)
{
	const char *eq = strchr(spec, '='), *colon, *value;
	struct dock_pol_cred *grown, *c;
	char domain[MSC_NET_NAME_MAX + 1], env[129];

	colon = eq != NULL ? strchr(eq + 1, ':') : NULL;
	if (eq == NULL || colon == NULL || (size_t)(eq - spec) > MSC_NET_NAME_MAX ||
	    !token(eq + 1, (size_t)(colon - eq - 1), false) ||
	    !token(colon + 1, strlen(colon + 1), true)) {
		msc_cfg_error("%s: expected DOMAIN=HEADER:ENVVAR (a domain name, "
		    "a header name, an environment variable), got: %.80s",
		    where, spec);
		return -EINVAL;
	}
	snprintf(domain, sizeof(domain), "%.*s", (int)(eq - spec), spec);
	snprintf(env, sizeof(env), "%s", colon + 1);
	if (!msc_net_host_valid(domain)) {
		msc_cfg_error("%s: '%s' is not a domain name", where, domain);
		return -EINVAL;
	}
	if ((value = getenv(env)) == NULL || !value_ok(value)) {
		msc_cfg_error("%s: the environment variable %s is %s", where,
		    env, value == NULL ? "not set" : "empty or holds a quote, "
		    "a backslash or a byte that is not printable ASCII");
		return -EINVAL;
	}
	if ((grown = realloc(p->creds, (p->ncreds + 1) * sizeof(*grown))) ==
	    NULL)
		return -ENOMEM;
	p->creds = grown;
	c = &p->creds[p->ncreds];
	c->domain = strdup(domain);
	c->header = strndup(eq + 1, (size_t)(colon - eq - 1));
	c->value = strdup(value);
	p->ncreds++;
	for (char *d = c->domain; d != NULL && *d != '\0'; d++)
		*d = (char)tolower((unsigned char)*d);
	return c->domain && c->header && c->value ? 0 : -ENOMEM;
}

static int
read_file(struct dock_pol *p, const char *path)
{
	char line[CRED_LINE_MAX + 2], where[300];
	FILE *f = fopen(path, "re");
	int n = 0, rv = 0;

	if (f == NULL) {
		msc_cfg_error("--proxy-credential-file %s: %s", path,
		    strerror(errno));
		return -errno;
	}
	while (rv == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *s = line, *end;

		n++;
		s += strspn(s, " \t");
		end = s + strcspn(s, "\r\n");
		*end = '\0';
		while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (*s == '\0' || *s == '#')
			continue;
		snprintf(where, sizeof(where), "--proxy-credential-file %.200s "
		    "line %d", path, n);
		rv = add_one(p, s, where);
	}
	fclose(f);
	return rv;
}

int
dock_pol_creds_init(struct dock_pol *p, const struct msc_cfg *cfg)
{
	const struct dock_cfg *dc = dock_cfg(cfg);
	int rv = 0;

	for (size_t i = 0; rv == 0 && i < dc->n_proxy_creds; i++)
		rv = add_one(p, dc->proxy_creds[i], "--proxy-credential");
	if (rv == 0 && dc->proxy_cred_file != NULL)
		rv = read_file(p, dc->proxy_cred_file);
	return rv;
}

void
dock_pol_creds_fini(struct dock_pol *p)
{
	for (size_t i = 0; i < p->ncreds; i++) {
		if (p->creds[i].value != NULL)
			explicit_bzero(p->creds[i].value,
			    strlen(p->creds[i].value));
		free(p->creds[i].value);
		free(p->creds[i].domain);
		free(p->creds[i].header);
	}
	free(p->creds);
	p->creds = NULL;
	p->ncreds = 0;
}
