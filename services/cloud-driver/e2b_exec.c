/*
 * e2b_exec.c - commands through envd's process API: a server-streaming
 * Connect call POST /process.Process/Start (JSON envelopes over libcurl,
 * driven by curl_multi so our deadline and the output limit hold while it
 * streams), SendInput/CloseStdin for stdin, and SendSignal SIGKILL plus a
 * sweep of every process carrying our KILNTAINERS_EXEC marker on timeout,
 * overflow or Driver/Cancel (envd signals only the top process).
 */
#include "e2b_driver_int.h"
#include "e2b_lease.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_helper_copy.h"
#include "msc_driver.h"
#include "msc_driver_live.h"
#include "msc_log.h"
#include "msc_random.h"

#define ENVD_PORT "49983"
#define STDIN_CHUNK (48u << 10)
#define IDLE_MS 70000       /* no byte (keepalives included) this long: dropped */
#define CANCEL_START_MS 5000 /* a cancelled call waits this long for its pid */

struct x {
	struct e2b_driver *d;
	const char *id;
	struct e2b_known k;
	struct curl_slist *hdrs;   /* envd headers (no content type) */
	char base[512];
};

struct stream {
	struct e2b_frames fr;
	long status;
	char *ebody;               /* non-200 body */
	size_t elen;
	int64_t pid;
	bool ended, eos, bad;
	bool cancelled;            /* Driver/Cancel while it ran */
	int exit_code;
	char *out, *err;
	size_t olen, errl;
	uint64_t limit;
	bool over;
	uint64_t last_ms;
	char code[64], text[256];
};

static int
envd_headers(struct x *x)
{
	char h[512];

	snprintf(h, sizeof(h), "E2b-Sandbox-Id: %s", x->k.sbx);
	x->hdrs = curl_slist_append(NULL, h);
	x->hdrs = curl_slist_append(x->hdrs, "E2b-Sandbox-Port: " ENVD_PORT);
	x->hdrs = curl_slist_append(x->hdrs, "Keepalive-Ping-Interval: 20");
	if (x->k.token[0] != '\0') {
		snprintf(h, sizeof(h), "X-Access-Token: %s", x->k.token);
		x->hdrs = curl_slist_append(x->hdrs, h);
		explicit_bzero(h, sizeof(h));
	}
	if (x->d->sandbox_url != NULL)
		snprintf(x->base, sizeof(x->base), "%s", x->d->sandbox_url);
	else if (strcmp(x->k.domain, "e2b.app") == 0 ||
	    strcmp(x->k.domain, "e2b.dev") == 0 ||
	    strcmp(x->k.domain, "e2b.pro") == 0 ||
	    strcmp(x->k.domain, "e2b-staging.dev") == 0)
		snprintf(x->base, sizeof(x->base), "https://sandbox.%s",
		    x->k.domain);
	else
		snprintf(x->base, sizeof(x->base), "https://" ENVD_PORT "-%s.%s",
		    x->k.sbx, x->k.domain);
	return x->hdrs != NULL ? 0 : -ENOMEM;
}

/* A unary process call (SendInput, CloseStdin, SendSignal). */
static int
unary(struct x *x, const char *method, json_t *body, char *err,
    size_t errlen)
{
	char url[640], what[128];
	struct msc_http_req r = { .method = "POST", .url = url,
		.what = what, .peer = "E2B", .hdrs = x->hdrs, .body = body,
		.timeout_ms = 15000, .deadline_ms = 30000, .retry_5xx = false,
		.err_key = "message" };

	snprintf(url, sizeof(url), "%s/process.Process/%s", x->base, method);
	snprintf(what, sizeof(what), "E2B envd %s", method);
	return msc_http_call(&r, NULL, NULL, NULL, 0, err, errlen);
}

