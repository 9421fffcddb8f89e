/*
 * tools_lifecycle.c - the lifecycle tools (ENABLE_LIFECYCLE_TOOLS) and the
 * dashboard resource: schemas, arguments, and results shaped as the
 * reference shapes them (one JSON object, as structuredContent and as a
 * text block; errors as {"error": ...} with isError).
 */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dashboard_html.h"
#include "driver.pb-c.h"

enum { T_DASHBOARD, T_LIST, T_CREATE, T_RESTART, T_RESET, T_DELETE, T_N };

static const struct {
	const char *name;
	const char *method;
	const char *description;
	const char *title;
	bool read_only, destructive;
} lifecycle[T_N] = {
	{ "computer_dashboard", "ListComputers",
	    "Open the Sandbox Computer Dashboard, an interactive app that lists "
	    "every computer and can run commands in one, restart, factory "
	    "reset or delete it. Returns the current inventory.",
	    "Sandbox Computer Dashboard", true, false },
	{ "computer_list", "ListComputers",
	    "List every sandbox computer the backend has: id, provider id, "
	    "state, image, and whether it is temporary or permanent.",
	    "List sandbox computers", true, false },
	{ "computer_create", "CreateComputer",
	    "Create a sandbox computer, or attach to an existing one by "
	    "computer_id. Omit computer_id for a new random id. temporary=true "
	    "(default) removes it when the session ends; false keeps it.",
	    "Create or attach a sandbox computer", false, false },
	{ "computer_restart", "RestartComputer",
	    "Restart a sandbox computer. Its filesystem is kept.",
	    "Restart a sandbox computer", false, false },
	{ "computer_factory_reset", "ResetComputer",
	    "Factory reset a sandbox computer: erase everything written to it "
	    "and recreate it from its base image, same id and lifecycle mode.",
	    "Factory reset a sandbox computer", false, true },
	{ "computer_delete", "DeleteComputer",
	    "Delete a sandbox computer and everything on it, permanently.",
	    "Delete a sandbox computer", false, true },
};

static json_t *
id_prop(bool optional)
{
	return json_pack("{s:s, s:s, s:s, s:o}", "title", "Computer Id", "type",
	    "string", "description", optional
		? "Computer id (1-63 lowercase letters, numbers or hyphens); "
		  "omit for a new random id."
		: "Computer id (1-63 lowercase letters, numbers or hyphens).",
	    "default", optional ? json_null() : json_string(""));
}

static json_t *
schema(int t)
{
	char title[64];
	json_t *props = json_object(), *s;

	snprintf(title, sizeof(title), "%sArguments", lifecycle[t].name);
	s = json_pack("{s:s, s:s, s:o}", "type", "object", "title", title,
	    "properties", props);
	if (t == T_CREATE) {
		json_object_set_new(props, "computer_id", id_prop(true));
		json_object_set_new(props, "temporary", json_pack(
		    "{s:s, s:s, s:s, s:b}", "title", "Temporary", "type",
		    "boolean", "description", "Remove it when the session ends.",
		    "default", 1));
		json_object_set_new(props, "network", json_pack(
		    "{s:s, s:s, s:s, s:{s:{s:s, s:[sss]}, s:{s:s, s:{s:s}},"
		    " s:{s:s, s:{s:s}}}, s:[s]}", "title", "Network", "type",
		    "object", "description", "The new computer's network policy "
		    "(default: the server's): mode none, allowlist (HTTP and "
		    "HTTPS to the allow domains only, e.g. *.pypi.example; deny "
		    "entries win) or open.", "properties", "mode", "type",
		    "string", "enum", "none", "allowlist", "open", "allow",
		    "type", "array", "items", "type", "string", "deny", "type",
		    "array", "items", "type", "string", "required", "mode"));
	} else if (t >= T_RESTART) {
		json_t *p = id_prop(false);

		json_object_del(p, "default");
		json_object_set_new(props, "computer_id", p);
		json_object_set_new(s, "required", json_pack("[s]",
		    "computer_id"));
	}
	return s;
}

void
tools_lifecycle_extend(json_t *list)
{
	json_t *arr = json_object_get(list, "tools");

	for (int t = 0; t < T_N; t++) {
		json_t *tool = json_pack("{s:s, s:s, s:s, s:o, s:o, "
					 "s:{s:{s:[ss]}}}",
		    "name", lifecycle[t].name, "title", lifecycle[t].title,
		    "description", lifecycle[t].description, "inputSchema",
		    schema(t), "annotations", tools_annotations(
			lifecycle[t].title, lifecycle[t].read_only,
			lifecycle[t].destructive, false),
		    "_meta", "ui", "visibility", "model", "app");

		if (t == T_DASHBOARD) {
			json_t *meta = json_object_get(tool, "_meta");

			json_object_set_new(json_object_get(meta, "ui"),
			    "resourceUri", json_string(TOOLS_DASHBOARD_URI));
			json_object_set_new(meta, "ui/resourceUri",
			    json_string(TOOLS_DASHBOARD_URI));
		}
		json_array_append_new(arr, tool);
	}
}

