/* runner_files.h - the file tools run by the runner (runner_files.c). */
#ifndef RUNNER_FILES_H
#define RUNNER_FILES_H

#include <stdbool.h>

#include "wasi_host.h"

/* The path the edge names the file helper by (edge/tools_files.c). */
#define RUNNER_FILE_HELPER "/.msc-helper"

/* Whether a guest argv (argv[0] the module's name) asks for a file tool. */
bool runner_is_file_tool(char *const *argv);

/*
 * Runs the file command of argv in c's root, from guest working folder
 * cwd, with c's disk quota; its stdout and stderr are fds 1 and 2. The
 * exit status: 0, or 2 with one line on stderr.
 */
int runner_file_tool(struct wasi_ctx *c, const char *cwd, char *const *argv);

#endif /* RUNNER_FILES_H */
