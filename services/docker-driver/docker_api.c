/*
 * docker_api.c - images and container lifecycle over the Docker Engine API
 * (exec lives in docker_exec.c, networks and /info in docker_api_net.c,
 * transport in docker_http.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "docker_api.h"
#include "docker_api_int.h"

#define DOCK_PULL_LINE_MAX	(1u << 20)
#define DOCK_PULL_PRINT_MS	300
#define DOCK_REF_MAX		512

/* Sends one request with no body and an optional JSON reply. */
int
dock_simple(struct dock_engine *e, const char *method, const char *path,
    const char *body, int timeout_ms, struct dock_http_res *res, char *err,
    size_t errlen)
{
	struct dock_http_req	req;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.path = path;
	req.body = body;
	req.timeout_ms = timeout_ms;
	return dock_http(e, &req, res, err, errlen);
}

int
dock_path(char *path, size_t len, const char *fmt, const char *arg,
    const char *tail, char *err, size_t errlen)
{
	char	esc[DOCK_PATH_MAX];
	int	n;

	if (arg == NULL || *arg == '\0') {
		dock_seterr(err, errlen, "empty container id");
		return -EINVAL;
	}
	if (dock_escape(arg, esc, sizeof(esc)) < 0)
		goto toolong;
	n = snprintf(path, len, fmt, esc, tail != NULL ? tail : "");
	if (n < 0 || (size_t)n >= len)
		goto toolong;
	return 0;
toolong:
	dock_seterr(err, errlen, "name too long");
	return -ENAMETOOLONG;
}

int
dock_json_reply(struct dock_http_res *res, json_t **outp, char *err,
    size_t errlen)
{
	json_t	*j;

	j = json_loadb(res->body.p != NULL ? res->body.p : "", res->body.len,
	    0, NULL);
	if (j == NULL) {
		dock_seterr(err, errlen, "malformed JSON reply");
		return -EPROTO;
	}
	*outp = j;
	return 0;
}

