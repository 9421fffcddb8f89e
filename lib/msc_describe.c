/*
 * msc_describe.c - each backend's terminal_execute description, from its
 * configuration. A driver serves its own (Driver/Describe), so the edge
 * knows no backend.
 */
#include "msc_describe.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_IMAGE "debian:bookworm-slim"
#define BUSYBOX_APPLETS                                                       \
	"ls cat grep sed awk sort uniq wc cut tr diff head tail find mkdir "  \
	"rmdir rm cp mv ln echo printf tee touch basename dirname seq xargs " \
	"sleep pwd stat du date env test nl paste rev tac base64 md5sum "     \
	"sha256sum"

/* The shell's file name ("bash" for "/bin/bash"), in buf. */
static const char *
shell_name(const struct msc_cfg *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%s", cfg->shell);
	return basename(buf);
}

char *
msc_describe_docker(const struct msc_cfg *cfg)
{
	char buf[4096], *base = NULL;
	const char *name = shell_name(cfg, buf, sizeof(buf));
	int n;

	if (strcmp(cfg->image, DEFAULT_IMAGE) == 0)
		n = asprintf(&base,
		    "Run a command in an isolated Debian Linux sandbox computer "
		    "(the agent's own). Commands run in %s. Each call is "
		    "independent (environment variables and the current "
		    "directory do not persist), but the filesystem persists "
		    "between calls. Use working_directory, or chain commands "
		    "with &&, to run in a specific directory. Use stdin to pass "
		    "file contents or input (for example command=\"cat > "
		    "file.txt\" with stdin). The default timeout is %ld "
		    "seconds; pass timeout to change it. Omit computer_id to "
		    "use this session's own computer, or pass one to attach a "
		    "named computer; temporary=false keeps it after the "
		    "session ends.", name, cfg->timeout);
	else
		n = asprintf(&base,
		    "Run a command in an isolated Linux sandbox computer built "
		    "from the container image %s. Commands run in %s (use args "
		    "to run a program without a shell). Each call is "
		    "independent, but the filesystem persists between calls. "
		    "Use working_directory to run in a specific directory and "
		    "stdin to pass input. The default timeout is %ld seconds; "
		    "pass timeout to change it. Omit computer_id to use this "
		    "session's own computer, or pass one to attach a named "
		    "computer; temporary=false keeps it after the session "
		    "ends.", cfg->image, name, cfg->timeout);
	return n < 0 ? NULL : base;
}

char *
msc_describe_fly(const struct msc_cfg *cfg)
{
	char buf[4096], *base = NULL;
	const char *name = shell_name(cfg, buf, sizeof(buf));
	int n;

	n = asprintf(&base,
	    "Run a command on a remote %s Fly Machine (a microVM, the "
	    "agent's own). Commands run in %s. Each call is independent, "
	    "but the filesystem persists between calls. Use "
	    "working_directory, or chain commands with &&, to run in a "
	    "specific directory, and stdin to pass input. The default "
	    "timeout is %ld seconds; pass timeout to change it. Pass "
	    "computer_id to reconnect to a named computer, or omit it "
	    "for a random one. Temporary computers are destroyed when "
	    "the session ends; temporary=false keeps the Machine and its "
	    "files.", cfg->fly_image == NULL ||
		strcmp(cfg->fly_image, DEFAULT_IMAGE) == 0
		? "Debian Linux" : cfg->fly_image, name, cfg->timeout);
	return n < 0 ? NULL : base;
}

char *
msc_describe_e2b(const struct msc_cfg *cfg)
{
	char buf[4096], *base = NULL;
	const char *name = shell_name(cfg, buf, sizeof(buf));
	int n;

	n = cfg->e2b_template == NULL ||
		strcmp(cfg->e2b_template, "base") == 0
	    ? asprintf(&base,
		  "Run a command in an isolated Linux remote cloud "
		  "sandbox (E2B). Commands run in %s. Each call is "
		  "independent (environment variables and the current "
		  "directory do not persist). Use working_directory, "
		  "or chain commands with &&, to run in a specific "
		  "directory. Use stdin to pass file contents or input "
		  "(for example command=\"cat > file.txt\" with "
		  "stdin). The default timeout is %ld seconds; pass "
		  "timeout to change it.", name, cfg->timeout)
	    : (base = NULL, 0);
	return n < 0 ? NULL : base;
}

