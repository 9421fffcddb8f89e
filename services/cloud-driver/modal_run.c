/*
 * modal_run.c - one command through the sandbox task's command router:
 * TaskExecStart (argv, workdir, env, timeout_secs as the router's own
 * kill), TaskExecStdinWrite with EOF, then two TaskExecStdioRead streams
 * and TaskExecWait multiplexed by one curl_multi on one HTTP/2
 * connection, so our deadline and the output limit hold while output
 * streams. Reads resume from their offset after a transient failure;
 * the wait is sent again when its per-call deadline passes. Used by the
 * Exec op (modal_exec.c) and the readiness check (modal_sandboxes.c).
 */
#include "modal_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "msc_driver.h"
#include "msc_driver_live.h"
#include "msc_log.h"
#include "msc_time.h"

#define LABEL "Modal command router"
#define STDIN_CHUNK (512u << 10)
#define WAIT_CALL_MS 55000      /* one TaskExecWait; sent again after */
#define DRAIN_MS 3000           /* output after the exit, at most this */
#define READ_RETRIES 10
#define WAIT_RETRIES 5

struct xrun;

/* One TaskExecStdioRead stream (fd 0 stdout, 1 stderr). */
struct reader {
	struct xrun *x;
	struct grpc_call c;
	int fd;
	bool active, done;
	uint64_t offset;        /* bytes received: where a resume starts */
	int retries;
	uint64_t retry_at;      /* 0: none due */
};

struct xrun {
	struct modal_driver *d;
	struct modal_known *k;
	const char *exec_id;
	struct grpc_target t;
	struct curl_slist *md;
	CURLM *m;
	struct reader io[2];
	struct grpc_call wait;
	bool wait_active;
	int wait_retries;
	uint64_t wait_retry_at;
	uint64_t end, waited_at;
	bool got_exit;          /* a wait reply had the exit (status pending) */
	int exit_code;
	struct modal_run *r;
	uint64_t limit;
	int cancel_fd;          /* readable: cancelled; -1 none */
	int rv;                 /* the first failure */
	char *err;
	size_t errlen;
};

