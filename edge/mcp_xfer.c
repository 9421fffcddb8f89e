/*
 * mcp_xfer.c - computer_upload and computer_download (--tools files,
 * issue 29).
 *
 * A copy is a run of terminal_executes in the same session and computer
 * as any file tool (the same handle and ownership rules, the same
 * Session/TerminalExec call) of the computer's exec helper, by argv and
 * never through a shell, with a tar stream (lib/msc_tar.h):
 *
 *   upload:   /.msc-helper --file untar PATH 1      stdin: one batch
 *   download: /.msc-helper --file tar PATH SKIP LEN stdout: those bytes
 *
 * one after the other from the reply callback (no thread of its own): an
 * upload sends the local tree in batches of at most XFER_BATCH bytes,
 * each a whole tar stream the helper unpacks; a download asks for the
 * stream in parts of at most XFER_PART bytes (raw_output: not repaired to UTF-8,
 * not cut to --reply-output-limit) and writes what each completes. So
 * the edge holds one batch or part at a time, whatever the size. The
 * local side (xfer_local.c) confines local paths to the allowed folders.
 *
 * Which folders: --workspace, and over stdio in the legacy era the
 * client's roots (mcp_roots.c). Over HTTP only --workspace: the
 * server's machine is not the client's. At 2026-07-28 the server sends
 * no requests (MRTR would be the way; not done): --workspace only.
 */
#include "mcp.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_backend.h"
#include "msc_log.h"
#include "msc_reason.h"
#include "msc_slug.h"
#include "session.pb-c.h"
#include "tools.h"
#include "xfer.h"

#define XFER_HELPER "/.msc-helper"
/* An upload batch: within the session's 2 MiB stdin bound. */
#define XFER_BATCH (2 * 1024 * 1024 - 64 * 1024)
/* A download part: within --output-limit (2 MiB by default), with room
 * for the helper's error line. */
#define XFER_PART (2 * 1024 * 1024 - 64 * 1024)
#define XFER_PART_ROOM (64 * 1024)
#define XFER_STEP_S 120
#define XFER_PATH_MAX 4095

/* ---- a copy ------------------------------------------------------------- */

struct xfer {
	struct mcp_conn *c;
	json_t *id;
	int tool;
	bool modern, by_handle, mint, fresh;
	char sid[64];
	char computer_id[MSC_SLUG_MAX + 1];
	bool has_computer_id, has_temporary, temporary;
	char path[XFER_PATH_MAX + 1];
	char shown[XFER_PATH_MAX + 1];  /* the computer's path, answered */
	struct xfer_src *src;
	struct xfer_dst *dst;
	uint8_t *buf;
	size_t len;
	bool last;
	unsigned long long skip;
	size_t part;            /* a download part's bytes */
	char num[2][32];
	bool by_root;           /* local_path is in a client's root only */
	unsigned roots_gen;     /* the roots asked for when it was checked */
};

static int step(struct xfer *x);
static const char *roots_still(struct xfer *x);

/* Answers the call (taking `result`) and frees x. */
static void
finish(struct xfer *x, json_t *result)
{
	struct mcp_conn *c = x->c;

	if (json_is_true(json_object_get(result, "isError")) && x->fresh) {
		/* Nobody learnt the minted handle: it goes now. */
		Msc__V1__SessionRef ref = MSC__V1__SESSION_REF__INIT;

		ref.session_id = x->sid;
		ref.principal = c->principal;
		(void)msc_client_call(c->session,
		    &msc__v1__session__descriptor, "Close", &ref.base, 30000,
		    msc_reply_ignore, NULL);
	}
	mcp_conn_send_result(c, x->id, result, x->modern);
	xfer_src_free(x->src);
	xfer_dst_free(x->dst);
	free(x->buf);
	json_decref(x->id);
	free(x);
	mcp_conn_call_done(c);
	if (c->finished != NULL)
		c->finished(c->send_ctx);
}

static void
fail(struct xfer *x, const char *fmt, ...) __attribute__((format(printf, 2,
    3)));

static void
fail(struct xfer *x, const char *fmt, ...)
{
	const struct xfer_counts *n = x->src != NULL ?
	    xfer_src_counts(x->src) : x->dst != NULL ?
	    xfer_dst_counts(x->dst) : NULL;
	char text[1400];
	size_t k;
	va_list ap;

	va_start(ap, fmt);
	k = (size_t)vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n != NULL && (n->files > 0 || n->folders > 0) && k < sizeof(text))
		snprintf(text + k, sizeof(text) - k, " (it stopped after %lld "
		    "files and %lld folders: what was copied stays)",
		    n->files, n->folders);
	finish(x, tools_error_result(text));
}

