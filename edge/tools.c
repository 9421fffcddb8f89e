/*
 * tools.c - terminal_execute's schema, description and argument rules:
 * types are checked here (the reference's pydantic coercions included:
 * "5" for an integer, a JSON string for an array); meaning is checked by
 * the session service, so every edge agrees.
 */
#include "tools.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"
#include "msc_cfg.h"

char *
tools_description(const struct msc_cfg *cfg, const char *backend_text)
{
	char *out = NULL;

	if (cfg->tool_instruction_override != NULL)
		return strdup(cfg->tool_instruction_override);
	if (backend_text == NULL)
		return NULL;
	if (asprintf(&out, "%s\n\n%s%s%s", backend_text, TOOLS_HANDLE_TEXT,
		cfg->extended_tool_instruction ? "\n\n" : "",
		cfg->extended_tool_instruction ? cfg->extended_tool_instruction
					       : "") < 0)
		return NULL;
	return out;
}

int
tools_fetch_description(struct msc_client *session, int wait_ms,
    char **textp, char *err, size_t errlen)
{
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	ProtobufCMessage *resp = NULL;
	Msc__V1__Code code;
	char *text;

	code = msc_client_call_sync(session, &msc__v1__session__descriptor,
	    "Describe", &e.base, wait_ms, &resp, err, errlen);
	/* The services may still be coming up (scripts/run-split). */
	if (code == MSC__V1__CODE__UNAVAILABLE ||
	    code == MSC__V1__CODE__DEADLINE_EXCEEDED)
		return -EAGAIN;
	if (code != MSC__V1__CODE__OK)
		return -EIO;
	text = strdup(((Msc__V1__ToolDescription *)resp)->text);
	protobuf_c_message_free_unpacked(resp, NULL);
	if (text == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*textp = text;
	return 0;
}

static json_t *
prop(const char *title, const char *type, const char *description,
    json_t *def)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "title", title, "type", type,
	    "description", description, "default", def ? def : json_null());
}

json_t *
tools_annotations(const char *title, bool read_only, bool destructive,
    bool open_world)
{
	return json_pack("{s:s, s:b, s:b, s:b, s:b}", "title", title,
	    "readOnlyHint", read_only, "destructiveHint", destructive,
	    "idempotentHint", read_only, "openWorldHint", open_world);
}

static json_t *
release_def(void)
{
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:{s:{s:s, s:s, s:s}}, "
			 "s:[s]}, s:o}",
	    "name", "computer_release", "title", "Release a sandbox handle",
	    "description", "End a sandbox_handle now: its temporary computer "
	    "is removed with everything on it; permanent computers stay. Later "
	    "calls with the handle fail; a call without one gets a new "
	    "computer and handle.",
	    "inputSchema", "type", "object", "title",
	    "computer_releaseArguments", "properties", "sandbox_handle",
	    "title", "Sandbox Handle", "type", "string", "description",
	    "The sandbox_handle a terminal_execute result returned.",
	    "required", "sandbox_handle",
	    "annotations", tools_annotations("Release a sandbox handle", false,
		true, false));
}

json_t *
tools_payload_result(json_t *payload, bool error)
{
	char *text = json_dumps(payload, JSON_ENSURE_ASCII |
	    JSON_PRESERVE_ORDER);
	json_t *res;

	res = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text",
	    "text", text ? text : "{}", "structuredContent", payload, "isError",
	    error);
	free(text);
	return res;
}

json_t *
tools_release_result(const struct msc_status *st, ProtobufCMessage *resp)
{
	const Msc__V1__CloseReply *r = (const Msc__V1__CloseReply *)resp;

	if (resp == NULL)
		return tools_payload_result(json_pack("{s:s}", "error",
		    st->message), true);
	return tools_payload_result(json_pack("{s:b, s:b}", "released", 1,
	    "cleanup_complete", r->cleanup_complete), false);
}

