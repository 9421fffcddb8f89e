/*
 * tools_processes.c - background processes (--tools processes, issue 28):
 * terminal_execute's `background` argument and the process_list,
 * process_output and process_kill tools.
 *
 * Each is a terminal_execute in the same session and computer (the same
 * handle and ownership rules, the same Session/TerminalExec call): it
 * runs the computer's exec helper as a command,
 *
 *     /.msc-helper --process start|list|output|kill ...
 *
 * which keeps the state in the computer itself (helper_process.c): the
 * processes outlive the call, the connection and, for a permanent
 * computer, this server. The helper answers one JSON object on stdout,
 * which becomes the result's structuredContent and text, or one line on
 * stderr with status 2, the error shown. Only the docker backend (Docker
 * and Podman) mounts the helper in its computers.
 */
#include "tools.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_backend.h"
#include "msc_cfg.h"

/* Where the docker driver mounts the helper (DOCK_FX_MOUNT_HELPER). */
#define PROC_HELPER "/.msc-helper"
/* The longest wait_ms, and kill's TERM-to-KILL grace (documented). */
#define PROC_WAIT_MAX_MS 30000
#define PROC_KILL_GRACE_MS 3000
#define PROC_MAX_BYTES_DEFAULT 65536
#define PROC_MAX_BYTES_MAX (16 * 1024 * 1024)

static const struct {
	const char *name, *title, *description;
	bool read_only, destructive;
} procs[] = {
	[TOOLS_PROC_LIST - TOOLS_PROC_BASE] = { "process_list",
	    "List background processes",
	    "The computer's background processes (started by terminal_execute "
	    "with background: true): each with its process_id, command, start "
	    "time, state (running, exited with exit_code, killed by signal) "
	    "and output size.", true, false },
	[TOOLS_PROC_OUTPUT - TOOLS_PROC_BASE] = { "process_output",
	    "Read a background process's output",
	    "Output of a background process from `offset` (0: the oldest kept; "
	    "pass the offset of the previous answer to read on), at most "
	    "max_bytes. With wait_ms (at most 30000) it waits for new output, "
	    "for the process to end, or, with `pattern` (a POSIX extended "
	    "regular expression), until the output since offset matches it: "
	    "wait for a server's ready line instead of sleeping. Answers "
	    "output, the next offset, state (running, exited, killed) and "
	    "exit_code.", true, false },
	[TOOLS_PROC_KILL - TOOLS_PROC_BASE] = { "process_kill",
	    "Stop a background process",
	    "Sends a signal to a background process's whole process group: "
	    "TERM by default, then KILL to what is left after 3 seconds.",
	    false, true },
};

#define NPROCS (sizeof(procs) / sizeof(procs[0]))

int
tools_processes_find(const char *name)
{
	for (size_t i = 0; i < NPROCS; i++)
		if (strcmp(name, procs[i].name) == 0)
			return TOOLS_PROC_BASE + (int)i;
	return -1;
}

bool
tools_backend_has(const struct msc_cfg *cfg, unsigned cap)
{
	return cfg->chosen == NULL || (cfg->chosen->caps & cap) != 0;
}

bool
tools_is_process(int tool)
{
	return tool >= TOOLS_PROC_BASE && tool <= TOOLS_PROC_START;
}

json_t *
tools_prop(const char *title, const char *type, const char *description)
{
	return json_pack("{s:s, s:s, s:s, s:n}", "title", title, "type", type,
	    "description", description, "default");
}

/* computer_id, temporary and sandbox_handle, as terminal_execute takes
 * them. */
json_t *
tools_where_props(void)
{
	return json_pack("{s:o, s:o, s:o}",
	    "computer_id", tools_prop("Computer Id", "string",
		"The computer to act on, as terminal_execute's computer_id "
		"(omit for this session's default computer)."),
	    "temporary", tools_prop("Temporary", "boolean",
		"As terminal_execute's: false to address a permanent "
		"computer by its computer_id."),
	    "sandbox_handle", tools_prop("Sandbox Handle", "string",
		"The sandbox_handle of an earlier result, as terminal_execute "
		"takes it."));
}