static void
succeed(struct xfer *x)
{
	const struct xfer_counts *n = x->src != NULL ?
	    xfer_src_counts(x->src) : xfer_dst_counts(x->dst);
	bool up = x->tool == TOOLS_FILE_UPLOAD;
	const char *local = up ? xfer_src_path(x->src) : xfer_dst_path(x->dst);
	json_t *sc, *res;
	char summary[9000], *text;

	snprintf(summary, sizeof(summary), "Copied %lld file%s, %lld folder%s "
	    "and %lld symlink%s (%lld bytes) from %s%s to %s%s%s", n->files,
	    n->files == 1 ? "" : "s", n->folders, n->folders == 1 ? "" : "s",
	    n->symlinks, n->symlinks == 1 ? "" : "s", n->bytes,
	    up ? "" : "the computer's ", up ? local : x->shown,
	    up ? "the computer's " : "", up ? x->shown : local,
	    n->skipped > 0 ? "; left out: devices, fifos, sockets or "
	    "symlinks leading outside" : ".");
	sc = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:s}",
	    "local_path", local, "path", x->shown, "files", (json_int_t)n->files,
	    "folders", (json_int_t)n->folders, "symlinks",
	    (json_int_t)n->symlinks, "bytes", (json_int_t)n->bytes,
	    "skipped", (json_int_t)n->skipped, "summary", summary,
	    "computer_id", x->computer_id);
	if (sc != NULL && (x->modern || x->by_handle) && x->sid[0] != '\0')
		json_object_set_new(sc, "sandbox_handle", json_string(x->sid));
	text = sc != NULL ? json_dumps(sc, JSON_ENSURE_ASCII |
	    JSON_PRESERVE_ORDER) : NULL;
	if (text == NULL) {
		json_decref(sc);
		finish(x, tools_error_result("cannot encode the result"));
		return;
	}
	res = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type",
	    "text", "text", text, "structuredContent", sc, "isError", 0);
	free(text);
	finish(x, res != NULL ? res :
	    tools_error_result("cannot encode the result"));
}

/* The helper's failure, as the agent reads it. */
static void
helper_failed(struct xfer *x, const Msc__V1__TerminalExecReply *rep)
{
	const char *e = rep->stderr.len ? (const char *)rep->stderr.data : "";
	size_t n = rep->stderr.len;

	while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == ' '))
		n--;
	if (rep->exit_code == 127 || rep->exit_code == 126)
		fail(x, "This computer has no file helper (" XFER_HELPER "): "
		    "computer_upload and computer_download work on the docker "
		    "backend (Docker and Podman), in computers it started, and "
		    "on the e2b, modal, fly and WASM backends.");
	else if (rep->exit_code == 124)
		fail(x, "The file helper did not answer in time: this "
		    "computer's exec helper may predate the copy tools "
		    "(computer_restart updates it).");
	else if (rep->exit_code == 2 && n > 0)
		fail(x, "%.*s", (int)(n > 900 ? 900 : n), e);
	else
		fail(x, "The file helper failed (exit code %d): %.*s",
		    rep->exit_code, (int)(n > 500 ? 500 : n), e);
}

