/*
 * cli.h - the operator command line of mcp-sandbox-computer:
 *   ls | create | exec | restart | reset | rm
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

#endif /* MSC_PROGRAM_CLI_H */