/* Image references: a conservative character set keeps URLs safe. */
static bool
dock_ref_valid(const char *ref)
{
	size_t	n = strlen(ref);

	if (n == 0 || n >= DOCK_REF_MAX || ref[0] == '/' || ref[0] == '-')
		return false;
	return strspn(ref, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:@-") == n;
}

/*
 * Splits a reference into fromImage and tag. A digest ("@sha256:...")
 * keeps the whole reference in fromImage with no tag; a ':' before the
 * last '/' belongs to a registry host:port, not to a tag.
 */
static void
dock_ref_split(const char *ref, char *repo, size_t repolen, char *tag,
    size_t taglen)
{
	const char	*slash, *colon;

	if (strchr(ref, '@') != NULL) {
		snprintf(repo, repolen, "%s", ref);
		tag[0] = '\0';
		return;
	}
	slash = strrchr(ref, '/');
	colon = strrchr(slash != NULL ? slash : ref, ':');
	if (colon == NULL || colon[1] == '\0') {
		snprintf(repo, repolen, "%.*s", colon != NULL ?
		    (int)(colon - ref) : (int)strlen(ref), ref);
		snprintf(tag, taglen, "latest");
		return;
	}
	snprintf(repo, repolen, "%.*s", (int)(colon - ref), ref);
	snprintf(tag, taglen, "%s", colon + 1);
}

struct dock_pull {
	const char	*image;
	struct dock_buf	 line;
	bool		 overlong;
	char		 error[512];
	int64_t		 last_print;
};

static void
dock_pull_line(struct dock_pull *p, const char *s, size_t n)
{
	json_t		*j, *pd;
	const char	*status, *id, *msg;
	json_int_t	 cur, tot;
	int64_t		 now;

	if ((j = json_loadb(s, n, 0, NULL)) == NULL)
		return;
	msg = json_string_value(json_object_get(j, "error"));
	if (msg == NULL)
		msg = json_string_value(json_object_get(json_object_get(j,
		    "errorDetail"), "message"));
	if (msg != NULL) {
		if (p->error[0] == '\0')
			snprintf(p->error, sizeof(p->error), "%s", msg);
		goto done;
	}
	status = json_string_value(json_object_get(j, "status"));
	id = json_string_value(json_object_get(j, "id"));
	if (status == NULL)
		goto done;
	now = (int64_t)msc_now_ms();
	/* Lines with a layer id are frequent: rate-limit them. */
	if (id != NULL && now - p->last_print < DOCK_PULL_PRINT_MS)
		goto done;
	p->last_print = now;
	pd = json_object_get(j, "progressDetail");
	cur = json_integer_value(json_object_get(pd, "current"));
	tot = json_integer_value(json_object_get(pd, "total"));
	if (id != NULL && tot > 0)
		fprintf(stderr, "pulling %s: %s %s %" JSON_INTEGER_FORMAT "/%"
		    JSON_INTEGER_FORMAT "\n", p->image, status, id, cur, tot);
	else if (id != NULL)
		fprintf(stderr, "pulling %s: %s %s\n", p->image, status, id);
	else
		fprintf(stderr, "pulling %s: %s\n", p->image, status);
done:
	json_decref(j);
}

static int
dock_pull_sink(const char *data, size_t n, void *arg)
{
	struct dock_pull	*p = arg;
	const char		*nl;
	size_t			 k;

	while (n > 0) {
		nl = memchr(data, '\n', n);
		k = nl != NULL ? (size_t)(nl - data) : n;
		if (!p->overlong && dock_buf_append(&p->line, data, k) < 0) {
			p->overlong = true;
			p->line.len = 0;
		}
		if (nl == NULL)
			break;
		if (!p->overlong && p->line.len > 0)
			dock_pull_line(p, p->line.p, p->line.len);
		p->overlong = false;
		p->line.len = 0;
		data += k + 1;
		n -= k + 1;
	}
	return 0;
}

static int
dock_image_present(struct dock_engine *e, const char *image, int timeout_ms,
    char *detail, size_t detaillen)
{
	struct dock_http_res	res;
	char			path[DOCK_PATH_MAX];
	int			rc;

	snprintf(path, sizeof(path), "/images/%s/json", image);
	rc = dock_simple(e, "GET", path, NULL, timeout_ms, &res, detail,
	    detaillen);
	if (rc < 0)
		return rc;
	if (res.status == 200)
		rc = 0;
	else
		rc = dock_http_status_err(&res, -EIO, "inspect image", detail,
		    detaillen);
	dock_http_res_fini(&res);
	return rc;
}

int
dock_image_ensure(struct dock_engine *e, const char *image, int timeout_ms,
    char *err, size_t errlen)
{
	struct dock_http_req	 req;
	struct dock_http_res	 res;
	struct dock_pull	 pull;
	char			 repo[DOCK_REF_MAX], tag[DOCK_REF_MAX];
	char			 erepo[DOCK_REF_MAX * 3],
	    etag[DOCK_REF_MAX * 3];
	char			 path[DOCK_PATH_MAX], detail[512];
	int64_t			 start = (int64_t)msc_now_ms();
	int			 rc, left, n;

	memset(&pull, 0, sizeof(pull));
	detail[0] = '\0';
	if (image == NULL || !dock_ref_valid(image)) {
		snprintf(detail, sizeof(detail), "invalid image reference");
		rc = -EINVAL;
		goto fail;
	}
	rc = dock_image_present(e, image, timeout_ms, detail, sizeof(detail));
	if (rc != -ENOENT)
		goto fail;
	dock_ref_split(image, repo, sizeof(repo), tag, sizeof(tag));
	if (dock_escape(repo, erepo, sizeof(erepo)) < 0 ||
	    dock_escape(tag, etag, sizeof(etag)) < 0) {
		rc = -ENAMETOOLONG;
		goto fail;
	}
	n = snprintf(path, sizeof(path), "/images/create?fromImage=%s%s%s",
	    erepo, tag[0] != '\0' ? "&tag=" : "", etag);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		rc = -ENAMETOOLONG;
		goto fail;
	}
	pull.image = image;
	pull.line.max = DOCK_PULL_LINE_MAX;
	pull.last_print = start - DOCK_PULL_PRINT_MS;
	fprintf(stderr, "pulling %s\n", image);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = path;
	req.timeout_ms = timeout_ms;
	req.sink = dock_pull_sink;
	req.sink_arg = &pull;
	detail[0] = '\0';
	if ((rc = dock_http(e, &req, &res, detail, sizeof(detail))) < 0)
		goto fail;
	if (res.status < 200 || res.status >= 300) {
		rc = dock_http_status_err(&res, -EIO, "pull", detail,
		    sizeof(detail));
		/* The engine's own words are the detail. */
		dock_json_message(res.body.p, res.body.len, pull.error,
		    sizeof(pull.error));
		if (pull.error[0] != '\0')
			snprintf(detail, sizeof(detail), "%s", pull.error);
		dock_http_res_fini(&res);
		goto fail;
	}
	dock_http_res_fini(&res);
	if (pull.line.len > 0 && !pull.overlong)
		dock_pull_line(&pull, pull.line.p, pull.line.len);
	if (pull.error[0] != '\0') {
		snprintf(detail, sizeof(detail), "%s", pull.error);
		rc = -EIO;
		goto fail;
	}
	/* A clean stream must have left the image behind. */
	left = timeout_ms > 0
	    ? timeout_ms - (int)((int64_t)msc_now_ms() - start) : 0;
	if (timeout_ms > 0 && left < 1000)
		left = 1000;
	rc = dock_image_present(e, image, left, detail, sizeof(detail));
fail:
	dock_buf_fini(&pull.line);
	if (rc < 0)
		dock_seterr(err, errlen,
		    "Failed to pull image '%s'. Check that "
		    "the image name is correct and the registry is reachable. "
		    "%s", image != NULL ? image : "", detail);
	return rc;
}

