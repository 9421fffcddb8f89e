/*
 * tools.h - the MCP tools the edge offers: their JSON schemas and
 * descriptions, and the translation of tools/call arguments into session
 * requests and of replies into MCP results.
 */
#ifndef EDGE_TOOLS_H
#define EDGE_TOOLS_H

#include <jansson.h>

#include "msc_cfg.h"
#include "session.pb-c.h"

/*
 * Builds the terminal_execute description (override, backend text,
 * extended). Returns a malloc'd string, or NULL after printing the
 * reference's startup error.
 */
char *tools_description(const struct msc_cfg *cfg);

/* The tools/list result (new reference). `description` is borrowed. */
json_t *tools_list(const char *description);

/*
 * Fills `req` from tools/call `arguments` (borrowed; may be NULL). Strings
 * in req point into `args` or into `keep` (an array the caller frees with
 * json_decref after the call). Returns NULL or the error text shown to the
 * agent (malloc'd).
 */
char *tools_exec_request(json_t *args, Msc__V1__TerminalExecRequest *req,
    json_t *keep);

/* Frees what tools_exec_request allocated inside req (the args array). */
void tools_exec_request_fini(Msc__V1__TerminalExecRequest *req);

/* The MCP result for a successful terminal_execute (new reference). */
json_t *tools_exec_result(const Msc__V1__TerminalExecReply *rep);

/* An isError result with one text block (new reference). */
json_t *tools_error_result(const char *text);

#endif /* EDGE_TOOLS_H */