int
tools_lifecycle_find(const char *name)
{
	for (int t = 0; t < T_N; t++)
		if (strcmp(name, lifecycle[t].name) == 0)
			return t;
	return -1;
}

const char *
tools_lifecycle_method(int tool)
{
	if (tools_is_snapshot(tool))
		return tools_snapshot_method(tool);
	if (tools_is_port(tool))
		return "ExposePort";
	return lifecycle[tool].method;
}

static char *
arg_error(int tool, const char *field, const char *what)
{
	char *msg;

	if (asprintf(&msg, "Error executing tool %s: %s: %s",
		lifecycle[tool].name, field, what) < 0)
		return NULL;
	return msg;
}

/* A list of strings, borrowed from `arr` into *out (malloc'd). */
static char *
string_list(int tool, const char *field, json_t *arr, char ***out,
    size_t *n)
{
	json_t *v;
	size_t i;

	if (arr == NULL)
		return NULL;
	if (!json_is_array(arr) || json_array_size(arr) > 256)
		return arg_error(tool, field, "Input should be a valid list "
		    "of at most 256 strings");
	if ((*out = calloc(json_array_size(arr) + 1, sizeof(**out))) == NULL)
		return arg_error(tool, field, "out of memory");
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v))
			return arg_error(tool, field, "Input should be a valid "
			    "list of strings");
		(*out)[(*n)++] = (char *)json_string_value(v);
	}
	return NULL;
}

/* computer_create's network object into *np (strings borrowed). */
static char *
network_arg(int tool, json_t *net, Msc__V1__NetworkPolicy **np)
{
	json_t *mode = json_object_get(net, "mode");
	char *msg;

	if (!json_is_object(net))
		return arg_error(tool, "network", "Input should be a valid "
		    "dictionary");
	if (!json_is_string(mode))
		return arg_error(tool, "network.mode", "Field required: none, "
		    "allowlist or open");
	if ((*np = malloc(sizeof(**np))) == NULL)
		return arg_error(tool, "network", "out of memory");
	**np = (Msc__V1__NetworkPolicy)MSC__V1__NETWORK_POLICY__INIT;
	(*np)->mode = (char *)json_string_value(mode);
	if ((msg = string_list(tool, "network.allow", json_object_get(net,
	    "allow"), &(*np)->allow, &(*np)->n_allow)) != NULL)
		return msg;
	return string_list(tool, "network.deny", json_object_get(net, "deny"),
	    &(*np)->deny, &(*np)->n_deny);
}

char *
tools_lifecycle_request(int tool, json_t *args, Msc__V1__ComputerRequest *req)
{
	json_t *id = json_object_get(args, "computer_id");
	json_t *tmp = json_object_get(args, "temporary");

	char *msg;

	if (tool == TOOLS_SNAP_FORK)
		tool = T_CREATE;        /* with count: parsed as it */
	else if (tools_is_snapshot(tool))
		return tools_snapshot_request(tool, args, req);
	else if (tools_is_port(tool))
		return tools_port_request(tool, args, req);
	if (args != NULL && !json_is_object(args))
		return arg_error(tool, "arguments", "Input should be a valid "
						    "dictionary");
	if (tool == T_CREATE && (msg = tools_snapshot_create_args(args,
	    req)) != NULL)
		return msg;
	if (tool == T_DASHBOARD || tool == T_LIST)
		return NULL;
	if (id == NULL && tool != T_CREATE)
		return arg_error(tool, "computer_id", "Field required");
	if (id != NULL && !json_is_string(id))
		return arg_error(tool, "computer_id",
		    "Input should be a valid string");
	if (id != NULL)
		req->computer_id = (char *)json_string_value(id);
	if (tool == T_CREATE && tmp != NULL) {
		if (!json_is_boolean(tmp))
			return arg_error(tool, "temporary",
			    "Input should be a valid boolean");
		req->has_temporary = true;
		req->temporary = json_is_true(tmp);
	}
	if (tool == T_CREATE && json_object_get(args, "network") != NULL)
		return network_arg(tool, json_object_get(args, "network"),
		    &req->network);
	return NULL;
}

void
tools_lifecycle_request_fini(Msc__V1__ComputerRequest *req)
{
	if (req->network == NULL)
		return;
	free(req->network->allow);
	free(req->network->deny);
	free(req->network);
	req->network = NULL;
}

static json_t *
str_or_null(const char *s)
{
	return s != NULL && *s != '\0' ? json_string(s) : json_null();
}

/*
 * What a temporary computer's lease looks like (issue 17): renewed while
 * this server's sessions hold it, or "expires in N s" (an orphan, or
 * another server's that it renews in time); NULL without a lease.
 */
static json_t *
lease_text(const Msc__V1__Computer *c)
{
	char buf[64];

	switch (c->lease) {
	case MSC__V1__LEASE_STATE__LEASE_HELD:
		return json_string("renewed while in use");
	case MSC__V1__LEASE_STATE__LEASE_EXPIRING:
		snprintf(buf, sizeof(buf), "expires in %u s unless renewed",
		    (c->lease_left_ms + 999) / 1000);
		return json_string(buf);
	default:
		return NULL;
	}
}

