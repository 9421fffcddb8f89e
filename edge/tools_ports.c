/*
 * tools_ports.c - preview URLs (--tools ports, issue 30):
 * computer_expose_port and computer_unexpose_port. They go the lifecycle
 * tools' way (Session/ExposePort, the same handle and ownership rules as
 * a snapshot of the computer); the driver makes the capability, keeps
 * it and serves the URL (services/docker-driver/docker_preview*.c).
 */
#include "tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"

static const struct {
	const char *name, *title, *description;
	bool read_only, destructive;
} ports[] = {
	[TOOLS_PORT_EXPOSE - TOOLS_PORT_BASE] = { "computer_expose_port",
	    "Expose a port of a sandbox computer",
	    "Give a port a server in the computer listens on a preview URL "
	    "a browser can open. On the docker backend it is "
	    "http://CAPABILITY.HOST:PORT/ through this server (HTTP/1.1, "
	    "streaming, server-sent events and WebSockets pass): whoever "
	    "knows the URL reaches that port; it lasts until "
	    "computer_unexpose_port or the computer's deletion, and survives "
	    "its restart. On the e2b and modal backends it is the provider's "
	    "own https URL of the port (the answer's note says what revoking "
	    "does there). Exposing a port again answers the same URL.",
	    false, false },
	[TOOLS_PORT_UNEXPOSE - TOOLS_PORT_BASE] = { "computer_unexpose_port",
	    "Revoke a port's preview URL",
	    "Revoke the preview URL of a port: on the docker backend it "
	    "answers 404 from now on and its open connections end; on e2b "
	    "and modal the port is forgotten from the computer's exposed "
	    "ports (see the answer's note).", false, true },
};

int
tools_ports_find(const char *name)
{
	for (int t = TOOLS_PORT_BASE; t < TOOLS_PORT_END; t++)
		if (strcmp(name, ports[t - TOOLS_PORT_BASE].name) == 0)
			return t;
	return -1;
}

bool
tools_is_port(int tool)
{
	return tool >= TOOLS_PORT_BASE && tool < TOOLS_PORT_END;
}

static json_t *
def(int tool)
{
	json_t *props = json_object(), *req = json_array();
	char title[64];

	json_object_set_new(props, "computer_id", json_pack("{s:s, s:s, s:s}",
	    "title", "Computer Id", "type", "string", "description",
	    "The computer whose port it is (as terminal_execute's "
	    "computer_id)."));
	json_object_set_new(props, "port", json_pack("{s:s, s:s, s:s, s:i, "
	    "s:i}", "title", "Port", "type", "integer", "description",
	    "The TCP port a server in the computer listens on (1 to 65535).",
	    "minimum", 1, "maximum", 65535));
	json_object_set_new(props, "sandbox_handle", json_pack("{s:s, s:s, "
	    "s:s}", "title", "Sandbox Handle", "type", "string", "description",
	    "The sandbox_handle of an earlier result, as terminal_execute "
	    "takes it."));
	json_array_append_new(req, json_string("computer_id"));
	json_array_append_new(req, json_string("port"));
	snprintf(title, sizeof(title), "%sArguments",
	    ports[tool - TOOLS_PORT_BASE].name);
	return json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:o, s:o}, s:o}",
	    "name", ports[tool - TOOLS_PORT_BASE].name,
	    "title", ports[tool - TOOLS_PORT_BASE].title,
	    "description", ports[tool - TOOLS_PORT_BASE].description,
	    "inputSchema", "type", "object", "title", title, "properties",
	    props, "required", req,
	    "annotations", tools_annotations(ports[tool - TOOLS_PORT_BASE].title,
		ports[tool - TOOLS_PORT_BASE].read_only,
		ports[tool - TOOLS_PORT_BASE].destructive, false));
}

void
tools_ports_extend(json_t *list)
{
	json_t *tools = json_object_get(list, "tools");

	for (int t = TOOLS_PORT_BASE; t < TOOLS_PORT_END; t++)
		json_array_append_new(tools, def(t));
}

static char *
arg_error(int tool, const char *field, const char *what)
{
	char *msg;

	if (asprintf(&msg, "Error executing tool %s: %s: %s",
	    ports[tool - TOOLS_PORT_BASE].name, field, what) < 0)
		return NULL;
	return msg;
}

char *
tools_port_request(int tool, json_t *args, Msc__V1__ComputerRequest *req)
{
	json_t *id = json_object_get(args, "computer_id");
	long long port = -1;
	const char *bad;

	if (args != NULL && !json_is_object(args))
		return arg_error(tool, "arguments", "Input should be a valid "
		    "dictionary");
	if (id == NULL || json_is_null(id))
		return arg_error(tool, "computer_id", "Field required");
	if (!json_is_string(id) ||
	    strlen(json_string_value(id)) != json_string_length(id))
		return arg_error(tool, "computer_id",
		    "Input should be a valid string");
	req->computer_id = (char *)json_string_value(id);
	if ((bad = tools_get_int(args, "port", 1, 65535, &port)) != NULL)
		return arg_error(tool, "port", strcmp(bad, "out of range") == 0 ?
		    "must be a whole number from 1 to 65535" : bad);
	if (port < 0)
		return arg_error(tool, "port", "Field required");
	req->port = (uint32_t)port;
	req->unexpose = tool == TOOLS_PORT_UNEXPOSE;
	return NULL;
}

json_t *
tools_port_result(int tool, const struct msc_status *st,
    ProtobufCMessage *resp)
{
	const Msc__V1__Preview *p = (const void *)resp;
	json_t *exposed, *out;

	if (resp == NULL)
		return tools_payload_result(json_pack("{s:s}", "error",
		    st->message), true);
	exposed = json_array();
	for (size_t i = 0; i < p->n_ports; i++)
		json_array_append_new(exposed, json_integer(p->ports[i]));
	out = json_pack("{s:b, s:s, s:i, s:o}", "ok", 1, "computer_id",
	    p->computer_id, "port", (int)p->port, "exposed_ports", exposed);
	if (out != NULL && tool == TOOLS_PORT_EXPOSE)
		json_object_set_new(out, "url", json_string(p->url));
	if (out != NULL && tool == TOOLS_PORT_UNEXPOSE)
		json_object_set_new(out, "revoked", json_boolean(
		    p->note == NULL || p->note[0] == '\0'));
	if (out != NULL && p->note != NULL && p->note[0] != '\0')
		json_object_set_new(out, "note", json_string(p->note));
	return tools_payload_result(out, false);
}
