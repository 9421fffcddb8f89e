/*
 * fly_exec.c - commands on a Machine through POST .../exec. Short
 * commands (timeout up to FLY_SHORT_MAX_S) are one exec under
 * `timeout -s KILL`; longer ones run detached (setsid, output in files
 * under /tmp/.kt/<token>) and are polled, since the exec endpoint gives
 * up on long calls. Every process of a command carries the environment
 * marker KILNTAINERS_EXEC=<token>, so a timeout or the output limit kills
 * all of them.
 */
#include "fly_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_driver.h"
#include "msc_helper_copy.h"
#include "msc_log.h"
#include "msc_random.h"

#define FLY_SHORT_MAX_S 25
#define FLY_POLL_MAX_S 20

/* Waits up to n x 0.2 s; prints pgid, then limit, running or done+outputs. */
#define WAIT_SH                                                               \
	"sz() { s=0; for f in \"$d/out\" \"$d/err\"; do [ -f \"$f\" ] && "   \
	"s=$((s + $(wc -c < \"$f\"))); done; echo $s; }\n"                   \
	"k=0\n"                                                               \
	"while [ ! -f \"$d/rc\" ] && [ $k -lt $n ]; do\n"                     \
	"  [ $(sz) -gt $l ] && break; sleep 0.2; k=$((k + 1))\n"              \
	"done\n"                                                              \
	"cat \"$d/pgid\"\n"                                                   \
	"if [ $(sz) -gt $l ]; then echo limit\n"                              \
	"elif [ -f \"$d/rc\" ]; then echo \"done $(cat \"$d/rc\")\"; "        \
	"base64 -w0 < \"$d/out\"; echo; base64 -w0 < \"$d/err\"; echo; "      \
	"rm -rf \"$d\"\n"                                                     \
	"else echo running; fi\n"

static const char start_sh[] =
    "d=$1; t=$2; i=$3; w=$4; l=$5; n=$6; shift 6\n"
    "mkdir -p \"$d\" || exit 1\n"
    "if [ \"$i\" = 1 ]; then cat > \"$d/in\"; else : > \"$d/in\"; fi\n"
    "setsid /usr/bin/env KILNTAINERS_EXEC=\"$t\" /bin/sh -c '"
    "d=$1; w=$2; shift 2; exec < \"$d/in\" > \"$d/out\" 2> \"$d/err\"; "
    "if [ -n \"$w\" ]; then cd -- \"$w\" || { echo 2 > \"$d/rc\"; exit 2; }; "
    "fi; \"$@\"; echo $? > \"$d/rc.tmp\"; mv \"$d/rc.tmp\" \"$d/rc\"' "
    "kt \"$d\" \"$w\" \"$@\" < /dev/null > /dev/null 2>&1 &\n"
    "echo $! > \"$d/pgid\"\n" WAIT_SH;

static const char poll_sh[] =
    "d=$1; l=$2; n=$3\n"
    "[ -d \"$d\" ] || { echo; echo gone; exit 0; }\n" WAIT_SH;

static const char kill_sh[] =
    "t=$1; g=$2; d=$3\n"
    "if [ -n \"$g\" ]; then kill -9 \"-$g\" 2>/dev/null; fi\n"
    "for e in /proc/[0-9]*/environ; do\n"
    "  if grep -qzx \"KILNTAINERS_EXEC=$t\" \"$e\" 2>/dev/null; then\n"
    "    p=${e%/environ}; kill -9 \"${p#/proc/}\" 2>/dev/null\n"
    "  fi\n"
    "done\n"
    "if [ -n \"$d\" ]; then rm -rf \"$d\"; fi\n"
    "exit 0\n";

struct run {
	struct fly_driver *d;
	const Msc__V1__ExecRequest *r;
	const char *mid;
	char tok[33];
	char dir[64];
	char pgid[24];
	unsigned timeout_s;
	uint64_t limit;
	uint64_t start;
};

