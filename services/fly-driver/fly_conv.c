/*
 * fly_conv.c - pure conversions for the fly-driver: JSON bodies, exec
 * wrappers, replies, base64, and the small text formats it reads.
 */
#include "fly_conv.h"
#include "msc_driver.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
parse_pos(const char *s, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return false;
	*out = v;
	return true;
}

int
fly_conv_guest(const char *image, const char *region, const char *kind,
    const char *cpus, const char *memory, const char *rootfs_size,
    struct fly_guest *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof(*g));
	g->image = image;
	g->region = region != NULL && *region != '\0' ? region : NULL;
	g->cpu_kind = kind != NULL ? kind : "shared";
	if (!parse_pos(cpus, &g->cpus) || g->cpus < 1) {
		snprintf(err, errlen, "--fly-cpus must be at least 1.");
		return -EINVAL;
	}
	if (!parse_pos(memory, &g->memory_mb) || g->memory_mb < 256) {
		snprintf(err, errlen, "--fly-memory must be at least 256 MB.");
		return -EINVAL;
	}
	if (g->memory_mb % 256 != 0) {
		snprintf(err, errlen, "--fly-memory must be a multiple of 256 "
				      "MB (Fly's rule), got: %ld", g->memory_mb);
		return -EINVAL;
	}
	if (rootfs_size != NULL &&
	    (!parse_pos(rootfs_size, &g->rootfs_size_gb) ||
		g->rootfs_size_gb < 1)) {
		snprintf(err, errlen, "--fly-rootfs-size must be a whole number "
				      "of GB, at least 1, got: %s", rootfs_size);
		return -EINVAL;
	}
	if (image == NULL || *image == '\0') {
		snprintf(err, errlen, "--fly-image must not be empty.");
		return -EINVAL;
	}
	return 0;
}

json_t *
fly_conv_machine_body(const struct fly_guest *g, const char *id,
    bool temporary)
{
	json_t *body, *config, *rootfs;

	rootfs = json_pack("{s:s}", "persist", temporary ? "never" : "always");
	if (rootfs != NULL && g->rootfs_size_gb > 0)
		json_object_set_new(rootfs, "size_gb",
		    json_integer(g->rootfs_size_gb));
	config = json_pack("{s:s, s:{s:[ss]}, s:{s:s, s:s, s:s, s:s}, "
			   "s:{s:s, s:I, s:I}, s:o, s:{s:s}, s:b}",
	    "image", g->image,
	    "init", "exec", "/bin/sleep", "inf",
	    "metadata", FLY_META_OWNED, "true", FLY_META_ID, id,
	    FLY_META_TEMPORARY, temporary ? "true" : "false", FLY_META_IMAGE,
	    g->image,
	    "guest", "cpu_kind", g->cpu_kind, "cpus", (json_int_t)g->cpus,
	    "memory_mb", (json_int_t)g->memory_mb,
	    "rootfs", rootfs,
	    "restart", "policy", temporary ? "no" : "always",
	    "auto_destroy", temporary);
	if (config == NULL)
		return NULL;
	body = json_pack("{s:s, s:o}", "name", id, "config", config);
	if (body != NULL && g->region != NULL)
		json_object_set_new(body, "region", json_string(g->region));
	return body;
}

static int
push(json_t *a, const char *s)
{
	return json_array_append_new(a, json_string(s != NULL ? s : ""));
}

json_t *
fly_conv_exec_argv(const char *shell, const char *command,
    char *const *args, size_t n_args, const char *workdir, const char *tok,
    unsigned timeout_s)
{
	json_t *a = json_array();
	char buf[96];
	int rv = 0;

	if (a == NULL)
		return NULL;
	if (tok != NULL) {
		snprintf(buf, sizeof(buf), MSC_DRIVER_MARKER_VAR "=%s", tok);
		rv |= push(a, "/usr/bin/env");
		rv |= push(a, buf);
	}
	if (timeout_s > 0) {
		snprintf(buf, sizeof(buf), "%us", timeout_s);
		rv |= push(a, "timeout");
		rv |= push(a, "-s");
		rv |= push(a, "KILL");
		rv |= push(a, buf);
	}
	if (workdir != NULL && *workdir != '\0') {
		rv |= push(a, "/bin/sh");
		rv |= push(a, "-c");
		rv |= push(a, "cd -- \"$1\" && shift && exec \"$@\"");
		rv |= push(a, "kt");
		rv |= push(a, workdir);
	}
	if (n_args > 0)
		for (size_t i = 0; i < n_args; i++)
			rv |= push(a, args[i]);
	else {
		rv |= push(a, shell);
		rv |= push(a, "-c");
		rv |= push(a, command);
	}
	if (rv != 0) {
		json_decref(a);
		return NULL;
	}
	return a;
}

