/*
 * mcp_era.c - the rules of MCP 2026-07-28 that do not depend on the
 * transport: era detection, the envelope and version checks, the
 * methods this revision has, Mcp-* header values, result decoration.
 */
#include "mcp_era.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msc_base64.h"

static const char *const legacy_versions[] = { "2025-11-25", "2025-06-18",
	"2025-03-26", "2024-11-05", NULL };

/*
 * The methods of 2026-07-28 we serve. Everything else, the 2025 ones
 * this revision removed (initialize, ping, logging/setLevel,
 * resources/subscribe, ...) included, is -32601.
 */
static const char *const modern_methods[] = { "server/discover",
	"tools/list", "tools/call", "resources/list", "resources/read",
	"resources/templates/list", "prompts/list", "prompts/get",
	"subscriptions/listen", "tasks/get", "tasks/update", "tasks/cancel",
	NULL };

bool
mcp_era_legacy_version(const char *v)
{
	for (int i = 0; v != NULL && legacy_versions[i] != NULL; i++)
		if (strcmp(v, legacy_versions[i]) == 0)
			return true;
	return false;
}

static json_t *
meta_of(json_t *msg)
{
	return json_object_get(json_object_get(msg, "params"), "_meta");
}

bool
mcp_era_body_modern(json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *meta = meta_of(msg);

	if (method != NULL && strcmp(method, "server/discover") == 0)
		return true;
	return json_object_get(meta, MCP_META_VERSION) != NULL ||
	    json_object_get(meta, MCP_META_CAPS) != NULL;
}

static bool
reject(struct mcp_reject *r, unsigned status, int code, const char *message)
{
	r->status = status;
	r->code = code;
	r->message = message;
	r->data = NULL;
	return false;
}

bool
mcp_era_check_envelope(json_t *msg, struct mcp_reject *r)
{
	json_t *meta = meta_of(msg);

	if (!json_is_object(meta))
		return reject(r, 400, -32602, "Invalid params: params._meta "
		    "with io.modelcontextprotocol/protocolVersion and "
		    "io.modelcontextprotocol/clientCapabilities is required "
		    "(protocol " MCP_MODERN_VERSION "); older clients send "
		    "initialize first");
	if (!json_is_string(json_object_get(meta, MCP_META_VERSION)))
		return reject(r, 400, -32602, "Invalid params: _meta lacks "
		    "io.modelcontextprotocol/protocolVersion (a string)");
	if (!json_is_object(json_object_get(meta, MCP_META_CAPS)))
		return reject(r, 400, -32602, "Invalid params: _meta lacks "
		    "io.modelcontextprotocol/clientCapabilities (an object)");
	return true;
}

bool
mcp_era_check_version(json_t *msg, struct mcp_reject *r)
{
	json_t *v = json_object_get(meta_of(msg), MCP_META_VERSION);

	if (strcmp(json_string_value(v), MCP_MODERN_VERSION) == 0)
		return true;
	reject(r, 400, MCP_ERR_UNSUPPORTED_VERSION,
	    "Unsupported protocol version");
	r->data = json_pack("{s:[s], s:O}", "supported", MCP_MODERN_VERSION,
	    "requested", v);
	return false;
}

bool
mcp_era_check_method(const char *method, struct mcp_reject *r)
{
	for (int i = 0; modern_methods[i] != NULL; i++)
		if (strcmp(method, modern_methods[i]) == 0)
			return true;
	return reject(r, 404, -32601, "Method not found");
}

json_t *
mcp_era_error(json_t *id, struct mcp_reject *r)
{
	json_t *err = json_pack("{s:i, s:s}", "code", r->code, "message",
	    r->message);

	if (err != NULL && r->data != NULL)
		json_object_set(err, "data", r->data);
	json_decref(r->data);
	r->data = NULL;
	if (err == NULL)
		return NULL;
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
	    id != NULL ? id : json_null(), "error", err);
}

