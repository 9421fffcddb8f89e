/*
 * tools.h - the MCP tools the edge offers: their JSON schemas and
 * descriptions, and the translation of tools/call arguments into session
 * requests and of replies into MCP results.
 */
#ifndef EDGE_TOOLS_H
#define EDGE_TOOLS_H

#include <stdbool.h>

#include <jansson.h>

#include "msc_cfg.h"
#include "msc_rpc.h"
#include "session.pb-c.h"

/*
 * Builds the terminal_execute description: the operator's override, or
 * `backend_text` (borrowed; the driver's, from Session/Describe) with the
 * extended instruction appended. Returns a malloc'd string, or NULL when
 * out of memory or without an override and a backend text.
 */
char *tools_description(const struct msc_cfg *cfg, const char *backend_text);

/*
 * Asks the session service for the backend's description once (Session/
 * Describe, which asks a driver), waiting up to `wait_ms`. Returns 0 and
 * *textp (malloc'd, the caller frees); -EAGAIN when the services are not
 * up yet (ask again); -EIO when the session refused, or -ENOMEM; the
 * status message is in err. Blocks.
 */
int tools_fetch_description(struct msc_client *session, int wait_ms,
    char **textp, char *err, size_t errlen);

/*
 * The tools/list result (new reference): terminal_execute and
 * computer_release; each enabled group adds its tools after them
 * (tools_lifecycle_extend first, then the others' *_extend).
 * `description` is borrowed; `network`: commands reach the network
 * (terminal_execute's openWorldHint).
 */
json_t *tools_list(const char *description, bool network);

/* The text every terminal_execute description ends with: the handle. */
#define TOOLS_HANDLE_TEXT                                                     \
	"Save sandbox_handle from the first response and pass it on every "   \
	"later call to stay on the same computer (over stdio the server "     \
	"keeps one for you). Computer IDs are readable names, not "           \
	"authorization capabilities. Call computer_release with the handle "  \
	"when done; an idle handle expires after the server's "               \
	"--session-timeout."

/*
 * The MCP result of computer_release (new reference): the Close reply
 * (NULL: failed, st says why).
 */
json_t *tools_release_result(const struct msc_status *st,
    ProtobufCMessage *resp);

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

/*
 * The MCP result for a successful terminal_execute (new reference), with
 * `handle` (may be NULL: none) as its sandbox_handle.
 */
json_t *tools_exec_result(const Msc__V1__TerminalExecReply *rep,
    const char *handle);

/* An isError result with one text block (new reference). */
json_t *tools_error_result(const char *text);
/* Takes `payload`: one object as structuredContent and as its text, with
 * isError `error`. */
json_t *tools_payload_result(json_t *payload, bool error);

/* --- tools_lifecycle.c ---------------------------------------------------- */

#define TOOLS_DASHBOARD_URI "ui://kilntainers/computers"

/*
 * An annotations object (MCP ToolAnnotations): title and hints, so hosts
 * ask before what destroys and not for what only reads.
 */
json_t *tools_annotations(const char *title, bool read_only, bool destructive,
    bool open_world);

/* Adds the lifecycle tools, in the reference's order, to a tools/list
 * result. */
void tools_lifecycle_extend(json_t *list);

/* The index of lifecycle tool `name`, or -1. */
int tools_lifecycle_find(const char *name);

/* The Session method that serves lifecycle tool `tool`. */
const char *tools_lifecycle_method(int tool);

/*
 * Fills req (computer_id, temporary) from `args` (borrowed; strings point
 * into it). Returns NULL or the error text shown to the agent (malloc'd).
 */
char *tools_lifecycle_request(int tool, json_t *args,
    Msc__V1__ComputerRequest *req);
/* Frees what tools_lifecycle_request allocated in req (not its strings). */
void tools_lifecycle_request_fini(Msc__V1__ComputerRequest *req);

/*
 * The MCP result of lifecycle tool `tool` (new reference); `computer_id`
 * is the id the call named (delete returns no computer); computer_create
 * returns `handle` (may be NULL: none) as its sandbox_handle.
 */
json_t *tools_lifecycle_result(int tool, const char *computer_id,
    const struct msc_status *st, ProtobufCMessage *resp, const char *handle);

/* Whether lifecycle tool `tool` is computer_create. */
bool tools_lifecycle_is_create(int tool);

/* resources/list; the dashboard only when `lifecycle`. */
json_t *tools_resources_list(bool lifecycle);

/* resources/read of `uri`, or NULL when there is no such resource. */
json_t *tools_resource_read(const char *uri);

/* --- tools_processes.c (--tools processes) -------------------------------- */

/* The process tools' numbers (apart from the lifecycle tools' indexes). */
enum {
	TOOLS_PROC_BASE = 100,
	TOOLS_PROC_LIST = TOOLS_PROC_BASE,
	TOOLS_PROC_OUTPUT,
	TOOLS_PROC_KILL,
	TOOLS_PROC_START,       /* terminal_execute with background: true */
};

/* The number of process tool `name`, or -1. */
int tools_processes_find(const char *name);

/* Whether `tool` is one of TOOLS_PROC_*. */
bool tools_is_process(int tool);
/*
 * Whether cfg's backend has capability `cap` (MSC_BACKEND_*, its row's):
 * the exec helper's modes (background processes), the file and copy
 * tools, snapshots. True where the edge does not know the backend (a
 * split edge): the driver then refuses what it lacks itself.
 */
bool tools_backend_has(const struct msc_cfg *cfg, unsigned cap);

