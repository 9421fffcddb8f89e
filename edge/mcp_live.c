/*
 * mcp_live.c - cancellation and progress of tools/call; see mcp_live.h.
 */
#include "mcp_live.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include "mcp.h"
#include "msc_log.h"
#include "msc_time.h"
#include "msc_utf8.h"
#include "session.pb-c.h"

/* How long the session has to confirm a cancel. */
#define LIVE_CANCEL_MS 10000

bool
mcp_live_call_key(json_t *id, char out[MCP_LIVE_KEY_MAX])
{
	const char *s;
	int n;

	if (json_is_integer(id)) {
		snprintf(out, MCP_LIVE_KEY_MAX, "n:%lld",
		    (long long)json_integer_value(id));
		return true;
	}
	if ((s = json_string_value(id)) == NULL ||
	    strlen(s) != json_string_length(id))
		return false;
	n = snprintf(out, MCP_LIVE_KEY_MAX, "s:%s", s);
	return n > 0 && n < MCP_LIVE_KEY_MAX;
}

static void
cancel_done(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	else if (st->code != MSC__V1__CODE__NOT_FOUND)
		msc_log_warn("cancelling a call failed: %s", st->message);
}

void
mcp_live_notified(struct msc_client *session, const char *principal,
    const char *sid, const char *method, json_t *params)
{
	Msc__V1__ExecCallRef ref = MSC__V1__EXEC_CALL_REF__INIT;
	char key[MCP_LIVE_KEY_MAX];
	int rv;

	if (strcmp(method, "notifications/cancelled") != 0 || sid[0] == '\0' ||
	    session == NULL ||
	    !mcp_live_call_key(json_object_get(params, "requestId"), key))
		return;
	ref.session_id = (char *)sid;
	ref.call_key = key;
	ref.principal = (char *)principal;
	if ((rv = msc_client_call(session, &msc__v1__session__descriptor,
		 "CancelExec", &ref.base, LIVE_CANCEL_MS, cancel_done,
		 NULL)) != 0)
		msc_log_warn("cancelling a call failed: it could not be sent "
		    "(%d)", rv);
}

/* ---- progress ---- */

#define PROGRESS_EVERY_MS 1000
#define PROGRESS_PEEK_MS 5000
#define PROGRESS_LINES 5
#define PROGRESS_LINE_MAX 200

struct mcp_progress {
	pthread_mutex_t mu;             /* all below; held while sending */
	int refs;                       /* the owner, and a peek in flight */
	bool stopped;
	bool peeking;
	bool sent_any;
	uint64_t last_bytes;
	uint64_t due_ms;                /* the next poll */
	struct msc_client *session;
	json_t *token;
	char sid[64];
	char key[MCP_LIVE_KEY_MAX];
	char principal[MCP_PRINCIPAL_MAX + 1];
	void (*send)(void *ctx, json_t *msg);
	void *send_ctx;
	LIST_ENTRY(mcp_progress) link;  /* on ticker.calls */
};

/* The one thread that polls every call's progress. */
static struct {
	pthread_once_t once;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool up;
	LIST_HEAD(, mcp_progress) calls;
} ticker = { PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_COND_INITIALIZER, false, LIST_HEAD_INITIALIZER(ticker.calls) };

static void
progress_unref(struct mcp_progress *p)
{
	bool last;

	pthread_mutex_lock(&p->mu);
	last = --p->refs == 0;
	pthread_mutex_unlock(&p->mu);
	if (!last)
		return;
	json_decref(p->token);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

char *
mcp_progress_message(const uint8_t *tail, size_t len)
{
	size_t start = len, lines = 0, n = 0;
	char *raw, *out;
	size_t rlen;
	bool skip = false;

	/* Drop one trailing line end, then go back PROGRESS_LINES lines. */
	if (len > 0 && tail[len - 1] == '\n')
		len--;
	start = len;
	while (start > 0 && lines < PROGRESS_LINES) {
		if (tail[start - 1] == '\n' && ++lines == PROGRESS_LINES)
			break;
		start--;
	}
	if ((raw = msc_utf8_repair((const char *)tail + start, len - start,
	    &rlen)) == NULL)
		return NULL;
	if ((out = malloc(rlen + 1)) == NULL) {
		free(raw);
		return NULL;
	}
	for (size_t i = 0, col = 0; i < rlen; i++) {
		unsigned char ch = (unsigned char)raw[i];

		if (ch == '\n') {
			out[n++] = '\n';
			col = 0;
			skip = false;
		} else if ((ch & 0xc0) == 0x80) {
			if (!skip)              /* goes with its lead byte */
				out[n++] = (char)ch;
		} else if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			skip = true;            /* control characters go */
		} else if (!(skip = col >= PROGRESS_LINE_MAX)) {
			out[n++] = (char)ch;
			col++;
		}
	}
	out[n] = '\0';
	free(raw);
	return out;
}

