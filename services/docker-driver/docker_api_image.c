/*
 * docker_api_image.c - the Engine API calls of snapshots (issue 31):
 * commit a container to an image, list images by label, inspect and
 * remove one. Docker and Podman's compatible API answer them alike.
 */
#include "docker_api_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
dock_image_commit(struct dock_engine *e, const char *container,
    const char *repo, const char *tag, const char *const *changes, size_t n_changes,
    int timeout_ms, json_t **outp, char *err, size_t errlen)
{
	struct dock_http_res res;
	char *path, esc[1024];
	size_t len = 4 * DOCK_PATH_MAX, used;
	int rc;

	if ((path = malloc(len)) == NULL) {
		dock_seterr(err, errlen, "out of memory");
		return -ENOMEM;
	}
	/* pause=0: a command running in the computer is not frozen. The
	 * name and its tag apart: Podman 4.3 refuses "name:tag" in repo. */
	if ((rc = dock_escape(container, esc, sizeof(esc))) != 0)
		goto toolong;
	used = (size_t)snprintf(path, len, "/commit?pause=0&container=%s", esc);
	if ((rc = dock_escape(repo, esc, sizeof(esc))) != 0 || used >= len)
		goto toolong;
	used += (size_t)snprintf(path + used, len - used, "&repo=%s", esc);
	if ((rc = dock_escape(tag, esc, sizeof(esc))) != 0 || used >= len)
		goto toolong;
	used += (size_t)snprintf(path + used, len - used, "&tag=%s", esc);
	for (size_t i = 0; i < n_changes && used < len; i++) {
		if ((rc = dock_escape(changes[i], esc, sizeof(esc))) != 0)
			goto toolong;
		used += (size_t)snprintf(path + used, len - used,
		    "&changes=%s", esc);
	}
	if (used >= len)
		goto toolong;
	rc = dock_simple(e, "POST", path, "{}", timeout_ms, &res, err, errlen);
	free(path);
	if (rc < 0)
		return rc;
	if (res.status != 201 && res.status != 200)
		rc = dock_http_status_err(&res, -EIO, "commit container", err,
		    errlen);
	else
		rc = dock_json_reply(&res, outp, err, errlen);
	dock_http_res_fini(&res);
	return rc;
toolong:
	free(path);
	dock_seterr(err, errlen, "commit container: request too long");
	return -ENAMETOOLONG;
}

int
dock_image_list(struct dock_engine *e, const char *label_filter,
    int timeout_ms, json_t **outp, char *err, size_t errlen)
{
	json_t *f = json_pack("{s:[s]}", "label", label_filter), *j = NULL;
	char path[DOCK_PATH_MAX], *text;
	int rc;

	text = f != NULL ? json_dumps(f, JSON_COMPACT) : NULL;
	json_decref(f);
	if (text == NULL) {
		dock_seterr(err, errlen, "cannot encode the filter");
		return -ENOMEM;
	}
	rc = dock_path(path, sizeof(path), "/images/json?filters=%s%s", text,
	    NULL, err, errlen);
	free(text);
	if (rc < 0 || (rc = dock_get_json(e, path, "list images", timeout_ms,
	    &j, err, errlen)) != 0)
		return rc;
	if (!json_is_array(j)) {
		json_decref(j);
		dock_seterr(err, errlen, "list images: not an array");
		return -EPROTO;
	}
	*outp = j;
	return 0;
}

int
dock_image_inspect(struct dock_engine *e, const char *ref, int timeout_ms,
    json_t **outp, char *err, size_t errlen)
{
	char path[DOCK_PATH_MAX];
	int rc;

	if ((rc = dock_path(path, sizeof(path), "/images/%s/json%s", ref, NULL,
	    err, errlen)) < 0)
		return rc;
	return dock_get_json(e, path, "inspect image", timeout_ms, outp, err,
	    errlen);
}

int
dock_image_remove(struct dock_engine *e, const char *ref, int timeout_ms,
    char *err, size_t errlen)
{
	struct dock_http_res res;
	char path[DOCK_PATH_MAX];
	int rc;

	if ((rc = dock_path(path, sizeof(path), "/images/%s%s", ref, NULL,
	    err, errlen)) < 0)
		return rc;
	rc = dock_simple(e, "DELETE", path, NULL, timeout_ms, &res, err,
	    errlen);
	if (rc < 0)
		return rc;
	if (res.status != 200 && res.status != 204)
		rc = dock_http_status_err(&res, -EBUSY, "remove image", err,
		    errlen);
	dock_http_res_fini(&res);
	return rc;
}
