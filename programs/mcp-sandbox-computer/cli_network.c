/*
 * cli_network.c - the operator's network commands (cli.h): a computer's
 * network policy, shown or set on the running computer, and the
 * allowlist proxies' decision log.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "drivers.h"

int
cli_network(const struct driver_ops *ops, void *h, const char *id,
    const char *mode)
{
	char msg[1024];

	if (ops->network == NULL || h == NULL) {
		fprintf(stderr, "mcp-sandbox-computer: network policies are "
		    "set through a local docker driver (--backend docker, no "
		    "--driver-url)\n");
		return 1;
	}
	if (ops->network(h, id, mode, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "mcp-sandbox-computer: %s\n", msg);
		return 1;
	}
	printf("%s: %s\n", id, msg);
	return 0;
}

int
cli_network_log(const struct driver_ops *ops, const char *id)
{
	if (ops->network_log == NULL) {
		fprintf(stderr, "mcp-sandbox-computer: the %s backend keeps no "
		    "decision log\n", ops->backend->name);
		return 1;
	}
	return ops->network_log(id, stdout) < 0 ? 1 : 0;
}
