#include "msc_rpc_roles.h"

#include <stdio.h>
#include <string.h>

/*
 * One row: a method (NULL: every other method of the service) and its
 * callers; the first row that matches decides.
 */
struct role_rule {
	const char *service;
	const char *method;
	const char *roles[4];   /* NULL-terminated */
};

static const struct role_rule rules[] = {
	{ "msc.v1.Session", NULL, { "edge", NULL } },
	{ "msc.v1.Inventory", NULL, { "session", NULL } },
	{ "msc.v1.Driver", "Exec", { "session", "operator", NULL } },
	{ "msc.v1.Driver", "Cancel", { "session", "operator", NULL } },
	{ "msc.v1.Driver", "Progress", { "session", "operator", NULL } },
	{ "msc.v1.Driver", "Describe", { "session", "operator", NULL } },
	{ "msc.v1.Driver", NULL, { "inventory", "operator", NULL } },
};

static const struct role_rule *
find_rule(const char *service, const char *method)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(*rules); i++)
		if (strcmp(rules[i].service, service) == 0 &&
		    (rules[i].method == NULL ||
			strcmp(rules[i].method, method) == 0))
			return &rules[i];
	return NULL;
}

bool
msc_rpc_role_allowed(const char *service, const char *method,
    const char *role, char *allowed, size_t len)
{
	const struct role_rule *r = find_rule(service, method);
	size_t used = 0;

	if (len > 0)
		allowed[0] = '\0';
	if (r == NULL)
		return false;
	for (int i = 0; r->roles[i] != NULL; i++)
		if (strcmp(r->roles[i], role) == 0)
			return true;
	for (int i = 0; r->roles[i] != NULL && used < len; i++) {
		int n = snprintf(allowed + used, len - used, "%s%s",
		    i > 0 ? ", " : "", r->roles[i]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
	return false;
}
