/*
 * docker_exec.c - dock_exec_run(): exec create, the stream, the exit code,
 * and killing a runaway exec; and the same in steps (dock_exec_begin),
 * for the exec loop (docker_fxloop.h).
 *
 * The engine has no "kill exec" call, and closing the stream leaves the
 * process running. Every exec therefore carries a random marker in its
 * environment (KILNTAINERS_EXEC=<hex>); on timeout or overflow a second exec
 * kills every process whose environment holds that exact line, and the
 * process groups they lead. If that cannot run (no sh in the image), the
 * container is restarted with t=0, which keeps its filesystem.
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
#include "docker_fastexec.h"
#include "msc_driver_live.h"
#include "msc_random.h"

#define DOCK_MARKER_VAR		"KILNTAINERS_EXEC"
#define DOCK_KILL_TIMEOUT_MS	5000
#define DOCK_EXIT_POLL_MS	2000

/*
 * $1 is the marker value. Several rounds catch children forked during a
 * scan. Process groups of marked processes are killed too (this catches
 * children that scrubbed their environment), except the group of PID 1
 * and our own.
 */
static const char dock_kill_script[] =
	"m=\"" DOCK_MARKER_VAR "=$1\"; self=$$; g1=\n"
	"if read -r s < /proc/1/stat; then s=${s##*\") \"}; set -- $s; "
	"g1=$3; fi\n"
	"r=0\n"
	"while [ $r -lt 5 ]; do\n"
	"  r=$((r + 1)); found=\n"
	"  for d in /proc/[0-9]*; do\n"
	"    p=${d#/proc/}\n"
	"    [ \"$p\" = \"$self\" ] && continue\n"
	"    tr '\\0' '\\n' < \"$d/environ\" 2>/dev/null | grep -qx \"$m\" "
	"|| continue\n"
	"    found=1; g=\n"
	"    if read -r s < \"$d/stat\"; then s=${s##*\") \"}; set -- $s; "
	"g=$3; fi 2>/dev/null\n"
	"    kill -9 \"$p\" 2>/dev/null\n"
	"    case \"$g\" in ''|0|1|\"$g1\"|\"$self\") ;; "
	"*) kill -9 -\"$g\" 2>/dev/null ;; esac\n"
	"  done\n"
	"  [ -n \"$found\" ] || break\n"
	"done\n"
	"exit 0\n";

static int
dock_exec_create(struct dock_engine *e, const struct dock_exec_req *req,
    const char *marker, char *exec_id, size_t idlen, char *err,
    size_t errlen)
{
	struct dock_http_req	 hr;
	struct dock_http_res	 res;
	json_t			*body = NULL, *cmd, *j;
	const char		*id;
	char			 esc[DOCK_PATH_MAX / 2], path[DOCK_PATH_MAX];
	char			 var[64], *text = NULL;
	size_t			 i;
	int			 rc = -ENOMEM;

	if (dock_escape(req->container, esc, sizeof(esc)) < 0) {
		dock_seterr(err, errlen, "container name too long");
		return -ENAMETOOLONG;
	}
	snprintf(path, sizeof(path), "/containers/%s/exec", esc);
	snprintf(var, sizeof(var), "%s=%s", DOCK_MARKER_VAR, marker);
	body = json_pack("{s:b,s:b,s:b,s:b,s:[],s:[s]}",
	    "AttachStdin", req->has_stdin, "AttachStdout", 1,
	    "AttachStderr", 1, "Tty", 0, "Cmd", "Env", var);
	if (body == NULL)
		goto fail;
	cmd = json_object_get(body, "Cmd");
	for (i = 0; req->argv[i] != NULL; i++)
		if (json_array_append_new(cmd, json_string(req->argv[i])) < 0)
			goto fail;
	for (i = 0; req->env != NULL && req->env[i] != NULL; i++)
		if (json_array_append_new(json_object_get(body, "Env"),
		    json_string(req->env[i])) < 0)
			goto fail;
	if (req->workdir != NULL && json_object_set_new(body, "WorkingDir",
	    json_string(req->workdir)) < 0)
		goto fail;
	if ((text = json_dumps(body, JSON_COMPACT)) == NULL)
		goto fail;
	memset(&hr, 0, sizeof(hr));
	hr.method = "POST";
	hr.path = path;
	hr.body = text;
	hr.timeout_ms = DOCK_CTL_TIMEOUT_MS;
	if ((rc = dock_http(e, &hr, &res, err, errlen)) < 0)
		goto out;
	if (res.status != 201 && res.status != 200) {
		rc = dock_http_status_err(&res, -EBUSY, "exec create", err,
		    errlen);
		dock_http_res_fini(&res);
		goto out;
	}
	j = json_loadb(res.body.p != NULL ? res.body.p : "", res.body.len, 0,
	    NULL);
	dock_http_res_fini(&res);
	id = json_string_value(json_object_get(j, "Id"));
	if (id == NULL || *id == '\0' || strlen(id) >= idlen ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_.-") != strlen(id)) {
		json_decref(j);
		dock_seterr(err, errlen, "exec create: no valid Id");
		rc = -EPROTO;
		goto out;
	}
	memcpy(exec_id, id, strlen(id) + 1);
	json_decref(j);
	rc = 0;
	goto out;
fail:
	dock_seterr(err, errlen, "exec create: out of memory");
out:
	free(text);
	json_decref(body);
	return rc;
}