/* Runs a helper script: /bin/sh -c script kt a b c ... */
static int
helper(struct run *x, const char *script, const char *const *args,
    const char *stdin_data, size_t stdin_len, unsigned timeout_s,
    char **outp, size_t *lenp, int *codep, char *err, size_t errlen)
{
	json_t *argv = json_pack("[sss]", "/bin/sh", "-c", script), *reply = NULL;
	char *eout = NULL;
	size_t elen;
	int rv;

	if (argv == NULL)
		return -ENOMEM;
	json_array_append_new(argv, json_string("kt"));
	for (; *args != NULL; args++)
		json_array_append_new(argv, json_string(*args));
	rv = fly_exec_once(x->d, x->mid, argv, stdin_data, stdin_len,
	    timeout_s, &reply, err, errlen);
	json_decref(argv);
	if (rv == 0)
		rv = fly_conv_exec_reply(reply, outp, lenp, &eout, &elen, codep);
	if (rv == -EPROTO)
		snprintf(err, errlen, "Fly API exec: malformed reply");
	json_decref(reply);
	free(eout);
	return rv;
}

/* Kills every process of the command (and its group); best effort. */
static void
kill_all(struct run *x)
{
	const char *args[] = { x->tok, x->pgid, x->dir, NULL };
	char ignore[FLY_ERRLEN], *out = NULL;
	size_t len;
	int code;

	if (helper(x, kill_sh, args, NULL, 0, 20, &out, &len, &code, ignore,
		sizeof(ignore)) != 0)
		msc_log_warn("fly: cannot kill a command on machine %s: %s",
		    x->mid, ignore);
	free(out);
}

static int
failed(struct run *x, int rv, char *err, size_t errlen)
{
	if (rv == -ENOMEM || rv == -EACCES || rv == -EINVAL)
		return rv;
	if (fly_died(x->d, x->r->computer_id, x->mid, err, errlen) != 0)
		return -ECONNABORTED;
	return rv;
}

static int
run_short(struct run *x, const char *stdin_data, Msc__V1__ExecResult *res,
    char *err, size_t errlen)
{
	const Msc__V1__ExecRequest *r = x->r;
	json_t *argv, *reply = NULL;
	char *out = NULL, *eout = NULL;
	size_t olen = 0, elen = 0;
	int code = 0, rv;
	uint64_t took;

	argv = fly_conv_exec_argv(x->d->cfg->shell, r->command, r->args,
	    r->n_args, r->working_directory, x->tok, x->timeout_s);
	if (argv == NULL)
		return -ENOMEM;
	rv = fly_exec_once(x->d, x->mid, argv, stdin_data, r->stdin.len,
	    x->timeout_s + 5, &reply, err, errlen);
	json_decref(argv);
	took = msc_now_ms() - x->start;
	if (rv == -ETIMEDOUT) {
		kill_all(x);
		res->outcome = MSC__V1__EXEC_OUTCOME__TIMED_OUT;
		res->exit_code = 124;
		return 0;
	}
	if (rv == 0 && (rv = fly_conv_exec_reply(reply, &out, &olen, &eout,
			    &elen, &code)) == -EPROTO)
		snprintf(err, errlen, "Fly API exec: malformed reply");
	json_decref(reply);
	if (rv != 0)
		return failed(x, rv, err, errlen);
	if ((code == 137 || code == 124) &&
	    took + 300 >= (uint64_t)x->timeout_s * 1000) {
		res->outcome = MSC__V1__EXEC_OUTCOME__TIMED_OUT;
		res->exit_code = 124;
	} else if (olen + elen > x->limit) {
		res->outcome = MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT;
		res->exit_code = 1;
	} else {
		if (code >= 128 && (rv = failed(x, -EIO, err, errlen)) ==
			-ECONNABORTED) {
			free(out);
			free(eout);
			return rv;
		}
		res->exit_code = code;
		res->stdout.data = (uint8_t *)out;
		res->stdout.len = olen;
		res->stderr.data = (uint8_t *)eout;
		res->stderr.len = elen;
		return 0;
	}
	free(out);
	free(eout);
	return 0;
}

/*
 * Reads a wait report: "<pgid>\n<state>[\n<b64 out>\n<b64 err>]". Returns
 * 1 while running, 0 when res is final, or a negative errno.
 */
