/*
 * grpc_call.c - gRPC calls over libcurl's HTTP/2: one easy handle per
 * call, blocking helpers with retries on top.
 */
#include "grpc_call.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_http.h"
#include "msc_log.h"

int
grpc_target_init(struct grpc_target *t, const char *url)
{
	size_t n;

	memset(t, 0, sizeof(*t));
	if (strncmp(url, "http://", 7) == 0)
		t->h2c = true;
	else if (strncmp(url, "https://", 8) != 0)
		return -EINVAL;
	if ((t->base = strdup(url)) == NULL)
		return -ENOMEM;
	n = strlen(t->base);
	while (n > 8 && t->base[n - 1] == '/')
		t->base[--n] = '\0';
	return 0;
}

void
grpc_target_fini(struct grpc_target *t)
{
	free(t->base);
	t->base = NULL;
}

static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct grpc_call *c = arg;

	grpc_status_line(&c->st, p, sz * n);
	return sz * n;
}

static size_t
on_body(char *p, size_t sz, size_t n, void *arg)
{
	struct grpc_call *c = arg;
	int rv;

	if (c->st.http != 200 || !c->st.grpc_type)
		return sz * n;          /* not gRPC: the status says why */
	rv = grpc_reader_feed(&c->rd, p, sz * n, c->on_msg, c->arg);
	if (rv != 0) {
		c->cb_rv = rv;
		return 0;               /* aborts the transfer */
	}
	return sz * n;
}

