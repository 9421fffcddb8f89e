/*
 * docker_template.c - what every computer's container is made of: the
 * create body built once at the driver's start from its flags (image,
 * least-privilege defaults, --cpu, --memory, --docker-run-flag, the OCI
 * runtime), which creations and the warm pool copy.
 */
#include "docker_driver_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docker_runflags.h"

/* Parses "512m", "1g", "1048576" (bytes) like docker does. */
static int
parse_bytes(const char *s, int64_t *out)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;

	if (end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'b': case 'B': mul = 1; end++; break;
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0')
		return -EINVAL;
	*out = (int64_t)(v * mul);
	return 0;
}

int
dock_build_template(const struct msc_cfg *cfg, json_t **outp)
{
	const struct dock_cfg *dc = dock_cfg(cfg);
	char err[DOCK_ERRLEN];
	json_t *body, *hc;
	bool podman = strcmp(dc->engine, "podman") == 0;

	body = json_pack("{s:s, s:[sss], s:[s], s:b, s:b, s:b, s:b}",
	    "Image", dc->image, "Cmd", "tail", "-f", "/dev/null",
	    "Entrypoint", "", "Tty", 0, "OpenStdin", 0, "AttachStdout", 0,
	    "AttachStderr", 0);
	/*
	 * Least privilege by default: no new privileges, a pid limit, no raw
	 * sockets or device nodes, an init that reaps zombies and makes stop
	 * fast, and the sandbox network (docker_network.c) rather than the
	 * engine's bridge. --docker-run-flag can loosen each of these.
	 */
	hc = json_pack("{s:s, s:[s], s:[sss], s:i}", "NetworkMode",
	    cfg->network ? DOCK_NET_NAME : "none", "SecurityOpt",
	    "no-new-privileges", "CapDrop", "NET_RAW", "MKNOD", "AUDIT_WRITE",
	    "PidsLimit", 1024);
	if (body == NULL || hc == NULL)
		goto nomem;
	if (!podman)
		json_object_set_new(hc, "Init", json_true());
	if (dc->cpu != NULL) {
		char *end;
		double cpus = strtod(dc->cpu, &end);

		if (end == dc->cpu || *end != '\0' || !(cpus > 0)) {
			msc_cfg_error("--cpu must be a positive number, got: %s",
			    dc->cpu);
			goto invalid;
		}
		json_object_set_new(hc, "NanoCpus",
		    json_integer((json_int_t)llround(cpus * 1e9)));
	}
	if (dc->memory != NULL) {
		int64_t bytes;

		if (parse_bytes(dc->memory, &bytes) != 0 || bytes < 6 << 20) {
			msc_cfg_error("--memory must be a size of at least 6m "
				      "such as 512m or 2g, got: %s", dc->memory);
			goto invalid;
		}
		json_object_set_new(hc, "Memory", json_integer(bytes));
	}
	json_object_set_new(body, "HostConfig", hc);
	hc = NULL;
	if (dock_runflags_apply(dc->run_flags, dc->n_run_flags, body, err,
		sizeof(err)) != 0) {
		msc_cfg_error("%s", err);
		goto invalid;
	}
	if (dock_runtime_body(cfg, body) != 0)
		goto invalid;
	*outp = body;
	return 0;
nomem:
	json_decref(body);
	json_decref(hc);
	return -ENOMEM;
invalid:
	json_decref(body);
	json_decref(hc);
	return -EINVAL;
}

