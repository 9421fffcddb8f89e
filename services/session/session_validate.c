/*
 * session_validate.c - terminal_execute's arguments, checked as the
 * reference does (with its later limits) before any computer is touched.
 */
#include "session_int.h"

#include <stdio.h>
#include <string.h>

#define STDIN_LIMIT 2097152
/* The reference's later limits (reference-behavior.md, section 12). */
#define TIMEOUT_MAX_S 3600
#define COMMAND_LIMIT 65536             /* command, and all args together */
#define ARGS_MAX 256

const char *
sess_validate(const Msc__V1__TerminalExecRequest *r, char *buf, size_t buflen)
{
	bool has_cmd = r->command[0] != '\0';
	bool has_args = r->n_args > 0;

	if (has_cmd && has_args)
		return "Cannot provide both 'command' and 'args'. Use 'command' "
		       "for shell commands or 'args' for direct execution.";
	if (!has_cmd && !has_args)
		return "Must provide either 'command' or 'args'.";
	if (r->working_directory[0] != '\0' && r->working_directory[0] != '/') {
		snprintf(buf, buflen, "working_directory must be an absolute "
				      "path, got: %s", r->working_directory);
		return buf;
	}
	if (r->has_timeout && r->timeout < 1)
		return "timeout must be at least 1 second.";
	if (r->has_timeout && r->timeout > TIMEOUT_MAX_S)
		return "timeout must be at most 3600 seconds.";
	if (has_cmd && strlen(r->command) > COMMAND_LIMIT) {
		snprintf(buf, buflen, "command exceeds the 64 KiB limit (%zu "
				      "bytes). Write long scripts to a file with "
				      "stdin and run the file.", strlen(r->command));
		return buf;
	}
	if (r->n_args > ARGS_MAX) {
		snprintf(buf, buflen, "args exceeds the limit of 256 arguments "
				      "(%zu given).", r->n_args);
		return buf;
	}
	size_t args_len = 0;

	for (size_t i = 0; i < r->n_args; i++)
		args_len += strlen(r->args[i]);
	if (args_len > COMMAND_LIMIT) {
		snprintf(buf, buflen, "args exceed the 64 KiB limit (%zu bytes "
				      "together). Pass large input with stdin.",
		    args_len);
		return buf;
	}
	if (r->has_stdin && r->stdin.len > STDIN_LIMIT) {
		snprintf(buf, buflen, "stdin content exceeds the 2 MiB limit "
				      "(%zu bytes). Split into smaller chunks or use "
				      "a different approach.", r->stdin.len);
		return buf;
	}
	if (r->has_computer_id) {
		char id[MSC_SLUG_MAX + 1];

		if (msc_slug_normalize(r->computer_id, id) != 0)
			return MSC_SLUG_ERROR;
	}
	return NULL;
}
