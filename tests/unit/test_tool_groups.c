/* test_tool_groups.c - the tool groups' arguments (--tools processes,
 * files, snapshots): what each refuses before any call, and the helper
 * command or session request it makes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "docker_cfg.h"
#include "fly_cfg.h"
#include "msc_backend.h"
#include "msc_cfg.h"
#include "wasm_cfg.h"
#include "msc_snapshot.h"
#include "tools.h"

/* A backend with none of the edge's capabilities. */
static const struct msc_backend other_backend = { .name = "other" };

/* A helper-backed tool's request maker (tools_process_request, ...). */
typedef char *(*helper_request_fn)(int tool, const struct msc_cfg *cfg,
    json_t *args, Msc__V1__TerminalExecRequest *req, json_t *keep);

/* Asserts that tool `tool` refuses `json` arguments with a message that
 * contains `want`, before any call. */
static void
assert_refused(helper_request_fn make, const struct msc_cfg *cfg, int tool,
    const char *json, const char *want)
{
	Msc__V1__TerminalExecRequest req = MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	json_t *keep = json_array(), *args = json_loads(json, JSON_ALLOW_NUL,
	    NULL);
	char *msg;

	assert_non_null(args);
	msg = tools_exec_request(args, &req, keep);
	if (msg == NULL)
		msg = make(tool, cfg, args, &req, keep);
	assert_non_null(msg);
	if (strstr(msg, want) == NULL)
		fail_msg("%s: %s", json, msg);
	free(msg);
	tools_exec_request_fini(&req);
	json_decref(args);
	json_decref(keep);
}

/*
 * The process tools (--tools processes): their bounds are refused before
 * any call; a request runs the computer's exec helper as argv (no shell
 * around the agent's text); another backend is named.
 */
static void
process_requests(void **state)
{
	struct msc_cfg cfg = { .backend = "docker", .chosen = &dock_backend,
	    .shell = "/bin/bash",
		.reply_output_limit = 8192, .max_background_processes = 16,
		.process_log_limit = 1048576 };
	static const struct {
		int tool;
		const char *args, *want;
	} bad[] = {
		{ TOOLS_PROC_OUTPUT, "{}", "process_id: Field required" },
		{ TOOLS_PROC_OUTPUT, "{\"process_id\": 5}", "valid string" },
		{ TOOLS_PROC_OUTPUT, "{\"process_id\": \"p1\", \"wait_ms\": -1}",
		    "wait_ms: must be 0 to 30000" },
		{ TOOLS_PROC_OUTPUT, "{\"process_id\": \"p1\", \"wait_ms\": "
		    "1e300}", "wait_ms" },
		{ TOOLS_PROC_OUTPUT, "{\"process_id\": \"p1\", \"max_bytes\": 0}",
		    "max_bytes: out of range" },
		{ TOOLS_PROC_KILL, "{\"process_id\": \"p1\", \"signal\": []}",
		    "signal: Input should be a valid string" },
		{ TOOLS_PROC_LIST, "{\"command\": \"id\"}", "not an argument" },
	};
	Msc__V1__TerminalExecRequest req;
	json_t *keep, *args;
	char *msg;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(tools_process_request, &cfg, bad[i].tool, bad[i].args,
		    bad[i].want);
	/* background: the agent's command is one argument of the helper. */
	req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	keep = json_array();
	args = json_pack("{s:s, s:b}", "command", "echo $HOME; rm -rf x",
	    "background", 1);
	assert_null(tools_exec_request(args, &req, keep));
	assert_null(tools_process_request(TOOLS_PROC_START, &cfg, args, &req,
	    keep));
	assert_string_equal(req.command, "");
	assert_string_equal(req.args[0], "/.msc-helper");
	assert_string_equal(req.args[1], "--process");
	assert_string_equal(req.args[2], "start");
	assert_string_equal(req.args[req.n_args - 1], "echo $HOME; rm -rf x");
	assert_string_equal(req.args[req.n_args - 2], "/bin/bash");
	tools_exec_request_fini(&req);
	json_decref(args);
	json_decref(keep);
	/* another backend */
	cfg.backend = "go_busybox";
	cfg.chosen = &busybox_backend;
	req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	keep = json_array();
	args = json_pack("{}");
	msg = tools_process_request(TOOLS_PROC_LIST, &cfg, args, &req, keep);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "the go_busybox backend has no process supervisor"));
	free(msg);
	json_decref(args);
	json_decref(keep);
}

