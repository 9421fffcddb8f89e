/*
 * mcp_session.c - which session a tools/call runs in: its
 * sandbox_handle, else the connection's own session (opened on first
 * use), else (stateless HTTP) a handle the session service mints. Used
 * by mcp_call.c and mcp_xfer.c; answers a call it refuses through
 * mcp_conn.c.
 */
#include "mcp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "msc_reason.h"
#include "session.pb-c.h"
#include "tools.h"

/*
 * Copies this connection's session id into sid, opening the session
 * first when there is none (blocking, bounded; only the reading thread
 * opens, a reply thread may clear it).
 */
int
mcp_conn_session(struct mcp_conn *c, char sid[64], char *err, size_t errlen)
{
	Msc__V1__OpenRequest req = MSC__V1__OPEN_REQUEST__INIT;
	ProtobufCMessage *resp = NULL;
	Msc__V1__Code code;

	pthread_mutex_lock(&c->mu);
	snprintf(sid, 64, "%s", c->session_id);
	pthread_mutex_unlock(&c->mu);
	if (sid[0] != '\0')
		return 0;
	if (c->session == NULL) {
		snprintf(err, errlen, "no session service is configured");
		return -ENOTCONN;
	}
	req.principal = c->principal;
	code = msc_client_call_sync(c->session, &msc__v1__session__descriptor,
	    "Open", &req.base, 10000, &resp, err, errlen);
	if (code == MSC__V1__CODE__RESOURCE_EXHAUSTED)
		return -EAGAIN;
	if (code != MSC__V1__CODE__OK)
		return -EIO;
	snprintf(sid, 64, "%s", ((Msc__V1__SessionRef *)resp)->session_id);
	protobuf_c_message_free_unpacked(resp, NULL);
	pthread_mutex_lock(&c->mu);
	snprintf(c->session_id, sizeof(c->session_id), "%s", sid);
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/*
 * The sandbox_handle argument: *hp is NULL when absent (or empty, which
 * the reference treats as absent). Returns NULL or the error text shown
 * to the agent (static).
 */
const char *
mcp_handle_arg(json_t *args, const char **hp)
{
	json_t *v = json_object_get(args, "sandbox_handle");

	*hp = NULL;
	if (v == NULL || json_is_null(v))
		return NULL;
	if (!json_is_string(v))
		return "Error executing tool: sandbox_handle: Input should be a "
		       "valid string";
	if (json_string_length(v) == 0)
		return NULL;
	if (json_string_length(v) > MCP_HANDLE_MAX_LEN ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return MCP_HANDLE_UNKNOWN_TEXT;
	*hp = json_string_value(v);
	return NULL;
}

bool
mcp_pick_session(struct mcp_conn *c, json_t *id, bool modern, json_t *args,
    char sid[64], bool *by_handle, bool *mint)
{
	const char *handle, *bad = NULL;
	char err[512];
	int rv;

	*by_handle = false;
	*mint = false;
	if (args != NULL && json_is_object(args))
		bad = mcp_handle_arg(args, &handle);
	else
		handle = NULL;
	if (bad != NULL) {
		mcp_conn_send_result(c, id, tools_error_result(bad), modern);
		return false;
	}
	if (handle != NULL) {
		snprintf(sid, 64, "%s", handle);
		*by_handle = true;
		return true;
	}
	if (c->stateless) {
		sid[0] = '\0';
		*mint = true;
		return true;
	}
	if ((rv = mcp_conn_session(c, sid, err, sizeof(err))) != 0) {
		char text[600];

		mcp_conn_send_result(c, id, tools_error_result(
		    msc_reason_session_not_opened(rv == -EAGAIN, err, text,
			sizeof(text))), modern);
		return false;
	}
	return true;
}