static json_t *
def(int tool)
{
	const char *name = procs[tool - TOOLS_PROC_BASE].name;
	json_t *props = tools_where_props(), *req = json_array();
	char title[64];

	if (tool != TOOLS_PROC_LIST) {
		json_object_set_new(props, "process_id", tools_prop(
		    "Process Id",
		    "string", "The process_id terminal_execute returned."));
		json_array_append_new(req, json_string("process_id"));
	}
	if (tool == TOOLS_PROC_OUTPUT) {
		json_object_set_new(props, "offset", tools_prop("Offset",
		    "integer",
		    "Where to read from in the process's output (default 0)."));
		json_object_set_new(props, "max_bytes", tools_prop("Max Bytes",
		    "integer", "Most output bytes to return (default 65536; a "
		    "long answer is cut to the server's reply limit, with "
		    "more: true)."));
		json_object_set_new(props, "wait_ms", tools_prop("Wait Ms",
		    "integer", "Wait up to this long (0 to 30000 ms) for new "
		    "output, the end of the process or the pattern (default "
		    "0)."));
		json_object_set_new(props, "pattern", tools_prop("Pattern",
		    "string",
		    "A POSIX extended regular expression to wait for in the "
		    "output since offset."));
	}
	if (tool == TOOLS_PROC_KILL)
		json_object_set_new(props, "signal", tools_prop("Signal",
		    "string",
		    "TERM (default; KILL after 3 s), KILL, INT, HUP, QUIT, "
		    "USR1, USR2, STOP, CONT or a number."));
	snprintf(title, sizeof(title), "%sArguments", name);
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o, s:o}, s:o}",
	    "name", name, "title", procs[tool - TOOLS_PROC_BASE].title,
	    "description", procs[tool - TOOLS_PROC_BASE].description,
	    "inputSchema", "type", "object", "title", title, "properties",
	    props, "required", req,
	    "annotations", tools_annotations(procs[tool - TOOLS_PROC_BASE].title,
		procs[tool - TOOLS_PROC_BASE].read_only,
		procs[tool - TOOLS_PROC_BASE].destructive, false));
}

void
tools_processes_extend(json_t *list)
{
	json_t *tools = json_object_get(list, "tools");
	json_t *exec = json_array_get(tools, 0);
	json_t *props = json_object_get(json_object_get(exec, "inputSchema"),
	    "properties");

	json_object_set_new(props, "background", json_pack("{s:s, s:s, s:s, "
	    "s:b}", "title", "Background", "type", "boolean", "description",
	    "true: start the command as a background process and return at "
	    "once with its process_id; read it with process_output, stop it "
	    "with process_kill. It runs until it ends, is killed, or its "
	    "computer restarts, resets or goes.", "default", 0));
	for (int t = TOOLS_PROC_BASE; t < TOOLS_PROC_START; t++)
		json_array_append_new(tools, def(t));
}

/* An argument as a whole number: NULL, or the error text (static). */
const char *
tools_get_int(json_t *args, const char *key, long long lo, long long hi,
    long long *out)
{
	json_t *v = json_object_get(args, key);

	if (v == NULL || json_is_null(v))
		return NULL;
	double d = json_is_real(v) ? json_real_value(v) : 0;

	if (json_is_integer(v))
		*out = json_integer_value(v);
	else if (json_is_real(v) && !(d >= -0x1p62 && d <= 0x1p62))
		return "out of range";  /* no cast of it: undefined */
	else if (json_is_real(v) && d == (double)(long long)d)
		*out = (long long)d;
	else
		return "a valid integer";
	if (*out < lo || *out > hi)
		return "out of range";
	return NULL;
}

static char *
arg_error(int tool, const char *field, const char *what)
{
	const char *name = tool == TOOLS_PROC_START ? "terminal_execute" :
	    procs[tool - TOOLS_PROC_BASE].name;
	char *msg;

	if (asprintf(&msg, "Error executing tool %s: %s: %s", name, field,
	    what) < 0)
		return NULL;
	return msg;
}

/* Appends a copy of s to req's args; the copy lives in `keep`. */
int
tools_push_arg(Msc__V1__TerminalExecRequest *req, size_t cap, json_t *keep,
    const char *s)
{
	json_t *j = json_string(s);

	if (j == NULL || req->n_args >= cap)
		return -ENOMEM;
	json_array_append_new(keep, j);
	req->args[req->n_args++] = (char *)json_string_value(j);
	return 0;
}