/*
 * The file tools (--tools files): bad arguments are refused before any
 * call; a request runs the helper by argv with the content as stdin
 * (binary, with NULs, from base64); the answer's bound follows the reply
 * limit; a binary answer becomes an embedded resource.
 */
static void
file_requests(void **state)
{
	struct msc_cfg cfg = { .backend = "docker", .chosen = &dock_backend,
	    .reply_output_limit = 8192,
		.output_limit = 2097152 };
	static const struct {
		int tool;
		const char *args, *want;
	} bad[] = {
		{ TOOLS_FILE_READ, "{}", "path: Field required" },
		{ TOOLS_FILE_READ, "{\"path\": 5}", "path: Input should be a "
		    "valid string" },
		{ TOOLS_FILE_READ, "{\"path\": \"a\\u0000b\"}", "NUL" },
		{ TOOLS_FILE_READ, "{\"path\": \"/a\", \"limit\": 0}",
		    "limit: must be 1 to 1000000" },
		{ TOOLS_FILE_READ, "{\"path\": \"/a\", \"offset\": 1.5}",
		    "offset: a valid integer" },
		{ TOOLS_FILE_READ, "{\"path\": \"/a\", \"stdin\": \"x\"}",
		    "stdin: not an argument" },
		{ TOOLS_FILE_WRITE, "{\"path\": \"/a\"}",
		    "content: Field required" },
		{ TOOLS_FILE_WRITE, "{\"path\": \"/a\", \"content\": \"@@@@\", "
		    "\"encoding\": \"base64\"}", "content: not valid base64" },
		{ TOOLS_FILE_WRITE, "{\"path\": \"/a\", \"content\": \"x\", "
		    "\"mode\": \"0888\"}", "mode: octal" },
		{ TOOLS_FILE_WRITE, "{\"path\": \"/a\", \"content\": \"x\", "
		    "\"mode\": 8}", "mode: octal" },
		{ TOOLS_FILE_WRITE, "{\"path\": \"/a\", \"content\": \"x\", "
		    "\"make_dirs\": \"yes\"}", "make_dirs: Input should be a "
		    "valid boolean" },
		{ TOOLS_FILE_EDIT, "{\"path\": \"/a\", \"old_string\": \"\", "
		    "\"new_string\": \"x\"}", "old_string: must not be empty" },
		{ TOOLS_FILE_EDIT, "{\"path\": \"/a\", \"old_string\": \"x\"}",
		    "new_string: Field required" },
		{ TOOLS_FILE_EDIT, "{\"path\": \"/a\", \"old_string\": \"x\", "
		    "\"new_string\": \"y\", \"expected_sha256\": \"abc\"}",
		    "expected_sha256: 64 hexadecimal digits" },
	};
	Msc__V1__TerminalExecRequest req;
	json_t *keep, *args, *res;
	char *msg;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_refused(tools_file_request, &cfg, bad[i].tool, bad[i].args,
		    bad[i].want);
	/* write: base64 bytes with a NUL as stdin; the path one argument */
	req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	keep = json_array();
	args = json_pack("{s:s, s:s, s:s, s:s, s:b}", "path", "/tmp/a b;$(x)",
	    "content", "AP9h", "encoding", "base64", "mode", "0o755",
	    "make_dirs", 1);
	assert_null(tools_exec_request(args, &req, keep));
	assert_null(tools_file_request(TOOLS_FILE_WRITE, &cfg, args, &req,
	    keep));
	assert_int_equal(req.n_args, 6);
	assert_string_equal(req.args[0], "/.msc-helper");
	assert_string_equal(req.args[1], "--file");
	assert_string_equal(req.args[2], "write");
	assert_string_equal(req.args[3], "/tmp/a b;$(x)");
	assert_string_equal(req.args[4], "755");
	assert_string_equal(req.args[5], "1");
	assert_true(req.has_stdin);
	assert_int_equal(req.stdin.len, 3);
	assert_memory_equal(req.stdin.data, "\0\xff" "a", 3);
	tools_exec_request_fini(&req);
	json_decref(args);
	json_decref(keep);
	/* edit: old then new on stdin, old's length and the sha lowercased */
	req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	keep = json_array();
	args = json_pack("{s:s, s:s, s:s, s:s}", "path", "f", "old_string",
	    "ab", "new_string", "xyz", "expected_sha256",
	    "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
	assert_null(tools_exec_request(args, &req, keep));
	assert_null(tools_file_request(TOOLS_FILE_EDIT, &cfg, args, &req,
	    keep));
	assert_int_equal(req.n_args, 7);
	assert_string_equal(req.args[4], "2");
	assert_string_equal(req.args[5], "0");
	assert_string_equal(req.args[6],
	    "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
	assert_memory_equal(req.stdin.data, "abxyz", 5);
	tools_exec_request_fini(&req);
	json_decref(args);
	json_decref(keep);
	/* read: the answer's bound is the reply limit's */
	req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	keep = json_array();
	args = json_pack("{s:s}", "path", "/etc/hostname");
	assert_null(tools_exec_request(args, &req, keep));
	assert_null(tools_file_request(TOOLS_FILE_READ, &cfg, args, &req,
	    keep));
	assert_string_equal(req.args[4], "1");
	assert_string_equal(req.args[5], "2000");
	assert_string_equal(req.args[6], "8128");
	assert_false(req.has_stdin);
	tools_exec_request_fini(&req);
	json_decref(args);
	json_decref(keep);
	/* a binary answer: the blob in an embedded resource, once */
	{
		Msc__V1__TerminalExecReply rep = MSC__V1__TERMINAL_EXEC_REPLY__INIT;
		const char *out = "{\"path\": \"/t/a b.bin\", \"size\": 2, "
		    "\"sha256\": null, \"binary\": true, \"mime_type\": "
		    "\"image/png\", \"blob\": \"AP8=\"}\n";
		json_t *r;

		rep.computer_id = "c1";
		rep.stdout.data = (uint8_t *)out;
		rep.stdout.len = strlen(out);
		res = tools_file_result(TOOLS_FILE_READ, &rep, NULL);
		assert_false(json_is_true(json_object_get(res, "isError")));
		assert_null(json_object_get(json_object_get(res,
		    "structuredContent"), "blob"));
		r = json_object_get(json_array_get(json_object_get(res,
		    "content"), 1), "resource");
		assert_string_equal(json_string_value(json_object_get(r, "uri")),
		    "file:///t/a%20b.bin");
		assert_string_equal(json_string_value(json_object_get(r,
		    "blob")), "AP8=");
		assert_string_equal(json_string_value(json_object_get(r,
		    "mimeType")), "image/png");
		json_decref(res);
		/* the helper's failure line is the error shown */
		rep.exit_code = 2;
		rep.stdout.len = 0;
		rep.stderr.data = (uint8_t *)"/x: refused: it is a fifo\n";
		rep.stderr.len = strlen((char *)rep.stderr.data);
		res = tools_file_result(TOOLS_FILE_READ, &rep, NULL);
		assert_true(json_is_true(json_object_get(res, "isError")));
		assert_string_equal(json_string_value(json_object_get(
		    json_array_get(json_object_get(res, "content"), 0), "text")),
		    "/x: refused: it is a fifo");
		json_decref(res);
	}
	/* fly: the helper copied into the Machine, the same request */
	cfg.backend = "fly";
	cfg.chosen = &fly_backend;
	req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	keep = json_array();
	args = json_pack("{s:s}", "path", "/a");
	assert_null(tools_exec_request(args, &req, keep));
	assert_null(tools_file_request(TOOLS_FILE_READ, &cfg, args, &req,
	    keep));
	assert_true(req.n_args > 3);
	assert_string_equal(req.args[0], "/.msc-helper");
	assert_string_equal(req.args[3], "/a");
	tools_exec_request_fini(&req);
	json_decref(args);
	json_decref(keep);
	/* a backend without the helper */
	cfg.backend = "other";
	cfg.chosen = &other_backend;
	req = (Msc__V1__TerminalExecRequest)MSC__V1__TERMINAL_EXEC_REQUEST__INIT;
	keep = json_array();
	args = json_pack("{s:s}", "path", "/a");
	msg = tools_file_request(TOOLS_FILE_READ, &cfg, args, &req, keep);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "the other backend has no file helper"));
	free(msg);
	json_decref(args);
	json_decref(keep);
}

