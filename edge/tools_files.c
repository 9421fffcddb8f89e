/*
 * tools_files.c - the file tools (--tools files, issue 29): file_read,
 * file_write and file_edit.
 *
 * Each is a terminal_execute in the same session and computer (the same
 * handle and ownership rules, the same Session/TerminalExec call) of the
 * computer's exec helper, by argv and never through a shell:
 *
 *     /.msc-helper --file read|write|edit PATH ...
 *
 * The content travels as the command's stdin (file_write's bytes, or
 * file_edit's old_string then new_string) and comes back as one JSON
 * object on stdout (helper_file.c), which becomes the result's
 * structuredContent and text; a failure is one line on stderr with status
 * 2, the error shown. A binary file_read answers its bytes as an embedded
 * resource (a base64 blob and a mime type). The answer fits the session's
 * reply bound (--reply-output-limit), which the helper is told. The
 * docker backend (Docker and Podman) mounts the helper in its computers;
 * the e2b, modal and fly drivers copy it in (lib/msc_helper_copy.c); the
 * WASM backends' runner runs the same commands on the host side, in the
 * computer's root (services/wasm-driver/host/runner_files.c).
 */
#include "tools.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_base64.h"
#include "msc_backend.h"
#include "msc_cfg.h"

/* Where the docker driver mounts the helper (DOCK_FX_MOUNT_HELPER). */
#define FILE_HELPER "/.msc-helper"
#define FILE_LIMIT_DEFAULT 2000
#define FILE_LIMIT_MAX 1000000
#define FILE_PATH_MAX 4095
#define FILE_TIMEOUT_S 60
/* The session refuses a longer stdin (session_validate.c). */
#define FILE_STDIN_MAX 2097152

static const struct {
	const char *name, *title, *description;
	bool read_only, destructive;
} files[] = {
	[TOOLS_FILE_READ - TOOLS_FILE_BASE] = { "file_read",
	    "Read a file in the computer",
	    "Read a file in the computer. A text file answers its lines from "
	    "`offset` (1: the first line), at most `limit` of them (default "
	    "2000) and what one answer carries (the server's reply limit; "
	    "more: true and next_offset say where to read on); bytes that are "
	    "not UTF-8 read as U+FFFD (invalid_utf8: true). A binary file "
	    "answers as an embedded resource (base64 blob, mime type) when it "
	    "fits, else its size. Every answer carries the file's size and "
	    "sha256 (pass it to file_edit's expected_sha256). A relative path "
	    "is relative to the computer's working folder.", true, false },
	[TOOLS_FILE_WRITE - TOOLS_FILE_BASE] = { "file_write",
	    "Write a file in the computer",
	    "Write a whole file in the computer, atomically (a temporary "
	    "file renamed over it: readers see the old or the new file): "
	    "`content` as text, or as base64 with encoding: \"base64\" for "
	    "any bytes (at most 2 MiB). An existing file keeps its mode and "
	    "owner unless `mode` is given; a new one gets 0644. make_dirs: "
	    "true makes the missing folders. Answers the size and sha256.",
	    false, true },
	[TOOLS_FILE_EDIT - TOOLS_FILE_BASE] = { "file_edit",
	    "Edit a file in the computer",
	    "Replace one exact occurrence of old_string with new_string in a "
	    "file in the computer (every occurrence with replace_all: true). "
	    "Refused, and nothing changed, when old_string is missing or "
	    "occurs more than once, or when expected_sha256 (from file_read) "
	    "is not the file's sha256: it changed since it was read. Answers "
	    "the replacements, the size and the sha256 after the edit.",
	    false, true },
	[TOOLS_FILE_UPLOAD - TOOLS_FILE_BASE] = { "computer_upload",
	    "Copy a local file or folder into the computer",
	    "Copy a file or folder on the machine this server runs on "
	    "(local_path: inside the client's MCP roots or the server's "
	    "--workspace, symlinks resolved) into the computer at `path` "
	    "(made with its parent folders; a folder merges into an existing "
	    "one, a file replaces one). A folder goes whole as a tar stream: "
	    "files with their modes, folders, symlinks as symlinks (devices "
	    "and fifos left out). At most 200000 entries and 8 GiB. Answers "
	    "how many files, folders, symlinks and bytes were copied.",
	    false, true },
	[TOOLS_FILE_DOWNLOAD - TOOLS_FILE_BASE] = { "computer_download",
	    "Copy a file or folder from the computer to a local path",
	    "Copy a file or folder at `path` in the computer to local_path on "
	    "the machine this server runs on (inside the client's MCP roots "
	    "or the server's --workspace; its parent folder must exist; a "
	    "file there is replaced, a folder merged). Modes are kept; a "
	    "symlink is kept when it points inside what is copied, else left "
	    "out, as are devices and fifos. At most 200000 entries and 8 GiB. "
	    "Answers how many files, folders, symlinks and bytes were "
	    "copied.", false, true },
};

