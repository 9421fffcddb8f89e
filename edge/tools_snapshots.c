/*
 * tools_snapshots.c - snapshots, rollback and forks (--tools snapshots,
 * issue 31): computer_snapshot, computer_restore, snapshot_list and
 * snapshot_delete, and computer_create's from_snapshot and count. They
 * go the lifecycle tools' way (the Session calls, the same handle
 * and ownership rules); the session and the drivers check every id again.
 */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"

static const struct {
	const char *name, *method, *title, *description;
	bool read_only, destructive;
} snaps[] = {
	[TOOLS_SNAP_SNAPSHOT - TOOLS_SNAP_BASE] = { "computer_snapshot",
	    "SnapshotComputer", "Snapshot a sandbox computer",
	    "Save a computer's filesystem as a snapshot and return its "
	    "snapshot_id: go back to it with computer_restore, or start "
	    "copies of it with computer_create's from_snapshot. Files only: "
	    "running processes and memory are not kept. A command running "
	    "meanwhile goes on undisturbed; a file it writes at that moment "
	    "may be caught half-written.", false, false },
	[TOOLS_SNAP_RESTORE - TOOLS_SNAP_BASE] = { "computer_restore",
	    "RestoreComputer", "Restore a sandbox computer from a snapshot",
	    "Put a computer back to a snapshot: everything written since is "
	    "erased and its background processes end; its id, lifecycle mode "
	    "and owner stay.", false, true },
	[TOOLS_SNAP_LIST - TOOLS_SNAP_BASE] = { "snapshot_list",
	    "ListSnapshots", "List snapshots",
	    "List your snapshots: snapshot_id, name, the computer it was "
	    "taken of, when, and its disk use (size_bytes with the base "
	    "image, own_bytes what it adds).", true, false },
	[TOOLS_SNAP_DELETE - TOOLS_SNAP_BASE] = { "snapshot_delete",
	    "DeleteSnapshot", "Delete a snapshot",
	    "Delete a snapshot for good (computers made from it must be "
	    "deleted first).", false, true },
	[TOOLS_SNAP_FORK - TOOLS_SNAP_BASE] = { "computer_create",
	    "ForkComputers", NULL, NULL, false, false },
};

int
tools_snapshots_find(const char *name)
{
	for (int t = TOOLS_SNAP_BASE; t < TOOLS_SNAP_FORK; t++)
		if (strcmp(name, snaps[t - TOOLS_SNAP_BASE].name) == 0)
			return t;
	return -1;
}

bool
tools_is_snapshot(int tool)
{
	return tool >= TOOLS_SNAP_BASE && tool <= TOOLS_SNAP_FORK;
}

const char *
tools_snapshot_method(int tool)
{
	return snaps[tool - TOOLS_SNAP_BASE].method;
}

static json_t *
prop(const char *title, const char *type, const char *description)
{
	return json_pack("{s:s, s:s, s:s}", "title", title, "type", type,
	    "description", description);
}

static json_t *
def(int tool)
{
	json_t *props = json_object(), *req = json_array();
	char title[64];

	if (tool == TOOLS_SNAP_SNAPSHOT || tool == TOOLS_SNAP_RESTORE) {
		json_object_set_new(props, "computer_id", prop("Computer Id",
		    "string", "Computer id (1-63 lowercase letters, numbers "
		    "or hyphens)."));
		json_array_append_new(req, json_string("computer_id"));
	}
	if (tool == TOOLS_SNAP_SNAPSHOT)
		json_object_set_new(props, "name", prop("Name", "string",
		    "A name of your choice (at most 64 letters, digits, "
		    "spaces, '.', '_' or '-')."));
	if (tool == TOOLS_SNAP_RESTORE || tool == TOOLS_SNAP_DELETE) {
		json_object_set_new(props, "snapshot_id", prop("Snapshot Id",
		    "string", "The snapshot_id computer_snapshot returned."));
		json_array_append_new(req, json_string("snapshot_id"));
	}
	json_object_set_new(props, "sandbox_handle", prop("Sandbox Handle",
	    "string", "The sandbox_handle of an earlier result, as the "
	    "lifecycle tools take it."));
	snprintf(title, sizeof(title), "%sArguments",
	    snaps[tool - TOOLS_SNAP_BASE].name);
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o, s:o}, s:o}",
	    "name", snaps[tool - TOOLS_SNAP_BASE].name, "title",
	    snaps[tool - TOOLS_SNAP_BASE].title, "description",
	    snaps[tool - TOOLS_SNAP_BASE].description, "inputSchema", "type",
	    "object", "title", title, "properties", props, "required", req,
	    "annotations", tools_annotations(
		snaps[tool - TOOLS_SNAP_BASE].title,
		snaps[tool - TOOLS_SNAP_BASE].read_only,
		snaps[tool - TOOLS_SNAP_BASE].destructive, false));
}

void
tools_snapshots_extend(json_t *list)
{
	json_t *tools = json_object_get(list, "tools"), *t;
	size_t i;

	json_array_foreach (tools, i, t) {
		json_t *props;

		if (strcmp(json_string_value(json_object_get(t, "name")) ?
		    json_string_value(json_object_get(t, "name")) : "",
		    "computer_create") != 0)
			continue;
		props = json_object_get(json_object_get(t, "inputSchema"),
		    "properties");
		json_object_set_new(props, "from_snapshot", prop(
		    "From Snapshot", "string", "A snapshot_id: the new "
		    "computer starts with that snapshot's files (leave "
		    "computer_id out: it gets a new id)."));
		json_object_set_new(props, "count", prop("Count", "integer",
		    "With from_snapshot: make this many computers at once (1 "
		    "to 64), each with its own id; the answer lists them."));
	}
	for (int tool = TOOLS_SNAP_BASE; tool < TOOLS_SNAP_FORK; tool++)
		json_array_append_new(tools, def(tool));
}