static void
peeked(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct mcp_progress *p = arg;
	Msc__V1__ExecProgress *pr = (Msc__V1__ExecProgress *)resp;
	char *text = NULL;
	json_t *msg = NULL;

	(void)st;
	pthread_mutex_lock(&p->mu);
	p->peeking = false;
	p->due_ms = msc_now_ms() + PROGRESS_EVERY_MS;
	if (pr != NULL && !p->stopped &&
	    (!p->sent_any || pr->output_bytes > p->last_bytes)) {
		text = pr->output_bytes > 0 ? mcp_progress_message(
		    pr->tail.data, pr->tail.len) : NULL;
		msg = json_pack("{s:s, s:s, s:{s:O, s:I, s:s}}", "jsonrpc",
		    "2.0", "method", "notifications/progress", "params",
		    "progressToken", p->token, "progress",
		    (json_int_t)pr->output_bytes, "message",
		    text != NULL ? text : pr->running ? "running, no output yet"
						      : "waiting for its turn");
		if (msg != NULL) {
			p->send(p->send_ctx, msg);
			p->sent_any = true;
			p->last_bytes = pr->output_bytes;
		}
	}
	pthread_mutex_unlock(&p->mu);
	json_decref(msg);
	free(text);
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	progress_unref(p);
}

/* Sends the polls that are due (ticker.mu held). */
static void
poll_due_locked(uint64_t now)
{
	struct mcp_progress *p;

	LIST_FOREACH(p, &ticker.calls, link) {
		Msc__V1__ExecCallRef ref = MSC__V1__EXEC_CALL_REF__INIT;
		bool go;

		pthread_mutex_lock(&p->mu);
		go = !p->peeking && !p->stopped && now >= p->due_ms;
		if (go) {
			p->peeking = true;
			p->refs++;
		}
		pthread_mutex_unlock(&p->mu);
		if (!go)
			continue;
		ref.session_id = p->sid;
		ref.call_key = p->key;
		ref.principal = p->principal;
		if (msc_client_call(p->session, &msc__v1__session__descriptor,
			"PeekExec", &ref.base, PROGRESS_PEEK_MS, peeked,
			p) != 0) {
			struct msc_status st = { MSC__V1__CODE__UNAVAILABLE, "",
				MSC__V1__REASON__REASON_NOT_SENT };

			/* peeked takes p->mu and unrefs: not under it here. */
			peeked(p, &st, NULL);
		}
	}
}

static void *
ticker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ticker.mu);
	for (;;) {
		struct timespec until;

		while (LIST_EMPTY(&ticker.calls))
			pthread_cond_wait(&ticker.cv, &ticker.mu);
		poll_due_locked(msc_now_ms());
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100 * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&ticker.cv, &ticker.mu, &until);
	}
	return NULL;
}

static void
ticker_start(void)
{
	pthread_attr_t a;
	pthread_t t;

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ticker.up = pthread_create(&t, &a, ticker_main, NULL) == 0;
	pthread_attr_destroy(&a);
	if (!ticker.up)
		msc_log_warn("progress: no thread; calls get no progress");
}

struct mcp_progress *
mcp_progress_start(struct msc_client *session, const char *principal,
    json_t *token, const char *sid, const char *key,
    void (*send)(void *ctx, json_t *msg), void *send_ctx)
{
	struct mcp_progress *p;

	if (token == NULL || session == NULL || sid[0] == '\0' ||
	    !(json_is_string(token) || json_is_integer(token)))
		return NULL;
	pthread_once(&ticker.once, ticker_start);
	if (!ticker.up || (p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	p->refs = 1;
	p->session = session;
	p->token = json_incref(token);
	snprintf(p->sid, sizeof(p->sid), "%s", sid);
	snprintf(p->key, sizeof(p->key), "%s", key);
	snprintf(p->principal, sizeof(p->principal), "%s", principal);
	p->send = send;
	p->send_ctx = send_ctx;
	p->due_ms = msc_now_ms() + PROGRESS_EVERY_MS;
	pthread_mutex_lock(&ticker.mu);
	LIST_INSERT_HEAD(&ticker.calls, p, link);
	pthread_cond_signal(&ticker.cv);
	pthread_mutex_unlock(&ticker.mu);
	return p;
}

void
mcp_progress_stop(struct mcp_progress *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&ticker.mu);
	LIST_REMOVE(p, link);
	pthread_mutex_unlock(&ticker.mu);
	/* A notification being sent finishes first: it holds p->mu. */
	pthread_mutex_lock(&p->mu);
	p->stopped = true;
	pthread_mutex_unlock(&p->mu);
	progress_unref(p);
}