static int
on_frame(uint8_t flags, const char *msg, size_t len, void *arg)
{
	struct stream *s = arg;
	struct e2b_event ev;
	char **buf;
	size_t *blen;

	if (flags & 0x02) {
		s->eos = true;
		return e2b_conv_eos(msg, len, s->code, sizeof(s->code), s->text,
		    sizeof(s->text)) < 0 ? -EPROTO : 0;
	}
	if (flags != 0 || e2b_conv_event(msg, len, &ev) != 0)
		return -EPROTO;
	switch (ev.kind) {
	case E2B_EV_START:
		s->pid = ev.pid;
		break;
	case E2B_EV_STDOUT:
	case E2B_EV_STDERR:
		if (s->pid == 0) {
			free(ev.data);
			return -EPROTO;
		}
		buf = ev.kind == E2B_EV_STDOUT ? &s->out : &s->err;
		blen = ev.kind == E2B_EV_STDOUT ? &s->olen : &s->errl;
		if (s->olen + s->errl + ev.len > s->limit) {
			free(ev.data);
			s->over = true;
			return 1;
		}
		{
			char *g = realloc(*buf, *blen + ev.len + 1);

			if (g == NULL) {
				free(ev.data);
				return -ENOMEM;
			}
			memcpy(g + *blen, ev.data, ev.len);
			*blen += ev.len;
			g[*blen] = '\0';
			*buf = g;
		}
		free(ev.data);
		break;
	case E2B_EV_END:
		s->ended = true;
		s->exit_code = ev.exit_code;
		break;
	default:
		break;
	}
	return 0;
}

static size_t
on_data(char *p, size_t sz, size_t n, void *arg)
{
	void **pair = arg;
	struct stream *s = pair[0];
	size_t len = sz * n;

	s->last_ms = msc_now_ms();
	if (s->status == 0)
		curl_easy_getinfo(pair[1], CURLINFO_RESPONSE_CODE, &s->status);
	if (s->status != 200) {
		char *g;

		if (s->elen + len > 65536 ||
		    (g = realloc(s->ebody, s->elen + len + 1)) == NULL)
			return 0;
		memcpy(g + s->elen, p, len);
		s->elen += len;
		g[s->elen] = '\0';
		s->ebody = g;
		return len;
	}
	if (e2b_frames_feed(&s->fr, p, len, on_frame, s) != 0) {
		if (!s->over)
			s->bad = true;
		return 0;
	}
	return len;
}

/* Sends stdin and EOF once the process started. */
static int
feed_stdin(struct x *x, int64_t pid, const uint8_t *data, size_t len,
    char *err, size_t errlen)
{
	json_t *body;
	char *b64;
	int rv = 0;

	for (size_t off = 0; rv == 0 && off < len; off += STDIN_CHUNK) {
		size_t n = len - off < STDIN_CHUNK ? len - off : STDIN_CHUNK;

		if (e2b_conv_b64encode(data + off, n, &b64) != 0)
			return -ENOMEM;
		body = json_pack("{s:{s:I}, s:{s:s}}", "process", "pid",
		    (json_int_t)pid, "input", "stdin", b64);
		free(b64);
		rv = unary(x, "SendInput", body, err, errlen);
		json_decref(body);
	}
	if (rv == 0) {
		body = json_pack("{s:{s:I}}", "process", "pid", (json_int_t)pid);
		rv = unary(x, "CloseStdin", body, err, errlen);
		json_decref(body);
	}
	return rv;
}

/*
 * Runs one process: cmd/args/cwd/envs, stdin when `in` (may be empty),
 * until it ends, `timeout_ms`, more than `limit` output bytes, or
 * `cancel_fd` becomes readable (-1: never). Returns 0 with *s filled
 * (s->ended, s->over, s->cancelled, or none on our deadline), or a
 * transport error (-EPIPE: the stream dropped or failed).
 */