static int
dup_str(json_t *v, char **outp, size_t *lenp)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	size_t n = json_is_string(v) ? json_string_length(v) : 0;

	if (v != NULL && !json_is_string(v) && !json_is_null(v))
		return -EPROTO;
	if ((*outp = malloc(n + 1)) == NULL)
		return -ENOMEM;
	memcpy(*outp, s, n);
	(*outp)[n] = '\0';
	*lenp = n;
	return 0;
}

int
fly_conv_exec_reply(json_t *reply, char **outp, size_t *out_lenp,
    char **errp, size_t *err_lenp, int *exit_codep)
{
	json_t *code, *sig;
	int rv;

	*outp = *errp = NULL;
	if (!json_is_object(reply))
		return -EPROTO;
	code = json_object_get(reply, "exit_code");
	sig = json_object_get(reply, "exit_signal");
	if ((code != NULL && !json_is_integer(code) && !json_is_null(code)) ||
	    (sig != NULL && !json_is_integer(sig) && !json_is_null(sig)))
		return -EPROTO;
	*exit_codep = (int)json_integer_value(code);
	if (*exit_codep == 0 && json_integer_value(sig) > 0)
		*exit_codep = 128 + (int)json_integer_value(sig);
	if ((rv = dup_str(json_object_get(reply, "stdout"), outp,
		 out_lenp)) != 0 ||
	    (rv = dup_str(json_object_get(reply, "stderr"), errp,
		 err_lenp)) != 0) {
		free(*outp);
		*outp = NULL;
		return rv;
	}
	return 0;
}

const char *
fly_conv_meta(json_t *machine, const char *key)
{
	return json_string_value(json_object_get(json_object_get(
	    json_object_get(machine, "config"), "metadata"), key));
}

bool
fly_conv_state_gone(const char *state)
{
	static const char *const gone[] = { "destroyed", "destroying",
		"replaced", "migrated", NULL };

	if (state == NULL)
		return false;
	for (int i = 0; gone[i] != NULL; i++)
		if (strcmp(state, gone[i]) == 0)
			return true;
	return false;
}

static char *
dup_or_empty(const char *s)
{
	return strdup(s != NULL ? s : "");
}

int
fly_conv_computer(json_t *m, const char *fallback_image,
    Msc__V1__Computer *out)
{
	const char *tmp = fly_conv_meta(m, FLY_META_TEMPORARY);
	const char *image = fly_conv_meta(m, FLY_META_IMAGE);

	out->computer_id = dup_or_empty(fly_conv_meta(m, FLY_META_ID));
	out->sandbox_id = dup_or_empty(json_string_value(json_object_get(m,
	    "id")));
	out->temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	out->image = dup_or_empty(image != NULL ? image : fallback_image);
	out->state = dup_or_empty(json_string_value(json_object_get(m,
	    "state")));
	out->created_at = dup_or_empty(json_string_value(json_object_get(m,
	    "created_at")));
	out->backend = dup_or_empty("fly");
	out->principal = dup_or_empty(fly_conv_meta(m, FLY_META_PRINCIPAL));
	if (!out->computer_id || !out->sandbox_id || !out->image ||
	    !out->state || !out->created_at || !out->backend ||
	    !out->principal)
		return -ENOMEM;
	return 0;
}


static int
b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int
fly_conv_b64decode(const char *in, size_t len, char **outp, size_t *lenp)
{
	char *out = malloc(len / 4 * 3 + 4);
	size_t o = 0;
	unsigned acc = 0;
	int bits = 0;
	bool pad = false;

	if (out == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad = true;
			continue;
		}
		if (pad || (v = b64val(c)) < 0) {
			free(out);
			return -EINVAL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	*outp = out;
	*lenp = o;
	return 0;
}

int
fly_conv_yaml_token(const char *text, char *buf, size_t len)
{
	const char *p = text;

	while (p != NULL && *p != '\0') {
		const char *line = p, *v, *e;
		size_t n;

		p = strchr(p, '\n');
		if (p != NULL)
			p++;
		if (strncmp(line, "access_token:", 13) != 0)
			continue;
		v = line + 13;
		while (*v == ' ' || *v == '\t')
			v++;
		e = v + strcspn(v, "\r\n");
		while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e - v >= 2 && (*v == '"' || *v == '\'') && e[-1] == *v) {
			v++;
			e--;
		}
		n = (size_t)(e - v);
		if (n == 0)
			return -ENOENT;
		if (n >= len)
			return -ENOSPC;
		memcpy(buf, v, n);
		buf[n] = '\0';
		return 0;
	}
	return -ENOENT;
}

int
fly_conv_state_app(const char *text, char *buf, size_t len)
{
	json_t *j = json_loads(text, 0, NULL);
	const char *app = json_string_value(json_object_get(j, "app_name"));
	int rv = 0;

	if (app == NULL)
		app = json_string_value(json_object_get(j, "app"));
	if (app == NULL || *app == '\0')
		rv = -ENOENT;
	else if (snprintf(buf, len, "%s", app) >= (int)len)
		rv = -ENOSPC;
	json_decref(j);
	return rv;
}
