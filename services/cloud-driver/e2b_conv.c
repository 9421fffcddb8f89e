/*
 * e2b_conv.c - pure conversions of the E2B backend (see e2b_conv.h).
 */
#include "e2b_conv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_http.h"

json_t *
e2b_conv_pairs(const char *const *items, size_t n)
{
	json_t *o = json_object();

	for (size_t i = 0; o != NULL && i < n; i++) {
		const char *eq = strchr(items[i], '=');
		char *k;

		if (eq == NULL || eq == items[i])
			continue;
		if ((k = strndup(items[i], (size_t)(eq - items[i]))) == NULL) {
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, k, json_string(eq + 1));
		free(k);
	}
	return o;
}

json_t *
e2b_conv_create_body(const char *template_id, long timeout_s,
    json_t *metadata, json_t *envs, bool network, const char *id,
    bool temporary)
{
	json_t *meta = metadata != NULL ? json_deep_copy(metadata)
					: json_object();
	json_t *body;

	if (meta == NULL)
		return NULL;
	json_object_set_new(meta, E2B_META_OWNED, json_string("true"));
	json_object_set_new(meta, E2B_META_ID, json_string(id));
	json_object_set_new(meta, E2B_META_TEMPORARY,
	    json_string(temporary ? "true" : "false"));
	json_object_set_new(meta, E2B_META_TEMPLATE, json_string(template_id));
	body = json_pack("{s:s, s:I, s:o, s:o, s:b, s:b, s:b}", "templateID",
	    template_id, "timeout", (json_int_t)timeout_s, "metadata", meta,
	    "envVars", envs != NULL ? json_incref(envs) : json_object(),
	    "secure", 1, "allow_internet_access", network, "autoPause",
	    !temporary);
	return body;
}

int
e2b_conv_network(json_t *body, char *const *allow, size_t n)
{
	json_t *out = json_array(), *net;

	if (out == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		json_array_append_new(out, json_string(allow[i]));
	net = json_pack("{s:o, s:[s]}", "allowOut", out, "denyOut",
	    "0.0.0.0/0");
	if (net == NULL)
		return -ENOMEM;
	json_object_set_new(body, "allow_internet_access", json_true());
	return json_object_set_new(body, "network", net) == 0 ? 0 : -ENOMEM;
}

int
e2b_conv_meta_query(const char *key, const char *value, char *buf,
    size_t len)
{
	char k[256], v[512], inner[1024];
	int rv;

	if ((rv = msc_http_escape(key, k, sizeof(k))) != 0 ||
	    (rv = msc_http_escape(value, v, sizeof(v))) != 0)
		return rv;
	if (snprintf(inner, sizeof(inner), "%s=%s", k, v) >= (int)sizeof(inner))
		return -ENOSPC;
	return msc_http_escape(inner, buf, len);
}

const char *
e2b_conv_meta(json_t *sbx, const char *key)
{
	return json_string_value(json_object_get(json_object_get(sbx,
	    "metadata"), key));
}

static char *
dup_or_empty(const char *s)
{
	return strdup(s != NULL ? s : "");
}

int
e2b_conv_computer(json_t *sbx, const char *fallback_template,
    Msc__V1__Computer *out)
{
	const char *tmp = e2b_conv_meta(sbx, E2B_META_TEMPORARY);
	const char *tpl = e2b_conv_meta(sbx, E2B_META_TEMPLATE);
	const char *state = json_string_value(json_object_get(sbx, "state"));

	out->computer_id = dup_or_empty(e2b_conv_meta(sbx, E2B_META_ID));
	out->sandbox_id = dup_or_empty(json_string_value(json_object_get(sbx,
	    "sandboxID")));
	out->temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	out->image = dup_or_empty(tpl != NULL ? tpl : fallback_template);
	out->state = dup_or_empty(state != NULL ? state : "running");
	out->created_at = dup_or_empty(json_string_value(json_object_get(sbx,
	    "startedAt")));
	out->backend = dup_or_empty("e2b");
	out->principal = dup_or_empty(e2b_conv_meta(sbx, E2B_META_PRINCIPAL));
	if (!out->computer_id || !out->sandbox_id || !out->image ||
	    !out->state || !out->created_at || !out->backend ||
	    !out->principal)
		return -ENOMEM;
	return 0;
}


static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int
e2b_conv_b64encode(const void *in, size_t len, char **outp)
{
	const unsigned char *p = in;
	char *o = malloc((len + 2) / 3 * 4 + 1);
	size_t i, k = 0;

	if (o == NULL)
		return -ENOMEM;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
		    p[i + 2];

		o[k++] = b64[v >> 18];
		o[k++] = b64[(v >> 12) & 63];
		o[k++] = b64[(v >> 6) & 63];
		o[k++] = b64[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)p[i] << 16 |
		    (i + 1 < len ? (uint32_t)p[i + 1] << 8 : 0);

		o[k++] = b64[v >> 18];
		o[k++] = b64[(v >> 12) & 63];
		o[k++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		o[k++] = '=';
	}
	o[k] = '\0';
	*outp = o;
	return 0;
}

static int
b64val(char c)
{
	const char *p = c != '\0' ? strchr(b64, c) : NULL;

	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return p != NULL ? (int)(p - b64) : -1;
}

int
e2b_conv_b64decode(const char *in, size_t len, char **outp, size_t *lenp)
{
	char *o = malloc(len / 4 * 3 + 4);
	uint32_t acc = 0;
	size_t k = 0;
	int bits = 0;

	if (o == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < len; i++) {
		int v;

		if (in[i] == '=' || in[i] == ' ' || in[i] == '\n' ||
		    in[i] == '\r')
			continue;
		if ((v = b64val(in[i])) < 0) {
			free(o);
			return -EINVAL;
		}
		acc = acc << 6 | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			o[k++] = (char)(acc >> bits);
		}
	}
	o[k] = '\0';
	*outp = o;
	*lenp = k;
	return 0;
}