/* GET /exec/{id}/json: 1 running, 0 done (*code set), or a negative errno. */
static int
dock_exec_inspect(struct dock_engine *e, const char *exec_id, int *code)
{
	struct dock_http_req	 hr;
	struct dock_http_res	 res;
	json_t			*j, *ec;
	char			 path[DOCK_PATH_MAX], err[128];
	int			 rc;

	snprintf(path, sizeof(path), "/exec/%s/json", exec_id);
	memset(&hr, 0, sizeof(hr));
	hr.method = "GET";
	hr.path = path;
	hr.timeout_ms = DOCK_CTL_TIMEOUT_MS;
	if ((rc = dock_http(e, &hr, &res, err, sizeof(err))) < 0)
		return rc;
	if (res.status != 200) {
		rc = dock_http_status_err(&res, -EIO, "exec inspect", err,
		    sizeof(err));
		dock_http_res_fini(&res);
		return rc;
	}
	j = json_loadb(res.body.p != NULL ? res.body.p : "", res.body.len, 0,
	    NULL);
	dock_http_res_fini(&res);
	if (j == NULL)
		return -EPROTO;
	ec = json_object_get(j, "ExitCode");
	if (json_is_true(json_object_get(j, "Running")) || !json_is_integer(ec))
		rc = 1;
	else
		*code = (int)json_integer_value(ec);
	json_decref(j);
	return rc;
}

/*
 * Polls the exec until it is done, with a 10 ms → 100 ms back-off, until
 * `until` (msc_now_ms clock). Returns 0 with *code, 1 if still running.
 */
static int
dock_exec_wait(struct dock_engine *e, const char *exec_id, int64_t until,
    int *code)
{
	int	rc, delay = 10;

	for (;;) {
		rc = dock_exec_inspect(e, exec_id, code);
		if (rc <= 0)
			return rc;
		if ((int64_t)msc_now_ms() + delay > until)
			return 1;
		dock_sleep_ms(delay);
		delay = delay * 2 > 100 ? 100 : delay * 2;
	}
}

/* The stream of an exec of req (its stdin borrowed), from now. */
static void
dock_stream_setup(struct dock_stream *s, const struct dock_exec_req *req)
{
	s->in = req->stdin_data;
	s->in_len = req->has_stdin ? req->stdin_len : 0;
	s->has_stdin = req->has_stdin;
	s->limit = req->output_limit;
	s->live = req->live;
	s->cancel_fd = req->live ? msc_driver_cancel_fd() : -1;
	/* No timeout: a deadline far away. */
	s->deadline = (int64_t)msc_now_ms() + (req->timeout_ms > 0 ?
	    (int64_t)req->timeout_ms : (int64_t)1 << 50);
}

/* One exec from create to outcome; no killing. */
static int
dock_exec_once(struct dock_engine *e, const struct dock_exec_req *req,
    const char *marker, char *exec_id, size_t idlen, struct dock_stream *s,
    char *err, size_t errlen)
{
	int	rc;

	memset(s, 0, sizeof(*s));
	rc = dock_exec_create(e, req, marker, exec_id, idlen, err, errlen);
	if (rc < 0)
		return rc;
	dock_stream_setup(s, req);
	return dock_stream_run(e, exec_id, s, err, errlen);
}

static void
dock_stream_fini(struct dock_stream *s)
{
	dock_buf_fini(&s->out);
	dock_buf_fini(&s->err);
	dock_buf_fini(&s->syserr);
}

