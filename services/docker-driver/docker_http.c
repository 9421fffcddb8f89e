/*
 * docker_http.c - the engine handle, API version negotiation and one-shot
 * HTTP requests to the Docker/Podman API over libcurl.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "docker_api.h"
#include "docker_api_int.h"
#include "msc_http.h"

int
dock_engine_new(const char *host, const char *engine_name,
    struct dock_engine **ep)
{
	struct dock_engine	*e;
	const char		*xdg;
	char			*sp = NULL;
	int			 rc;

	if ((rc = msc_http_init()) != 0)
		return rc;
	if (engine_name == NULL)
		engine_name = "docker";
	if (host == NULL || *host == '\0')
		host = getenv("DOCKER_HOST");
	if ((host == NULL || *host == '\0') &&
	    strcmp(engine_name, "podman") == 0) {
		xdg = getenv("XDG_RUNTIME_DIR");
		if (xdg != NULL && *xdg != '\0' &&
		    asprintf(&sp, "%s/podman/podman.sock", xdg) < 0)
			return -ENOMEM;
		if (sp != NULL && access(sp, F_OK) != 0) {
			free(sp);
			sp = NULL;
		}
		if (sp == NULL && (sp = strdup("/run/podman/podman.sock")) ==
		    NULL)
			return -ENOMEM;
	}
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		free(sp);
		return -ENOMEM;
	}
	rc = -ENOMEM;
	if ((e->name = strdup(engine_name)) == NULL)
		goto fail;
	if (sp != NULL) {
		e->sock_path = sp;
		sp = NULL;
	} else if (host == NULL || *host == '\0') {
		if ((e->sock_path = strdup("/var/run/docker.sock")) == NULL)
			goto fail;
	} else if (strncmp(host, "unix://", 7) == 0 && host[7] == '/') {
		if ((e->sock_path = strdup(host + 7)) == NULL)
			goto fail;
	} else if (strncmp(host, "tcp://", 6) == 0 && host[6] != '\0' &&
	    strpbrk(host + 6, "/?# ") == NULL) {
		if (asprintf(&e->base_url, "http://%s", host + 6) < 0) {
			e->base_url = NULL;
			goto fail;
		}
	} else {
		rc = -EINVAL;
		goto fail;
	}
	if (e->base_url == NULL && (e->base_url = strdup("http://docker")) ==
	    NULL)
		goto fail;
	if ((rc = pthread_mutex_init(&e->lock, NULL)) != 0) {
		rc = -rc;
		goto fail;
	}
	*ep = e;
	return 0;
fail:
	free(e->name);
	free(e->sock_path);
	free(e->base_url);
	free(e);
	free(sp);
	return rc;
}

void
dock_engine_free(struct dock_engine *e)
{
	if (e == NULL)
		return;
	pthread_mutex_destroy(&e->lock);
	free(e->name);
	free(e->sock_path);
	free(e->base_url);
	free(e);
}

const char *
dock_engine_name(const struct dock_engine *e)
{
	return e->name;
}

const char *
dock_engine_socket(const struct dock_engine *e)
{
	return e->sock_path;
}

const char *
dock_engine_url(const struct dock_engine *e)
{
	return e->base_url;
}

struct dock_xfer {
	struct dock_http_req	*req;
	struct dock_http_res	*res;
	int			 sink_rc;
	int			 body_rc;
};

static size_t
dock_write_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct dock_xfer	*x = arg;
	size_t			 n = size * nmemb;

	/* Stream only successful answers; keep errors for their message. */
	if (x->req->sink != NULL && x->res->status >= 200 &&
	    x->res->status < 300) {
		if ((x->sink_rc = x->req->sink(ptr, n, x->req->sink_arg)) != 0)
			return 0;
		return n;
	}
	if ((x->body_rc = dock_buf_append(&x->res->body, ptr, n)) != 0)
		return 0;
	return n;
}

static size_t
dock_header_cb(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct dock_xfer	*x = arg;
	size_t			 n = size * nmemb, k, v;
	int			 code;

	if (n > 9 && strncmp(ptr, "HTTP/", 5) == 0) {
		k = strcspn(ptr, " ");
		if (k < n && sscanf(ptr + k, " %d", &code) == 1)
			x->res->status = code;
		return n;
	}
	/* The blank line after a 2xx answer's headers. */
	if ((n == 2 || n == 1) && (ptr[0] == '\r' || ptr[0] == '\n') &&
	    x->req->headers_done != NULL && x->res->status >= 200 &&
	    x->res->status < 300)
		x->req->headers_done(x->req->sink_arg);
	k = strlen("Api-Version:");
	if (n > k && strncasecmp(ptr, "Api-Version:", k) == 0) {
		while (k < n && (ptr[k] == ' ' || ptr[k] == '\t'))
			k++;
		v = 0;
		while (k < n && ptr[k] != '\r' && ptr[k] != '\n' &&
		    v + 1 < sizeof(x->req->api_version))
			x->req->api_version[v++] = ptr[k++];
		x->req->api_version[v] = '\0';
	}
	return n;
}