static void
stepped(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct xfer *x = arg;
	Msc__V1__TerminalExecReply *rep = (Msc__V1__TerminalExecReply *)resp;
	const char *why;
	char err[1024];
	int rv;

	if (rep == NULL) {
		if (x->by_handle && !x->fresh &&
		    st->reason == MSC__V1__REASON__REASON_SESSION_NOT_FOUND)
			fail(x, MCP_HANDLE_UNKNOWN_TEXT);
		else
			fail(x, "%s", mcp_failed_text(st, err, sizeof(err)));
		return;
	}
	if ((why = roots_still(x)) != NULL) {
		protobuf_c_message_free_unpacked(resp, NULL);
		fail(x, "%s", why);
		return;
	}
	if (x->mint && rep->sandbox_handle[0] != '\0') {
		snprintf(x->sid, sizeof(x->sid), "%s", rep->sandbox_handle);
		x->mint = false;
		x->fresh = true;
	}
	/* The computer it ran in, named from now on. */
	snprintf(x->computer_id, sizeof(x->computer_id), "%s",
	    rep->computer_id);
	x->has_computer_id = true;
	if (rep->exit_code != 0 || rep->stdout_bytes > 0) {
		helper_failed(x, rep);
		protobuf_c_message_free_unpacked(resp, NULL);
		return;
	}
	if (x->tool == TOOLS_FILE_UPLOAD) {
		json_t *ans = json_loadb((const char *)rep->stdout.data,
		    rep->stdout.len, 0, NULL);
		const char *shown = json_string_value(json_object_get(ans,
		    "path"));

		if (shown != NULL && x->shown[0] == '\0')
			snprintf(x->shown, sizeof(x->shown), "%s", shown);
		json_decref(ans);
		protobuf_c_message_free_unpacked(resp, NULL);
		if (x->last) {
			succeed(x);
			return;
		}
		if ((rv = xfer_src_next(x->src, x->buf, XFER_BATCH, &x->len,
		    &x->last, err, sizeof(err))) != 0) {
			fail(x, "%s", err);
			return;
		}
	} else {
		size_t got = rep->stdout.len;

		rv = xfer_dst_feed(x->dst, rep->stdout.data, got, err,
		    sizeof(err));
		protobuf_c_message_free_unpacked(resp, NULL);
		if (rv != 0) {
			fail(x, "%s", err);
			return;
		}
		x->skip += got;
		/* The end-of-archive, or the computer's stream ran out. */
		if (got < x->part || xfer_dst_ended(x->dst)) {
			if (xfer_dst_finish(x->dst, err, sizeof(err)) != 0)
				fail(x, "%s", err);
			else
				succeed(x);
			return;
		}
	}
	if ((rv = step(x)) != 0)
		fail(x, "%s", msc_reason_session_unsent(rv, NULL));
}

/*
 * Whether local_path is still in the client's roots, when it came from
 * them: the client may withdraw a root (notifications/roots/list_changed)
 * while a copy runs, and no step is taken in a folder it withdrew. NULL,
 * or the error text (static).
 */
static const char *
roots_still(struct xfer *x)
{
	struct mcp_conn *c = x->c;
	const char *local = x->src != NULL ? xfer_src_path(x->src) :
	    xfer_dst_path(x->dst), *why = NULL;
	bool in = false;

	if (!x->by_root)
		return NULL;
	pthread_mutex_lock(&c->mu);
	if (c->roots_asked == x->roots_gen) {
		pthread_mutex_unlock(&c->mu);
		return NULL;
	}
	if (c->roots_waiting)
		why = "The client's MCP roots changed during the copy and its "
		    "new list has not come: stopped; try again";
	for (size_t i = 0; why == NULL && i < c->n_roots && !in; i++)
		in = xfer_below(c->roots[i], local);
	if (why == NULL && !in)
		why = "local_path: refused: the client withdrew the MCP root "
		    "it is in during the copy: stopped";
	if (why == NULL)
		x->roots_gen = c->roots_asked;
	pthread_mutex_unlock(&c->mu);
	return why;
}

/* Sends the next helper command; 0 or a negative errno. */
static int
step(struct xfer *x)
{
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	char *args[6];
	bool up = x->tool == TOOLS_FILE_UPLOAD;

	args[0] = XFER_HELPER;
	args[1] = "--file";
	args[2] = up ? "untar" : "tar";
	args[3] = x->path;
	if (up) {
		args[4] = "1";
		req.n_args = 5;
		req.has_stdin = true;
		req.stdin.data = x->buf;
		req.stdin.len = x->len;
	} else {
		snprintf(x->num[0], sizeof(x->num[0]), "%llu", x->skip);
		snprintf(x->num[1], sizeof(x->num[1]), "%zu", x->part);
		args[4] = x->num[0];
		args[5] = x->num[1];
		req.n_args = 6;
		req.raw_output = true;
	}
	req.command = "";
	req.args = args;
	req.session_id = x->sid;
	req.new_sandbox = x->mint;
	req.principal = x->c->principal;
	req.has_computer_id = x->has_computer_id;
	req.computer_id = x->computer_id;
	req.has_temporary = x->has_temporary;
	req.temporary = x->temporary;
	req.has_timeout = true;
	req.timeout = XFER_STEP_S;
	return msc_client_call(x->c->session, &msc__v1__session__descriptor,
	    "TerminalExec", &req.base, (XFER_STEP_S + 60) * 1000, stepped, x);
}