/* Kills every process of the exec marked `marker`; see the file comment. */
static void
dock_exec_kill(struct dock_engine *e, const char *container,
    const char *marker, const char *exec_id)
{
	struct dock_exec_req	 kr;
	struct dock_stream	 ks;
	const char		*argv[] = { "sh", "-c", dock_kill_script,
				    "kiln-kill", marker, NULL };
	char			 kmarker[33], kid[128], kerr[256];
	bool			 killed = false, restarted = false;
	int			 rc, code = -1;

	memset(&kr, 0, sizeof(kr));
	kr.container = container;
	kr.argv = argv;
	kr.timeout_ms = DOCK_KILL_TIMEOUT_MS;
	kr.output_limit = 65536;
	msc_random_hex(kmarker, 16);
	rc = dock_exec_once(e, &kr, kmarker, kid, sizeof(kid), &ks, kerr,
	    sizeof(kerr));
	dock_stream_fini(&ks);
	/* The container stopped or went away: nothing runs. */
	if (rc == -EBUSY || rc == -ENOENT)
		return;
	if (rc == 0 && ks.outcome == DOCK_EXEC_EXITED &&
	    dock_exec_wait(e, kid, (int64_t)msc_now_ms() + DOCK_EXIT_POLL_MS,
	    &code) == 0 && code == 0)
		killed = true;
	if (!killed) {
		dock_container_restart(e, container, 0, DOCK_CTL_TIMEOUT_MS,
		    kerr, sizeof(kerr));
		restarted = true;
	}
	rc = dock_exec_wait(e, exec_id,
	    (int64_t)msc_now_ms() + DOCK_EXIT_POLL_MS, &code);
	if (rc == 1 && !restarted) {
		/* The main process escaped the marker (env -i exec ...). */
		dock_container_restart(e, container, 0, DOCK_CTL_TIMEOUT_MS,
		    kerr, sizeof(kerr));
		dock_exec_wait(e, exec_id,
		    (int64_t)msc_now_ms() + DOCK_EXIT_POLL_MS, &code);
	}
}

static int
dock_exec_check(const struct dock_exec_req *req, char *err, size_t errlen)
{
	if (req == NULL || req->container == NULL || *req->container == '\0' ||
	    req->argv == NULL || req->argv[0] == NULL) {
		dock_seterr(err, errlen, "exec: container and argv are needed");
		return -EINVAL;
	}
	if (req->workdir != NULL && req->workdir[0] != '/') {
		dock_seterr(err, errlen, "exec: working directory '%s' is not "
		    "an absolute path", req->workdir);
		return -EINVAL;
	}
	if (req->has_stdin && req->stdin_len > 0 && req->stdin_data == NULL) {
		dock_seterr(err, errlen, "exec: stdin data missing");
		return -EINVAL;
	}
	return 0;
}

/* An Engine API exec from its create to its result (dock_exec_begin). */
struct dock_xexec {
	struct dock_engine	*e;
	char			*container;
	char			 marker[33];
	char			 exec_id[128];
	struct dock_stream	 s;
	struct dock_xstream	*xs;	/* NULL once the stream ended */
	int			 rc;	/* its end: 0 (s.outcome), or -errno */
	char			 err[1024];	/* with rc < 0 */
};

static void
dock_xexec_free(struct dock_xexec *x)
{
	dock_stream_close(x->xs);
	dock_stream_fini(&x->s);
	dock_fx_charge_release(&x->s.charge);
	free(x->container);
	free(x);
}

int
dock_exec_begin(struct dock_engine *e, const struct dock_exec_req *req,
    struct dock_xexec **xp, char *err, size_t errlen)
{
	struct dock_xexec	*x;
	struct dock_stream	*s;
	int			 rc;

	*xp = NULL;
	if ((rc = dock_exec_check(req, err, errlen)) < 0)
		return rc;
	if ((x = calloc(1, sizeof(*x))) == NULL ||
	    (x->container = strdup(req->container)) == NULL) {
		free(x);
		dock_seterr(err, errlen, "exec: out of memory");
		return -ENOMEM;
	}
	x->e = e;
	msc_random_hex(x->marker, 16);
	if ((rc = dock_exec_create(e, req, x->marker, x->exec_id,
	    sizeof(x->exec_id), err, errlen)) < 0) {
		dock_xexec_free(x);
		return rc;
	}
	s = &x->s;
	dock_stream_setup(s, req);
	rc = dock_stream_begin(e, x->exec_id, s, &x->xs, x->err,
	    sizeof(x->err));
	x->rc = rc > 0 ? 0 : rc;
	*xp = x;
	return 0;
}

void
dock_exec_on_output(struct dock_xexec *x, void (*fn)(void *arg,
    const void *p, size_t n), void *arg)
{
	x->s.on_output = fn;
	x->s.out_arg = arg;
}

void
dock_exec_for_principal(struct dock_xexec *x, const char *principal)
{
	snprintf(x->s.principal, sizeof(x->s.principal), "%s", principal);
}

int
dock_exec_set_budget(struct dock_xexec *x, struct dock_fx_budget *b,
    char *err, size_t errlen)
{
	size_t held = x->s.out.len + x->s.err.len;

	x->s.budget = b;
	/* What came with the reply headers, before the budget was known. */
	return held > 0 ? dock_fx_charge_add(b, x->s.principal, &x->s.charge,
	    held, err, errlen) : 0;
}

