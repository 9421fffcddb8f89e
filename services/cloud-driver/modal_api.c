/*
 * modal_api.c - calls to Modal's control plane under the token and the
 * short-lived auth token (AuthTokenGet, refreshed at half its life and
 * once on UNAUTHENTICATED), the app and image the computers share, and
 * the command router's address and JWT for a sandbox task.
 */
#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_log.h"

#define T_AUTH 15000
#define T_OP 30000
#define T_BUILD_MS (9u * 60 * 1000)    /* within the edge's 11 minutes */

static int64_t
now_s(void)
{
	return (int64_t)time(NULL);
}

/* The metadata of a control-plane call; auth: with x-modal-auth-token. */
static struct curl_slist *
metadata(struct modal_driver *d, const char *auth)
{
	struct curl_slist *md = NULL;
	char h[4200];

	snprintf(h, sizeof(h), "x-modal-token-id: %s", d->creds.token_id);
	md = curl_slist_append(md, h);
	snprintf(h, sizeof(h), "x-modal-token-secret: %s",
	    d->creds.token_secret);
	md = curl_slist_append(md, h);
	/* Presents as the Go SDK (client type 9), behaving like 1.0.0. */
	md = curl_slist_append(md, "x-modal-client-type: 9");
	md = curl_slist_append(md, "x-modal-client-version: 1.0.0");
	if (auth != NULL) {
		snprintf(h, sizeof(h), "x-modal-auth-token: %s", auth);
		md = curl_slist_append(md, h);
	}
	explicit_bzero(h, sizeof(h));
	return md;
}

static void
free_md(struct curl_slist *md)
{
	for (struct curl_slist *e = md; e != NULL; e = e->next)
		explicit_bzero(e->data, strlen(e->data));
	curl_slist_free_all(md);
}

/* Rewrites err for what a person must do about it. */
static int
explain(struct modal_driver *d, int rv, int code, char *err, size_t errlen)
{
	char detail[MODAL_ERRLEN];

	snprintf(detail, sizeof(detail), "%s", err);
	if (code == GRPC_UNAUTHENTICATED || code == GRPC_PERMISSION_DENIED) {
		snprintf(err, errlen, "Modal authentication failed: %s. Check "
				      "--modal-token-id/--modal-token-secret, "
				      "MODAL_TOKEN_ID/MODAL_TOKEN_SECRET or "
				      "~/.modal.toml.", detail);
		return -EACCES;
	}
	if (rv == -ECONNREFUSED)
		snprintf(err, errlen, "Cannot connect to Modal at %s: %s. Check "
				      "the network and https://status.modal.com.",
		    d->api.base, detail);
	return rv;
}

/* A fresh x-modal-auth-token into tok (copied under the lock). */
static int
auth_token(struct modal_driver *d, bool renew, char *tok, size_t toklen,
    char *err, size_t errlen)
{
	Modal__Client__AuthTokenGetRequest req =
	    MODAL__CLIENT__AUTH_TOKEN_GET_REQUEST__INIT;
	Modal__Client__AuthTokenGetResponse *resp = NULL;
	struct grpc_opts o = { .label = "Modal", .timeout_ms = T_AUTH,
		.retry = true };
	int64_t exp, now = now_s();
	int code = 0, rv;

	pthread_mutex_lock(&d->mu);
	if (!renew && d->auth_token[0] != '\0' && now < d->auth_refresh_at) {
		snprintf(tok, toklen, "%s", d->auth_token);
		pthread_mutex_unlock(&d->mu);
		return 0;
	}
	pthread_mutex_unlock(&d->mu);
	o.md = metadata(d, NULL);
	rv = grpc_unary(&d->api, MODAL_SVC "AuthTokenGet", &req.base,
	    &modal__client__auth_token_get_response__descriptor,
	    (ProtobufCMessage **)&resp, &o, &code, err, errlen);
	free_md((struct curl_slist *)o.md);
	if (rv != 0)
		return explain(d, rv, code, err, errlen);
	if (resp->token == NULL || resp->token[0] == '\0' ||
	    strlen(resp->token) >= toklen) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		snprintf(err, errlen, "Modal AuthTokenGet: no usable token in "
				      "the reply");
		return -EPROTO;
	}
	/* Renew at half its remaining life (20 minutes when unknown). */
	exp = modal_conv_jwt_exp(resp->token);
	pthread_mutex_lock(&d->mu);
	snprintf(d->auth_token, sizeof(d->auth_token), "%s", resp->token);
	d->auth_refresh_at = now + (exp > now ? (exp - now) / 2 : 600);
	snprintf(tok, toklen, "%s", d->auth_token);
	pthread_mutex_unlock(&d->mu);
	explicit_bzero(resp->token, strlen(resp->token));
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