static char *
background_request(const struct msc_cfg *cfg, json_t *args,
    Msc__V1__TerminalExecRequest *req, json_t *keep)
{
	char **user = req->args;
	size_t n_user = req->n_args, cap = n_user + 24;
	const char *label = req->command;
	char num[32], *joined = NULL;
	int rv = 0;

	(void)args;
	if (req->command[0] == '\0' && n_user == 0)
		return NULL;    /* the session says what is missing */
	if ((req->args = calloc(cap, sizeof(char *))) == NULL) {
		req->args = user;
		return strdup("out of memory");
	}
	req->n_args = 0;
	if (n_user > 0) {
		size_t len = 1;

		for (size_t i = 0; i < n_user; i++)
			len += strlen(user[i]) + 1;
		if ((joined = calloc(1, len)) != NULL)
			for (size_t i = 0; i < n_user; i++) {
				if (i > 0)
					strcat(joined, " ");
				strcat(joined, user[i]);
			}
		label = joined != NULL ? joined : user[0];
	}
	rv |= tools_push_arg(req, cap, keep, PROC_HELPER);
	rv |= tools_push_arg(req, cap, keep, "--process");
	rv |= tools_push_arg(req, cap, keep, "start");
	snprintf(num, sizeof(num), "%ld", cfg->process_log_limit);
	rv |= tools_push_arg(req, cap, keep, "--log-limit");
	rv |= tools_push_arg(req, cap, keep, num);
	snprintf(num, sizeof(num), "%ld", cfg->max_background_processes);
	rv |= tools_push_arg(req, cap, keep, "--max");
	rv |= tools_push_arg(req, cap, keep, num);
	rv |= tools_push_arg(req, cap, keep, "--label");
	rv |= tools_push_arg(req, cap, keep, label);
	if (req->has_stdin)
		rv |= tools_push_arg(req, cap, keep, "--stdin");
	rv |= tools_push_arg(req, cap, keep, "--");
	if (n_user == 0) {
		/* The server's shell when the image has it, else sh. */
		rv |= tools_push_arg(req, cap, keep, "/bin/sh");
		rv |= tools_push_arg(req, cap, keep, "-c");
		rv |= tools_push_arg(req, cap, keep,
		    "[ -x \"$0\" ] && exec \"$0\" -c "
		    "\"$1\"; exec /bin/sh -c \"$1\"");
		rv |= tools_push_arg(req, cap, keep, cfg->shell != NULL ?
		    cfg->shell :
		    "/bin/bash");
		rv |= tools_push_arg(req, cap, keep, req->command);
	} else
		for (size_t i = 0; i < n_user; i++)
			rv |= tools_push_arg(req, cap, keep, user[i]);
	free(joined);
	free(user);
	req->command = (char *)"";
	return rv != 0 ? strdup("out of memory") : NULL;
}

char *
tools_process_request(int tool, const struct msc_cfg *cfg, json_t *args,
    Msc__V1__TerminalExecRequest *req, json_t *keep)
{
	long long offset = 0, max_bytes = PROC_MAX_BYTES_DEFAULT, wait_ms = 0;
	long long budget;
	const char *bad, *id = NULL, *pattern = "", *sig = "TERM";
	size_t cap = 16;
	char num[4][32];
	int rv = 0;

	if (!tools_backend_has(cfg, MSC_BACKEND_HELPER)) {
		char *msg;

		if (asprintf(&msg, "Background processes run on the docker "
		    "(Docker and Podman), e2b and modal backends only: the %s "
		    "backend has no process supervisor in its computers.",
		    cfg->backend) < 0)
			return NULL;
		return msg;
	}
	if (tool == TOOLS_PROC_START)
		return background_request(cfg, args, req, keep);
	if (req->command[0] != '\0' || req->n_args > 0 || req->has_stdin)
		return arg_error(tool, "command", "not an argument of this tool");
	if (tool != TOOLS_PROC_LIST) {
		json_t *v = json_object_get(args, "process_id");

		if (v == NULL || json_is_null(v))
			return arg_error(tool, "process_id", "Field required");
		if (!json_is_string(v))
			return arg_error(tool, "process_id",
			    "Input should be a valid string");
		id = json_string_value(v);
	}
	if (tool == TOOLS_PROC_OUTPUT) {
		json_t *p = json_object_get(args, "pattern");

		if ((bad = tools_get_int(args, "offset", 0, (1LL << 60),
		    &offset)))
			return arg_error(tool, "offset", bad);
		if ((bad = tools_get_int(args, "max_bytes", 1,
		    PROC_MAX_BYTES_MAX,
		    &max_bytes)))
			return arg_error(tool, "max_bytes", bad);
		if ((bad = tools_get_int(args, "wait_ms", 0, PROC_WAIT_MAX_MS,
		    &wait_ms)))
			return arg_error(tool, "wait_ms", bad[0] == 'o' ?
			    "must be 0 to 30000" : bad);
		if (p != NULL && !json_is_null(p) && !json_is_string(p))
			return arg_error(tool, "pattern",
			    "Input should be a valid string");
		if (json_is_string(p))
			pattern = json_string_value(p);
	}
	if (tool == TOOLS_PROC_KILL) {
		json_t *s = json_object_get(args, "signal");

		if (json_is_string(s) && json_string_length(s) > 0)
			sig = json_string_value(s);
		else if (json_is_integer(s)) {
			snprintf(num[3], sizeof(num[3]), "%lld",
			    (long long)json_integer_value(s));
			sig = num[3];
		} else if (s != NULL && !json_is_null(s) && !json_is_string(s))
			return arg_error(tool, "signal",
			    "Input should be a valid string");
	}
	free(req->args);        /* a caller's own `args`, borrowed strings */
	req->n_args = 0;
	if ((req->args = calloc(cap, sizeof(char *))) == NULL)
		return strdup("out of memory");
	rv |= tools_push_arg(req, cap, keep, PROC_HELPER);
	rv |= tools_push_arg(req, cap, keep, "--process");
	if (tool == TOOLS_PROC_LIST)
		rv |= tools_push_arg(req, cap, keep, "list");
	else if (tool == TOOLS_PROC_KILL) {
		rv |= tools_push_arg(req, cap, keep, "kill");
		rv |= tools_push_arg(req, cap, keep, id);
		rv |= tools_push_arg(req, cap, keep, sig);
		snprintf(num[0], sizeof(num[0]), "%d", PROC_KILL_GRACE_MS);
		rv |= tools_push_arg(req, cap, keep, num[0]);
	} else {
		/* What the session's reply carries whole (JSON escapes in). */
		budget = cfg->reply_output_limit == 0 ? 6 * max_bytes :
		    cfg->reply_output_limit - 1024;
		if (budget < 64)
			budget = 64;
		if (budget > 64 * 1024 * 1024)  /* the helper's bound */
			budget = 64 * 1024 * 1024;
		rv |= tools_push_arg(req, cap, keep, "output");
		rv |= tools_push_arg(req, cap, keep, id);
		snprintf(num[0], sizeof(num[0]), "%lld", offset);
		snprintf(num[1], sizeof(num[1]), "%lld", max_bytes);
		snprintf(num[2], sizeof(num[2]), "%lld", budget);
		snprintf(num[3], sizeof(num[3]), "%lld", wait_ms);
		for (int i = 0; i < 4; i++)
			rv |= tools_push_arg(req, cap, keep, num[i]);
		rv |= tools_push_arg(req, cap, keep, pattern);
	}
	/*
	 * Room for the wait (or the kill's grace) and the call itself; an
	 * exec helper older than background processes takes `--process` for
	 * its socket and serves on: the timeout ends it (see the result).
	 */
	req->has_timeout = true;
	req->timeout = 15 + (wait_ms + PROC_KILL_GRACE_MS) / 1000;
	return rv != 0 ? strdup("out of memory") : NULL;
}