int
dock_exec_fd(const struct dock_xexec *x)
{
	return x->xs != NULL ? dock_stream_fd(x->xs) : -1;
}

short
dock_exec_events(const struct dock_xexec *x)
{
	return dock_stream_events(x->xs);
}

int64_t
dock_exec_deadline(const struct dock_xexec *x)
{
	return x->s.deadline;
}

int
dock_exec_step(struct dock_xexec *x, short revents,
    enum dock_exec_outcome *o, char *err, size_t errlen)
{
	int rc = dock_stream_step(x->xs, revents, err, errlen);

	*o = x->s.outcome;
	return rc;
}

void
dock_exec_stop(struct dock_xexec *x, int rc, enum dock_exec_outcome o,
    const char *err)
{
	dock_stream_close(x->xs);
	x->xs = NULL;
	x->rc = rc < 0 ? rc : 0;
	if (rc < 0 && err != x->err)
		snprintf(x->err, sizeof(x->err), "%s", err != NULL ? err : "");
	else if (rc >= 0)
		x->s.outcome = o;
}

int
dock_exec_finish(struct dock_xexec *x, struct dock_exec_res *res, char *err,
    size_t errlen)
{
	struct dock_stream	*s = &x->s;
	int64_t			 until;
	int			 rc = x->rc, code = -1;

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	if (rc < 0) {
		dock_seterr(err, errlen, "%s", x->err);
		/* The stream broke after the start: leave nothing running. */
		if (rc != -ENOENT && rc != -EBUSY && rc != -ECONNREFUSED)
			dock_exec_kill(x->e, x->container, x->marker,
			    x->exec_id);
		goto fail;
	}
	if (s->outcome == DOCK_EXEC_EXITED) {
		/*
		 * EOF came; the exit status follows separately. A process that
		 * closed its output but lives on is waited for until the
		 * deadline, then treated as a timeout.
		 */
		until = (int64_t)msc_now_ms() + DOCK_EXIT_POLL_MS;
		if (s->deadline > until)
			until = s->deadline;
		rc = dock_exec_wait(x->e, x->exec_id, until, &code);
		if (rc < 0) {
			dock_seterr(err, errlen, "exec: cannot read the exit "
			    "code (%s)", strerror(-rc));
			goto fail;
		}
		if (rc == 1)
			s->outcome = DOCK_EXEC_TIMEOUT;
	}
	if (s->outcome != DOCK_EXEC_EXITED) {
		dock_exec_kill(x->e, x->container, x->marker, x->exec_id);
		code = -1;
	}
	/* Daemon-side error text (stream type 3) is shown as stderr. */
	if (s->syserr.len > 0 && s->outcome == DOCK_EXEC_EXITED &&
	    dock_buf_append(&s->err, s->syserr.p, s->syserr.len) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	if (dock_buf_finish(&s->out) < 0 || dock_buf_finish(&s->err) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	res->out = s->out.p;
	res->out_len = s->out.len;
	res->err = s->err.p;
	res->err_len = s->err.len;
	res->exit_code = code;
	res->outcome = s->outcome;
	/* The output moves to res, and what it holds of a bound with it. */
	res->charge = s->charge;
	memset(&s->charge, 0, sizeof(s->charge));
	memset(&s->out, 0, sizeof(s->out));
	memset(&s->err, 0, sizeof(s->err));
	rc = 0;
fail:
	dock_xexec_free(x);
	return rc;
}

int
dock_exec_run(struct dock_engine *e, const struct dock_exec_req *req,
    struct dock_exec_res *res, char *err, size_t errlen)
{
	struct dock_xexec	*x;
	short			 rev;
	int			 rc;

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	if ((rc = dock_exec_begin(e, req, &x, err, errlen)) < 0)
		return rc;
	while (x->xs != NULL) {
		rc = dock_stream_wait(x->xs, &rev);
		if (rc == -ETIMEDOUT || rc == -ECANCELED) {
			dock_exec_stop(x, 1, rc == -ETIMEDOUT ?
			    DOCK_EXEC_TIMEOUT : DOCK_EXEC_CANCELLED, NULL);
			break;
		}
		if (rc < 0)
			dock_seterr(x->err, sizeof(x->err), "exec stream: "
			    "cannot wait for it");
		else if ((rc = dock_stream_step(x->xs, rev, x->err,
		    sizeof(x->err))) == 0)
			continue;
		dock_exec_stop(x, rc, x->s.outcome, x->err);
	}
	return dock_exec_finish(x, res, err, errlen);
}

void
dock_exec_res_fini(struct dock_exec_res *res)
{
	if (res == NULL)
		return;
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
	res->out_len = res->err_len = 0;
	dock_fx_charge_release(&res->charge);
}