/* Adds terminal_execute's `background` and the process tools to a
 * tools/list result. */
void tools_processes_extend(json_t *list);

/*
 * Turns req, filled by tools_exec_request from `args`, into the helper
 * command that serves process tool `tool` (its strings kept in `keep`).
 * Returns NULL or the error text shown to the agent (malloc'd).
 */
char *tools_process_request(int tool, const struct msc_cfg *cfg,
    json_t *args, Msc__V1__TerminalExecRequest *req, json_t *keep);

/* The MCP result of process tool `tool` from its command's reply. */
json_t *tools_process_result(int tool, const Msc__V1__TerminalExecReply *rep,
    const char *handle);

/* Shared by the helper-backed tool groups (processes, files): */
/* A schema property {title, type, description, default: null}. */
json_t *tools_prop(const char *title, const char *type,
    const char *description);
/* computer_id, temporary and sandbox_handle, as terminal_execute takes
 * them. */
json_t *tools_where_props(void);
/* Argument `key` as a whole number in [lo, hi] into *out (untouched when
 * absent): NULL, or the error text (static). */
const char *tools_get_int(json_t *args, const char *key, long long lo,
    long long hi, long long *out);
/* Appends a copy of s (kept in `keep`) to req's args (room for `cap`):
 * 0 or -ENOMEM. */
int tools_push_arg(Msc__V1__TerminalExecRequest *req, size_t cap,
    json_t *keep, const char *s);

/* --- tools_files.c (--tools files) ---------------------------------------- */

/* The file tools' numbers (apart from the others'). */
enum {
	TOOLS_FILE_BASE = 200,
	TOOLS_FILE_READ = TOOLS_FILE_BASE,
	TOOLS_FILE_WRITE,
	TOOLS_FILE_EDIT,
	TOOLS_FILE_UPLOAD,      /* mcp_xfer.c runs these two */
	TOOLS_FILE_DOWNLOAD,
	TOOLS_FILE_END,
};

/* The number of file tool `name`, or -1. */
int tools_files_find(const char *name);

/* Whether `tool` is one of TOOLS_FILE_*. */
bool tools_is_file(int tool);

/* Adds the file tools to a tools/list result. */
void tools_files_extend(json_t *list);

/*
 * Turns req, filled by tools_exec_request from `args`, into the helper
 * command that serves file tool `tool` (its strings and stdin kept in
 * `keep`). Returns NULL or the error text shown to the agent (malloc'd).
 */
char *tools_file_request(int tool, const struct msc_cfg *cfg, json_t *args,
    Msc__V1__TerminalExecRequest *req, json_t *keep);

/* The MCP result of file tool `tool` from its command's reply. */
json_t *tools_file_result(int tool, const Msc__V1__TerminalExecReply *rep,
    const char *handle);

/* --- tools_snapshots.c (--tools snapshots) ------------------------------ */

/* The snapshot tools' numbers; TOOLS_SNAP_FORK is computer_create with
 * count (Session/ForkComputers). */
enum {
	TOOLS_SNAP_BASE = 300,
	TOOLS_SNAP_SNAPSHOT = TOOLS_SNAP_BASE,
	TOOLS_SNAP_RESTORE,
	TOOLS_SNAP_LIST,
	TOOLS_SNAP_DELETE,
	TOOLS_SNAP_FORK,
};

/* The number of snapshot tool `name`, or -1. */
int tools_snapshots_find(const char *name);
/* Whether `tool` is one of TOOLS_SNAP_*. */
bool tools_is_snapshot(int tool);
/* The Session method that serves snapshot tool `tool`. */
const char *tools_snapshot_method(int tool);
/* Adds the snapshot tools, and computer_create's from_snapshot and
 * count, to a tools/list result. */
void tools_snapshots_extend(json_t *list);
/*
 * Fills req from `args` (borrowed; strings point into it) for snapshot
 * tool `tool`; tools_snapshot_create_args does computer_create's
 * from_snapshot and count. NULL or the error text (malloc'd).
 */
char *tools_snapshot_request(int tool, json_t *args,
    Msc__V1__ComputerRequest *req);
char *tools_snapshot_create_args(json_t *args, Msc__V1__ComputerRequest *req);
/* The MCP result of snapshot tool `tool`; `named` is the snapshot_id a
 * snapshot_delete named; `handle` a fork's sandbox_handle (may be NULL). */
json_t *tools_snapshot_result(int tool, const char *named,
    const struct msc_status *st, ProtobufCMessage *resp, const char *handle);

/* --- tools_ports.c (--tools ports) -------------------------------------- */

/* The preview URL tools' numbers (Session/ExposePort). */
enum {
	TOOLS_PORT_BASE = 400,
	TOOLS_PORT_EXPOSE = TOOLS_PORT_BASE,
	TOOLS_PORT_UNEXPOSE,
	TOOLS_PORT_END,
};

/* The number of port tool `name`, or -1. */
int tools_ports_find(const char *name);
/* Whether `tool` is one of TOOLS_PORT_*. */
bool tools_is_port(int tool);
/* Adds the port tools to a tools/list result. */
void tools_ports_extend(json_t *list);
/* Fills req from `args` (borrowed): NULL or the error text (malloc'd). */
char *tools_port_request(int tool, json_t *args,
    Msc__V1__ComputerRequest *req);
/* The MCP result of port tool `tool`. */
json_t *tools_port_result(int tool, const struct msc_status *st,
    ProtobufCMessage *resp);

#endif /* EDGE_TOOLS_H */