static int
report(struct run *x, char *text, Msc__V1__ExecResult *res, char *err,
    size_t errlen)
{
	char *line2 = strchr(text, '\n'), *b1, *b2;
	int code = 0;

	if (line2 == NULL)
		goto bad;
	*line2++ = '\0';
	if (x->pgid[0] == '\0')
		snprintf(x->pgid, sizeof(x->pgid), "%.*s",
		    (int)strspn(text, "0123456789"), text);
	if (strncmp(line2, "running", 7) == 0)
		return 1;
	if (strncmp(line2, "gone", 4) == 0) {
		fly_forget(x->d, x->r->computer_id);
		return msc_driver_died(err, errlen, x->r->computer_id,
		    "its Fly Machine %s restarted. The next call starts it "
		    "again.", x->mid);
	}
	if (strncmp(line2, "limit", 5) == 0) {
		kill_all(x);
		res->outcome = MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT;
		res->exit_code = 1;
		return 0;
	}
	if (sscanf(line2, "done %d", &code) != 1 ||
	    (b1 = strchr(line2, '\n')) == NULL ||
	    (b2 = strchr(++b1, '\n')) == NULL)
		goto bad;
	*b2++ = '\0';
	b2[strcspn(b2, "\n")] = '\0';
	if (fly_conv_b64decode(b1, strlen(b1), (char **)&res->stdout.data,
		&res->stdout.len) != 0 ||
	    fly_conv_b64decode(b2, strlen(b2), (char **)&res->stderr.data,
		&res->stderr.len) != 0)
		goto bad;
	if (res->stdout.len + res->stderr.len > x->limit) {
		/* The machine's file held it all: the limit still holds. */
		free(res->stdout.data);
		free(res->stderr.data);
		res->stdout.data = res->stderr.data = NULL;
		res->stdout.len = res->stderr.len = 0;
		res->outcome = MSC__V1__EXEC_OUTCOME__OUTPUT_LIMIT;
		res->exit_code = 1;
		return 0;
	}
	res->exit_code = code;
	return 0;
bad:
	snprintf(err, errlen, "Computer '%s': unexpected report from a long "
			      "command on Fly Machine %s", x->r->computer_id,
	    x->mid);
	return -EPROTO;
}

/* Seconds to wait in the next exec: at most FLY_POLL_MAX_S. */
static unsigned
wait_s(struct run *x)
{
	uint64_t deadline = x->start + (uint64_t)x->timeout_s * 1000;
	uint64_t now = msc_now_ms();
	unsigned w;

	if (now >= deadline)
		return 0;
	w = (unsigned)((deadline - now + 999) / 1000);
	return w > FLY_POLL_MAX_S ? FLY_POLL_MAX_S : w;
}

/*
 * Longer commands: exec 1 starts the command detached and waits up to
 * FLY_POLL_MAX_S for it (so a quick command is still one exec); later
 * execs wait again until the command ends, the output limit or the
 * deadline.
 */