/*
 * Snapshots (--tools snapshots): ids are snap- and 32 lowercase hex
 * digits, nothing else (no path character, no length past it); names
 * are short and plain; count is 1 to 64 with from_snapshot.
 */
static void
snapshot_requests(void **state)
{
	static const char *const bad_ids[] = { "", "snap-", "../etc/passwd",
	    "snap-0123456789abcdef0123456789abcdeF",
	    "snap-0123456789abcdef0123456789abcde/",
	    "snap-0123456789abcdef0123456789abcdef0",
	    "SNAP-0123456789abcdef0123456789abcdef",
	    "snap-0123456789abcdef0123456789abcde" };
	static const struct {
		int tool;
		const char *args, *want;
	} bad[] = {
		{ TOOLS_SNAP_SNAPSHOT, "{}", "computer_id: Field required" },
		{ TOOLS_SNAP_RESTORE, "{\"computer_id\": \"a\"}",
		    "snapshot_id: Field required" },
		{ TOOLS_SNAP_DELETE, "{\"snapshot_id\": 5}", "valid string" },
		{ TOOLS_SNAP_DELETE, "{\"snapshot_id\": \"snap-\\u0000\"}",
		    "NUL" },
		{ TOOLS_SNAP_SNAPSHOT, "{\"computer_id\": \"a\", \"name\": []}",
		    "name: Input should be a valid string" },
		{ TOOLS_SNAP_FORK, "{\"from_snapshot\": \"x\", \"count\": 0}",
		    "count: must be a whole number from 1 to 64" },
		{ TOOLS_SNAP_FORK, "{\"from_snapshot\": \"x\", \"count\": -3}",
		    "from 1 to 64" },
		{ TOOLS_SNAP_FORK, "{\"from_snapshot\": \"x\", \"count\": "
		    "10000}", "from 1 to 64" },
		{ TOOLS_SNAP_FORK, "{\"from_snapshot\": \"x\", \"count\": 2.5}",
		    "from 1 to 64" },
		{ TOOLS_SNAP_FORK, "{\"count\": 2}", "pass from_snapshot" },
	};
	char id[MSC_SNAPSHOT_ID_LEN + 1], other[MSC_SNAPSHOT_ID_LEN + 1];
	Msc__V1__ComputerRequest req;
	json_t *args;
	char *msg;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
		assert_false(msc_snapshot_id_valid(bad_ids[i]));
	msc_snapshot_id_new(id);
	msc_snapshot_id_new(other);
	assert_true(msc_snapshot_id_valid(id));
	assert_string_not_equal(id, other);
	assert_true(msc_snapshot_name_valid("before the upgrade_2.0-rc"));
	assert_false(msc_snapshot_name_valid("a/b"));
	assert_false(msc_snapshot_name_valid("x\n"));
	assert_false(msc_snapshot_name_valid("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		req = (Msc__V1__ComputerRequest)MSC__V1__COMPUTER_REQUEST__INIT;
		args = json_loads(bad[i].args, JSON_ALLOW_NUL, NULL);
		assert_non_null(args);
		msg = tools_lifecycle_request(bad[i].tool, args, &req);
		assert_non_null(msg);
		if (strstr(msg, bad[i].want) == NULL)
			fail_msg("%s: %s", bad[i].args, msg);
		free(msg);
		tools_lifecycle_request_fini(&req);
		json_decref(args);
	}
	/* A fork is a create with count; the methods are the session's. */
	req = (Msc__V1__ComputerRequest)MSC__V1__COMPUTER_REQUEST__INIT;
	args = json_pack("{s:s, s:i}", "from_snapshot", id, "count", 5);
	assert_null(tools_lifecycle_request(TOOLS_SNAP_FORK, args, &req));
	assert_int_equal(req.count, 5);
	assert_string_equal(req.from_snapshot, id);
	assert_true(tools_lifecycle_is_create(TOOLS_SNAP_FORK));
	assert_string_equal(tools_lifecycle_method(TOOLS_SNAP_FORK),
	    "ForkComputers");
	assert_string_equal(tools_lifecycle_method(TOOLS_SNAP_RESTORE),
	    "RestoreComputer");
	assert_int_equal(tools_snapshots_find("computer_snapshot"),
	    TOOLS_SNAP_SNAPSHOT);
	assert_int_equal(tools_snapshots_find("computer_create"), -1);
	tools_lifecycle_request_fini(&req);
	json_decref(args);
}

/* A restore or fork pins its snapshot; a delete claims it (issue 31). */
static void
snapshot_pins(void **state)
{
	struct msc_snap_pins *p;
	const char *a = "snap-00000000000000000000000000000001";

	(void)state;
	assert_int_equal(msc_snap_pins_new(&p), 0);
	assert_int_equal(msc_snap_pin(p, a), 0);
	assert_int_equal(msc_snap_pin(p, a), 0);        /* two restores */
	assert_int_equal(msc_snap_claim(p, a), -EBUSY);
	msc_snap_unpin(p, a);
	assert_int_equal(msc_snap_claim(p, a), -EBUSY); /* one still reads */
	msc_snap_unpin(p, a);
	assert_int_equal(msc_snap_claim(p, a), 0);
	assert_int_equal(msc_snap_pin(p, a), -ENOENT);  /* being deleted */
	assert_int_equal(msc_snap_claim(p, a), -EBUSY);
	msc_snap_release(p, a);
	assert_int_equal(msc_snap_pin(p, a), 0);        /* a new one, say */
	msc_snap_unpin(p, a);
	msc_snap_unpin(p, a);                           /* too many: nothing */
	assert_int_equal(msc_snap_claim(p, a), 0);
	msc_snap_release(p, a);
	msc_snap_pins_free(p);
}

/*
 * --max-snapshots and a principal's share (--max-principal-snapshots):
 * those being made count; the empty tag and a share of 0 are bound by
 * the server's limit only.
 */
static void
snapshot_quota(void **state)
{
	struct msc_snap_pins *p;
	char err[256];

	(void)state;
	assert_int_equal(msc_snap_pins_new(&p), 0);
	/* alice keeps 1 of 3, share 2: one more being made, then full. */
	assert_int_equal(msc_snap_reserve_as(p, "aa", 3, 1, 10, 2, err,
	    sizeof(err)), 0);
	assert_int_equal(msc_snap_reserve_as(p, "aa", 3, 1, 10, 2, err,
	    sizeof(err)), -EDQUOT);
	assert_non_null(strstr(err, "You keep at most 2 snapshots "
	    "(--max-principal-snapshots)"));
	/* bob is served meanwhile; the one principal has no share. */
	assert_int_equal(msc_snap_reserve_as(p, "bb", 3, 0, 10, 2, err,
	    sizeof(err)), 0);
	assert_int_equal(msc_snap_reserve_as(p, "", 3, 3, 10, 2, err,
	    sizeof(err)), 0);
	assert_int_equal(msc_snap_reserve_as(p, "aa", 3, 0, 10, 0, err,
	    sizeof(err)), 0);
	/* The server's limit: 3 kept + 4 being made of 7. */
	assert_int_equal(msc_snap_reserve_as(p, "cc", 3, 0, 7, 2, err,
	    sizeof(err)), -EDQUOT);
	assert_non_null(strstr(err, "at most 7 snapshots (--max-snapshots)"));
	msc_snap_unreserve_as(p, "aa");         /* the share's */
	assert_int_equal(msc_snap_reserve_as(p, "aa", 3, 1, 10, 2, err,
	    sizeof(err)), 0);
	msc_snap_unreserve_as(p, "aa");
	msc_snap_unreserve_as(p, "bb");
	msc_snap_unreserve_as(p, "");
	msc_snap_unreserve_as(p, "aa");         /* the share-less one */
	assert_int_equal(msc_snap_reserve_as(p, "cc", 6, 0, 7, 2, err,
	    sizeof(err)), 0);
	msc_snap_unreserve_as(p, "cc");
	msc_snap_pins_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(process_requests),
		cmocka_unit_test(file_requests),
		cmocka_unit_test(snapshot_requests),
		cmocka_unit_test(snapshot_pins),
		cmocka_unit_test(snapshot_quota),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
