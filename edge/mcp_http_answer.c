/*
 * mcp_http_answer.c - the Streamable HTTP transport's replies: a call's
 * headers, and its one answer (a body, a JSON-RPC error, a 503 with
 * Retry-After, the shutdown's 503) however and from whichever thread it
 * comes.
 */
#include "mcp_http_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_hop.h"
#include "msc_log.h"
#include "msc_reason.h"

const char *
http_header(struct http_call *c, const char *name)
{
	return MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, name);
}

bool
http_header_has(struct http_call *c, const char *name, const char *value)
{
	const char *v = http_header(c, name);

	return v != NULL && strcasestr(v, value) != NULL;
}

/*
 * Sets c's answer (under h->mu); takes resp. A NULL resp (out of memory)
 * closes the connection.
 */
static void
answer_locked(struct http_call *c, unsigned status, struct MHD_Response *resp)
{
	if (c->answered || !c->mhd_ref) {
		if (resp != NULL)
			MHD_destroy_response(resp);
		return;
	}
	MSC_HOP("edge_answer_built");
	c->answered = true;
	c->status = status;
	c->resp = resp;
	if (c->suspended) {
		c->suspended = false;
		http_resume_locked(c);
	}
}

static struct MHD_Response *
make_response(const char *type, const char *body, size_t len,
    const char *hname, const char *hvalue)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len,
	    (void *)(body != NULL ? body : ""), MHD_RESPMEM_MUST_COPY);

	if (r == NULL)
		return NULL;
	if ((type != NULL && MHD_add_response_header(r, "Content-Type",
	    type) != MHD_YES) || (hname != NULL &&
	    MHD_add_response_header(r, hname, hvalue) != MHD_YES)) {
		MHD_destroy_response(r);
		return NULL;
	}
	return r;
}

void
http_answer(struct http_call *c, unsigned status, const char *type,
    const char *body, size_t len, const char *hname, const char *hvalue)
{
	struct MHD_Response *r = make_response(type, body, len, hname, hvalue);

	if (r == NULL)  /* out of memory: MHD closes the connection */
		msc_log_err("http: out of memory for a response");
	pthread_mutex_lock(&c->h->mu);
	answer_locked(c, status, r);
	pthread_mutex_unlock(&c->h->mu);
}

void
http_answer_response(struct http_call *c, unsigned status,
    struct MHD_Response *r)
{
	pthread_mutex_lock(&c->h->mu);
	answer_locked(c, status, r);
	pthread_mutex_unlock(&c->h->mu);
}

void
http_answer_json(struct http_call *c, unsigned status, json_t *body,
    const char *hname, const char *hvalue)
{
	char *text = json_dumps(body, JSON_COMPACT | JSON_ENSURE_ASCII);

	http_answer(c, status, "application/json", text ? text : "{}",
	    text ? strlen(text) : 2, hname, hvalue);
	free(text);
}

static json_t *
rpc_error(json_t *id, int code, const char *msg)
{
	return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", "code", code, "message",
	    msg);
}

/* The id of c's request, once its body was read (borrowed; or NULL). */
static json_t *
request_id(struct http_call *c)
{
	return c->msg != NULL ? json_object_get(c->msg, "id") : NULL;
}

void
http_answer_rpc_error(struct http_call *c, unsigned status, int code,
    const char *msg)
{
	json_t *body = rpc_error(NULL, code, msg);

	http_answer_json(c, status, body, NULL, NULL);
	json_decref(body);
}

void
http_answer_unsent(struct http_call *c, int rv)
{
	int retry_s;
	const char *text = msc_reason_session_unsent(rv, &retry_s);
	char after[16];
	json_t *body = rpc_error(request_id(c), -32603, text);

	snprintf(after, sizeof(after), "%d", retry_s);
	http_answer_json(c, 503, body, "Retry-After", after);
	json_decref(body);
}

void
http_answer_failed(struct http_call *c, const struct msc_status *st)
{
	char buf[512];
	const char *text = mcp_failed_text(st, buf, sizeof(buf));
	json_t *body = rpc_error(request_id(c), -32603, text);
	bool retry = st->code == MSC__V1__CODE__UNAVAILABLE ||
	    st->code == MSC__V1__CODE__RESOURCE_EXHAUSTED ||
	    st->code == MSC__V1__CODE__DEADLINE_EXCEEDED;

	http_answer_json(c, 503, body, retry ? "Retry-After" : NULL,
	    retry ? "5" : NULL);
	json_decref(body);
}

void
http_answer_shutdown_locked(struct http_call *c)
{
	json_t *id = c->msg ? json_object_get(c->msg, "id") : NULL;
	json_t *err = rpc_error(id, -32603,
	    "the server is shutting down; retry");
	char *text = json_dumps(err, JSON_COMPACT);
	struct MHD_Response *r = make_response("application/json",
	    text ? text : "{}", text ? strlen(text) : 2, NULL, NULL);

	answer_locked(c, 503, r);
	free(text);
	json_decref(err);
}