json_t *
tools_process_result(int tool, const Msc__V1__TerminalExecReply *rep,
    const char *handle)
{
	json_t *sc, *res;
	char *text, err[700];
	size_t n;

	if (rep->exit_code != 0 || rep->stdout_bytes > 0) {
		const char *e = rep->stderr.len ? (const char *)rep->stderr.data
						 : "";

		n = rep->stderr.len;
		while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == ' '))
			n--;
		if (rep->exit_code == 127 || rep->exit_code == 126)
			snprintf(err, sizeof(err), "This computer has no process "
			    "supervisor (" PROC_HELPER "): background processes "
			    "run on the docker (Docker and Podman), e2b and modal "
			    "backends only, in computers they started.");
		else if (rep->exit_code == 124)
			snprintf(err, sizeof(err), "The process supervisor did not "
			    "answer in time: this computer's exec helper may "
			    "predate background processes (computer_restart "
			    "updates it).");
		else if (rep->exit_code == 2 && n > 0)
			snprintf(err, sizeof(err), "%.*s", (int)(n > 600 ? 600 :
			    n), e);
		else
			snprintf(err, sizeof(err), "The process supervisor "
			    "failed (exit code %d): %.*s", rep->exit_code,
			    (int)(n > 500 ? 500 : n), e);
		return tools_error_result(err);
	}
	sc = json_loadb(rep->stdout.len ? (const char *)rep->stdout.data : "",
	    rep->stdout.len, 0, NULL);
	if (!json_is_object(sc)) {
		json_decref(sc);
		return tools_error_result("The process supervisor's answer "
		    "could not be read.");
	}
	if (json_object_set_new(sc, "computer_id",
	    json_string(rep->computer_id)) != 0 ||
	    (handle != NULL && json_object_set_new(sc, "sandbox_handle",
		json_string(handle)) != 0)) {
		json_decref(sc);
		return tools_error_result("cannot encode the result");
	}
	if (tool == TOOLS_PROC_START)
		json_object_set_new(sc, "temporary", json_boolean(
		    rep->temporary));
	text = json_dumps(sc, JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	if (text == NULL) {
		json_decref(sc);
		return tools_error_result("cannot encode the result");
	}
	res = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type",
	    "text", "text", text, "structuredContent", sc, "isError", 0);
	free(text);
	return res;
}