int
e2b_conv_envelope(uint8_t flags, const char *msg, size_t len, char **outp,
    size_t *lenp)
{
	char *o = malloc(len + 5);

	if (o == NULL)
		return -ENOMEM;
	o[0] = (char)flags;
	o[1] = (char)(len >> 24);
	o[2] = (char)(len >> 16);
	o[3] = (char)(len >> 8);
	o[4] = (char)len;
	memcpy(o + 5, msg, len);
	*outp = o;
	*lenp = len + 5;
	return 0;
}

int
e2b_frames_feed(struct e2b_frames *f, const char *p, size_t len,
    int (*fn)(uint8_t, const char *, size_t, void *), void *arg)
{
	int rv;

	while (len > 0) {
		if (f->hdr_have < 5) {
			size_t n = 5 - f->hdr_have < len ? 5 - f->hdr_have : len;

			memcpy(f->hdr + f->hdr_have, p, n);
			f->hdr_have += n;
			p += n;
			len -= n;
			if (f->hdr_have < 5)
				break;
			f->need = (size_t)f->hdr[1] << 24 |
			    (size_t)f->hdr[2] << 16 | (size_t)f->hdr[3] << 8 |
			    f->hdr[4];
			if (f->need > E2B_MAX_FRAME)
				return -EPROTO;
			f->have = 0;
			if ((f->msg = malloc(f->need + 1)) == NULL)
				return -ENOMEM;
		}
		if (f->have < f->need) {
			size_t n = f->need - f->have < len ? f->need - f->have
							    : len;

			memcpy(f->msg + f->have, p, n);
			f->have += n;
			p += n;
			len -= n;
		}
		if (f->have == f->need) {
			f->msg[f->need] = '\0';
			rv = fn(f->hdr[0], f->msg, f->need, arg);
			free(f->msg);
			f->msg = NULL;
			f->hdr_have = 0;
			if (rv != 0)
				return rv;
		}
	}
	return 0;
}