int
grpc_call_init(struct grpc_call *c, const struct grpc_target *t,
    const char *path, const ProtobufCMessage *req,
    const struct curl_slist *md, uint64_t timeout_ms, const char *label,
    int (*on_msg)(const uint8_t *, size_t, void *), void *arg)
{
	uint8_t *packed;
	size_t n;
	char h[64], tv[24];
	const char *slash = strrchr(path, '/');
	int rv;

	memset(c, 0, sizeof(*c));
	grpc_status_init(&c->st);
	c->on_msg = on_msg;
	c->arg = arg;
	c->label = label;
	c->method = slash != NULL ? slash + 1 : path;
	c->timeout_ms = timeout_ms;
	n = protobuf_c_message_get_packed_size(req);
	if ((packed = malloc(n ? n : 1)) == NULL)
		return -ENOMEM;
	protobuf_c_message_pack(req, packed);
	rv = grpc_frame(packed, n, &c->body, &c->bodylen);
	free(packed);
	if (rv != 0)
		return rv;
	if (asprintf(&c->url, "%s%s", t->base, path) < 0) {
		c->url = NULL;
		return -ENOMEM;
	}
	c->hdrs = curl_slist_append(NULL, "content-type: application/grpc");
	c->hdrs = curl_slist_append(c->hdrs, "te: trailers");
	grpc_timeout_value(timeout_ms, tv, sizeof(tv));
	snprintf(h, sizeof(h), "grpc-timeout: %s", tv);
	c->hdrs = curl_slist_append(c->hdrs, h);
	c->hdrs = curl_slist_append(c->hdrs, "Expect:");
	c->hdrs = curl_slist_append(c->hdrs, "Accept:");
	for (const struct curl_slist *e = md; e != NULL; e = e->next)
		c->hdrs = curl_slist_append(c->hdrs, e->data);
	if (c->hdrs == NULL || (c->easy = curl_easy_init()) == NULL)
		return -ENOMEM;
	curl_easy_setopt(c->easy, CURLOPT_URL, c->url);
	curl_easy_setopt(c->easy, CURLOPT_HTTP_VERSION, t->h2c
	    ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
	    : (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(c->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->easy, CURLOPT_HTTPHEADER, c->hdrs);
	curl_easy_setopt(c->easy, CURLOPT_POST, 1L);
	curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, c->body);
	curl_easy_setopt(c->easy, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)c->bodylen);
	curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT_MS, 15000L);
	/* The server's deadline answers first; ours is the backstop. */
	curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, (long)(timeout_ms + 2000));
	curl_easy_setopt(c->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	/*
	 * A connection of its own: libcurl 7.88 failed with HTTP/2 framing
	 * errors when a multi handle reused or multiplexed h2c connections.
	 */
	curl_easy_setopt(c->easy, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(c->easy, CURLOPT_FORBID_REUSE, 1L);
	curl_easy_setopt(c->easy, CURLOPT_USERAGENT,
	    "grpc-c-mcp-sandbox-computer/" MSC_VERSION);
	curl_easy_setopt(c->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c->easy, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(c->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->easy, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->easy, CURLOPT_PRIVATE, c);
	c->rd.max = GRPC_MAX_RECV;
	return 0;
}

/*
 * The status's text in err; for an errno whose text agents see as it is
 * (-EINVAL, -ENOENT, -EEXIST: the driver passes them on), the provider's
 * message is only logged: it may hold anything (as msc_http does).
 */
static int
fail(struct grpc_call *c, int code, const char *msg, int *codep, char *err,
    size_t errlen)
{
	int rv = grpc_code_errno(code);

	if (codep != NULL)
		*codep = code;
	snprintf(err, errlen, "%s %s: %s%s%s", c->label ? c->label : "gRPC",
	    c->method, grpc_code_name(code), msg[0] ? ": " : "", msg);
	if (msg[0] != '\0' && (rv == -EINVAL || rv == -ENOENT ||
	    rv == -EEXIST)) {
		msc_log_warn("%s", err);
		snprintf(err, errlen, "%s %s: %s", c->label ? c->label : "gRPC",
		    c->method, grpc_code_name(code));
	}
	return rv;
}

int
grpc_call_result(struct grpc_call *c, CURLcode cr, int *codep, char *err,
    size_t errlen)
{
	char msg[600];

	if (codep != NULL)
		*codep = GRPC_OK;
	if (c->cb_rv > 0)
		return c->cb_rv;        /* the caller stopped it */
	if (c->cb_rv == -EPROTO)
		return fail(c, GRPC_INTERNAL, "a compressed message, which was "
		    "not asked for", codep, err, errlen);
	if (c->cb_rv == -EMSGSIZE)
		return fail(c, GRPC_RESOURCE_EXHAUSTED, "a reply message over "
		    "the receive limit", codep, err, errlen);
	if (c->cb_rv == -EBADMSG)
		return fail(c, GRPC_INTERNAL, "a malformed reply message", codep,
		    err, errlen);
	if (c->cb_rv < 0)
		return fail(c, GRPC_INTERNAL, strerror(-c->cb_rv), codep, err,
		    errlen);
	if (c->st.code >= 0) {
		if (c->st.code == GRPC_OK && grpc_reader_partial(&c->rd))
			return fail(c, GRPC_INTERNAL, "the reply ended inside a "
			    "message", codep, err, errlen);
		if (c->st.code != GRPC_OK)
			return fail(c, c->st.code, c->st.message, codep, err,
			    errlen);
		return 0;
	}
	if (cr == CURLE_OPERATION_TIMEDOUT) {
		snprintf(msg, sizeof(msg), "no reply within %llu ms",
		    (unsigned long long)c->timeout_ms);
		return fail(c, GRPC_DEADLINE_EXCEEDED, msg, codep, err, errlen);
	}
	if (cr == CURLE_COULDNT_CONNECT || cr == CURLE_COULDNT_RESOLVE_HOST ||
	    cr == CURLE_COULDNT_RESOLVE_PROXY || cr == CURLE_SSL_CONNECT_ERROR ||
	    cr == CURLE_PEER_FAILED_VERIFICATION) {
		snprintf(msg, sizeof(msg), "cannot connect: %s",
		    curl_easy_strerror(cr));
		fail(c, GRPC_UNAVAILABLE, msg, codep, err, errlen);
		return -ECONNREFUSED;
	}
	if (cr != CURLE_OK) {
		snprintf(msg, sizeof(msg), "the connection was cut: %s",
		    curl_easy_strerror(cr));
		return fail(c, GRPC_UNAVAILABLE, msg, codep, err, errlen);
	}
	if (c->st.http != 200) {
		snprintf(msg, sizeof(msg), "HTTP status %ld without a gRPC "
		    "status", c->st.http);
		return fail(c, grpc_code_from_http(c->st.http), msg, codep, err,
		    errlen);
	}
	if (!c->st.grpc_type)
		return fail(c, GRPC_UNKNOWN, "the reply is not gRPC "
		    "(content-type)", codep, err, errlen);
	return fail(c, GRPC_UNAVAILABLE, "the stream ended without a status "
	    "(cut short)", codep, err, errlen);
}

void
grpc_call_fini(struct grpc_call *c)
{
	if (c->easy != NULL)
		curl_easy_cleanup(c->easy);
	curl_slist_free_all(c->hdrs);
	free(c->url);
	free(c->body);
	grpc_reader_fini(&c->rd);
	memset(c, 0, sizeof(*c));
}

/* The blocking helpers: one transfer on the calling thread. */
struct collect {
	const ProtobufCMessageDescriptor *desc;
	ProtobufCMessage *one;          /* unary */
	int (*fn)(const ProtobufCMessage *, void *);
	void *arg;
	size_t n;
};

static int
collect_msg(const uint8_t *m, size_t len, void *arg)
{
	struct collect *k = arg;
	ProtobufCMessage *msg;
	int rv = 0;

	k->n++;
	if ((msg = protobuf_c_message_unpack(k->desc, NULL, len, m)) == NULL)
		return -EBADMSG;
	if (k->fn != NULL) {
		rv = k->fn(msg, k->arg);
		protobuf_c_message_free_unpacked(msg, NULL);
		return rv;
	}
	if (k->one != NULL) {
		protobuf_c_message_free_unpacked(msg, NULL);
		return -EBADMSG;        /* a unary call with two replies */
	}
	k->one = msg;
	return 0;
}

static int
perform(const struct grpc_target *t, const char *path,
    const ProtobufCMessage *req, struct collect *k, const struct grpc_opts *o,
    uint64_t timeout_ms, int *codep, char *err, size_t errlen)
{
	struct grpc_call c;
	CURLcode cr;
	int rv;

	if ((rv = grpc_call_init(&c, t, path, req, o->md, timeout_ms, o->label,
		 collect_msg, k)) != 0) {
		grpc_call_fini(&c);
		snprintf(err, errlen, "%s: out of memory", path);
		return rv;
	}
	cr = curl_easy_perform(c.easy);
	rv = grpc_call_result(&c, cr, codep, err, errlen);
	grpc_call_fini(&c);
	return rv;
}

int
grpc_unary(const struct grpc_target *t, const char *path,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    ProtobufCMessage **respp, const struct grpc_opts *o, int *codep,
    char *err, size_t errlen)
{
	uint64_t start = msc_now_ms();
	uint64_t deadline = start + (o->deadline_ms ? o->deadline_ms
						    : 3 * o->timeout_ms);
	int code = GRPC_OK, rv;

	*respp = NULL;
	for (int attempt = 1;; attempt++) {
		struct collect k = { .desc = rdesc };
		uint64_t now = msc_now_ms(), left = deadline > now
		    ? deadline - now : 0, to = o->timeout_ms;

		if (to > left)
			to = left > 1000 ? left : 1000;
		rv = perform(t, path, req, &k, o, to, &code, err, errlen);
		if (rv == 0 && k.one == NULL) {
			struct grpc_call c = { .label = o->label };
			const char *s = strrchr(path, '/');

			c.method = s ? s + 1 : path;
			rv = fail(&c, GRPC_INTERNAL, "no reply message", &code,
			    err, errlen);
		}
		if (rv == 0) {
			*respp = k.one;
			break;
		}
		if (k.one != NULL)
			protobuf_c_message_free_unpacked(k.one, NULL);
		if (!o->retry || !grpc_code_retryable(code) || attempt >= 4)
			break;
		now = msc_now_ms();
		{
			uint64_t wait = (uint64_t)msc_http_backoff_ms(
			    attempt - 1, 0);

			if (now + wait + 500 >= deadline)
				break;
			msc_log_debug("%s: retrying in %llu ms", err,
			    (unsigned long long)wait);
			usleep((useconds_t)wait * 1000);
		}
	}
	if (codep != NULL)
		*codep = code;
	return rv;
}

int
grpc_stream(const struct grpc_target *t, const char *path,
    const ProtobufCMessage *req, const ProtobufCMessageDescriptor *rdesc,
    int (*fn)(const ProtobufCMessage *, void *), void *arg,
    const struct grpc_opts *o, int *codep, char *err, size_t errlen)
{
	struct collect k = { .desc = rdesc, .fn = fn, .arg = arg };

	return perform(t, path, req, &k, o, o->timeout_ms, codep, err, errlen);
}