static int
run(struct x *x, const char *cmd, json_t *args, const char *cwd,
    json_t *envs, const ProtobufCBinaryData *in, uint64_t timeout_ms,
    int cancel_fd, struct stream *s, char *err, size_t errlen)
{
	struct curl_waitfd wfd = { .fd = cancel_fd, .events = CURL_WAIT_POLLIN };
	struct curl_slist *h = NULL;
	void *pair[2] = { s, NULL };
	json_t *req, *proc;
	char *msg, *env = NULL, url[640], hdr[64];
	size_t envlen = 0;
	uint64_t end = msc_now_ms() + timeout_ms;
	bool fed = in == NULL;
	CURLM *m;
	CURL *c;
	int running = 1, rv = 0;

	proc = json_pack("{s:s, s:O, s:O}", "cmd", cmd, "args", args, "envs",
	    envs);
	if (proc != NULL && cwd != NULL && *cwd != '\0')
		json_object_set_new(proc, "cwd", json_string(cwd));
	req = json_pack("{s:o, s:b}", "process", proc, "stdin", in != NULL);
	if (req == NULL || (msg = json_dumps(req, JSON_COMPACT)) == NULL) {
		json_decref(req);
		return -ENOMEM;
	}
	json_decref(req);
	rv = e2b_conv_envelope(0, msg, strlen(msg), &env, &envlen);
	free(msg);
	if (rv != 0)
		return rv;
	for (const struct curl_slist *e = x->hdrs; e != NULL; e = e->next)
		h = curl_slist_append(h, e->data);
	h = curl_slist_append(h, "Content-Type: application/connect+json");
	h = curl_slist_append(h, "Connect-Protocol-Version: 1");
	h = curl_slist_append(h, "Expect:");
	snprintf(hdr, sizeof(hdr), "Connect-Timeout-Ms: %llu",
	    (unsigned long long)timeout_ms + 1000);
	h = curl_slist_append(h, hdr);
	snprintf(url, sizeof(url), "%s/process.Process/Start", x->base);
	c = curl_easy_init();
	m = curl_multi_init();
	if (c == NULL || m == NULL || h == NULL) {
		rv = -ENOMEM;
		goto out;
	}
	pair[1] = c;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, env);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)envlen);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 15000L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "mcp-sandbox-computer/"
	    MSC_VERSION);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, pair);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_multi_add_handle(m, c);
	s->last_ms = msc_now_ms();
	while (running) {
		CURLMsg *cm;
		int left;

		curl_multi_perform(m, &running);
		while ((cm = curl_multi_info_read(m, &left)) != NULL)
			if (cm->msg == CURLMSG_DONE && !s->over && !s->ended &&
			    cm->data.result != CURLE_OK && s->status == 0) {
				snprintf(err, errlen, "E2B envd Start: %s",
				    curl_easy_strerror(cm->data.result));
				rv = -EPIPE;
			}
		if (!running || s->over || s->ended || s->eos || s->bad)
			break;
		if (cancel_fd >= 0 && wfd.revents != 0) {
			/* Wait (briefly) for its pid: envd starts it anyway. */
			s->cancelled = true;
			cancel_fd = -1;
			if (end > msc_now_ms() + CANCEL_START_MS)
				end = msc_now_ms() + CANCEL_START_MS;
		}
		if (s->cancelled && s->pid != 0)
			break;
		if (!fed && s->pid != 0 && !s->cancelled) {
			fed = true;
			if ((rv = feed_stdin(x, s->pid, in->data, in->len, err,
				 errlen)) != 0) {
				rv = -EPIPE;
				break;
			}
		}
		if (msc_now_ms() >= end)
			break;
		if (msc_now_ms() - s->last_ms > IDLE_MS) {
			snprintf(err, errlen, "E2B envd Start: the stream went "
					      "silent");
			rv = -EPIPE;
			break;
		}
		wfd.revents = 0;
		curl_multi_poll(m, cancel_fd >= 0 ? &wfd : NULL,
		    cancel_fd >= 0 ? 1 : 0, 100, NULL);
	}
	if (rv == 0 && s->bad) {
		snprintf(err, errlen, "E2B envd Start: malformed Connect frame");
		rv = -EPROTO;
	} else if (rv == 0 && s->status != 0 && s->status != 200) {
		json_t *j = s->ebody ? json_loads(s->ebody, 0, NULL) : NULL;
		const char *t = json_string_value(json_object_get(j, "message"));

		snprintf(err, errlen, "E2B envd Start: HTTP %ld%s%s", s->status,
		    t ? ": " : "", t ? t : "");
		json_decref(j);
		rv = s->status == 401 || s->status == 403 ? -EACCES
		    : s->status == 429			  ? -EAGAIN
							  : -EPIPE;
	} else if (rv == 0 && !running && !s->ended && !s->over && !s->eos &&
	    msc_now_ms() < end) {
		snprintf(err, errlen, "E2B envd Start: the stream ended early");
		rv = -EPIPE;
	}