/* The folders this call may use: NULL, or why none (static). */
static const char *
allowed(struct mcp_conn *c, bool modern, char **dirs, size_t *n,
    char **ws, unsigned *gen)
{
	const char *why = NULL;

	*n = 0;
	*ws = NULL;
	if (c->cfg->workspace != NULL &&
	    (*ws = xfer_allow_dir(c->cfg->workspace)) != NULL)
		dirs[(*n)++] = *ws;
	if (!c->stdio) {
		if (*n == 0)
			why = "computer_upload and computer_download over HTTP "
			    "need the server's --workspace (a folder on the "
			    "server's machine): it cannot see the client's "
			    "files";
		return why;
	}
	if (modern) {
		if (*n == 0)
			why = "At protocol 2026-07-28 the server asks the "
			    "client for no MCP roots: computer_upload and "
			    "computer_download need the server's --workspace";
		return why;
	}
	pthread_mutex_lock(&c->mu);
	*gen = c->roots_asked;
	/* Asked again (list_changed): the old ones may be revoked. */
	if (c->roots_declared && c->roots_waiting)
		why = "The client's MCP roots are not known yet (its answer "
		    "to roots/list has not come): try again";
	for (size_t i = 0; why == NULL && i < c->n_roots &&
	    *n < MCP_ROOTS_MAX + 1; i++)
		if ((dirs[*n] = strdup(c->roots[i])) != NULL)
			(*n)++;
	pthread_mutex_unlock(&c->mu);
	return why;
}