#define NFILES (sizeof(files) / sizeof(files[0]))

int
tools_files_find(const char *name)
{
	for (size_t i = 0; i < NFILES; i++)
		if (strcmp(name, files[i].name) == 0)
			return TOOLS_FILE_BASE + (int)i;
	return -1;
}

bool
tools_is_file(int tool)
{
	return tool >= TOOLS_FILE_BASE && tool < TOOLS_FILE_END;
}

static json_t *
def(int tool)
{
	int i = tool - TOOLS_FILE_BASE;
	json_t *props = tools_where_props(), *req = json_array();
	char title[64];

	if (tool == TOOLS_FILE_UPLOAD || tool == TOOLS_FILE_DOWNLOAD) {
		json_object_set_new(props, "local_path", tools_prop(
		    "Local Path", "string", tool == TOOLS_FILE_UPLOAD ?
		    "The local file or folder to copy (absolute, or relative "
		    "to the server's --workspace)." : "Where the copy goes "
		    "locally (absolute, or relative to the server's "
		    "--workspace): the file's or the folder's new path."));
		json_array_append_new(req, json_string("local_path"));
	}
	json_object_set_new(props, "path", tools_prop("Path", "string",
	    tool == TOOLS_FILE_UPLOAD ? "Where the copy goes in the "
	    "computer (absolute, or relative to its working folder)." :
	    tool == TOOLS_FILE_DOWNLOAD ? "The file or folder to copy from "
	    "the computer (absolute, or relative to its working folder)." :
	    "The file's path in the computer (absolute, or relative to its "
	    "working folder)."));
	json_array_append_new(req, json_string("path"));
	if (tool == TOOLS_FILE_READ) {
		json_object_set_new(props, "offset", tools_prop("Offset",
		    "integer", "The first line to read (1, the default: the "
		    "first line; next_offset of an answer: where it "
		    "stopped)."));
		json_object_set_new(props, "limit", tools_prop("Limit",
		    "integer", "The most lines to read (default 2000)."));
		json_object_set_new(props, "line_numbers", tools_prop(
		    "Line Numbers", "boolean", "true: each line after its "
		    "number and a tab, as cat -n (default false)."));
	}
	if (tool == TOOLS_FILE_WRITE) {
		json_object_set_new(props, "content", tools_prop("Content",
		    "string", "The file's whole new content."));
		json_object_set_new(props, "encoding", tools_prop("Encoding",
		    "string", "\"utf-8\" (default): content is the text; "
		    "\"base64\": content is the bytes in base64 (standard, "
		    "padded)."));
		json_object_set_new(props, "mode", tools_prop("Mode",
		    "string", "Permission bits in octal, as \"0755\" (default: "
		    "an existing file's, else 0644)."));
		json_object_set_new(props, "make_dirs", tools_prop("Make Dirs",
		    "boolean", "true: make the missing parent folders "
		    "(0755)."));
		json_array_append_new(req, json_string("content"));
	}
	if (tool == TOOLS_FILE_EDIT) {
		json_object_set_new(props, "old_string", tools_prop(
		    "Old String", "string", "The exact text to replace (not "
		    "empty; unique in the file unless replace_all)."));
		json_object_set_new(props, "new_string", tools_prop(
		    "New String", "string", "The text to put in its place."));
		json_object_set_new(props, "replace_all", tools_prop(
		    "Replace All", "boolean", "true: replace every occurrence "
		    "(default false: exactly one)."));
		json_object_set_new(props, "expected_sha256", tools_prop(
		    "Expected Sha256", "string", "The file's sha256 as "
		    "file_read answered it: the edit is refused if the file "
		    "changed since."));
		json_array_append_new(req, json_string("old_string"));
		json_array_append_new(req, json_string("new_string"));
	}
	snprintf(title, sizeof(title), "%sArguments", files[i].name);
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o, s:o}, s:o}",
	    "name", files[i].name, "title", files[i].title,
	    "description", files[i].description,
	    "inputSchema", "type", "object", "title", title, "properties",
	    props, "required", req,
	    "annotations", tools_annotations(files[i].title,
		files[i].read_only, files[i].destructive, false));
}