static int
dock_xferinfo_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct dock_xfer	*x = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return x->req->cancel != NULL && *x->req->cancel ? 1 : 0;
}

/* Drives one transfer with a multi handle so `cancel` is seen quickly. */
static CURLcode
dock_perform_cancellable(CURL *h, const volatile bool *cancel)
{
	CURLM		*m;
	CURLMsg		*msg;
	CURLcode	 cc = CURLE_OK;
	int		 running = 1, q;

	if ((m = curl_multi_init()) == NULL)
		return CURLE_OUT_OF_MEMORY;
	if (curl_multi_add_handle(m, h) != CURLM_OK) {
		curl_multi_cleanup(m);
		return CURLE_OUT_OF_MEMORY;
	}
	for (;;) {
		if (curl_multi_perform(m, &running) != CURLM_OK) {
			cc = CURLE_FAILED_INIT;
			break;
		}
		if (running == 0)
			break;
		if (*cancel) {
			cc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		if (curl_multi_poll(m, NULL, 0, 100, NULL) != CURLM_OK) {
			cc = CURLE_FAILED_INIT;
			break;
		}
	}
	if (running == 0) {
		while ((msg = curl_multi_info_read(m, &q)) != NULL)
			if (msg->msg == CURLMSG_DONE && msg->easy_handle == h)
				cc = msg->data.result;
	}
	curl_multi_remove_handle(m, h);
	curl_multi_cleanup(m);
	return cc;
}

int
dock_http(struct dock_engine *e, struct dock_http_req *req,
    struct dock_http_res *res, char *err, size_t errlen)
{
	struct dock_xfer	 x;
	struct curl_slist	*hdrs = NULL, *h2;
	char			 url[DOCK_PATH_MAX + 256];
	char			 cerr[CURL_ERROR_SIZE];
	CURL			*h = NULL;
	CURLcode		 cc;
	int			 rc, minor = 0, n;

	memset(res, 0, sizeof(*res));
	res->body.max = DOCK_BODY_MAX;
	req->api_version[0] = '\0';
	if (!req->unversioned) {
		rc = dock_negotiate(e, req->timeout_ms, err, errlen);
		if (rc < 0)
			return rc;
		minor = rc;
	}
	if (req->unversioned)
		n = snprintf(url, sizeof(url), "%s%s", e->base_url, req->path);
	else
		n = snprintf(url, sizeof(url), "%s/v1.%d%s", e->base_url,
		    minor, req->path);
	if (n < 0 || (size_t)n >= sizeof(url)) {
		dock_seterr(err, errlen, "request path too long");
		return -ENAMETOOLONG;
	}
	memset(&x, 0, sizeof(x));
	x.req = req;
	x.res = res;
	cerr[0] = '\0';
	rc = -ENOMEM;
	if ((h = curl_easy_init()) == NULL)
		goto fail;
	if (req->body != NULL) {
		char ct[128];

		snprintf(ct, sizeof(ct), "Content-Type: %s",
		    req->content_type != NULL ? req->content_type :
		    "application/json");
		if ((hdrs = curl_slist_append(NULL, ct)) == NULL)
			goto fail;
		/* No "Expect: 100-continue" round trip for large bodies. */
		if ((h2 = curl_slist_append(hdrs, "Expect:")) == NULL)
			goto fail;
		hdrs = h2;
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	if (e->sock_path != NULL)
		curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, e->sock_path);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req->method);
	if (strcmp(req->method, "POST") == 0) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS,
		    req->body != NULL ? req->body : "");
	} else if (req->body != NULL) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, req->body);
	}
	if (req->body != NULL && req->body_len > 0)
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)req->body_len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, dock_write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, dock_header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
	if (req->timeout_ms > 0) {
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
		    (long)req->timeout_ms);
	}
	if (req->cancel != NULL) {
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION,
		    dock_xferinfo_cb);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
		cc = dock_perform_cancellable(h, req->cancel);
	} else {
		cc = curl_easy_perform(h);
	}
	if (cc == CURLE_WRITE_ERROR && x.sink_rc != 0) {
		rc = x.sink_rc;
		goto fail;
	}
	if (cc == CURLE_WRITE_ERROR && x.body_rc != 0) {
		rc = x.body_rc == -E2BIG ? -EPROTO : x.body_rc;
		dock_seterr(err, errlen, "%s reply to %s %s is too large",
		    e->name, req->method, req->path);
		goto fail;
	}
	if (cc != CURLE_OK) {
		rc = msc_http_curl_errno(cc, -EIO);
		if (rc == -ECANCELED)
			dock_seterr(err, errlen, "cancelled");
		else
			dock_seterr(err, errlen, "%s %s: %s", req->method,
			    req->path, cerr[0] != '\0' ? cerr :
			    curl_easy_strerror(cc));
		goto fail;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->status);
	rc = 0;