const char *
mcp_era_name_key(const char *method)
{
	if (strcmp(method, "tools/call") == 0 ||
	    strcmp(method, "prompts/get") == 0)
		return "name";
	if (strcmp(method, "resources/read") == 0)
		return "uri";
	if (strcmp(method, "tasks/get") == 0 ||
	    strcmp(method, "tasks/update") == 0 ||
	    strcmp(method, "tasks/cancel") == 0)
		return "taskId";        /* the tasks extension (SEP-2663) */
	return NULL;
}

/* Strict base64 of a text without NUL (never equal to a JSON name). */
static char *
b64_text(const char *in, size_t len)
{
	uint8_t *out;
	size_t n;

	if (msc_base64_decode(in, len, &out, &n) != 0)
		return NULL;
	if (strlen((char *)out) != n) {
		free(out);
		return NULL;
	}
	return (char *)out;
}

char *
mcp_era_header_value(const char *raw)
{
	static const char pre[] = "=?base64?", post[] = "?=";
	size_t len;

	while (*raw == ' ' || *raw == '\t')
		raw++;
	len = strlen(raw);
	while (len > 0 && (raw[len - 1] == ' ' || raw[len - 1] == '\t'))
		len--;
	if (len >= sizeof(pre) - 1 + sizeof(post) - 1 &&
	    strncmp(raw, pre, sizeof(pre) - 1) == 0 &&
	    strncmp(raw + len - 2, post, 2) == 0)
		return b64_text(raw + sizeof(pre) - 1,
		    len - (sizeof(pre) - 1) - (sizeof(post) - 1));
	return strndup(raw, len);
}

/*
 * A tool's error at 2026-07-28 is a result whose payload is
 * {"error": "<text>"} (the reference's later revision): an isError result
 * that holds only a text gets it as structuredContent and as its text.
 */
void
mcp_era_error_payload(json_t *result)
{
	json_t *content = json_object_get(result, "content");
	json_t *block = json_array_get(content, 0);
	const char *text = json_string_value(json_object_get(block, "text"));
	json_t *sc;
	char *dumped;

	if (!json_is_true(json_object_get(result, "isError")) ||
	    json_object_get(result, "structuredContent") != NULL ||
	    json_array_size(content) != 1 || text == NULL)
		return;
	if ((sc = json_pack("{s:s}", "error", text)) == NULL)
		return;
	if ((dumped = json_dumps(sc, JSON_ENSURE_ASCII)) == NULL ||
	    json_object_set_new(block, "text", json_string(dumped)) != 0) {
		free(dumped);
		json_decref(sc);
		return;
	}
	free(dumped);
	json_object_set_new(result, "structuredContent", sc);
}

json_t *
mcp_era_complete(json_t *result)
{
	json_t *meta;

	if (result == NULL)
		return NULL;
	mcp_era_error_payload(result);
	json_object_set_new(result, "resultType", json_string("complete"));
	meta = json_object_get(result, "_meta");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, MCP_META_SERVER, json_pack("{s:s, s:s}",
	    "name", "Kilntainers", "version", MSC_VERSION));
	return result;
}

json_t *
mcp_era_cacheable(json_t *result, long ttl_ms)
{
	if (result == NULL)
		return NULL;
	json_object_set_new(result, "ttlMs", json_integer(ttl_ms));
	json_object_set_new(result, "cacheScope", json_string("public"));
	return result;
}

json_t *
mcp_era_discover_result(void)
{
	json_t *r = json_pack("{s:[s], s:{s:{}, s:{}, s:{}, s:{s:{s:[s]}, "
			      "s:{}}}, s:s}",
	    "supportedVersions", MCP_MODERN_VERSION, "capabilities", "tools",
	    "resources", "prompts", "extensions",
	    "io.modelcontextprotocol/ui", "mimeTypes",
	    "text/html;profile=mcp-app", "io.modelcontextprotocol/tasks",
	    "instructions",
	    "Use terminal_execute to run commands in your own isolated Linux "
	    "sandbox computer. Pass back the sandbox_handle of its result on "
	    "every later call to stay on the same computer.");

	return mcp_era_cacheable(mcp_era_complete(r), MCP_DISCOVER_TTL_MS);
}