out:
	if (m != NULL && c != NULL)
		curl_multi_remove_handle(m, c);
	curl_easy_cleanup(c);
	curl_multi_cleanup(m);
	curl_slist_free_all(h);
	free(env);
	e2b_frames_fini(&s->fr);
	return rv;
}

static void
stream_fini(struct stream *s)
{
	free(s->out);
	free(s->err);
	free(s->ebody);
	memset(s, 0, sizeof(*s));
}

/* SIGKILL to the top process, then every process with our marker. */
static void
kill_all(struct x *x, int64_t pid, const char *tok)
{
	char ignore[E2B_ERRLEN];
	json_t *body, *args, *envs;
	struct stream s = { .limit = 65536 };

	if (pid != 0) {
		body = json_pack("{s:{s:I}, s:s}", "process", "pid",
		    (json_int_t)pid, "signal", "SIGNAL_SIGKILL");
		if (unary(x, "SendSignal", body, ignore, sizeof(ignore)) != 0)
			msc_log_debug("e2b: SendSignal: %s", ignore);
		json_decref(body);
	}
	args = json_pack("[sss]", "-c", msc_driver_sweep_sh, "kt");
	json_array_append_new(args, json_string(tok));
	envs = json_object();
	if (run(x, "/bin/sh", args, NULL, envs, NULL, 15000, -1, &s, ignore,
		sizeof(ignore)) != 0)
		msc_log_warn("e2b: cannot sweep a command on sandbox %s: %s",
		    x->k.sbx, ignore);
	json_decref(args);
	json_decref(envs);
	stream_fini(&s);
}

static void
refreshed(void *rec, void *arg)
{
	struct e2b_known *k = rec;

	(void)arg;
	k->refreshed_ms = msc_now_ms();
}

static void
refresh_ttl(struct x *x)
{
	char path[256], ignore[E2B_ERRLEN];
	json_t *body;

	if (msc_now_ms() - x->k.refreshed_ms < 60000)
		return;
	snprintf(path, sizeof(path), "/sandboxes/%s/timeout", x->k.sbx);
	body = json_pack("{s:I}", "timeout",
	    (json_int_t)e2b_lease_ttl(x->d, x->k.temporary));
	if (e2b_api(x->d, "POST", path, body, 15000, true, NULL, NULL, 0,
		ignore, sizeof(ignore)) != 0)
		msc_log_debug("e2b: %s", ignore);
	json_decref(body);
	/* -ENOENT: forgotten meanwhile, nothing to refresh. */
	(void)msc_known_update(x->d->known, x->id, false, refreshed, NULL);
}