void
tools_files_extend(json_t *list)
{
	json_t *tools = json_object_get(list, "tools");

	for (int t = TOOLS_FILE_BASE; t < TOOLS_FILE_END; t++)
		json_array_append_new(tools, def(t));
}

static char *
arg_error(int tool, const char *field, const char *what)
{
	char *msg;

	if (asprintf(&msg, "Error executing tool %s: %s: %s",
	    files[tool - TOOLS_FILE_BASE].name, field, what) < 0)
		return NULL;
	return msg;
}

/* A string argument: its value and length (NULL: absent), or an error. */
static char *
get_str(int tool, json_t *args, const char *key, bool required,
    const char **out, size_t *len)
{
	json_t *v = json_object_get(args, key);

	*out = NULL;
	*len = 0;
	if (v == NULL || json_is_null(v))
		return required ? arg_error(tool, key, "Field required") : NULL;
	if (!json_is_string(v))
		return arg_error(tool, key, "Input should be a valid string");
	*out = json_string_value(v);
	*len = json_string_length(v);
	return NULL;
}

static char *
get_bool(int tool, json_t *args, const char *key, bool *out)
{
	json_t *v = json_object_get(args, key);

	*out = false;
	if (v == NULL || json_is_null(v))
		return NULL;
	if (!json_is_boolean(v))
		return arg_error(tool, key, "Input should be a valid boolean");
	*out = json_is_true(v);
	return NULL;
}

/* `mode`: octal digits as a string ("0755"), or a number whose decimal
 * digits are octal (755); "-" when absent. */
static char *
get_mode(int tool, json_t *args, char out[8])
{
	json_t *v = json_object_get(args, "mode");
	char buf[32];
	const char *s;

	strcpy(out, "-");
	if (v == NULL || json_is_null(v))
		return NULL;
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= 7777) {
		snprintf(buf, sizeof(buf), "%lld",
		    (long long)json_integer_value(v));
		s = buf;
	} else if (json_is_string(v))
		s = json_string_value(v);
	else
		return arg_error(tool, "mode", "octal permission bits, as "
		    "\"0644\"");
	if (strncmp(s, "0o", 2) == 0)
		s += 2;
	if (*s == '\0' || strlen(s) > 5 || strspn(s, "01234567") != strlen(s) ||
	    strtol(s, NULL, 8) > 07777)
		return arg_error(tool, "mode", "octal permission bits, as "
		    "\"0644\"");
	snprintf(out, 8, "%s", s);
	return NULL;
}

/* Bytes kept alive in `keep` until the call is sent. */
static const char *
keep_bytes(json_t *keep, const void *p, size_t n)
{
	json_t *j = json_stringn_nocheck(n > 0 ? p : "", n);

	if (j == NULL || json_array_append_new(keep, j) != 0)
		return NULL;
	return json_string_value(j);
}