char *
msc_describe_modal(const struct msc_cfg *cfg)
{
	char buf[4096], *base = NULL;
	const char *name = shell_name(cfg, buf, sizeof(buf));
	int n;

	n = asprintf(&base,
	    "Run a command in an isolated %s remote cloud sandbox "
	    "(Modal)%s%s, the agent's own. Commands run in %s (use args "
	    "to run a program without a shell). Each call is "
	    "independent (environment variables and the current "
	    "directory do not persist), but the filesystem persists "
	    "between calls. Use working_directory, or chain commands "
	    "with &&, to run in a specific directory. Use stdin to pass "
	    "file contents or input (for example command=\"cat > "
	    "file.txt\" with stdin). The default timeout is %ld "
	    "seconds; pass timeout to change it.",
	    strcmp(cfg->image, DEFAULT_IMAGE) == 0 ? "Debian Linux"
						   : "Linux",
	    strcmp(cfg->image, DEFAULT_IMAGE) == 0 ? ""
		: " built from the container image ",
	    strcmp(cfg->image, DEFAULT_IMAGE) == 0 ? "" : cfg->image,
	    name, cfg->timeout);
	return n < 0 ? NULL : base;
}

char *
msc_describe_wasm(const struct msc_cfg *cfg)
{
	char *base = NULL;
	int n;

	if (cfg->backend != NULL && strcmp(cfg->backend, "go_busybox") == 0)
		n = asprintf(&base,
		    "Run commands in an isolated, lightweight WebAssembly "
		    "sandbox: a Busybox-style multicall toolbox, not a full "
		    "Linux. Commands: " BUSYBOX_APPLETS ". Use args for one "
		    "command, for example args=['ls','-la'], "
		    "args=['grep','-r','pattern','.'] or args=['cat','file.txt']"
		    "; args=['--list'] lists every command. command runs a "
		    "small POSIX-style shell over the same commands (also as "
		    "sh -c or bash -c): pipes, redirections, &&, ||, ;, "
		    "variables, globs, $(...), if/for/while and functions work; "
		    "there is no other program, no background job and no "
		    "network. Each "
		    "call is independent, but files persist between calls. "
		    "Use working_directory to run in a specific directory and "
		    "stdin to pass input. The default timeout is %ld seconds; "
		    "pass timeout to change it.", cfg->timeout);
	else
		n = asprintf(&base,
		    "Run a WebAssembly (WASI) program, %s, in an isolated "
		    "sandbox with its own private filesystem and no network. "
		    "Pass its command line as args (the program's name is "
		    "added in front)%s. Each call is independent, but files "
		    "persist between calls. Use working_directory to run in a "
		    "specific directory and stdin to pass input. The default "
		    "timeout is %ld seconds; pass timeout to change it.",
		    cfg->wasm_path != NULL ? cfg->wasm_path : "the module",
		    strcmp(cfg->shell, "/bin/bash") != 0
			? "; command runs a line through the program's shell"
			: "", cfg->timeout);
	return n < 0 ? NULL : base;
}

const char *
msc_describe_preview_refusal(const char *backend)
{
	if (strcmp(backend, "docker") == 0 || strcmp(backend, "e2b") == 0 ||
	    strcmp(backend, "modal") == 0)
		return NULL;
	if (strcmp(backend, "fly") == 0)
		return "Preview URLs are not served on the fly backend: a Fly "
		    "Machine's ports are published only through its app's "
		    "services and a public address, which this server does not "
		    "set up. They are served on the docker (Docker and "
		    "Podman), e2b and modal backends.";
	if (strcmp(backend, "go_busybox") == 0 || strcmp(backend, "wasm") == 0)
		return strcmp(backend, "wasm") == 0
		    ? "Preview URLs are not served on the wasm backend: its "
		      "computers have no network, so nothing in them listens "
		      "on a port. They are served on the docker (Docker and "
		      "Podman), e2b and modal backends."
		    : "Preview URLs are not served on the go_busybox backend: "
		      "its computers have no network, so nothing in them "
		      "listens on a port. They are served on the docker "
		      "(Docker and Podman), e2b and modal backends.";
	return "Preview URLs are served on the docker (Docker and Podman), e2b "
	    "and modal backends only.";
}