int
dock_image_empty(struct dock_engine *e, const char *repo, const char *tag,
    int timeout_ms, char *err, size_t errlen)
{
	static const char end_of_archive[1024];	/* two zero blocks */
	struct dock_http_req	req;
	struct dock_http_res	res;
	char			path[DOCK_PATH_MAX], ref[DOCK_REF_MAX];
	int			rc;

	snprintf(ref, sizeof(ref), "%s:%s", repo, tag);
	/* The tag in repo: Podman 4.3 ignores a tag parameter here. */
	rc = snprintf(path, sizeof(path), "/images/create?fromSrc=-&repo=%s"
	    "%%3A%s", repo, tag);
	if (rc < 0 || (size_t)rc >= sizeof(path) || !dock_ref_valid(ref) ||
	    strchr(tag, '/') != NULL || strchr(repo, ':') != NULL) {
		dock_seterr(err, errlen, "invalid image name %s", ref);
		return -EINVAL;
	}
	if ((rc = dock_image_present(e, ref, timeout_ms, err, errlen)) !=
	    -ENOENT)
		return rc;
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = path;
	req.body = end_of_archive;
	req.body_len = sizeof(end_of_archive);
	req.content_type = "application/x-tar";
	req.timeout_ms = timeout_ms;
	if ((rc = dock_http(e, &req, &res, err, errlen)) < 0)
		return rc;
	if (res.status != 200)
		rc = dock_http_status_err(&res, -EIO, "import image", err,
		    errlen);
	else if (res.body.p != NULL && memmem(res.body.p, res.body.len,
	    "\"errorDetail\"", 13) != NULL) {
		dock_seterr(err, errlen, "import image: %.*s",
		    (int)(res.body.len > 300 ? 300 : res.body.len), res.body.p);
		rc = -EIO;
	}
	dock_http_res_fini(&res);
	return rc;
}

int
dock_container_remove(struct dock_engine *e, const char *id, int timeout_ms,
    char *err, size_t errlen)
{
	struct dock_http_res	res;
	char			path[DOCK_PATH_MAX];
	int			rc;

	if ((rc = dock_path(path, sizeof(path), "/containers/%s%s", id,
	    "?force=1&v=1", err, errlen)) < 0)
		return rc;
	rc = dock_simple(e, "DELETE", path, NULL, timeout_ms, &res, err,
	    errlen);
	if (rc < 0)
		return rc;
	/*
	 * 409 "removal ... is already in progress" to a forced removal: an
	 * earlier try that outlasted its timeout, which the engine finishes:
	 * done, as the 404 of one that finished. Any other 409 (Podman's
	 * dependent containers, say) is a failure: the container is there.
	 */
	static const char under_way[] = "already in progress";
	bool removing = res.status == 409 && res.body.p != NULL &&
	    memmem(res.body.p, res.body.len, under_way,
		sizeof(under_way) - 1) != NULL;

	if (res.status != 204 && res.status != 200 && res.status != 404 &&
	    !removing)
		rc = dock_http_status_err(&res, -EBUSY, "remove container",
		    err, errlen);
	dock_http_res_fini(&res);
	return rc;
}