/* What the session's reply carries whole: the helper's answer bound. */
static long long
answer_budget(const struct msc_cfg *cfg)
{
	long long b = cfg->output_limit > 0 ? cfg->output_limit : 2097152;

	if (cfg->reply_output_limit > 0 && cfg->reply_output_limit < b)
		b = cfg->reply_output_limit;
	b -= 64;                /* the newline, and room to spare */
	if (b > 64LL * 1024 * 1024)
		b = 64LL * 1024 * 1024;
	return b < 512 ? 512 : b;
}

static char *
read_args(int tool, const struct msc_cfg *cfg, json_t *args, char num[4][72])
{
	long long offset = 1, limit = FILE_LIMIT_DEFAULT;
	const char *bad;
	bool numbers;
	char *err;

	if ((bad = tools_get_int(args, "offset", 0, 1LL << 60, &offset)))
		return arg_error(tool, "offset", bad);
	if ((bad = tools_get_int(args, "limit", 1, FILE_LIMIT_MAX, &limit)))
		return arg_error(tool, "limit", bad[0] == 'o' ?
		    "must be 1 to 1000000" : bad);
	if ((err = get_bool(tool, args, "line_numbers", &numbers)))
		return err;
	snprintf(num[0], sizeof(num[0]), "%lld", offset);
	snprintf(num[1], sizeof(num[1]), "%lld", limit);
	snprintf(num[2], sizeof(num[2]), "%lld", answer_budget(cfg));
	snprintf(num[3], sizeof(num[3]), "%d", numbers ? 1 : 0);
	return NULL;
}

static char *
write_args(int tool, json_t *args, Msc__V1__TerminalExecRequest *req,
    json_t *keep, char num[4][72])
{
	const char *content, *enc, *kept;
	size_t len, enc_len;
	uint8_t *bytes = NULL;
	bool make_dirs;
	char *err;
	int rv;

	if ((err = get_str(tool, args, "content", true, &content, &len)) ||
	    (err = get_str(tool, args, "encoding", false, &enc, &enc_len)) ||
	    (err = get_mode(tool, args, num[0])) ||
	    (err = get_bool(tool, args, "make_dirs", &make_dirs)))
		return err;
	if (enc != NULL && strcasecmp(enc, "base64") == 0) {
		if ((rv = msc_base64_decode(content, len, &bytes, &len)) != 0)
			return rv == -ENOMEM ? strdup("out of memory") :
			    arg_error(tool, "content", "not valid base64 "
			    "(the standard alphabet, padded, without line "
			    "breaks)");
		content = (const char *)bytes;
	} else if (enc != NULL && strcasecmp(enc, "utf-8") != 0 &&
	    strcasecmp(enc, "utf8") != 0 && enc_len > 0)
		return arg_error(tool, "encoding", "\"utf-8\" or \"base64\"");
	if (len > FILE_STDIN_MAX) {
		free(bytes);
		return arg_error(tool, "content", "more than 2 MiB: write a "
		    "large file in parts (terminal_execute can join them)");
	}
	kept = keep_bytes(keep, content, len);
	free(bytes);
	if (kept == NULL)
		return strdup("out of memory");
	req->stdin.data = (uint8_t *)kept;
	req->stdin.len = len;
	req->has_stdin = len > 0;
	snprintf(num[1], sizeof(num[1]), "%d", make_dirs ? 1 : 0);
	return NULL;
}

