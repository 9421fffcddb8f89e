/*
 * docker_network_cmd.c - the operator's network commands
 * (`mcp-sandbox-computer network ID [MODE]`, `network-log`): a running
 * computer's policy changed and shown (saved by docker_policy_state.c,
 * applied by docker_policy.c), and the proxies' decision logs. Above the
 * policy files: neither calls it.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker_driver.h"
#include "msc_slug.h"

int
dock_driver_network(struct dock_driver *d, const char *id, const char *mode,
    char *msg, size_t msglen)
{
	struct dock_pol_lists l, seen;
	json_t *ctr = NULL;
	const char *ctr_id = "";
	char *text;
	bool owned = false;
	int rv;

	if (!msc_slug_valid(id)) {
		snprintf(msg, msglen, "%s", MSC_SLUG_ERROR);
		return -EINVAL;
	}
	if ((rv = dock_find(d, id, &ctr, msg, msglen)) != 0)
		return rv;
	if (mode != NULL) {
		memset(&l, 0, sizeof(l));
		if (msc_net_mode_parse(mode, &l.mode) != 0) {
			snprintf(msg, msglen, "the mode is none, allowlist or "
			    "open, got: %s", mode);
			rv = -EINVAL;
		} else if (!d->net_sandbox) {
			snprintf(msg, msglen, "computers are not on the sandbox "
			    "network (--no-network or --docker-run-flag "
			    "--network): their network cannot be changed");
			rv = -ENOTSUP;
		} else if (l.mode == MSC_NET_ALLOWLIST && d->pol.nallow == 0) {
			snprintf(msg, msglen, "allowlist mode needs "
			    "--network-allow DOMAIN[,DOMAIN...]");
			rv = -EINVAL;
		}
		if (rv == 0 && l.mode == MSC_NET_ALLOWLIST) {
			l.allow = d->pol.allow;
			l.nallow = d->pol.nallow;
			l.deny = d->pol.deny;
			l.ndeny = d->pol.ndeny;
		}
		json_unpack(ctr, "{s?s}", "Id", &ctr_id);
		snprintf(l.cid, sizeof(l.cid), "%s", ctr_id);
		l.proxied = dock_pol_proxy_port(ctr) > 0;
		if (rv == 0 && (rv = dock_pol_state_save(id, &l)) != 0)
			snprintf(msg, msglen, "cannot save the policy: %s",
			    strerror(-rv));
		if (rv == 0)
			rv = dock_pol_apply(d, id, json_string_value(
			    json_object_get(ctr, "Id")), msg, msglen);
		if (rv != 0) {
			json_decref(ctr);
			return rv;
		}
	}
	dock_pol_current(d, id, json_string_value(json_object_get(ctr, "Id")),
	    json_object_get(json_object_get(ctr, "Config"), "Labels"), &l,
	    &owned);
	/* The server's defaults are its flags, not this process's: ask its proxy. */
	if (!owned && l.mode == MSC_NET_ALLOWLIST &&
	    dock_pol_proxy_view(ctr, &seen) == 0) {
		l = seen;
		owned = true;
	}
	json_decref(ctr);
	text = dock_pol_describe(&l);
	if (owned)
		dock_pol_lists_free(&l);
	if (text == NULL)
		return -ENOMEM;
	snprintf(msg, msglen, "%s", text);
	free(text);
	return 0;
}

int
dock_driver_network_log(const char *id, FILE *out)
{
	char base[256], pat[300], line[2048], needle[96];
	glob_t g;
	int found = 0;

	if (dock_pol_base(base, sizeof(base)) != 0)
		return -ENAMETOOLONG;
	snprintf(pat, sizeof(pat), "%s/*/decisions.log", base);
	snprintf(needle, sizeof(needle), " %s:", id != NULL ? id : "");
	if (glob(pat, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "re");

		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (id == NULL || strstr(line, needle) != NULL) {
				fputs(line, out);
				found++;
			}
		fclose(f);
	}
	globfree(&g);
	return found;
}