/* POST /containers/{id}/<action>; 204 and (when ok304) 304 succeed. */
static int
dock_container_post(struct dock_engine *e, const char *id, const char *tail,
    bool ok304, const char *what, int timeout_ms, char *err, size_t errlen)
{
	struct dock_http_res	res;
	char			path[DOCK_PATH_MAX];
	int			rc;

	if ((rc = dock_path(path, sizeof(path), "/containers/%s%s", id, tail,
	    err, errlen)) < 0)
		return rc;
	rc = dock_simple(e, "POST", path, NULL, timeout_ms, &res, err,
	    errlen);
	if (rc < 0)
		return rc;
	if (!(res.status >= 200 && res.status < 300) &&
	    !(ok304 && res.status == 304))
		rc = dock_http_status_err(&res, -EBUSY, what, err, errlen);
	dock_http_res_fini(&res);
	return rc;
}

int
dock_container_start(struct dock_engine *e, const char *id, int timeout_ms,
    char *err, size_t errlen)
{
	return dock_container_post(e, id, "/start", true, "start container",
	    timeout_ms, err, errlen);
}

int
dock_container_stop(struct dock_engine *e, const char *id, int grace_s,
    int timeout_ms, char *err, size_t errlen)
{
	char	tail[32];

	snprintf(tail, sizeof(tail), "/stop?t=%d", grace_s < 0 ? 0 : grace_s);
	return dock_container_post(e, id, tail, true, "stop container",
	    timeout_ms, err, errlen);
}

int
dock_container_restart(struct dock_engine *e, const char *id, int grace_s,
    int timeout_ms, char *err, size_t errlen)
{
	char	tail[32];

	snprintf(tail, sizeof(tail), "/restart?t=%d", grace_s < 0 ? 0 :
	    grace_s);
	return dock_container_post(e, id, tail, false, "restart container",
	    timeout_ms, err, errlen);
}

int
dock_container_create(struct dock_engine *e, const char *name, json_t *body,
    int timeout_ms, char id[65], char *err, size_t errlen)
{
	struct dock_http_res	 res;
	json_t			*j = NULL;
	const char		*cid;
	char			 path[DOCK_PATH_MAX], *text = NULL;
	char			 rerr[256];
	int64_t			 start = (int64_t)msc_now_ms();
	int			 rc, left;

	if (name != NULL && *name != '\0') {
		if ((rc = dock_path(path, sizeof(path),
		    "/containers/create?name=%s%s", name, NULL, err,
		    errlen)) < 0)
			return rc;
	} else {
		snprintf(path, sizeof(path), "/containers/create");
	}
	if ((text = json_dumps(body, JSON_COMPACT)) == NULL) {
		dock_seterr(err, errlen, "cannot encode the create body");
		return -ENOMEM;
	}
	rc = dock_simple(e, "POST", path, text, timeout_ms, &res, err, errlen);
	free(text);
	if (rc < 0)
		return rc;
	if (res.status != 201 && res.status != 200) {
		rc = dock_http_status_err(&res, -EEXIST, "create container",
		    err, errlen);
		dock_http_res_fini(&res);
		return rc;
	}
	rc = dock_json_reply(&res, &j, err, errlen);
	dock_http_res_fini(&res);
	if (rc < 0)
		return rc;
	cid = json_string_value(json_object_get(j, "Id"));
	if (cid == NULL || strlen(cid) != 64 || strspn(cid,
	    "0123456789abcdef") != 64) {
		json_decref(j);
		dock_seterr(err, errlen, "create container: no valid Id");
		return -EPROTO;
	}
	memcpy(id, cid, 65);
	json_decref(j);
	left = timeout_ms > 0
	    ? timeout_ms - (int)((int64_t)msc_now_ms() - start) : 0;
	if (timeout_ms > 0 && left < 1000)
		left = 1000;
	rc = dock_container_start(e, id, left, err, errlen);
	if (rc < 0) {
		/* Leave nothing behind: remove what we created. */
		dock_container_remove(e, id, DOCK_CTL_TIMEOUT_MS, rerr,
		    sizeof(rerr));
		id[0] = '\0';
	}
	return rc;
}

