/*
 * runner_files.c - the file tools (issue 29) on the wasm backends: the
 * exec helper's file commands (services/docker-driver/helper/
 * helper_file*.c, compiled in) run natively by the runner, not by the
 * guest, when a command's argv is
 *
 *   /.msc-helper --file read|write|edit PATH ...
 *
 * as the edge sends it on every backend. Paths resolve in the computer's
 * root as the WASI host's do (openat2 with RESOLVE_IN_ROOT, hxf_root), so
 * the results are the Docker version's, byte for byte, and what is
 * written is charged to the computer's disk quota (wasi_quota.c).
 */
#include <errno.h>
#include <string.h>

#include "helper.h"
#include "helper_file.h"
#include "runner_files.h"
#include "wasi_int.h"

static int
charge(void *arg, uint64_t bytes)
{
	struct wasi_ctx *c = arg;

	if (wasi_quota_room(c, bytes) < bytes)
		return -ENOSPC;
	wasi_quota_add(c, bytes);
	return 0;
}

bool
runner_is_file_tool(char *const *argv)
{
	return argv[0] != NULL && argv[1] != NULL && argv[2] != NULL &&
	    strcmp(argv[1], RUNNER_FILE_HELPER) == 0 &&
	    strcmp(argv[2], "--file") == 0;
}

int
runner_file_tool(struct wasi_ctx *c, const char *cwd, char *const *argv)
{
	int argc = 0;

	while (argv[argc] != NULL)
		argc++;
	hxf_root.fd = c->root;
	hxf_root.cwd = cwd;
	hxf_root.host = c->root_path;
	hxf_root.charge = c->quota > 0 ? charge : NULL;
	hxf_root.arg = c;
	/* argv[0] is the module's name; hx_file_main's argv[0] is --file. */
	return hx_file_main(argc - 2, (char **)argv + 2);
}
