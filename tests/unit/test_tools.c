/* test_tools.c - terminal_execute arguments: the edge's type rules, the
 * session's validation messages, the result shape and the description. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mcp.h"
#include "session_int.h"
#include "docker_cfg.h"
#include "msc_reason.h"
#include "tools.h"

/* Parses `json` arguments into req; returns the type error or NULL. */
static char *
convert(const char *json, Msc__V1__TerminalExecRequest *req, json_t **keep,
    json_t **args)
{
	*req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	*keep = json_array();
	*args = json_loads(json, JSON_ALLOW_NUL, NULL);
	assert_non_null(*args);
	return tools_exec_request(*args, req, *keep);
}

static const char *
validate(const char *json)
{
	static char buf[512];
	static char copy[512];
	Msc__V1__TerminalExecRequest req;
	json_t *keep, *args;
	const char *msg;
	char *err = convert(json, &req, &keep, &args);

	assert_null(err);
	msg = sess_validate(&req, buf, sizeof(buf));
	snprintf(copy, sizeof(copy), "%s", msg ? msg : "");
	tools_exec_request_fini(&req);
	json_decref(keep);
	json_decref(args);
	return copy;
}

static void
validation_messages(void **state)
{
	(void)state;
	assert_string_equal(validate("{\"command\":\"ls\",\"args\":[\"ls\"]}"),
	    "Cannot provide both 'command' and 'args'. Use 'command' for shell "
	    "commands or 'args' for direct execution.");
	assert_string_equal(validate("{}"),
	    "Must provide either 'command' or 'args'.");
	assert_string_equal(validate("{\"command\":\"\",\"args\":[]}"),
	    "Must provide either 'command' or 'args'.");
	assert_string_equal(validate("{\"command\":\"ls\","
				     "\"working_directory\":\"relative/path\"}"),
	    "working_directory must be an absolute path, got: relative/path");
	assert_string_equal(validate("{\"command\":\"ls\",\"timeout\":0}"),
	    "timeout must be at least 1 second.");
	assert_string_equal(validate("{\"command\":\"ls\",\"timeout\":-5}"),
	    "timeout must be at least 1 second.");
	assert_string_equal(validate("{\"command\":\"ls\","
				     "\"computer_id\":\"Bad_Id\"}"),
	    MSC_SLUG_ERROR);
	assert_string_equal(validate("{\"command\":\"ls\",\"computer_id\":\"\"}"),
	    MSC_SLUG_ERROR);
	assert_string_equal(validate("{\"args\":[\"ls\"],\"timeout\":\"5\","
				     "\"working_directory\":\"/tmp\"}"), "");
}

static void
stdin_limit(void **state)
{
	size_t n = 2097152;
	char *json = malloc(n + 64);
	const char *msg;

	(void)state;
	strcpy(json, "{\"command\":\"cat\",\"stdin\":\"");
	size_t off = strlen(json);
	memset(json + off, 'a', n);
	strcpy(json + off + n, "\"}");
	assert_string_equal(validate(json), "");     /* exactly 2 MiB is fine */
	memset(json + off, 'a', n + 1);
	strcpy(json + off + n + 1, "\"}");
	msg = validate(json);
	assert_string_equal(msg, "stdin content exceeds the 2 MiB limit "
				 "(2097153 bytes). Split into smaller chunks or "
				 "use a different approach.");
	free(json);
}

/* A command of `n` bytes ('true' then spaces), as JSON arguments. */
static char *
command_of(size_t n)
{
	char *json = malloc(n + 32);

	assert_non_null(json);
	strcpy(json, "{\"command\":\"true");
	memset(json + strlen(json), ' ', n - 4);
	strcpy(json + 16 + n - 4, "\"}");
	return json;
}