/* A string argument (required), checked. NULL or the error text. */
static const char *
str_arg(json_t *args, const char *key, const char **out, char *buf,
    size_t len)
{
	json_t *v = json_object_get(args, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		snprintf(buf, len, "%s: Field required", key);
	else if (!json_is_string(v))
		snprintf(buf, len, "%s: Input should be a valid string", key);
	else if (json_string_length(v) == 0)
		snprintf(buf, len, "%s: must not be empty", key);
	else if (strlen(json_string_value(v)) != json_string_length(v))
		snprintf(buf, len, "%s: contains a NUL character", key);
	else if (json_string_length(v) > XFER_PATH_MAX)
		snprintf(buf, len, "%s: longer than 4095 bytes", key);
	else {
		*out = json_string_value(v);
		return NULL;
	}
	return buf;
}

/* The request's where-arguments (computer_id, temporary), as
 * terminal_execute reads them. NULL or the error text. */
static char *
where_args(struct xfer *x, json_t *args)
{
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	json_t *keep = json_array();
	char *msg = tools_exec_request(args, &req, keep);

	if (msg == NULL && req.computer_id != NULL)
		snprintf(x->computer_id, sizeof(x->computer_id), "%s",
		    req.computer_id);
	x->has_computer_id = req.has_computer_id;
	x->has_temporary = req.has_temporary;
	x->temporary = req.temporary;
	tools_exec_request_fini(&req);
	json_decref(keep);
	return msg;
}

bool
mcp_xfer_call(struct mcp_conn *c, json_t *id, json_t *args, int tool,
    bool modern)
{
	const char *name = tool == TOOLS_FILE_UPLOAD ? "computer_upload" :
	    "computer_download";
	char *dirs[MCP_ROOTS_MAX + 1], *ws, buf[9000], msg_buf[200], *msg;
	const char *local, *path, *bad;
	struct xfer_allow allow;
	struct xfer *x;
	size_t n, pl;
	int rv;

	if (!json_is_object(args)) {
		snprintf(buf, sizeof(buf), "Error executing tool %s: "
		    "arguments: Input should be a valid dictionary", name);
		mcp_conn_send_result(c, id, tools_error_result(buf), modern);
		return false;
	}
	if (!tools_backend_has(c->cfg, MSC_BACKEND_FILES)) {
		snprintf(buf, sizeof(buf), "%s works on the docker (Docker "
		    "and Podman), e2b, modal, fly and WASM backends only for "
		    "now: the %s backend has no copy yet; use file_write and "
		    "file_read.", name, c->cfg->backend);
		mcp_conn_send_result(c, id, tools_error_result(buf), modern);
		return false;
	}
	if ((bad = str_arg(args, "local_path", &local, msg_buf,
	    sizeof(msg_buf))) != NULL || (bad = str_arg(args, "path", &path,
	    msg_buf, sizeof(msg_buf))) != NULL) {
		snprintf(buf, sizeof(buf), "Error executing tool %s: %s", name,
		    bad);
		mcp_conn_send_result(c, id, tools_error_result(buf), modern);
		return false;
	}
	if ((x = calloc(1, sizeof(*x))) == NULL) {
		mcp_conn_send_error(c, id, -32603, "Internal error: out of "
		    "memory");
		return false;
	}
	x->c = c;
	x->tool = tool;
	x->modern = modern;
	/* Within the command's output bound, whatever the operator set. */
	x->part = XFER_PART;
	if (c->cfg->output_limit > 0 && (size_t)c->cfg->output_limit <
	    XFER_PART + XFER_PART_ROOM)
		x->part = (size_t)c->cfg->output_limit < 2 * XFER_PART_ROOM ?
		    (size_t)c->cfg->output_limit / 2 :
		    (size_t)c->cfg->output_limit - XFER_PART_ROOM;
	if (x->part < 512)
		x->part = 512;
	/* The computer's path, its trailing slashes dropped. */
	snprintf(x->path, sizeof(x->path), "%s", path);
	pl = strlen(x->path);
	while (pl > 1 && x->path[pl - 1] == '/')
		x->path[--pl] = '\0';
	if (tool == TOOLS_FILE_DOWNLOAD)
		snprintf(x->shown, sizeof(x->shown), "%s", x->path);
	if ((msg = where_args(x, args)) != NULL) {
		mcp_conn_send_result(c, id, tools_error_result(msg), modern);
		free(msg);
		free(x);
		return false;
	}
	if (strcmp(x->path, "/") == 0 || strcmp(x->path, ".") == 0 ||
	    (pl >= 2 && strcmp(x->path + pl - 2, "/.") == 0) ||
	    strcmp(x->path, "..") == 0 ||
	    (pl >= 3 && strcmp(x->path + pl - 3, "/..") == 0)) {
		snprintf(buf, sizeof(buf), "Error executing tool %s: path: %s: "
		    "name the folder by its name (not /, . or ..)", name,
		    path);
		mcp_conn_send_result(c, id, tools_error_result(buf), modern);
		free(x);
		return false;
	}
	if ((bad = allowed(c, modern, dirs, &n, &ws, &x->roots_gen)) !=
	    NULL) {
		for (size_t i = 0; i < n; i++)
			free(dirs[i]);
		mcp_conn_send_result(c, id, tools_error_result(bad), modern);
		free(x);
		return false;
	}
	allow.dirs = (const char *const *)dirs;
	allow.n = n;
	allow.workspace = ws;
	if (tool == TOOLS_FILE_UPLOAD)
		rv = xfer_src_open(&allow, local, &x->src, buf, sizeof(buf));
	else
		rv = xfer_dst_open(&allow, local, &x->dst, buf, sizeof(buf));
	/* In the server's workspace, or only in a client's root. */
	if (rv == 0)
		x->by_root = ws == NULL || !xfer_below(ws, tool ==
		    TOOLS_FILE_UPLOAD ? xfer_src_path(x->src) :
		    xfer_dst_path(x->dst));
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	if (rv != 0) {
		mcp_conn_send_result(c, id, tools_error_result(buf), modern);
		free(x);
		return false;
	}
	if (!mcp_pick_session(c, id, modern, args, x->sid, &x->by_handle,
	    &x->mint)) {
		xfer_src_free(x->src);
		xfer_dst_free(x->dst);
		free(x);
		return false;
	}
	if (tool == TOOLS_FILE_UPLOAD && ((x->buf = malloc(XFER_BATCH)) ==
	    NULL || xfer_src_next(x->src, x->buf, XFER_BATCH, &x->len,
	    &x->last, buf, sizeof(buf)) != 0)) {
		mcp_conn_send_result(c, id, tools_error_result(x->buf == NULL ?
		    "out of memory" : buf), modern);
		xfer_src_free(x->src);
		free(x->buf);
		free(x);
		return false;
	}
	x->id = json_incref(id);
	pthread_mutex_lock(&c->mu);
	c->inflight++;
	pthread_mutex_unlock(&c->mu);
	if ((rv = step(x)) != 0) {
		fail(x, "%s", msc_reason_session_unsent(rv, NULL));
		return false;
	}
	return true;
}