static char *
edit_args(int tool, json_t *args, Msc__V1__TerminalExecRequest *req,
    json_t *keep, char num[4][72])
{
	const char *old, *neu, *sha;
	size_t old_len, new_len, sha_len;
	bool all;
	char *err, *both;
	const char *kept;

	if ((err = get_str(tool, args, "old_string", true, &old, &old_len)) ||
	    (err = get_str(tool, args, "new_string", true, &neu, &new_len)) ||
	    (err = get_str(tool, args, "expected_sha256", false, &sha,
		&sha_len)) ||
	    (err = get_bool(tool, args, "replace_all", &all)))
		return err;
	if (old_len == 0)
		return arg_error(tool, "old_string", "must not be empty");
	if (old_len == new_len && memcmp(old, neu, old_len) == 0)
		return arg_error(tool, "new_string", "the same as old_string: "
		    "nothing would change");
	if (old_len + new_len > FILE_STDIN_MAX)
		return arg_error(tool, "old_string", "old_string and "
		    "new_string together are more than 2 MiB");
	if (sha != NULL && sha_len > 0) {
		if (sha_len != 64 ||
		    strspn(sha, "0123456789abcdefABCDEF") != 64)
			return arg_error(tool, "expected_sha256", "64 "
			    "hexadecimal digits, as file_read answers it");
		for (int i = 0; i < 64; i++)
			num[2][i] = (char)tolower((unsigned char)sha[i]);
		num[2][64] = '\0';
	} else
		strcpy(num[2], "-");
	if ((both = malloc(old_len + new_len + 1)) == NULL)
		return strdup("out of memory");
	memcpy(both, old, old_len);
	memcpy(both + old_len, neu, new_len);
	kept = keep_bytes(keep, both, old_len + new_len);
	free(both);
	if (kept == NULL)
		return strdup("out of memory");
	req->stdin.data = (uint8_t *)kept;
	req->stdin.len = old_len + new_len;
	req->has_stdin = true;
	snprintf(num[0], sizeof(num[0]), "%zu", old_len);
	snprintf(num[1], sizeof(num[1]), "%d", all ? 1 : 0);
	return NULL;
}

char *
tools_file_request(int tool, const struct msc_cfg *cfg, json_t *args,
    Msc__V1__TerminalExecRequest *req, json_t *keep)
{
	static const char *const verbs[] = { "read", "write", "edit" };
	const char *path;
	size_t path_len, cap = 12;
	char num[4][72], *err;
	int rv = 0;

	if (!tools_backend_has(cfg, MSC_BACKEND_FILES)) {
		char *msg;

		if (asprintf(&msg, "The file tools work on the docker (Docker "
		    "and Podman), e2b, modal, fly and WASM backends only: the "
		    "%s backend has no file helper in its computers; use "
		    "terminal_execute.", cfg->backend) < 0)
			return NULL;
		return msg;
	}
	if (req->command[0] != '\0' || req->n_args > 0 || req->has_stdin ||
	    req->working_directory[0] != '\0')
		return arg_error(tool, req->command[0] != '\0' ? "command" :
		    req->n_args > 0 ? "args" : req->has_stdin ? "stdin" :
		    "working_directory", "not an argument of this tool");
	if ((err = get_str(tool, args, "path", true, &path, &path_len)))
		return err;
	if (path_len == 0)
		return arg_error(tool, "path", "must not be empty");
	if (strlen(path) != path_len)
		return arg_error(tool, "path", "contains a NUL character");
	if (path_len > FILE_PATH_MAX)
		return arg_error(tool, "path", "longer than 4095 bytes");
	if (tool == TOOLS_FILE_READ)
		err = read_args(tool, cfg, args, num);
	else if (tool == TOOLS_FILE_WRITE)
		err = write_args(tool, args, req, keep, num);
	else
		err = edit_args(tool, args, req, keep, num);
	if (err != NULL)
		return err;
	free(req->args);        /* a caller's own `args`, borrowed strings */
	req->n_args = 0;
	if ((req->args = calloc(cap, sizeof(char *))) == NULL)
		return strdup("out of memory");
	rv |= tools_push_arg(req, cap, keep, FILE_HELPER);
	rv |= tools_push_arg(req, cap, keep, "--file");
	rv |= tools_push_arg(req, cap, keep, verbs[tool - TOOLS_FILE_BASE]);
	rv |= tools_push_arg(req, cap, keep, path);
	for (int i = 0; i < (tool == TOOLS_FILE_READ ? 4 : tool ==
	    TOOLS_FILE_WRITE ? 2 : 3); i++)
		rv |= tools_push_arg(req, cap, keep, num[i]);
	/*
	 * An exec helper older than the file tools takes `--file` for its
	 * socket and serves on: the timeout ends it (see the result).
	 */
	req->has_timeout = true;
	req->timeout = FILE_TIMEOUT_S;
	return rv != 0 ? strdup("out of memory") : NULL;
}

