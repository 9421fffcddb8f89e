/*
 * mcp_era.h - MCP 2026-07-28 ("modern") beside the 2025 revisions
 * ("legacy"): which era a message belongs to, the checks of a modern
 * request's envelope (params._meta), server/discover, and what every
 * modern result carries (resultType, serverInfo, cache hints).
 */
#ifndef EDGE_MCP_ERA_H
#define EDGE_MCP_ERA_H

#include <stdbool.h>

#include <jansson.h>

#define MCP_MODERN_VERSION "2026-07-28"
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_SERVER "io.modelcontextprotocol/serverInfo"
#define MCP_META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"

/* JSON-RPC codes of 2026-07-28. */
#define MCP_ERR_HEADER_MISMATCH (-32020)
#define MCP_ERR_UNSUPPORTED_VERSION (-32022)

/* How long a client may reuse list results (ms): the sets are fixed. */
#define MCP_LIST_TTL_MS 300000
#define MCP_DISCOVER_TTL_MS 3600000

/* Whether v is one of the 2025 (and 2024) revisions served by initialize. */
bool mcp_era_legacy_version(const char *v);

/*
 * Whether the body alone says 2026-07-28: server/discover, or a
 * params._meta with a key of the io.modelcontextprotocol/ envelope.
 */
bool mcp_era_body_modern(json_t *msg);

/* A refused modern request: its HTTP status and JSON-RPC error. */
struct mcp_reject {
	unsigned status;
	int code;
	const char *message;
	json_t *data;           /* owned; may be NULL */
};

/*
 * The checks of a modern request in the order the spec's tests need
 * them: the envelope (400, -32602), then (HTTP only, the caller) the
 * headers, then the version (400, -32022), then the method (404,
 * -32601). Each returns true when the request passes, else fills r.
 */
bool mcp_era_check_envelope(json_t *msg, struct mcp_reject *r);
bool mcp_era_check_version(json_t *msg, struct mcp_reject *r);
bool mcp_era_check_method(const char *method, struct mcp_reject *r);

/* The whole JSON-RPC error message for r (new reference; takes r->data). */
json_t *mcp_era_error(json_t *id, struct mcp_reject *r);

/*
 * The params key a method's Mcp-Name header mirrors ("name", "uri"), or
 * NULL when the method has no Mcp-Name.
 */
const char *mcp_era_name_key(const char *method);

/*
 * Decodes an Mcp-* header value: optional whitespace trimmed, the
 * =?base64?...?= sentinel decoded. Returns a malloc'd string, or NULL
 * when the sentinel's base64 is invalid (or out of memory).
 */
char *mcp_era_header_value(const char *raw);

/*
 * A tool's error result that holds only a text gets the 2026 payload
 * {"error": "<text>"} as its structuredContent and text (in place).
 */
void mcp_era_error_payload(json_t *result);
/* Adds resultType "complete", serverInfo and the error payload to a
 * result; returns it. */
json_t *mcp_era_complete(json_t *result);
/* Adds ttlMs and cacheScope "public"; returns it. */
json_t *mcp_era_cacheable(json_t *result, long ttl_ms);

/* The server/discover result (new reference; complete, cacheable). */
json_t *mcp_era_discover_result(void);

#endif /* EDGE_MCP_ERA_H */
