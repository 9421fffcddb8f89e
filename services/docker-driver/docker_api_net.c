/*
 * docker_api_net.c - the engine's facts and its networks over the Docker
 * Engine API: GET /info, GET /networks/{name}, POST /networks/create; and
 * Podman's own GET /libpod/networks/{name}/json.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdlib.h>

#include <string.h>

#include <jansson.h>

#include "docker_api.h"
#include "docker_api_int.h"

int
dock_engine_info(struct dock_engine *e, int timeout_ms, json_t **outp,
    char *err, size_t errlen)
{
	return dock_get_json(e, "/info", "engine info", timeout_ms, outp, err,
	    errlen);
}

int
dock_network_inspect(struct dock_engine *e, const char *name, int timeout_ms,
    json_t **outp, char *err, size_t errlen)
{
	char			path[DOCK_PATH_MAX];
	int			rc;

	if ((rc = dock_path(path, sizeof(path), "/networks/%s%s", name, NULL,
	    err, errlen)) < 0)
		return rc;
	return dock_get_json(e, path, "inspect network", timeout_ms, outp, err,
	    errlen);
}

/*
 * Podman's API takes its own version (4.0.0, the oldest it serves and
 * enough for this call) in the path, not the compatible API's 1.NN.
 */
int
dock_network_inspect_libpod(struct dock_engine *e, const char *name,
    int timeout_ms, json_t **outp, char *err, size_t errlen)
{
	struct dock_http_req	req;
	struct dock_http_res	res;
	char			path[DOCK_PATH_MAX];
	int			rc;

	if ((rc = dock_path(path, sizeof(path),
	    "/v4.0.0/libpod/networks/%s/json%s", name, NULL, err, errlen)) < 0)
		return rc;
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.path = path;
	req.unversioned = true;
	req.timeout_ms = timeout_ms;
	if ((rc = dock_http(e, &req, &res, err, errlen)) < 0)
		return rc;
	if (res.status != 200)
		rc = dock_http_status_err(&res, -EIO, "inspect network", err,
		    errlen);
	else
		rc = dock_json_reply(&res, outp, err, errlen);
	dock_http_res_fini(&res);
	return rc;
}

int
dock_network_create(struct dock_engine *e, json_t *body, int timeout_ms,
    char *err, size_t errlen)
{
	struct dock_http_res	 res;
	char			*text;
	int			 rc;

	if ((text = json_dumps(body, JSON_COMPACT)) == NULL) {
		dock_seterr(err, errlen, "cannot encode the network body");
		return -ENOMEM;
	}
	rc = dock_simple(e, "POST", "/networks/create", text, timeout_ms,
	    &res, err, errlen);
	free(text);
	if (rc < 0)
		return rc;
	if (res.status != 201 && res.status != 200)
		rc = dock_http_status_err(&res, -EEXIST, "create network", err,
		    errlen);
	dock_http_res_fini(&res);
	return rc;
}
