/*
 * mcp_names.c - the names, ids and paths of a message are plain text.
 *
 * Bodies are parsed with JSON_ALLOW_NUL (a command's stdin may hold any
 * byte), but the edge and the services read a method, a tool name, an id
 * or a path as a C string: "tools/call\u0000x" would be served as
 * tools/call, a handle or a working directory cut at its NUL. Such a
 * message is refused whole instead (-32602), before anything acts on it.
 * A control character (below 0x20, or DEL) is refused in the same fields:
 * none of them can mean one. A command and its args (and a computer_id,
 * whose surrounding whitespace is trimmed) may hold tabs and newlines but
 * no NUL, which would cut them; stdin may hold anything.
 */
#include "mcp.h"

#include <stdio.h>
#include <string.h>

/* The request's own fields, and params' fields, that are names or ids. */
static const char *const param_names[] = { "name", "uri", "taskId",
	"requestId", "cursor", NULL };
/*
 * Tool arguments that are names, ids or paths. Not computer_id: the
 * reference trims its surrounding whitespace (a tab among it) and its
 * slug check refuses any other control character with its own message,
 * so only a NUL, which would cut it, is refused here.
 */
static const char *const arg_names[] = { "sandbox_handle",
	"working_directory", NULL };

/* Whether s (a JSON string) is free of control characters; `nul_only`: of
 * NUL only. Anything else but a string passes (its type is checked where
 * it is used). */
static bool
text_clean(json_t *s, bool nul_only)
{
	const unsigned char *p;
	size_t n;

	if (!json_is_string(s))
		return true;
	p = (const unsigned char *)json_string_value(s);
	n = json_string_length(s);
	for (size_t i = 0; i < n; i++)
		if (p[i] == '\0' || (!nul_only && (p[i] < 0x20 || p[i] == 0x7f)))
			return false;
	return true;
}

static bool
refuse(char *why, size_t len, const char *where, const char *field,
    bool nul_only)
{
	snprintf(why, len, "Invalid params: %s%s must not contain %s", where,
	    field, nul_only ? "a NUL character" : "NUL or control characters");
	return false;
}

bool
mcp_msg_clean(json_t *msg, json_t **idp, char *why, size_t len)
{
	json_t *params = json_object_get(msg, "params");
	json_t *args = json_object_get(params, "arguments");
	json_t *v;
	size_t i;

	*idp = json_object_get(msg, "id");
	if (!text_clean(*idp, false)) {
		*idp = NULL;
		return refuse(why, len, "", "id", false);
	}
	if (!text_clean(json_object_get(msg, "method"), false))
		return refuse(why, len, "", "method", false);
	for (i = 0; param_names[i] != NULL; i++)
		if (!text_clean(json_object_get(params, param_names[i]), false))
			return refuse(why, len, "params.", param_names[i],
			    false);
	if (!text_clean(json_object_get(json_object_get(params, "_meta"),
	    "progressToken"), false))
		return refuse(why, len, "params._meta.", "progressToken",
		    false);
	if (!json_is_object(args))
		return true;
	for (i = 0; arg_names[i] != NULL; i++)
		if (!text_clean(json_object_get(args, arg_names[i]), false))
			return refuse(why, len, "arguments.", arg_names[i],
			    false);
	if (!text_clean(json_object_get(args, "computer_id"), true))
		return refuse(why, len, "arguments.", "computer_id", true);
	if (!text_clean(json_object_get(args, "command"), true))
		return refuse(why, len, "arguments.", "command", true);
	if (!text_clean(json_object_get(args, "args"), true))
		return refuse(why, len, "arguments.", "args", true);
	json_array_foreach (json_object_get(args, "args"), i, v)
		if (!text_clean(v, true))
			return refuse(why, len, "arguments.", "args", true);
	return true;
}