/* {"args":[...n times "a" * each...]}. */
static char *
args_of(size_t n, size_t each)
{
	char *json = malloc(n * (each + 3) + 16), *w = json;

	if (json == NULL)
		abort();        /* out of memory */
	w += sprintf(w, "{\"args\":[");
	for (size_t i = 0; i < n; i++) {
		*w++ = i > 0 ? ',' : '"';
		if (i > 0)
			*w++ = '"';
		memset(w, 'a', each);
		w += each;
		*w++ = '"';
	}
	strcpy(w, "]}");
	return json;
}

/* The reference's later limits: timeout 1..3600, command and args at
 * most 64 KiB, at most 256 args; huge or fractional timeouts are clear
 * errors, not a cast out of range. */
static void
later_limits(void **state)
{
	char *json;

	(void)state;
	assert_string_equal(validate("{\"command\":\"ls\",\"timeout\":3600}"),
	    "");
	assert_string_equal(validate("{\"command\":\"ls\",\"timeout\":3601}"),
	    "timeout must be at most 3600 seconds.");
	assert_string_equal(validate("{\"command\":\"ls\",\"timeout\":1e300}"),
	    "timeout must be at most 3600 seconds.");
	assert_string_equal(validate("{\"command\":\"ls\","
				     "\"timeout\":-1e300}"),
	    "timeout must be at least 1 second.");
	assert_string_equal(validate("{\"command\":\"ls\","
				     "\"timeout\":9.3e18}"),
	    "timeout must be at most 3600 seconds.");
	assert_string_equal(validate("{\"command\":\"ls\","
				     "\"timeout\":\"99999999999999999999\"}"),
	    "timeout must be at most 3600 seconds.");
	json = command_of(65536);
	assert_string_equal(validate(json), "");
	free(json);
	json = command_of(65537);
	assert_string_equal(validate(json), "command exceeds the 64 KiB limit "
				    "(65537 bytes). Write long scripts to a file "
				    "with stdin and run the file.");
	free(json);
	json = args_of(256, 1);
	assert_string_equal(validate(json), "");
	free(json);
	json = args_of(257, 1);
	assert_string_equal(validate(json), "args exceeds the limit of 256 "
				    "arguments (257 given).");
	free(json);
	json = args_of(2, 32768);
	assert_string_equal(validate(json), "");
	free(json);
	json = args_of(3, 32768);
	assert_string_equal(validate(json), "args exceed the 64 KiB limit "
				    "(98304 bytes together). Pass large input with "
				    "stdin.");
	free(json);
}

static void
type_errors(void **state)
{
	static const char *const bad[] = { "{\"timeout\":\"abc\"}",
		"{\"timeout\":1.5}", "{\"timeout\":\"1e300\"}",
		"{\"args\":5}", "{\"args\":[1]}",
		"{\"command\":null}", "{\"temporary\":\"maybe\"}",
		"{\"stdin\":{}}" };
	Msc__V1__TerminalExecRequest req;
	json_t *keep, *args;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char *err = convert(bad[i], &req, &keep, &args);

		assert_non_null(err);
		assert_non_null(strstr(err, "Error executing tool terminal_execute"));
		free(err);
		tools_exec_request_fini(&req);
		json_decref(keep);
		json_decref(args);
	}
}

static void
coercions(void **state)
{
	Msc__V1__TerminalExecRequest req;
	json_t *keep, *args;

	(void)state;
	assert_null(convert("{\"args\":\"[\\\"echo\\\",\\\"hi\\\"]\","
			    "\"timeout\":\"5\",\"temporary\":false,"
			    "\"stdin\":\"a\\u0000b\"}", &req, &keep, &args));
	assert_int_equal(req.n_args, 2);
	assert_string_equal(req.args[1], "hi");
	assert_true(req.has_timeout);
	assert_int_equal(req.timeout, 5);
	assert_true(req.has_temporary);
	assert_false(req.temporary);
	assert_int_equal(req.stdin.len, 3);
	tools_exec_request_fini(&req);
	json_decref(keep);
	json_decref(args);
}