static int
exec_direct(void *be, const Msc__V1__ExecRequest *r,
    Msc__V1__ExecResult *res, char *err, size_t errlen)
{
	struct e2b_driver *d = be;
	struct x x = { .d = d, .id = r->computer_id };
	struct stream s = { 0 };
	char tok[33];
	const char *cmd, *shell = d->cfg->shell;
	json_t *args, *envs;
	uint64_t start = msc_now_ms(), timeout_ms;
	int rv, tries = 0;

	if ((rv = e2b_lookup(d, r->computer_id, &x.k, err, errlen)) != 0) {
		if (rv == -ENOENT) {
			return msc_driver_died(err, errlen, r->computer_id,
			    "its E2B sandbox is gone. The next call starts it "
			    "again.");
		}
		return rv;
	}
	if ((rv = envd_headers(&x)) != 0)
		return rv;
	refresh_ttl(&x);
	msc_random_hex(tok, 16);
	timeout_ms = (uint64_t)r->timeout_s * 1000;
	envs = json_pack("{s:s}", MSC_DRIVER_MARKER_VAR, tok);
	args = json_array();
	if (r->n_args > 0) {
		cmd = r->args[0];
		for (size_t i = 1; i < r->n_args; i++)
			json_array_append_new(args, json_string(r->args[i]));
	} else {
		size_t n = strlen(shell);

		cmd = shell;
		if (n >= 4 && strcmp(shell + n - 4, "bash") == 0)
			json_array_append_new(args, json_string("-l"));
		json_array_append_new(args, json_string("-c"));
		json_array_append_new(args, json_string(r->command));
	}
	res->outcome = MSC__V1__EXEC_OUTCOME__EXITED;
	for (;;) {
		s.limit = r->output_limit;
		rv = run(&x, cmd, args, r->working_directory, envs,
		    r->has_stdin ? &r->stdin : NULL, timeout_ms,
		    msc_driver_cancel_fd(), &s, err, errlen);
		/* 429 before the process started: safe to try again. */
		if (rv != -EAGAIN || s.pid != 0 || ++tries > 5)
			break;
		stream_fini(&s);
		usleep((useconds_t)msc_http_backoff_ms(tries, 0) * 1000);
	}
	if (rv == 0 && s.cancelled) {
		kill_all(&x, s.pid, tok);
		snprintf(err, errlen, "Computer '%s': the command was cancelled "
		    "and killed.", r->computer_id);
		rv = -ECANCELED;
	} else if (rv == 0 && s.ended) {
		res->exit_code = s.exit_code;
		res->stdout.data = (uint8_t *)s.out;
		res->stdout.len = s.olen;
		res->stderr.data = (uint8_t *)s.err;
		res->stderr.len = s.errl;
		s.out = s.err = NULL;
	} else if (rv == 0 && s.eos && s.code[0] != '\0' &&
	    strcmp(s.code, "deadline_exceeded") != 0) {
		snprintf(err, errlen, "E2B envd Start: %s: %s", s.code, s.text);
		rv = strcmp(s.code, "unauthenticated") == 0 ? -EACCES
		    : strcmp(s.code, "invalid_argument") == 0 ? -EINVAL
							   : -EPIPE;
	} else if (rv == 0) {
		/* Our deadline, envd's, or the output limit. */
		kill_all(&x, s.pid, tok);
		res->outcome = s.over ? MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT
				      : MSC__V1__EXEC_OUTCOME__TIMED_OUT;
		res->exit_code = s.over ? 1 : 124;
	}
	if (rv == -EPIPE || rv == -EPROTO) {
		int died = e2b_died(d, r->computer_id, x.k.sbx, err, errlen);

		if (died != 0)
			rv = died;
		else {
			if (s.pid != 0)
				kill_all(&x, s.pid, tok);
			rv = -EIO;
		}
	}
	stream_fini(&s);
	json_decref(args);
	json_decref(envs);
	curl_slist_free_all(x.hdrs);
	res->duration_ms = msc_now_ms() - start;
	return rv;
}

/* How the exec helper reaches a sandbox (lib/msc_helper_copy.c). */
static const struct msc_helper_copy helper_copy = {
	.exec = exec_direct,
	.build_path = MSC_HELPER_COPY_BUILD_PATH,
	.installed_path = MSC_HELPER_COPY_INSTALLED_PATH,
};

/* The agent's command, or the exec helper's mode (msc_helper_copy.c). */
int
e2b_exec(struct e2b_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *res, char *err, size_t errlen)
{
	return msc_helper_copy_exec(&helper_copy, d, req, res, err, errlen);
}

int
e2b_processes(void *be, const char *id)
{
	return msc_helper_copy_processes(&helper_copy, be, id);
}
