/*
 * mcp_roots.c - the client's MCP roots, the folders computer_upload and
 * computer_download may use besides --workspace (mcp_xfer.c): over stdio
 * in the legacy era, asked with roots/list once the client is initialized
 * (when its initialize declared the capability), and again on
 * notifications/roots/list_changed; kept on the connection, under its mu.
 */
#include "mcp.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"
#include "xfer.h"


void
mcp_roots_ask(struct mcp_conn *c)
{
	json_t *msg;
	char id[40];

	pthread_mutex_lock(&c->mu);
	if (!c->stdio || !c->roots_declared) {
		pthread_mutex_unlock(&c->mu);
		return;
	}
	c->roots_waiting = true;
	snprintf(id, sizeof(id), "msc-roots-%u", ++c->roots_asked);
	pthread_mutex_unlock(&c->mu);
	msg = json_pack("{s:s, s:s, s:s}", "jsonrpc", "2.0", "id", id,
	    "method", "roots/list");
	if (msg != NULL)
		c->send(c->send_ctx, msg);
	json_decref(msg);
}

static void
free_roots(char **roots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(roots[i]);
	free(roots);
}

/* file://[localhost]/p%20q -> "/p q" (malloc'd), or NULL. */
static char *
uri_path(const char *uri)
{
	const char *p;
	char *out, *o;

	if (strncmp(uri, "file://", 7) != 0)
		return NULL;
	p = uri + 7;
	if (strncmp(p, "localhost/", 10) == 0)
		p += 9;
	if (*p != '/' || (out = malloc(strlen(p) + 1)) == NULL)
		return NULL;
	for (o = out; *p != '\0'; p++) {
		if (*p == '%' && isxdigit((unsigned char)p[1]) &&
		    isxdigit((unsigned char)p[2])) {
			char hex[3] = { p[1], p[2], 0 };

			*o = (char)strtol(hex, NULL, 16);
			if (*o == '\0') {
				free(out);
				return NULL;
			}
			o++;
			p += 2;
		} else if (*p == '?' || *p == '#')
			break;
		else
			*o++ = *p;
	}
	*o = '\0';
	return out;
}

bool
mcp_roots_answered(struct mcp_conn *c, json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "id"));
	json_t *list = json_object_get(json_object_get(msg, "result"),
	    "roots"), *r;
	char want[40], **roots, **old;
	size_t n = 0, i, n_old;

	if (id == NULL || strncmp(id, "msc-roots-", 10) != 0)
		return false;
	pthread_mutex_lock(&c->mu);
	snprintf(want, sizeof(want), "msc-roots-%u", c->roots_asked);
	/* Only the answer to the question asked last, on stdio. */
	if (!c->stdio || !c->roots_waiting || strcmp(id, want) != 0) {
		pthread_mutex_unlock(&c->mu);
		return true;
	}
	pthread_mutex_unlock(&c->mu);
	if ((roots = calloc(MCP_ROOTS_MAX, sizeof(*roots))) == NULL)
		return true;
	json_array_foreach(list, i, r) {
		const char *uri = json_string_value(json_object_get(r, "uri"));
		char *path = uri != NULL ? uri_path(uri) : NULL;
		char *real = path != NULL ? xfer_allow_dir(path) : NULL;

		if (real != NULL && n < MCP_ROOTS_MAX)
			roots[n++] = real;
		else {
			if (uri != NULL)
				msc_log_warn("roots: %.200s is not a local "
				    "folder: left out", uri);
			free(real);
		}
		free(path);
	}
	if (json_object_get(msg, "error") != NULL)
		msc_log_warn("roots/list: the client answered an error");
	pthread_mutex_lock(&c->mu);
	old = c->roots;
	n_old = c->n_roots;
	c->roots = roots;
	c->n_roots = n;
	c->roots_known = true;
	c->roots_waiting = false;
	pthread_mutex_unlock(&c->mu);
	free_roots(old, n_old);
	return true;
}

void
mcp_roots_fini(struct mcp_conn *c)
{
	pthread_mutex_lock(&c->mu);
	free_roots(c->roots, c->n_roots);
	c->roots = NULL;
	c->n_roots = 0;
	pthread_mutex_unlock(&c->mu);
}