static int
run_long(struct run *x, const char *stdin_data, Msc__V1__ExecResult *res,
    char *err, size_t errlen)
{
	const Msc__V1__ExecRequest *r = x->r;
	char lim[24], n[16], *text = NULL;
	unsigned w = wait_s(x);
	size_t len;
	int code = 0, rv;
	json_t *argv, *reply = NULL;

	snprintf(lim, sizeof(lim), "%llu", (unsigned long long)x->limit);
	snprintf(n, sizeof(n), "%u", w * 5);
	argv = json_pack("[ssssssss]", "/bin/sh", "-c", start_sh, "kt", x->dir,
	    x->tok, stdin_data != NULL ? "1" : "0", r->working_directory);
	if (argv == NULL)
		return -ENOMEM;
	json_array_append_new(argv, json_string(lim));
	json_array_append_new(argv, json_string(n));
	if (r->n_args > 0)
		for (size_t i = 0; i < r->n_args; i++)
			json_array_append_new(argv, json_string(r->args[i]));
	else {
		json_array_append_new(argv, json_string(x->d->cfg->shell));
		json_array_append_new(argv, json_string("-c"));
		json_array_append_new(argv, json_string(r->command));
	}
	rv = fly_exec_once(x->d, x->mid, argv, stdin_data, r->stdin.len,
	    w + 10, &reply, err, errlen);
	json_decref(argv);
	if (rv == 0) {
		char *eout = NULL;
		size_t elen;

		rv = fly_conv_exec_reply(reply, &text, &len, &eout, &elen,
		    &code);
		if (rv == 0 && code != 0) {
			snprintf(err, errlen, "Computer '%s': cannot start a "
					      "long command: %s", r->computer_id,
			    eout);
			rv = -EIO;
		}
		free(eout);
	}
	json_decref(reply);
	for (;;) {
		const char *args[] = { x->dir, lim, n, NULL };

		if (rv == 0) {
			rv = report(x, text, res, err, errlen);
			free(text);
			text = NULL;
			if (rv <= 0)
				return rv;
		} else if (rv != -ETIMEDOUT) {
			free(text);
			rv = failed(x, rv, err, errlen);
			if (rv != -ECONNABORTED)
				kill_all(x);
			return rv;
		}
		if ((w = wait_s(x)) == 0) {
			kill_all(x);
			res->outcome = MSC__V1__EXEC_OUTCOME__TIMED_OUT;
			res->exit_code = 124;
			return 0;
		}
		snprintf(n, sizeof(n), "%u", w * 5);
		rv = helper(x, poll_sh, args, NULL, 0, w + 10, &text, &len,
		    &code, err, errlen);
	}
}

/* One command on the computer's Machine, as asked. */
static int
exec_direct(void *be, const Msc__V1__ExecRequest *r,
    Msc__V1__ExecResult *out, char *err, size_t errlen)
{
	struct fly_driver *d = be;
	struct fly_known k;
	struct run x = { .d = d, .r = r };
	const char *stdin_data = NULL;
	int rv;

	x.start = msc_now_ms();
	if ((rv = fly_machine_id(d, r->computer_id, &k, err, errlen)) != 0) {
		if (rv == -ENOENT) {
			return msc_driver_died(err, errlen, r->computer_id,
			    "its Fly Machine is gone. The next call starts it "
			    "again.");
		}
		return rv;
	}
	x.mid = k.machine_id;
	msc_random_hex(x.tok, 16);
	snprintf(x.dir, sizeof(x.dir), "/tmp/.kt/%s", x.tok);
	x.timeout_s = r->timeout_s;
	x.limit = r->output_limit;
	if (r->has_stdin) {
		/* The exec API takes stdin as a JSON string. */
		stdin_data = r->stdin.len > 0 ? (const char *)r->stdin.data : "";
	}
	out->outcome = MSC__V1__EXEC_OUTCOME__EXITED;
	if (x.timeout_s <= FLY_SHORT_MAX_S)
		rv = run_short(&x, stdin_data, out, err, errlen);
	else
		rv = run_long(&x, stdin_data, out, err, errlen);
	out->duration_ms = msc_now_ms() - x.start;
	if (rv != 0) {
		free(out->stdout.data);
		free(out->stderr.data);
		out->stdout.data = out->stderr.data = NULL;
		out->stdout.len = out->stderr.len = 0;
	}
	return rv;
}

/*
 * The exec API carries stdin and output as JSON strings, text only: the
 * exec helper's modes (the file tools) get theirs as base64, decoded in
 * the Machine by base64(1) and here (lib/msc_helper_copy.c).
 */
static const struct msc_helper_copy helper_copy = {
	.exec = exec_direct,
	.build_path = MSC_HELPER_COPY_BUILD_PATH,
	.installed_path = MSC_HELPER_COPY_INSTALLED_PATH,
	.text_only = true,
};

/* The agent's command, or the exec helper's mode (msc_helper_copy.c). */
int
fly_exec(struct fly_driver *d, const Msc__V1__ExecRequest *r,
    Msc__V1__ExecResult *out, char *err, size_t errlen)
{
	return msc_helper_copy_exec(&helper_copy, d, r, out, err, errlen);
}