static char *
arg_error(int tool, const char *field, const char *what)
{
	char *msg;

	if (asprintf(&msg, "Error executing tool %s: %s: %s",
	    snaps[tool - TOOLS_SNAP_BASE].name, field, what) < 0)
		return NULL;
	return msg;
}

/* A string argument into *out (borrowed); absent leaves it. */
static char *
string_arg(int tool, json_t *args, const char *field, bool required,
    char **out)
{
	json_t *v = json_object_get(args, field);

	if (v == NULL || json_is_null(v))
		return required ? arg_error(tool, field, "Field required") :
		    NULL;
	if (!json_is_string(v))
		return arg_error(tool, field, "Input should be a valid string");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return arg_error(tool, field, "a NUL character is not allowed");
	*out = (char *)json_string_value(v);
	return NULL;
}

char *
tools_snapshot_request(int tool, json_t *args, Msc__V1__ComputerRequest *req)
{
	char *msg = NULL;

	if (args != NULL && !json_is_object(args))
		return arg_error(tool, "arguments", "Input should be a valid "
		    "dictionary");
	if (tool == TOOLS_SNAP_SNAPSHOT || tool == TOOLS_SNAP_RESTORE)
		msg = string_arg(tool, args, "computer_id", true,
		    &req->computer_id);
	if (msg == NULL && tool == TOOLS_SNAP_SNAPSHOT)
		msg = string_arg(tool, args, "name", false, &req->name);
	if (msg == NULL && (tool == TOOLS_SNAP_RESTORE ||
	    tool == TOOLS_SNAP_DELETE))
		msg = string_arg(tool, args, "snapshot_id", true,
		    &req->snapshot_id);
	return msg;
}

char *
tools_snapshot_create_args(json_t *args, Msc__V1__ComputerRequest *req)
{
	json_t *from = json_object_get(args, "from_snapshot");
	json_t *count = json_object_get(args, "count");
	char *msg;

	if (from != NULL && !json_is_null(from)) {
		if (!json_is_string(from) || strlen(json_string_value(from)) !=
		    json_string_length(from))
			return strdup("Error executing tool computer_create: "
			    "from_snapshot: Input should be a valid string");
		req->from_snapshot = (char *)json_string_value(from);
	}
	if (count == NULL || json_is_null(count))
		return NULL;
	if (!json_is_integer(count) || json_integer_value(count) < 1 ||
	    json_integer_value(count) > 64) {
		if (asprintf(&msg, "Error executing tool computer_create: "
		    "count: must be a whole number from 1 to 64") < 0)
			return NULL;
		return msg;
	}
	if (req->from_snapshot[0] == '\0')
		return strdup("Error executing tool computer_create: count: "
		    "makes copies of a snapshot: pass from_snapshot too");
	req->count = (uint32_t)json_integer_value(count);
	return NULL;
}

static json_t *
snapshot_row(const Msc__V1__Snapshot *s)
{
	json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}",
	    "snapshot_id", s->snapshot_id, "name", s->name, "computer_id",
	    s->computer_id, "created_at", s->created_at, "size_bytes",
	    (json_int_t)s->size_bytes, "own_bytes", (json_int_t)s->own_bytes);

	if (row != NULL && s->principal[0] != '\0')
		json_object_set_new(row, "made_by", json_string(s->principal));
	return row;
}

json_t *
tools_snapshot_result(int tool, const char *named,
    const struct msc_status *st, ProtobufCMessage *resp, const char *handle)
{
	json_t *p, *arr;

	if (resp == NULL)
		return tools_payload_result(json_pack("{s:s}", "error",
		    st->message), true);
	switch (tool) {
	case TOOLS_SNAP_SNAPSHOT:
		p = snapshot_row((const Msc__V1__Snapshot *)resp);
		if (p != NULL)
			json_object_set_new(p, "ok", json_true());
		return tools_payload_result(p, false);
	case TOOLS_SNAP_RESTORE: {
		const Msc__V1__Computer *c = (const void *)resp;

		return tools_payload_result(json_pack(
		    "{s:b, s:s, s:s, s:b, s:b}", "ok", 1, "computer_id",
		    c->computer_id, "sandbox_id", c->sandbox_id, "temporary",
		    c->temporary, "restored", 1), false);
	}
	case TOOLS_SNAP_LIST: {
		const Msc__V1__SnapshotList *l = (const void *)resp;

		arr = json_array();
		for (size_t i = 0; i < l->n_snapshots; i++)
			json_array_append_new(arr, snapshot_row(
			    l->snapshots[i]));
		return tools_payload_result(json_pack("{s:o, s:I}", "snapshots",
		    arr, "count", (json_int_t)l->n_snapshots), false);
	}
	case TOOLS_SNAP_DELETE:
		return tools_payload_result(json_pack("{s:b, s:s, s:b}",
		    "ok", 1, "snapshot_id", named, "deleted", 1), false);
	default: {
		const Msc__V1__ComputerList *l = (const void *)resp;

		arr = json_array();
		for (size_t i = 0; i < l->n_computers; i++)
			json_array_append_new(arr, json_pack("{s:s, s:s, s:b}",
			    "computer_id", l->computers[i]->computer_id,
			    "sandbox_id", l->computers[i]->sandbox_id,
			    "temporary", l->computers[i]->temporary));
		return tools_payload_result(json_pack(
		    "{s:b, s:o, s:I, s:s*}", "ok", 1, "computers", arr,
		    "count", (json_int_t)l->n_computers, "sandbox_handle",
		    handle), false);
	}
	}
}