void
modal_run_fini(struct modal_run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static uint64_t
left_ms(const struct xrun *x)
{
	uint64_t now = msc_now_ms();

	return x->end > now ? x->end - now : 0;
}

static int
on_read(const uint8_t *m, size_t len, void *arg)
{
	struct reader *io = arg;
	struct modal_run *r = io->x->r;
	Modal__TaskCommandRouter__TaskExecStdioReadResponse *msg;
	char **buf = io->fd == 0 ? &r->out : &r->err;
	size_t *blen = io->fd == 0 ? &r->olen : &r->elen;
	char *g;

	msg = modal__task_command_router__task_exec_stdio_read_response__unpack(
	    NULL, len, m);
	if (msg == NULL)
		return -EBADMSG;
	io->offset += msg->data.len;
	if (r->olen + r->elen + msg->data.len > io->x->limit) {
		r->over = true;
		modal__task_command_router__task_exec_stdio_read_response__free_unpacked(
		    msg, NULL);
		return 1;
	}
	if (msg->data.len > 0) {
		if ((g = realloc(*buf, *blen + msg->data.len + 1)) == NULL) {
			modal__task_command_router__task_exec_stdio_read_response__free_unpacked(
			    msg, NULL);
			return -ENOMEM;
		}
		memcpy(g + *blen, msg->data.data, msg->data.len);
		*blen += msg->data.len;
		g[*blen] = '\0';
		*buf = g;
	}
	modal__task_command_router__task_exec_stdio_read_response__free_unpacked(
	    msg, NULL);
	return 0;
}

static int
on_wait(const uint8_t *m, size_t len, void *arg)
{
	struct xrun *x = arg;
	Modal__TaskCommandRouter__TaskExecWaitResponse *msg;

	msg = modal__task_command_router__task_exec_wait_response__unpack(NULL,
	    len, m);
	if (msg == NULL)
		return -EBADMSG;
	switch (msg->exit_status_case) {
	case MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_WAIT_RESPONSE__EXIT_STATUS_CODE:
		x->exit_code = msg->code;
		x->got_exit = true;
		break;
	case MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_WAIT_RESPONSE__EXIT_STATUS_SIGNAL:
		x->exit_code = 128 + msg->signal;
		x->got_exit = true;
		break;
	default:
		break;          /* not finished: the caller waits again */
	}
	modal__task_command_router__task_exec_wait_response__free_unpacked(msg,
	    NULL);
	return 0;
}

static void
set_fail(struct xrun *x, int rv, const char *msg)
{
	if (x->rv == 0) {
		x->rv = rv != 0 ? rv : -EIO;
		snprintf(x->err, x->errlen, "%s", msg);
	}
}

static int
start_read(struct xrun *x, struct reader *io)
{
	Modal__TaskCommandRouter__TaskExecStdioReadRequest req =
	    MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIO_READ_REQUEST__INIT;
	uint64_t lim = x->limit + (1u << 20);
	int rv;

	grpc_call_fini(&io->c);
	req.task_id = x->k->task_id;
	req.exec_id = (char *)x->exec_id;
	req.offset = io->offset;
	req.file_descriptor = io->fd == 0
	    ? MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIO_FILE_DESCRIPTOR__TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT
	    : MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIO_FILE_DESCRIPTOR__TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR;
	if ((rv = grpc_call_init(&io->c, &x->t, MODAL_ROUTER_SVC
		 "TaskExecStdioRead", &req.base, x->md, left_ms(x) + 5000, LABEL,
		 on_read, io)) != 0)
		return rv;
	io->c.rd.max = lim < GRPC_MAX_RECV ? lim : GRPC_MAX_RECV;
	io->retry_at = 0;
	if (curl_multi_add_handle(x->m, io->c.easy) != CURLM_OK)
		return -ENOMEM;
	io->active = true;
	return 0;
}

static int
start_wait(struct xrun *x)
{
	Modal__TaskCommandRouter__TaskExecWaitRequest req =
	    MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_WAIT_REQUEST__INIT;
	int rv;

	grpc_call_fini(&x->wait);
	req.task_id = x->k->task_id;
	req.exec_id = (char *)x->exec_id;
	if ((rv = grpc_call_init(&x->wait, &x->t, MODAL_ROUTER_SVC
		 "TaskExecWait", &req.base, x->md, WAIT_CALL_MS, LABEL, on_wait,
		 x)) != 0)
		return rv;
	x->wait_retry_at = 0;
	if (curl_multi_add_handle(x->m, x->wait.easy) != CURLM_OK)
		return -ENOMEM;
	x->wait_active = true;
	return 0;
}

/* A new router JWT, and the metadata that carries it. */
static int
renew_jwt(struct xrun *x)
{
	char err[MODAL_ERRLEN];
	int rv;

	if ((rv = modal_router_access(x->d, x->k, err, sizeof(err))) != 0) {
		set_fail(x, rv, err);
		return rv;
	}
	curl_slist_free_all(x->md);
	x->md = NULL;
	grpc_target_fini(&x->t);
	if ((rv = modal_router_target(x->d, x->k, &x->t, &x->md, err,
		 sizeof(err))) != 0)
		set_fail(x, rv, err);
	return rv;
}

static void
read_done(struct xrun *x, struct reader *io, CURLcode cr)
{
	char err[MODAL_ERRLEN];
	int code = 0, rv;

	curl_multi_remove_handle(x->m, io->c.easy);
	io->active = false;
	if (io->c.cb_rv == -EMSGSIZE) {
		x->r->over = true;      /* one message past the limit */
		return;
	}
	rv = grpc_call_result(&io->c, cr, &code, err, sizeof(err));
	if (rv == 0) {
		io->done = true;        /* the descriptor's end */
		return;
	}
	if (rv > 0)
		return;                 /* stopped: over the limit */
	if (code == GRPC_UNAUTHENTICATED && io->retries == 0) {
		io->retries++;
		if (renew_jwt(x) == 0)
			io->retry_at = msc_now_ms();
		return;
	}
	if (grpc_code_retryable(code) && io->retries < READ_RETRIES &&
	    left_ms(x) > 0) {
		uint64_t delay = 10u << (io->retries < 7 ? io->retries : 7);

		io->retries++;
		io->retry_at = msc_now_ms() + delay;
		msc_log_debug("modal: %s; reading again from %llu", err,
		    (unsigned long long)io->offset);
		return;
	}
	set_fail(x, rv, err);
}

static void
wait_done(struct xrun *x, CURLcode cr)
{
	char err[MODAL_ERRLEN];
	int code = 0, rv;

	curl_multi_remove_handle(x->m, x->wait.easy);
	x->wait_active = false;
	rv = grpc_call_result(&x->wait, cr, &code, err, sizeof(err));
	if (rv == 0 && x->got_exit) {
		x->r->exit_code = x->exit_code;
		x->r->exited = true;
		x->waited_at = msc_now_ms();
		return;
	}
	x->got_exit = false;
	if (rv == 0 || code == GRPC_DEADLINE_EXCEEDED) {
		x->wait_retry_at = msc_now_ms();        /* wait on */
		return;
	}
	if (code == GRPC_UNAUTHENTICATED && x->wait_retries == 0) {
		x->wait_retries++;
		if (renew_jwt(x) == 0)
			x->wait_retry_at = msc_now_ms();
		return;
	}
	if (grpc_code_retryable(code) && x->wait_retries < WAIT_RETRIES) {
		x->wait_retry_at = msc_now_ms() + 1000;
		x->wait_retries++;
		msc_log_debug("modal: %s; waiting again", err);
		return;
	}
	set_fail(x, rv, err);
}

/*
 * Drives the reads and the wait until exit, deadline, limit, cancel or
 * failure.
 */
static void
drive(struct xrun *x)
{
	struct curl_waitfd wfd = { .fd = x->cancel_fd,
		.events = CURL_WAIT_POLLIN };
	int running;

	for (;;) {
		CURLMsg *cm;
		int left;
		uint64_t now;

		curl_multi_perform(x->m, &running);
		while ((cm = curl_multi_info_read(x->m, &left)) != NULL) {
			struct grpc_call *c = NULL;

			if (cm->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(cm->easy_handle, CURLINFO_PRIVATE,
			    (char **)&c);
			if (c == &x->wait)
				wait_done(x, cm->data.result);
			else if (c == &x->io[0].c)
				read_done(x, &x->io[0], cm->data.result);
			else if (c == &x->io[1].c)
				read_done(x, &x->io[1], cm->data.result);
		}
		if (x->rv != 0 || x->r->over)
			return;
		if (x->cancel_fd >= 0 && wfd.revents != 0 && !x->r->exited) {
			x->r->cancelled = true;
			return;
		}
		now = msc_now_ms();
		if (x->r->exited && x->io[0].done && x->io[1].done)
			return;
		if (x->r->exited && now - x->waited_at >= DRAIN_MS) {
			/* A child may hold a descriptor open; a broken read not. */
			if (x->io[0].retry_at != 0 || x->io[1].retry_at != 0)
				set_fail(x, -EIO, "Modal command router "
				    "TaskExecStdioRead: the output stream was cut "
				    "short and could not be resumed");
			return;
		}
		if (now >= x->end) {
			x->r->timed_out = !x->r->exited;
			return;
		}
		for (int i = 0; i < 2; i++)
			if (!x->io[i].active && !x->io[i].done &&
			    x->io[i].retry_at != 0 && now >= x->io[i].retry_at &&
			    start_read(x, &x->io[i]) != 0) {
				set_fail(x, -ENOMEM, "out of memory");
				return;
			}
		if (!x->r->exited && !x->wait_active && x->wait_retry_at != 0 &&
		    now >= x->wait_retry_at && start_wait(x) != 0) {
			set_fail(x, -ENOMEM, "out of memory");
			return;
		}
		wfd.revents = 0;
		curl_multi_poll(x->m, x->cancel_fd >= 0 ? &wfd : NULL,
		    x->cancel_fd >= 0 ? 1 : 0, 50, NULL);
	}
}

/* TaskExecStdinWrite in chunks, the last one with EOF. */
static int
write_stdin(struct modal_driver *d, struct modal_known *k,
    const char *exec_id, const ProtobufCBinaryData *in, char *err,
    size_t errlen)
{
	Modal__TaskCommandRouter__TaskExecStdinWriteRequest req =
	    MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDIN_WRITE_REQUEST__INIT;
	size_t len = in != NULL ? in->len : 0, off = 0;
	int rv;

	req.task_id = k->task_id;
	req.exec_id = (char *)exec_id;
	do {
		Modal__TaskCommandRouter__TaskExecStdinWriteResponse *resp = NULL;
		size_t n = len - off < STDIN_CHUNK ? len - off : STDIN_CHUNK;

		req.offset = off;
		req.data.data = n > 0 ? in->data + off : NULL;
		req.data.len = n;
		req.eof = off + n == len;
		/* The offset makes a resent chunk harmless. */
		if ((rv = modal_router_call(d, k, "TaskExecStdinWrite", &req.base,
			 &modal__task_command_router__task_exec_stdin_write_response__descriptor,
			 (ProtobufCMessage **)&resp, 30000, err, errlen)) != 0)
			return rv;
		protobuf_c_message_free_unpacked(&resp->base, NULL);
		off += n;
	} while (off < len);
	return 0;
}

int
modal_run_command(struct modal_driver *d, struct modal_known *k,
    const char *const *argv, size_t argc, const char *workdir,
    const char *marker,
    const ProtobufCBinaryData *in, uint32_t timeout_s, uint64_t limit,
    struct modal_run *r, bool *startedp, char *err, size_t errlen)
{
	Modal__TaskCommandRouter__TaskExecStartRequest req =
	    MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_START_REQUEST__INIT;
	Modal__TaskCommandRouter__TaskExecStartRequest__EnvEntry env =
	    MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_START_REQUEST__ENV_ENTRY__INIT;
	Modal__TaskCommandRouter__TaskExecStartRequest__EnvEntry *envs[1] = {
		&env };
	Modal__TaskCommandRouter__TaskExecStartResponse *resp = NULL;
	struct xrun x = { .d = d, .k = k, .r = r, .limit = limit, .err = err,
		.errlen = errlen,
		.cancel_fd = marker != NULL ? msc_driver_cancel_fd() : -1 };
	char exec_id[37];
	int rv;

	*startedp = false;
	memset(r, 0, sizeof(*r));
	if ((rv = modal_conv_uuid(exec_id)) != 0)
		return rv;
	x.exec_id = exec_id;
	req.task_id = k->task_id;
	req.exec_id = exec_id;
	req.n_command_args = argc;
	req.command_args = (char **)argv;
	req.stdout_config =
	    MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDOUT_CONFIG__TASK_EXEC_STDOUT_CONFIG_PIPE;
	req.stderr_config =
	    MODAL__TASK_COMMAND_ROUTER__TASK_EXEC_STDERR_CONFIG__TASK_EXEC_STDERR_CONFIG_PIPE;
	/* The router's kill is the backstop; ours comes first. */
	req.timeout_secs = timeout_s + 10;
	req.workdir = workdir != NULL && *workdir != '\0' ? (char *)workdir
							  : NULL;
	if (marker != NULL) {
		env.key = MSC_DRIVER_MARKER_VAR;
		env.value = (char *)marker;
		req.n_env = 1;
		req.env = envs;
	}
	if ((rv = modal_router_call(d, k, "TaskExecStart", &req.base,
		 &modal__task_command_router__task_exec_start_response__descriptor,
		 (ProtobufCMessage **)&resp, 30000, err, errlen)) != 0)
		return rv;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	*startedp = true;
	x.end = msc_now_ms() + (uint64_t)timeout_s * 1000;
	/* Always an EOF: a command that reads stdin must not wait on it. */
	if ((rv = write_stdin(d, k, exec_id, in, err, errlen)) != 0)
		return rv;
	if ((rv = modal_router_target(d, k, &x.t, &x.md, err, errlen)) != 0)
		return rv;
	if ((x.m = curl_multi_init()) == NULL) {
		rv = -ENOMEM;
		goto out;
	}
	/*
	 * One connection per call: libcurl 7.88 broke (HTTP/2 framing errors)
	 * when it multiplexed these calls onto one connection.
	 */
	curl_multi_setopt(x.m, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
	for (int i = 0; i < 2; i++) {
		x.io[i].x = &x;
		x.io[i].fd = i;
	}
	if ((rv = start_read(&x, &x.io[0])) != 0 ||
	    (rv = start_read(&x, &x.io[1])) != 0 ||
	    (rv = start_wait(&x)) != 0)
		goto out;
	drive(&x);
	rv = x.rv;
out:
	for (int i = 0; i < 2; i++) {
		if (x.io[i].active)
			curl_multi_remove_handle(x.m, x.io[i].c.easy);
		grpc_call_fini(&x.io[i].c);
	}
	if (x.wait_active)
		curl_multi_remove_handle(x.m, x.wait.easy);
	grpc_call_fini(&x.wait);
	if (x.m != NULL)
		curl_multi_cleanup(x.m);
	curl_slist_free_all(x.md);
	grpc_target_fini(&x.t);
	return rv;
}

int
modal_exec_argv(struct modal_driver *d, struct modal_known *k,
    const char *const *argv, size_t argc, uint32_t timeout_s,
    struct modal_run *r, char *err, size_t errlen)
{
	bool started;

	return modal_run_command(d, k, argv, argc, NULL, NULL, NULL, timeout_s,
	    1u << 20, r, &started, err, errlen);
}