static int
need_tokens(struct modal_driver *d, char *err, size_t errlen)
{
	if (d->creds.token_id[0] != '\0' && d->creds.token_secret[0] != '\0')
		return 0;
	snprintf(err, errlen, "Modal backend requires a token: pass "
			      "--modal-token-id and --modal-token-secret, set "
			      "MODAL_TOKEN_ID and MODAL_TOKEN_SECRET, or run "
			      "'modal token new' (~/.modal.toml).");
	return -EACCES;
}

/* One call of either kind: unary (respp) or server stream (fn). */
static int
call(struct modal_driver *d, const char *method, const ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *rdesc, ProtobufCMessage **respp,
    int (*fn)(const ProtobufCMessage *, void *), void *arg,
    uint64_t timeout_ms, bool retry, char *err, size_t errlen)
{
	char path[128], tok[4096];
	struct grpc_opts o = { .label = "Modal", .timeout_ms = timeout_ms,
		.retry = retry };
	int code = 0, rv;

	if ((rv = need_tokens(d, err, errlen)) != 0)
		return rv;
	snprintf(path, sizeof(path), MODAL_SVC "%s", method);
	for (int attempt = 0;; attempt++) {
		if ((rv = auth_token(d, attempt > 0, tok, sizeof(tok), err,
			 errlen)) != 0)
			break;
		o.md = metadata(d, tok);
		if (fn != NULL)
			rv = grpc_stream(&d->api, path, req, rdesc, fn, arg, &o,
			    &code, err, errlen);
		else
			rv = grpc_unary(&d->api, path, req, rdesc, respp, &o,
			    &code, err, errlen);
		free_md((struct curl_slist *)o.md);
		/* An expired auth token: once more with a new one. */
		if (rv != 0 && code == GRPC_UNAUTHENTICATED && attempt == 0)
			continue;
		if (rv < 0)
			rv = explain(d, rv, code, err, errlen);
		break;
	}
	explicit_bzero(tok, sizeof(tok));
	return rv;
}

int
modal_call(struct modal_driver *d, const char *method,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    ProtobufCMessage **respp, uint64_t timeout_ms, bool retry, char *err,
    size_t errlen)
{
	return call(d, method, req, rdesc, respp, NULL, NULL, timeout_ms, retry,
	    err, errlen);
}

int
modal_call_stream(struct modal_driver *d, const char *method,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    int (*fn)(const ProtobufCMessage *, void *), void *arg,
    uint64_t timeout_ms, char *err, size_t errlen)
{
	return call(d, method, req, rdesc, NULL, fn, arg, timeout_ms, false,
	    err, errlen);
}