json_t *
tools_list(const char *description, bool network)
{
	json_t *props, *args_prop, *tool;

	args_prop = prop("Args", "array",
	    "Program and arguments to run directly, without a shell "
	    "(exclusive with command).", NULL);
	json_object_set_new(args_prop, "items", json_pack("{s:s}", "type",
	    "string"));
	props = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	    "command", prop("Command", "string",
		"Shell command to run (exclusive with args).", NULL),
	    "args", args_prop,
	    "stdin", prop("Stdin", "string",
		"Text passed to the command's standard input (at most 2 MiB).",
		NULL),
	    "working_directory", prop("Working Directory", "string",
		"Absolute directory to run the command in.", NULL),
	    "timeout", prop("Timeout", "integer",
		"Timeout in seconds (default: the server's --timeout).", NULL),
	    "computer_id", prop("Computer Id", "string",
		"Computer to run on: 1-63 lowercase letters, numbers or "
		"hyphens. Omit to use this session's default computer, "
		"created with a random id on first use.", NULL),
	    "temporary", prop("Temporary", "boolean",
		"true (default): removed when the session ends; false: kept "
		"by the provider and reattached by computer_id later.",
		json_true()),
	    "sandbox_handle", prop("Sandbox Handle", "string",
		"The sandbox_handle of an earlier result: runs on that "
		"handle's computer. Omit on the first call.", NULL));
	tool = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o}, s:o, "
			 "s:{s:{s:[ss]}}}",
	    "name", "terminal_execute", "title", "Run a command",
	    "description", description,
	    "inputSchema", "type", "object", "title",
	    "terminal_executeArguments", "properties", props,
	    "annotations", tools_annotations("Run a command in a sandbox "
		"computer", false, false, network),
	    "_meta", "ui", "visibility", "model", "app");
	json_t *all = json_array();

	json_array_insert_new(all, 0, tool);
	json_array_insert_new(all, 1, release_def());
	return json_pack("{s:o}", "tools", all);
}

static char *
type_error(const char *field, const char *what)
{
	char *msg;

	if (asprintf(&msg, "Error executing tool terminal_execute: %s: Input "
			   "should be %s", field, what) < 0)
		return NULL;
	return msg;
}

/* Accepts a string; NULL/absent = not given. */
static char *
get_string(json_t *args, const char *key, char **out, bool *has)
{
	json_t *v = json_object_get(args, key);

	*has = false;
	if (v == NULL)
		return NULL;
	if (!json_is_string(v))
		return type_error(key, "a valid string");
	*out = (char *)json_string_value(v);
	*has = true;
	return NULL;
}

char *
tools_exec_request(json_t *args, Msc__V1__TerminalExecRequest *req,
    json_t *keep)
{
	json_t *v;
	char *err;
	bool has;

	if (args != NULL && !json_is_object(args))
		return type_error("arguments", "a valid dictionary");
	char *stdin_text = NULL;
	bool has_stdin, has_id;

	if ((err = get_string(args, "command", &req->command, &has)) ||
	    (err = get_string(args, "stdin", &stdin_text, &has_stdin)) ||
	    (err = get_string(args, "working_directory",
		 &req->working_directory, &has)) ||
	    (err = get_string(args, "computer_id", &req->computer_id,
		 &has_id)))
		return err;
	req->has_stdin = has_stdin;
	req->has_computer_id = has_id;
	if ((v = json_object_get(args, "args")) != NULL) {
		json_t *arr = v;
		size_t i;
		json_t *item;

		if (json_is_string(v)) {
			arr = json_loads(json_string_value(v), 0, NULL);
			if (arr == NULL)
				return type_error("args", "a valid list");
			json_array_append_new(keep, arr);
		}
		if (!json_is_array(arr))
			return type_error("args", "a valid list");
		req->args = calloc(json_array_size(arr) + 1, sizeof(char *));
		if (req->args == NULL)
			return strdup("out of memory");
		json_array_foreach (arr, i, item) {
			if (!json_is_string(item))
				return type_error("args", "a list of strings");
			req->args[req->n_args++] = (char *)json_string_value(item);
		}
	}
	if ((v = json_object_get(args, "timeout")) != NULL) {
		json_int_t t;
		double d = json_is_real(v) ? json_real_value(v) : 0;
		/*
		 * A real is a whole number or a type error. Past +-2^62
		 * (1e300, say) every double is whole and only too big, as
		 * the session's range check says: clamp it rather than cast
		 * (an out-of-range cast is undefined behaviour).
		 */
		bool huge = isfinite(d) && (d >= 0x1p62 || d <= -0x1p62);

		if (json_is_integer(v))
			t = json_integer_value(v);
		else if (json_is_real(v) && huge)
			t = d > 0 ? INT64_MAX : INT64_MIN;
		else if (json_is_real(v) && isfinite(d) &&
		    d == (double)(json_int_t)d)
			t = (json_int_t)d;
		else if (json_is_string(v)) {
			char *end;
			long long x = strtoll(json_string_value(v), &end, 10);

			if (end == json_string_value(v) || *end != '\0')
				return type_error("timeout", "a valid integer");
			t = x;
		} else
			return type_error("timeout", "a valid integer");
		req->has_timeout = true;
		req->timeout = t;
	}
	if ((v = json_object_get(args, "temporary")) != NULL) {
		const char *s = json_string_value(v);

		if (json_is_boolean(v))
			req->temporary = json_is_true(v);
		else if (s != NULL && (strcmp(s, "true") == 0 ||
					  strcmp(s, "false") == 0))
			req->temporary = s[0] == 't';
		else
			return type_error("temporary", "a valid boolean");
		req->has_temporary = true;
	}
	/* The reference treats empty values as absent. */
	if (req->has_stdin) {
		req->stdin.data = (uint8_t *)stdin_text;
		req->stdin.len = json_string_length(json_object_get(args,
		    "stdin"));
		req->has_stdin = req->stdin.len > 0;
	}
	return NULL;
}