void
e2b_frames_fini(struct e2b_frames *f)
{
	free(f->msg);
	f->msg = NULL;
}

static int
signal_number(const char *name)
{
	static const char *const names[] = { NULL, "hangup", "interrupt",
		"quit", "illegal instruction", "trace/breakpoint trap",
		"aborted", "bus error", "floating point exception", "killed",
		"user defined signal 1", "segmentation fault",
		"user defined signal 2", "broken pipe", "alarm clock",
		"terminated" };

	for (int i = 1; i < (int)(sizeof(names) / sizeof(*names)); i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return 9;
}

int
e2b_conv_exit_code(json_t *end)
{
	const char *status = json_string_value(json_object_get(end, "status"));
	json_t *code = json_object_get(end, "exitCode");
	int c = json_is_integer(code) ? (int)json_integer_value(code) : 0;
	int n;

	if (status != NULL && strncmp(status, "signal: ", 8) == 0)
		return 128 + signal_number(status + 8);
	if (json_is_true(json_object_get(end, "exited")))
		return c;
	if (status != NULL && sscanf(status, "exit status %d", &n) == 1)
		return n;
	return c >= 0 ? c : 255;
}

int
e2b_conv_event(const char *msg, size_t len, struct e2b_event *ev)
{
	json_t *j = json_loadb(msg, len, 0, NULL), *e, *x;
	const char *s;
	int rv = 0;

	memset(ev, 0, sizeof(*ev));
	ev->kind = E2B_EV_OTHER;
	if ((e = json_object_get(j, "event")) == NULL || !json_is_object(e)) {
		json_decref(j);
		return -EPROTO;
	}
	if ((x = json_object_get(e, "start")) != NULL) {
		json_t *pid = json_object_get(x, "pid");

		ev->kind = E2B_EV_START;
		ev->pid = json_is_integer(pid) ? json_integer_value(pid) : 0;
	} else if ((x = json_object_get(e, "data")) != NULL) {
		json_t *d = json_object_get(x, "stdout");

		ev->kind = E2B_EV_STDOUT;
		if (d == NULL) {
			d = json_object_get(x, "stderr");
			ev->kind = d != NULL ? E2B_EV_STDERR : E2B_EV_OTHER;
		}
		if (d != NULL && (s = json_string_value(d)) == NULL)
			rv = -EPROTO;
		else if (d != NULL)
			rv = e2b_conv_b64decode(s, json_string_length(d),
			    &ev->data, &ev->len) == 0 ? 0 : -EPROTO;
	} else if (json_object_get(e, "keepalive") != NULL)
		ev->kind = E2B_EV_KEEPALIVE;
	else if ((x = json_object_get(e, "end")) != NULL) {
		ev->kind = E2B_EV_END;
		ev->exit_code = e2b_conv_exit_code(x);
		if ((s = json_string_value(json_object_get(x, "error"))) != NULL)
			snprintf(ev->error, sizeof(ev->error), "%s", s);
	}
	json_decref(j);
	return rv;
}

int
e2b_conv_eos(const char *msg, size_t len, char *code, size_t codelen,
    char *text, size_t textlen)
{
	json_t *j = json_loadb(msg, len, 0, NULL), *e;
	const char *c, *m;

	if (!json_is_object(j)) {
		json_decref(j);
		return -EPROTO;
	}
	if ((e = json_object_get(j, "error")) == NULL) {
		json_decref(j);
		return 0;
	}
	c = json_string_value(json_object_get(e, "code"));
	m = json_string_value(json_object_get(e, "message"));
	snprintf(code, codelen, "%s", c != NULL ? c : "unknown");
	snprintf(text, textlen, "%s", m != NULL ? m : "");
	json_decref(j);
	return 1;
}