int
dock_get_json(struct dock_engine *e, const char *path, const char *what,
    int timeout_ms, json_t **outp, char *err, size_t errlen)
{
	struct dock_http_res	res;
	int			rc;

	rc = dock_simple(e, "GET", path, NULL, timeout_ms, &res, err, errlen);
	if (rc < 0)
		return rc;
	if (res.status != 200)
		rc = dock_http_status_err(&res, -EIO, what, err, errlen);
	else
		rc = dock_json_reply(&res, outp, err, errlen);
	dock_http_res_fini(&res);
	return rc;
}

int
dock_container_inspect(struct dock_engine *e, const char *id_or_name,
    int timeout_ms, json_t **outp, char *err, size_t errlen)
{
	char			path[DOCK_PATH_MAX];
	int			rc;

	if ((rc = dock_path(path, sizeof(path), "/containers/%s/json%s",
	    id_or_name, NULL, err, errlen)) < 0)
		return rc;
	return dock_get_json(e, path, "inspect container", timeout_ms, outp,
	    err, errlen);
}

int
dock_container_list(struct dock_engine *e, const char *label_filter,
    int timeout_ms, json_t **outp, char *err, size_t errlen)
{
	struct dock_http_res	 res;
	json_t			*f = NULL, *j = NULL;
	char			 path[DOCK_PATH_MAX], *text = NULL;
	int			 rc;

	snprintf(path, sizeof(path), "/containers/json?all=1");
	if (label_filter != NULL) {
		f = json_pack("{s:[s]}", "label", label_filter);
		if (f == NULL || (text = json_dumps(f, JSON_COMPACT)) ==
		    NULL) {
			json_decref(f);
			dock_seterr(err, errlen, "cannot encode the filter");
			return -ENOMEM;
		}
		json_decref(f);
		rc = dock_path(path, sizeof(path),
		    "/containers/json?all=1&filters=%s%s", text, NULL, err,
		    errlen);
		free(text);
		if (rc < 0)
			return rc;
	}
	rc = dock_simple(e, "GET", path, NULL, timeout_ms, &res, err, errlen);
	if (rc < 0)
		return rc;
	if (res.status != 200)
		rc = dock_http_status_err(&res, -EIO, "list containers", err,
		    errlen);
	else if ((rc = dock_json_reply(&res, &j, err, errlen)) == 0 &&
	    !json_is_array(j)) {
		json_decref(j);
		dock_seterr(err, errlen, "list containers: not an array");
		rc = -EPROTO;
	} else if (rc == 0) {
		*outp = j;
	}
	dock_http_res_fini(&res);
	return rc;
}

int
dock_container_wait(struct dock_engine *e, const char *id,
    const volatile bool *cancel, char *err, size_t errlen)
{
	static const volatile bool	 never = false;
	struct dock_http_req		 req;
	struct dock_http_res		 res;
	char				 path[DOCK_PATH_MAX];
	int				 rc;

	if ((rc = dock_path(path, sizeof(path), "/containers/%s%s", id,
	    "/wait?condition=not-running", err, errlen)) < 0)
		return rc;
	if ((rc = dock_negotiate(e, DOCK_CTL_TIMEOUT_MS, err, errlen)) < 0)
		return rc;
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = path;
	req.cancel = cancel != NULL ? cancel : &never;
	if ((rc = dock_http(e, &req, &res, err, errlen)) < 0)
		return rc;
	if (res.status != 200)
		rc = dock_http_status_err(&res, -EIO, "wait container", err,
		    errlen);
	dock_http_res_fini(&res);
	return rc;
}