void
tools_exec_request_fini(Msc__V1__TerminalExecRequest *req)
{
	free(req->args);
	req->args = NULL;
	req->n_args = 0;
}

/* Python writes \u escapes with lowercase hex; jansson with uppercase. */
static void
lowercase_escapes(char *s)
{
	for (; *s != '\0'; s++) {
		if (*s != '\\' || s[1] == '\0')
			continue;
		if (s[1] == 'u')
			for (int i = 2; i < 6 && s[i] != '\0'; i++)
				if (s[i] >= 'A' && s[i] <= 'F')
					s[i] = (char)(s[i] - 'A' + 'a');
		s++;    /* skip the escaped character */
	}
}

json_t *
tools_exec_result(const Msc__V1__TerminalExecReply *rep, const char *handle)
{
	json_t *sc, *res;
	char *text;

	sc = json_pack("{s:s, s:s*, s:b, s:s%, s:s%, s:i, s:I}", "computer_id",
	    rep->computer_id, "sandbox_handle", handle, "temporary",
	    rep->temporary, "stdout",
	    rep->stdout.len ? (const char *)rep->stdout.data : "",
	    rep->stdout.len, "stderr",
	    rep->stderr.len ? (const char *)rep->stderr.data : "",
	    rep->stderr.len, "exit_code",
	    rep->exit_code,
	    "exec_duration_ms", (json_int_t)rep->exec_duration_ms);
	if (sc == NULL)
		return tools_error_result("cannot encode the result");
	/* A stream cut to --reply-output-limit: its length and saved file. */
	if ((rep->stdout_bytes > 0 && json_object_set_new(sc, "stdout_bytes",
	    json_integer((json_int_t)rep->stdout_bytes)) != 0) ||
	    (rep->stdout_bytes > 0 && rep->stdout_file[0] != '\0' &&
		json_object_set_new(sc, "stdout_file",
		    json_string(rep->stdout_file)) != 0) ||
	    (rep->stderr_bytes > 0 && json_object_set_new(sc, "stderr_bytes",
		json_integer((json_int_t)rep->stderr_bytes)) != 0) ||
	    (rep->stderr_bytes > 0 && rep->stderr_file[0] != '\0' &&
		json_object_set_new(sc, "stderr_file",
		    json_string(rep->stderr_file)) != 0)) {
		json_decref(sc);
		return tools_error_result("cannot encode the result");
	}
	/* Python's json.dumps: ", " and ": " separators, ASCII escapes. */
	text = json_dumps(sc, JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	if (text == NULL) {
		json_decref(sc);
		return tools_error_result("cannot encode the result");
	}
	lowercase_escapes(text);
	res = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type",
	    "text", "text", text, "structuredContent", sc, "isError", 0);
	free(text);
	return res;
}

json_t *
tools_error_result(const char *text)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
	    "text", text, "isError", 1);
}
