/*
 * wasm_cfg.c - the WebAssembly backends' options: the table (one entry a
 * flag) that wasm and go_busybox share, the environment fallback, the
 * tool descriptions and the rows that put the backends in a program.
 */
#include "wasm_cfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F(x) offsetof(struct wasm_cfg, x)
#define WASM "wasm backend options"
#define BUSYBOX_APPLETS                                                       \
	"ls cat grep sed awk sort uniq wc cut tr diff head tail find mkdir "  \
	"rmdir rm cp mv ln echo printf tee touch basename dirname seq xargs " \
	"sleep pwd stat du date env test nl paste rev tac base64 md5sum "     \
	"sha256sum"

static const struct msc_cfg_opt opts[] = {
	{ "wasm-path", MSC_OPT_STR, F(wasm_path), 0, NULL, "WASM_PATH", NULL, WASM,
	    "Path to the .wasm file to execute (required for wasm backend)",
	    0, NULL },
	{ "wasm-max-memory", MSC_OPT_STR, F(wasm_max_memory), 0, "256",
	    "WASM_MAX_MEMORY", NULL, WASM, "Max WASM memory in MiB (default: 256)",
	    0, NULL },
	{ "wasm-fuel", MSC_OPT_STR, F(wasm_fuel), 0, NULL, "WASM_FUEL", NULL, WASM,
	    "WASM instruction fuel limit (default: unlimited)",
	    0, NULL },
	{ "output-limit", MSC_OPT_LONG, F(output_limit), 0, "2097152",
	    "OUTPUT_LIMIT", NULL, MSC_CFG_GROUP_CORE,
	    "Max combined stdout+stderr bytes per exec (default: 2097152 = 2 MiB)",
	    0, NULL },
	{ "disk-quota", MSC_OPT_STR, F(disk_quota), 0, "1G", "SIZE", NULL, MSC_CFG_GROUP_CORE,
	    "Most bytes one computer may store, e.g. 500M, 1G or 1GiB; 0: no "
	    "bound. go_busybox and wasm count them; Docker and Podman use the "
	    "storage driver's size option where the engine has one, and "
	    "computer_list says when it has none "
	    "(default: KILNTAINERS_DISK_QUOTA, else 1G)",
	    0, NULL },
};

static void
env(void *own)
{
	struct wasm_cfg *c = own;
	const char *v;

	if ((v = getenv("KILNTAINERS_DISK_QUOTA")) != NULL && *v != '\0')
		c->disk_quota = v;
}

const struct msc_cfg_table wasm_cfg_table = { "wasm", opts,
	sizeof(opts) / sizeof(*opts), sizeof(struct wasm_cfg), env, NULL };

const struct wasm_cfg *
wasm_cfg(const struct msc_cfg *cfg)
{
	static const struct wasm_cfg none;
	const struct wasm_cfg *c = msc_cfg_own(cfg, &wasm_cfg_table);

	return c != NULL ? c : &none;
}

char *
wasm_cfg_describe(const struct msc_cfg *cfg)
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
		    wasm_cfg(cfg)->wasm_path != NULL ? wasm_cfg(cfg)->wasm_path : "the module",
		    strcmp(cfg->shell, "/bin/bash") != 0
			? "; command runs a line through the program's shell"
			: "", cfg->timeout);
	return n < 0 ? NULL : base;
}

/* These computers have no network at all. */
int
wasm_cfg_validate(const struct msc_cfg *cfg)
{
	static const char *const proxy[] = { "proxy-credential",
		"proxy-credential-file", NULL };

	return msc_backend_net_refuse(cfg, false, proxy, "--network-allow, "
	    "--network-deny and --proxy-credential need the docker backend: "
	    "these computers have no network at all");
}

const char wasm_preview_refusal[] = "Preview URLs "
	"are not served on the wasm backend: its computers have no network, "
	"so nothing in them listens on a port. They are served on the docker "
	"(Docker and Podman), e2b and modal backends.";

const char busybox_preview_refusal[] =
	"Preview URLs are not served on the go_busybox backend: its computers "
	"have no network, so nothing in them listens on a port. They are "
	"served on the docker (Docker and Podman), e2b and modal backends.";