/* file://PATH, the path's bytes but unreserved ones and '/' %-encoded. */
static char *
file_uri(const char *path)
{
	size_t n = strlen(path);
	char *uri = malloc(7 + 3 * n + 1), *p;

	if (uri == NULL)
		return NULL;
	p = uri + sprintf(uri, "file://");
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		if (isalnum(*s) || strchr("/-._~", *s) != NULL)
			*p++ = (char)*s;
		else
			p += sprintf(p, "%%%02X", *s);
	}
	*p = '\0';
	return uri;
}

/* The failure the helper's command ended with, as the agent reads it. */
static json_t *
failed(const Msc__V1__TerminalExecReply *rep)
{
	const char *e = rep->stderr.len ? (const char *)rep->stderr.data : "";
	size_t n = rep->stderr.len;
	char err[700];

	while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == ' '))
		n--;
	if (rep->exit_code == 127 || rep->exit_code == 126)
		snprintf(err, sizeof(err), "This computer has no file helper ("
		    FILE_HELPER "): the file tools work on the docker backend "
		    "(Docker and Podman), in computers it started, and on the "
		    "e2b, modal, fly and WASM backends.");
	else if (rep->exit_code == 124)
		snprintf(err, sizeof(err), "The file helper did not answer in "
		    "time: this computer's exec helper may predate the file "
		    "tools (computer_restart updates it).");
	else if (rep->exit_code == 2 && n > 0)
		snprintf(err, sizeof(err), "%.*s", (int)(n > 600 ? 600 : n), e);
	else if (rep->exit_code == 0)
		snprintf(err, sizeof(err), "The file helper's answer was cut "
		    "to the server's reply limit and could not be read.");
	else
		snprintf(err, sizeof(err), "The file helper failed (exit code "
		    "%d): %.*s", rep->exit_code, (int)(n > 500 ? 500 : n), e);
	return tools_error_result(err);
}

json_t *
tools_file_result(int tool, const Msc__V1__TerminalExecReply *rep,
    const char *handle)
{
	json_t *sc, *res, *blob, *content;
	char *text, *uri;

	(void)tool;
	if (rep->exit_code != 0 || rep->stdout_bytes > 0)
		return failed(rep);
	sc = json_loadb(rep->stdout.len ? (const char *)rep->stdout.data : "",
	    rep->stdout.len, 0, NULL);
	if (!json_is_object(sc)) {
		json_decref(sc);
		return tools_error_result("The file helper's answer could not "
		    "be read.");
	}
	/* A binary file's bytes go in an embedded resource, not twice. */
	blob = json_incref(json_object_get(sc, "blob"));
	json_object_del(sc, "blob");
	if (json_object_set_new(sc, "computer_id",
	    json_string(rep->computer_id)) != 0 ||
	    (handle != NULL && json_object_set_new(sc, "sandbox_handle",
		json_string(handle)) != 0) ||
	    (text = json_dumps(sc, JSON_ENSURE_ASCII |
		JSON_PRESERVE_ORDER)) == NULL) {
		json_decref(sc);
		json_decref(blob);
		return tools_error_result("cannot encode the result");
	}
	content = json_pack("[{s:s, s:s}]", "type", "text", "text", text);
	free(text);
	if (content != NULL && blob != NULL) {
		uri = file_uri(json_string_value(json_object_get(sc, "path")) ?
		    json_string_value(json_object_get(sc, "path")) : "");
		if (uri == NULL || json_array_append_new(content, json_pack(
		    "{s:s, s:{s:s, s:O, s:O}}", "type", "resource",
		    "resource", "uri", uri, "mimeType",
		    json_object_get(sc, "mime_type"), "blob", blob)) != 0) {
			json_decref(content);
			content = NULL;
		}
		free(uri);
	}
	json_decref(blob);
	if (content == NULL) {
		json_decref(sc);
		return tools_error_result("cannot encode the result");
	}
	res = json_pack("{s:o, s:o, s:b}", "content", content,
	    "structuredContent", sc, "isError", 0);
	return res;
}