int
modal_app(struct modal_driver *d, char *app_id, size_t len, char *err,
    size_t errlen)
{
	Modal__Client__AppGetOrCreateRequest req =
	    MODAL__CLIENT__APP_GET_OR_CREATE_REQUEST__INIT;
	Modal__Client__AppGetOrCreateResponse *resp = NULL;
	int rv;

	pthread_mutex_lock(&d->mu);
	snprintf(app_id, len, "%s", d->app_id);
	pthread_mutex_unlock(&d->mu);
	if (app_id[0] != '\0')
		return 0;
	req.app_name = (char *)d->app_name;
	req.environment_name = d->creds.environment;
	req.object_creation_type =
	    MODAL__CLIENT__OBJECT_CREATION_TYPE__OBJECT_CREATION_TYPE_CREATE_IF_MISSING;
	if ((rv = modal_call(d, "AppGetOrCreate", &req.base,
		 &modal__client__app_get_or_create_response__descriptor,
		 (ProtobufCMessage **)&resp, T_OP, true, err, errlen)) != 0)
		return rv;
	if (resp->app_id == NULL || resp->app_id[0] == '\0' ||
	    strlen(resp->app_id) >= sizeof(d->app_id)) {
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		snprintf(err, errlen, "Modal AppGetOrCreate: no app id in the "
				      "reply");
		return -EPROTO;
	}
	pthread_mutex_lock(&d->mu);
	snprintf(d->app_id, sizeof(d->app_id), "%s", resp->app_id);
	pthread_mutex_unlock(&d->mu);
	snprintf(app_id, len, "%s", resp->app_id);
	msc_log_info("modal: app %s is %s", d->app_name, resp->app_id);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

/* The image builder version: configured, else the environment's. */
static int
builder_version(struct modal_driver *d, char *buf, size_t len, char *err,
    size_t errlen)
{
	Modal__Client__EnvironmentGetOrCreateRequest req =
	    MODAL__CLIENT__ENVIRONMENT_GET_OR_CREATE_REQUEST__INIT;
	Modal__Client__EnvironmentGetOrCreateResponse *resp = NULL;
	const char *v;
	int rv;

	if (d->creds.image_builder_version[0] != '\0') {
		snprintf(buf, len, "%s", d->creds.image_builder_version);
		return 0;
	}
	req.deployment_name = d->creds.environment;
	if ((rv = modal_call(d, "EnvironmentGetOrCreate", &req.base,
		 &modal__client__environment_get_or_create_response__descriptor,
		 (ProtobufCMessage **)&resp, T_OP, true, err, errlen)) != 0)
		return rv;
	v = resp->metadata != NULL && resp->metadata->settings != NULL
	    ? resp->metadata->settings->image_builder_version : NULL;
	snprintf(buf, len, "%s", v != NULL ? v : "");
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return 0;
}

struct join {
	char entry_id[256];
	int status;             /* the final result's, 0 until then */
	char exception[2048];
};

static int
on_join(const ProtobufCMessage *m, void *arg)
{
	const Modal__Client__ImageJoinStreamingResponse *r = (const void *)m;
	struct join *j = arg;

	if (r->entry_id != NULL && r->entry_id[0] != '\0')
		snprintf(j->entry_id, sizeof(j->entry_id), "%s", r->entry_id);
	for (size_t i = 0; i < r->n_task_logs; i++) {
		const char *s = r->task_logs[i]->data;

		if (s == NULL)
			continue;
		/* Build logs, line by line, bounded. */
		while (*s != '\0') {
			size_t n = strcspn(s, "\r\n");

			if (n > 0)
				msc_log_info("modal image build: %.*s",
				    (int)(n < 300 ? n : 300), s);
			s += n;
			s += strspn(s, "\r\n");
		}
	}
	if (modal_conv_finished(r->result)) {
		j->status = (int)r->result->status;
		snprintf(j->exception, sizeof(j->exception), "%s",
		    r->result->exception ? r->result->exception : "");
		return 1;       /* done */
	}
	return 0;
}

/* Waits for image `id` to be built. */
static int
join_build(struct modal_driver *d, const char *id, struct join *j,
    char *err, size_t errlen)
{
	Modal__Client__ImageJoinStreamingRequest req =
	    MODAL__CLIENT__IMAGE_JOIN_STREAMING_REQUEST__INIT;
	uint64_t end = msc_now_ms() + T_BUILD_MS;
	int rv, fails = 0;

	req.image_id = (char *)id;
	req.timeout = 55;
	while (j->status == 0) {
		if (msc_now_ms() >= end) {
			snprintf(err, errlen, "the build of image %s did not "
					      "finish within %u minutes", id,
			    T_BUILD_MS / 60000);
			return -ETIMEDOUT;
		}
		req.last_entry_id = j->entry_id;
		rv = modal_call_stream(d, "ImageJoinStreaming", &req.base,
		    &modal__client__image_join_streaming_response__descriptor,
		    on_join, j, 60000, err, errlen);
		if (rv == 1 || j->status != 0)
			break;
		/* The stream ends every `timeout` seconds: join again. */
		if (rv < 0 && (rv == -EACCES || rv == -EINVAL || rv == -ENOENT ||
				  ++fails > 5))
			return rv;
		if (rv < 0)
			msc_log_debug("modal: %s; joining the build again", err);
	}
	return 0;
}

int
modal_image(struct modal_driver *d, char *image_id, size_t len, char *err,
    size_t errlen)
{
	Modal__Client__ImageGetOrCreateRequest req =
	    MODAL__CLIENT__IMAGE_GET_OR_CREATE_REQUEST__INIT;
	Modal__Client__ImageGetOrCreateResponse *resp = NULL;
	Modal__Client__Image img = MODAL__CLIENT__IMAGE__INIT;
	Modal__Client__GPUConfig gpu = MODAL__CLIENT__GPUCONFIG__INIT;
	struct join j = { .status = 0 };
	char app_id[128], version[64], from[600], *cmds[1] = { from };
	int rv;

	pthread_mutex_lock(&d->build_mu);
	pthread_mutex_lock(&d->mu);
	snprintf(image_id, len, "%s", d->image_id);
	pthread_mutex_unlock(&d->mu);
	if (image_id[0] != '\0') {
		pthread_mutex_unlock(&d->build_mu);
		return 0;
	}
	if ((rv = modal_app(d, app_id, sizeof(app_id), err, errlen)) != 0 ||
	    (rv = builder_version(d, version, sizeof(version), err,
		 errlen)) != 0) {
		pthread_mutex_unlock(&d->build_mu);
		return rv;
	}
	snprintf(from, sizeof(from), "FROM %s", d->image);
	img.n_dockerfile_commands = 1;
	img.dockerfile_commands = cmds;
	if (d->gpu_type[0] != '\0') {
		gpu.gpu_type = d->gpu_type;
		gpu.count = d->gpu_count;
		img.gpu_config = &gpu;
	}
	req.image = &img;
	req.app_id = app_id;
	req.builder_version = version;
	rv = modal_call(d, "ImageGetOrCreate", &req.base,
	    &modal__client__image_get_or_create_response__descriptor,
	    (ProtobufCMessage **)&resp, 60000, true, err, errlen);
	if (rv == 0 && (resp->image_id == NULL || resp->image_id[0] == '\0' ||
			   strlen(resp->image_id) >= sizeof(d->image_id))) {
		snprintf(err, errlen, "Modal ImageGetOrCreate: no image id in "
				      "the reply");
		rv = -EPROTO;
	}
	if (rv == 0 && modal_conv_finished(resp->result)) {
		j.status = (int)resp->result->status;
		snprintf(j.exception, sizeof(j.exception), "%s",
		    resp->result->exception ? resp->result->exception : "");
	} else if (rv == 0) {
		msc_log_info("modal: building image %s (%s)", d->image,
		    resp->image_id);
		rv = join_build(d, resp->image_id, &j, err, errlen);
	}
	if (rv == 0 && j.status !=
	    MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_SUCCESS) {
		Modal__Client__GenericResult r =
		    MODAL__CLIENT__GENERIC_RESULT__INIT;
		char why[2200];

		r.status = j.status;
		r.exception = j.exception;
		modal_conv_ended(&r, why, sizeof(why));
		snprintf(err, errlen, "Modal image build for '%s' (%s) %s",
		    d->image, resp->image_id,
		    j.status == MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TIMEOUT
			? "timed out" : why);
		rv = -EINVAL;
	}
	if (rv == 0) {
		pthread_mutex_lock(&d->mu);
		snprintf(d->image_id, sizeof(d->image_id), "%s", resp->image_id);
		pthread_mutex_unlock(&d->mu);
		snprintf(image_id, len, "%s", resp->image_id);
	}
	if (resp != NULL)
		protobuf_c_message_free_unpacked(&resp->base, NULL);
	pthread_mutex_unlock(&d->build_mu);
	return rv;
}

int
modal_router_access(struct modal_driver *d, struct modal_known *k,
    char *err, size_t errlen)
{
	Modal__Client__TaskGetCommandRouterAccessRequest req =
	    MODAL__CLIENT__TASK_GET_COMMAND_ROUTER_ACCESS_REQUEST__INIT;
	Modal__Client__TaskGetCommandRouterAccessResponse *resp = NULL;
	int rv;

	req.task_id = k->task_id;
	if ((rv = modal_call(d, "TaskGetCommandRouterAccess", &req.base,
		 &modal__client__task_get_command_router_access_response__descriptor,
		 (ProtobufCMessage **)&resp, T_OP, true, err, errlen)) != 0)
		return rv;
	if (resp->url == NULL || resp->jwt == NULL || resp->url[0] == '\0' ||
	    strlen(resp->url) >= sizeof(k->router_url) ||
	    strlen(resp->jwt) >= sizeof(k->jwt)) {
		snprintf(err, errlen, "Modal TaskGetCommandRouterAccess: no "
				      "usable router address in the reply");
		rv = -EPROTO;
	} else {
		snprintf(k->router_url, sizeof(k->router_url), "%s", resp->url);
		snprintf(k->jwt, sizeof(k->jwt), "%s", resp->jwt);
		k->jwt_exp = modal_conv_jwt_exp(resp->jwt);
		explicit_bzero(resp->jwt, strlen(resp->jwt));
	}
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return rv;
}

int
modal_router_target(struct modal_driver *d, const struct modal_known *k,
    struct grpc_target *t, struct curl_slist **mdp, char *err,
    size_t errlen)
{
	char h[4200];

	/* Plain h2c only when the control plane is local and plain too. */
	if (strncmp(k->router_url, "https://", 8) != 0 &&
	    !(d->api.h2c && strncmp(k->router_url, "http://", 7) == 0)) {
		snprintf(err, errlen, "Modal gave a command router address that "
				      "is not https: %s", k->router_url);
		return -EPROTO;
	}
	if (grpc_target_init(t, k->router_url) != 0)
		return -ENOMEM;
	snprintf(h, sizeof(h), "authorization: Bearer %s", k->jwt);
	*mdp = curl_slist_append(NULL, h);
	explicit_bzero(h, sizeof(h));
	if (*mdp == NULL) {
		grpc_target_fini(t);
		return -ENOMEM;
	}
	return 0;
}

int
modal_router_call(struct modal_driver *d, struct modal_known *k,
    const char *method, const ProtobufCMessage *req,
    const ProtobufCMessageDescriptor *rdesc, ProtobufCMessage **respp,
    uint64_t timeout_ms, char *err, size_t errlen)
{
	struct grpc_target t;
	struct curl_slist *md = NULL;
	char path[160];
	int code = 0, rv;

	snprintf(path, sizeof(path), MODAL_ROUTER_SVC "%s", method);
	for (int attempt = 0;; attempt++) {
		struct grpc_opts o = { .label = "Modal command router",
			.timeout_ms = timeout_ms, .retry = true };

		/* A JWT that is about to expire is renewed first. */
		if ((attempt > 0 || (k->jwt_exp != 0 &&
					k->jwt_exp - now_s() < 30)) &&
		    (rv = modal_router_access(d, k, err, errlen)) != 0)
			return rv;
		if ((rv = modal_router_target(d, k, &t, &md, err, errlen)) != 0)
			return rv;
		o.md = md;
		rv = grpc_unary(&t, path, req, rdesc, respp, &o, &code, err,
		    errlen);
		free_md(md);
		grpc_target_fini(&t);
		if (rv != 0 && code == GRPC_UNAUTHENTICATED && attempt == 0)
			continue;
		return rv;
	}
}
