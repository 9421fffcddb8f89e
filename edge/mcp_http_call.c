/*
 * mcp_http_call.c - a request's life on the Streamable HTTP transport:
 * made when MHD hands it over, referenced by each call to the session
 * service, suspended while it waits, freed with its last reference (the
 * last call of a stopped server frees the server); and its reply as an
 * SSE stream, for a tools/call whose progress notifications come before
 * its result: the first notification answers 200 text/event-stream, each
 * message is one `event: message` and the result ends the stream. MHD
 * pulls the events; with none queued its reader suspends the connection,
 * and the next message resumes it. Progress events a client does not
 * read are dropped past HTTP_SSE_MAX_QUEUED bytes; the result always goes
 * out. The files that answer, route and run calls (mcp_http.c,
 * mcp_http_post.c, mcp_http_modern.c) call down into this one.
 */
#include "mcp_http_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"

#define HTTP_SSE_MAX_QUEUED (64u * 1024)

/* --- a call's life -------------------------------------------------------- */

void
http_server_free(struct edge_http *h)
{
	pthread_mutex_destroy(&h->mu);
	http_principals_fini(h);
	free(h->hosts);
	free(h->origins);
	free(h->env_copy);
	free(h->proxies);
	free(h);
}

struct http_call *
http_call_new(struct edge_http *h, struct MHD_Connection *conn)
{
	struct http_call *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->h = h;
	c->conn = conn;
	c->refs = 1;
	c->mhd_ref = true;
	pthread_mutex_lock(&h->mu);
	LIST_INSERT_HEAD(&h->calls, c, link);
	h->ncalls++;
	h->nserving++;
	pthread_mutex_unlock(&h->mu);
	return c;
}

void
http_call_ref(struct http_call *c)
{
	pthread_mutex_lock(&c->h->mu);
	c->refs++;
	pthread_mutex_unlock(&c->h->mu);
}

void
http_call_unref(struct http_call *c)
{
	struct edge_http *h = c->h;
	bool last;

	pthread_mutex_lock(&h->mu);
	if (--c->refs > 0) {
		pthread_mutex_unlock(&h->mu);
		return;
	}
	LIST_REMOVE(c, link);
	/* The last call of a stopped server frees it. */
	last = --h->ncalls == 0 && h->stopped;
	pthread_mutex_unlock(&h->mu);
	if (c->body != NULL)
		atomic_fetch_sub(&h->body_bytes, c->len);
	json_decref(c->msg);
	http_sse_free(c);
	free(c->body);
	free(c);
	if (last)
		http_server_free(h);
}

bool
http_call_suspend(struct http_call *c)
{
	struct edge_http *h = c->h;
	bool ok;

	pthread_mutex_lock(&h->mu);
	ok = !h->stopping;
	if (ok) {
		c->suspended = true;
		MHD_suspend_connection(c->conn);
	}
	pthread_mutex_unlock(&h->mu);
	if (!ok)
		http_answer(c, 503, NULL, NULL, 0, "Retry-After", "1");
	return ok;
}

/* --- its SSE stream ------------------------------------------------------- */

struct http_sse {
	char *buf;              /* queued bytes: [off, len) */
	size_t off, len, cap;
	bool done;              /* the result is queued: end after it */
	bool waiting;           /* the reader suspended the connection */
};

/* Appends n bytes (h->mu held); false when out of memory. */
static bool
sse_append_locked(struct http_sse *s, const char *p, size_t n)
{
	if (s->off > 0 && s->off == s->len)
		s->off = s->len = 0;
	if (s->len + n > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		char *nb;

		while (cap < s->len + n)
			cap *= 2;
		if ((nb = realloc(s->buf, cap)) == NULL)
			return false;
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return true;
}

static ssize_t
sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_call *c = cls;
	struct http_sse *s = c->sse;
	ssize_t n;

	(void)pos;
	pthread_mutex_lock(&c->h->mu);
	if (s->off < s->len) {
		n = (ssize_t)(s->len - s->off < max ? s->len - s->off : max);
		memcpy(buf, s->buf + s->off, (size_t)n);
		s->off += (size_t)n;
	} else if (s->done) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		/* Nothing yet: the next message resumes the connection. */
		s->waiting = true;
		MHD_suspend_connection(c->conn);
		n = 0;
	}
	pthread_mutex_unlock(&c->h->mu);
	return n;
}

/* MHD destroyed the response: drop its reference to c. */
static void
sse_free(void *cls)
{
	http_call_unref(cls);
}

/* Starts the stream: answers c with it (h->mu not held). */
static bool
sse_start(struct http_call *c)
{
	struct MHD_Response *r;
	struct http_sse *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return false;
	http_call_ref(c);               /* the response's, until sse_free */
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
	    sse_read, c, sse_free);
	if (r == NULL || MHD_add_response_header(r, "Content-Type",
	    "text/event-stream") != MHD_YES || MHD_add_response_header(r,
	    "Cache-Control", "no-cache") != MHD_YES ||
	    MHD_add_response_header(r, "X-Accel-Buffering", "no") != MHD_YES) {
		if (r != NULL)
			MHD_destroy_response(r);        /* sse_free unrefs */
		else
			http_call_unref(c);
		free(s);
		return false;
	}
	pthread_mutex_lock(&c->h->mu);
	c->sse = s;
	pthread_mutex_unlock(&c->h->mu);
	http_answer_response(c, 200, r);
	return true;
}

bool
http_sse_send(struct http_call *c, json_t *msg)
{
	bool final = json_object_get(msg, "id") != NULL;
	struct http_sse *s;
	char *text;
	bool ok;

	pthread_mutex_lock(&c->h->mu);
	s = c->sse;
	pthread_mutex_unlock(&c->h->mu);
	if (s == NULL && final)
		return false;           /* no progress came: plain JSON */
	if (s == NULL && !sse_start(c))
		return true;            /* a notification lost: no memory */
	if ((text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII)) == NULL)
		return true;
	pthread_mutex_lock(&c->h->mu);
	s = c->sse;
	if (!final && s->len - s->off > HTTP_SSE_MAX_QUEUED) {
		/* The client does not read: progress waits no more. */
		ok = true;
	} else {
		ok = sse_append_locked(s, "event: message\ndata: ", 21) &&
		    sse_append_locked(s, text, strlen(text)) &&
		    sse_append_locked(s, "\n\n", 2);
	}
	if (final)
		http_sse_end_locked(c);         /* even without the event */
	else if (s->waiting && c->mhd_ref) {
		s->waiting = false;
		http_resume_locked(c);
	}
	pthread_mutex_unlock(&c->h->mu);
	if (!ok)
		msc_log_err("http: out of memory for an SSE event");
	free(text);
	return true;
}

void
http_sse_end_locked(struct http_call *c)
{
	struct http_sse *s = c->sse;

	if (s == NULL)
		return;
	s->done = true;
	if (s->waiting && c->mhd_ref) {
		s->waiting = false;
		http_resume_locked(c);
	}
}

void
http_sse_free(struct http_call *c)
{
	if (c->sse == NULL)
		return;
	free(c->sse->buf);
	free(c->sse);
	c->sse = NULL;
}