static void
result_shape(void **state)
{
	Msc__V1__TerminalExecReply rep = MSC__V1__TERMINAL_EXEC_REPLY__INIT;
	json_t *res;
	const char *text;

	(void)state;
	rep.computer_id = "steady-otter-a31f";
	rep.temporary = false;
	rep.stdout.data = (uint8_t *)"persistent\n";
	rep.stdout.len = 11;
	rep.exec_duration_ms = 84;
	res = tools_exec_result(&rep, NULL);
	text = json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "content"), 0), "text"));
	assert_string_equal(text, "{\"computer_id\": \"steady-otter-a31f\", "
				  "\"temporary\": false, \"stdout\": "
				  "\"persistent\\n\", \"stderr\": \"\", "
				  "\"exit_code\": 0, \"exec_duration_ms\": 84}");
	assert_true(json_is_false(json_object_get(res, "isError")));
	json_decref(res);
	/* Python's ensure_ascii escapes: lowercase hex, "\\" kept apart. */
	rep.stdout.data = (uint8_t *)"\xc3\xa9\\u00C9";
	rep.stdout.len = 8;
	res = tools_exec_result(&rep, NULL);
	text = json_string_value(json_object_get(json_array_get(
	    json_object_get(res, "content"), 0), "text"));
	assert_non_null(strstr(text, "\"stdout\": \"\\u00e9\\\\u00C9\""));
	json_decref(res);
}

static void
description(void **state)
{
	struct msc_cfg cfg = { 0 };
	char *d, *docker;

	(void)state;
	cfg.shell = "/bin/bash";
	cfg.timeout = 120;
	/* The backend's text comes from its driver (Driver/Describe). */
	docker = dock_cfg_describe(&cfg);
	d = tools_description(&cfg, docker);
	assert_non_null(strstr(d, "Debian"));
	assert_non_null(strstr(d, "bash"));
	assert_non_null(strstr(d, "120"));
	assert_non_null(strstr(d, "sandbox_handle"));
	free(d);
	cfg.extended_tool_instruction = "E";
	d = tools_description(&cfg, docker);
	assert_int_equal(strcmp(d + strlen(d) - 3, "\n\nE"), 0);
	free(d);
	cfg.tool_instruction_override = "O";
	d = tools_description(&cfg, docker);
	assert_string_equal(d, "O");
	free(d);
	free(docker);
}

/* A call that cannot be sent: overloaded and unavailable told apart. */
static void
unsent_messages(void **state)
{
	struct msc_status lost = { MSC__V1__CODE__UNAVAILABLE,
		MSC_RPC_CALL_FAILED "the service cannot be reached",
		MSC__V1__REASON__REASON_NOT_SENT };
	struct msc_status own = { MSC__V1__CODE__RESOURCE_EXHAUSTED,
		"too many sessions", MSC__V1__REASON__REASON_OVERLOADED };
	char buf[256];
	int retry = 0;

	(void)state;
	assert_non_null(strstr(msc_reason_session_unsent(-EAGAIN, &retry),
	    "overloaded"));
	assert_int_equal(retry, 1);
	assert_null(strstr(msc_reason_session_unsent(-ENOTCONN, &retry), "overloaded"));
	assert_non_null(strstr(msc_reason_session_unsent(-ENOTCONN, &retry),
	    "unavailable: it cannot be reached; retry"));
	assert_int_equal(retry, 5);
	assert_string_equal(mcp_failed_text(&lost, buf, sizeof(buf)),
	    "The session service is unavailable (the service cannot be "
	    "reached); retry in a few seconds.");
	assert_string_equal(mcp_failed_text(&own, buf, sizeof(buf)),
	    "too many sessions");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(validation_messages),
		cmocka_unit_test(stdin_limit),
		cmocka_unit_test(later_limits),
		cmocka_unit_test(type_errors),
		cmocka_unit_test(coercions),
		cmocka_unit_test(result_shape),
		cmocka_unit_test(description),
		cmocka_unit_test(unsent_messages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