static json_t *
list_payload(const Msc__V1__ComputerList *l)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < l->n_computers; i++) {
		const Msc__V1__Computer *c = l->computers[i];

		json_t *row = json_pack(
		    "{s:s, s:s, s:s, s:s, s:b, s:o, s:o}", "computer_id",
		    c->computer_id, "sandbox_id", c->sandbox_id, "backend",
		    c->backend[0] ? c->backend : "docker", "state",
		    c->state[0] ? c->state : "running", "temporary",
		    c->temporary, "image", str_or_null(c->image), "created_at",
		    str_or_null(c->created_at));
		json_t *lease = lease_text(c);

		/* The reference's row; a lease only where there is one. */
		if (lease != NULL)
			json_object_set_new(row, "lease", lease);
		if (row != NULL && c->network != NULL && c->network[0] != '\0')
			json_object_set_new(row, "network",
			    json_string(c->network));
		if (row != NULL && c->disk != NULL && c->disk[0] != '\0')
			json_object_set_new(row, "disk", json_string(c->disk));
		if (row != NULL && c->runtime != NULL && c->runtime[0] != '\0')
			json_object_set_new(row, "runtime",
			    json_string(c->runtime));
		if (row != NULL && c->n_exposed_ports > 0) {
			json_t *ports = json_array();

			for (size_t k = 0; k < c->n_exposed_ports; k++)
				json_array_append_new(ports,
				    json_integer(c->exposed_ports[k]));
			json_object_set_new(row, "exposed_ports", ports);
		}
		json_array_append_new(arr, row);
	}
	return json_pack("{s:o, s:I}", "computers", arr, "count",
	    (json_int_t)l->n_computers);
}

bool
tools_lifecycle_is_create(int tool)
{
	return tool == T_CREATE || tool == TOOLS_SNAP_FORK;
}

json_t *
tools_lifecycle_result(int tool, const char *computer_id,
    const struct msc_status *st, ProtobufCMessage *resp, const char *handle)
{
	const Msc__V1__Computer *c = (const Msc__V1__Computer *)resp;
	json_t *out;

	if (tools_is_snapshot(tool))
		return tools_snapshot_result(tool, computer_id, st, resp,
		    handle);
	if (tools_is_port(tool))
		return tools_port_result(tool, st, resp);
	if (resp == NULL)
		return tools_payload_result(json_pack("{s:s}", "error",
		    st->message), true);
	switch (tool) {
	case T_DASHBOARD: {
		const Msc__V1__ComputerList *l = (const void *)resp;
		json_t *p = list_payload(l);

		/* The reference's later revision: the handle's computer. */
		if (p != NULL)
			json_object_set_new(p, "active_computer_id",
			    str_or_null(l->active_computer_id));
		return tools_payload_result(p, false);
	}
	case T_LIST:
		return tools_payload_result(list_payload(
		    (const Msc__V1__ComputerList *)resp), false);
	case T_DELETE:
		out = json_pack("{s:b, s:s, s:b}", "ok", 1, "computer_id",
		    computer_id, "deleted", 1);
		break;
	default:
		out = json_pack("{s:b, s:s, s:s, s:b, s:s*}", "ok", 1,
		    "computer_id", c->computer_id, "sandbox_id", c->sandbox_id,
		    "temporary", c->temporary, "sandbox_handle",
		    tool == T_CREATE ? handle : NULL);
		break;
	}
	/* The reference's reply, and the background processes (issue 28)
	 * that ended with it when there were any. */
	if (out != NULL && tool != T_CREATE && c->processes_ended > 0)
		json_object_set_new(out, "background_processes_ended",
		    json_integer(c->processes_ended));
	return tools_payload_result(out, false);
}

json_t *
tools_resources_list(bool lifecycle)
{
	if (!lifecycle)
		return json_pack("{s:[]}", "resources");
	return json_pack("{s:[{s:s, s:s, s:s, s:s, s:s, s:{s:{s:{}, s:b}}}]}",
	    "resources", "uri", TOOLS_DASHBOARD_URI, "name",
	    "Sandbox Computer Dashboard", "title", "Sandbox Computer Dashboard",
	    "description", "Interactive dashboard to list, create, restart, "
	    "factory reset and delete sandbox computers, with a terminal.",
	    "mimeType", "text/html;profile=mcp-app", "_meta", "ui", "csp",
	    "prefersBorder", 1);
}

json_t *
tools_resource_read(const char *uri)
{
	if (strcmp(uri, TOOLS_DASHBOARD_URI) != 0)
		return NULL;
	return json_pack("{s:[{s:s, s:s, s:s%, s:{s:{s:{}, s:b}}}]}",
	    "contents", "uri", TOOLS_DASHBOARD_URI, "mimeType",
	    "text/html;profile=mcp-app", "text", msc_dashboard_html,
	    msc_dashboard_html_len, "_meta", "ui", "csp", "prefersBorder", 1);
}
