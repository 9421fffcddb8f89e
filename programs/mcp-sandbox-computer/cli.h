/*
 * cli.h - the operator command line of mcp-sandbox-computer:
 *   ls | create | exec | restart | reset | rm | network | network-log
 * It talks straight to the backend: a driver started in this process, or
 * a running driver service given with --driver-url.
 */
#ifndef MSC_PROGRAM_CLI_H
#define MSC_PROGRAM_CLI_H

#include <stdbool.h>

/* True when argv[1] names a subcommand. */
bool cli_is_command(int argc, char **argv);

/* Runs the subcommand; returns the process exit status. */
int cli_main(int argc, char **argv);

struct driver_ops;

/*
 * cli_network.c: `network ID [MODE]` shows or sets a computer's network
 * policy through the in-process driver `h`; `network-log [ID]` prints
 * the allowlist proxies' decisions. Exit statuses as above.
 */
int cli_network(const struct driver_ops *ops, void *h, const char *id,
    const char *mode);
int cli_network_log(const struct driver_ops *ops, const char *id);

#endif /* MSC_PROGRAM_CLI_H */