fail:
	curl_slist_free_all(hdrs);
	if (h != NULL)
		curl_easy_cleanup(h);
	if (rc < 0)
		dock_http_res_fini(res);
	return rc;
}

void
dock_http_res_fini(struct dock_http_res *res)
{
	dock_buf_fini(&res->body);
}

int
dock_http_status_err(const struct dock_http_res *res, int conflict,
    const char *what, char *err, size_t errlen)
{
	char	msg[512];

	dock_json_message(res->body.p, res->body.len, msg, sizeof(msg));
	if (msg[0] == '\0')
		snprintf(msg, sizeof(msg), "HTTP %ld", res->status);
	dock_seterr(err, errlen, "%s: %s", what, msg);
	if (res->status == 404)
		return -ENOENT;
	if (res->status == 409)
		return conflict;
	return -EIO;
}

static int
dock_parse_minor(const char *v)
{
	char	*end;
	long	 major, minor;

	major = strtol(v, &end, 10);
	if (end == v || *end != '.' || major != 1)
		return -1;
	v = end + 1;
	minor = strtol(v, &end, 10);
	if (end == v || minor < 0 || minor > 1000)
		return -1;
	return (int)minor;
}

int
dock_negotiate(struct dock_engine *e, int timeout_ms, char *err,
    size_t errlen)
{
	struct dock_http_req	 req;
	struct dock_http_res	 res;
	json_t			*j;
	const char		*v;
	int			 rc, minor;

	pthread_mutex_lock(&e->lock);
	minor = e->api_minor;
	pthread_mutex_unlock(&e->lock);
	if (minor != 0)
		return minor;
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.path = "/_ping";
	req.unversioned = true;
	req.timeout_ms = timeout_ms;
	if ((rc = dock_http(e, &req, &res, err, errlen)) < 0)
		return rc;
	if (res.status != 200) {
		rc = dock_http_status_err(&res, -EIO, "ping", err, errlen);
		dock_http_res_fini(&res);
		return rc == -ENOENT ? -EIO : rc;
	}
	dock_http_res_fini(&res);
	minor = dock_parse_minor(req.api_version);
	if (minor < 0) {
		/* No Api-Version header: ask /version instead. */
		req.path = "/version";
		if ((rc = dock_http(e, &req, &res, err, errlen)) < 0)
			return rc;
		minor = DOCK_API_MIN_MINOR;
		if (res.status == 200 && (j = json_loadb(res.body.p,
		    res.body.len, 0, NULL)) != NULL) {
			v = json_string_value(json_object_get(j, "ApiVersion"));
			if (v != NULL && dock_parse_minor(v) >= 0)
				minor = dock_parse_minor(v);
			json_decref(j);
		}
		dock_http_res_fini(&res);
	}
	if (minor < DOCK_API_MIN_MINOR) {
		dock_seterr(err, errlen, "%s API version 1.%d is too old; "
		    "1.%d or newer is needed", e->name, minor,
		    DOCK_API_MIN_MINOR);
		return -ENOTSUP;
	}
	if (minor > DOCK_API_MAX_MINOR)
		minor = DOCK_API_MAX_MINOR;
	pthread_mutex_lock(&e->lock);
	e->api_minor = minor;
	pthread_mutex_unlock(&e->lock);
	return minor;
}

int
dock_engine_ping(struct dock_engine *e, int timeout_ms, char *err,
    size_t errlen)
{
	struct dock_http_req	req;
	struct dock_http_res	res;
	char			detail[512];
	int			rc;

	detail[0] = '\0';
	pthread_mutex_lock(&e->lock);
	rc = e->api_minor;
	pthread_mutex_unlock(&e->lock);
	if (rc == 0) {
		rc = dock_negotiate(e, timeout_ms, detail, sizeof(detail));
	} else {
		/* Already negotiated: still prove the engine answers. */
		memset(&req, 0, sizeof(req));
		req.method = "GET";
		req.path = "/_ping";
		req.unversioned = true;
		req.timeout_ms = timeout_ms;
		rc = dock_http(e, &req, &res, detail, sizeof(detail));
		if (rc == 0) {
			if (res.status != 200)
				rc = dock_http_status_err(&res, -EIO, "ping",
				    detail, sizeof(detail));
			dock_http_res_fini(&res);
		}
		if (rc == -ENOENT)
			rc = -EIO;
	}
	if (rc < 0) {
		dock_seterr(err, errlen, "Cannot connect to %s. Is the %s "
		    "daemon running? (%s)", e->name, e->name, detail);
		return rc;
	}
	return 0;
}
