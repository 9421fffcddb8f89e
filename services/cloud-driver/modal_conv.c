/*
 * modal_conv.c - tags, computers, option values, JWT expiry (no I/O).
 */
#include "modal_conv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "msc_random.h"

const char *
modal_conv_tag(const Modal__Client__SandboxInfo *s, const char *name)
{
	for (size_t i = 0; i < s->n_tags; i++)
		if (s->tags[i]->tag_name != NULL &&
		    strcmp(s->tags[i]->tag_name, name) == 0)
			return s->tags[i]->tag_value;
	return NULL;
}

void
modal_conv_time(double t, char *buf, size_t len)
{
	struct tm tm;
	time_t secs = (time_t)t;

	if (!(t > 0) || gmtime_r(&secs, &tm) == NULL) {
		snprintf(buf, len, "%s", "");
		return;
	}
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static char *
dup_or_empty(const char *s)
{
	return strdup(s != NULL ? s : "");
}

int
modal_conv_computer(const Modal__Client__SandboxInfo *s,
    const char *fallback_image, Msc__V1__Computer *out)
{
	const char *tmp = modal_conv_tag(s, MODAL_TAG_TEMPORARY);
	const char *img = modal_conv_tag(s, MODAL_TAG_IMAGE);
	bool done = s->task_info != NULL &&
	    modal_conv_finished(s->task_info->result);
	char when[32];

	modal_conv_time(s->created_at, when, sizeof(when));
	out->computer_id = dup_or_empty(modal_conv_tag(s, MODAL_TAG_ID));
	out->sandbox_id = dup_or_empty(s->id);
	out->temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	out->image = dup_or_empty(img != NULL ? img : fallback_image);
	out->state = strdup(done ? "exited" : "running");
	out->created_at = strdup(when);
	out->backend = strdup("modal");
	out->principal = dup_or_empty(modal_conv_tag(s, MODAL_TAG_PRINCIPAL));
	if (out->computer_id == NULL || out->sandbox_id == NULL ||
	    out->image == NULL || out->state == NULL ||
	    out->created_at == NULL || out->backend == NULL ||
	    out->principal == NULL)
		return -ENOMEM;
	return 0;
}

bool
modal_conv_finished(const Modal__Client__GenericResult *r)
{
	return r != NULL && r->status !=
	    MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_UNSPECIFIED;
}

void
modal_conv_ended(const Modal__Client__GenericResult *r, char *buf,
    size_t len)
{
	const char *ex = r != NULL && r->exception != NULL ? r->exception : "";

	if (r == NULL) {
		snprintf(buf, len, "is gone");
		return;
	}
	switch (r->status) {
	case MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_SUCCESS:
		snprintf(buf, len, "exited (its entrypoint ended with %d)",
		    r->exitcode);
		break;
	case MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TERMINATED:
		snprintf(buf, len, "was terminated");
		break;
	case MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_TIMEOUT:
		snprintf(buf, len, "reached its lifetime timeout "
				   "(--sandbox-timeout)");
		break;
	case MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_IDLE_TIMEOUT:
		snprintf(buf, len, "reached its idle timeout");
		break;
	case MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_MEMORY_MANAGER_EVICTION:
		snprintf(buf, len, "was evicted (out of memory on its worker)");
		break;
	case MODAL__CLIENT__GENERIC_RESULT__GENERIC_STATUS__GENERIC_STATUS_UNSPECIFIED:
		snprintf(buf, len, "is still running");
		break;
	default:
		snprintf(buf, len, "failed%s%.400s", *ex ? ": " : "", ex);
		break;
	}
}

int
modal_conv_cpu(const char *s, uint32_t *millip)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	v = strtod(s, &end);
	if (*end != '\0' || !isfinite(v) || v <= 0 || v > 1024)
		return -EINVAL;
	*millip = (uint32_t)(v * 1000 + 0.5);
	return *millip > 0 ? 0 : -EINVAL;
}

int
modal_conv_uint(const char *s, uint32_t lo, uint32_t hi, uint32_t *vp)
{
	char *end;
	unsigned long long v;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0' || errno != 0 || v < lo || v > hi)
		return -EINVAL;
	*vp = (uint32_t)v;
	return 0;
}

int
modal_conv_ports(const char *s, uint32_t *ports, size_t *np)
{
	size_t n = 0;

	*np = 0;
	if (s == NULL)
		return 0;
	while (*s == ' ')
		s++;
	if (*s == '\0')
		return 0;
	for (;;) {
		char *end;
		unsigned long v;

		while (*s == ' ')
			s++;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno != 0 || v < 1 || v > 65535 || n == MODAL_PORTS_MAX)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			if (ports[i] == v)
				return -EINVAL;
		ports[n++] = (uint32_t)v;
		s = end;
		while (*s == ' ')
			s++;
		if (*s == '\0')
			break;
		if (*s++ != ',')
			return -EINVAL;
	}
	*np = n;
	return 0;
}

int
modal_conv_gpu(const char *s, char *type, size_t typelen, uint32_t *countp)
{
	const char *colon = strchr(s, ':');
	size_t n = colon != NULL ? (size_t)(colon - s) : strlen(s);

	if (n == 0 || n >= typelen)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return -EINVAL;
		type[i] = (char)toupper((unsigned char)s[i]);
	}
	type[n] = '\0';
	*countp = 1;
	if (colon != NULL)
		return modal_conv_uint(colon + 1, 1, 64, countp);
	return 0;
}

static int
b64url_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-' || c == '+')
		return 62;
	if (c == '_' || c == '/')
		return 63;
	return -1;
}

int64_t
modal_conv_jwt_exp(const char *jwt)
{
	const char *p = jwt != NULL ? strchr(jwt, '.') : NULL;
	const char *q = p != NULL ? strchr(p + 1, '.') : NULL;
	char buf[4096];
	size_t o = 0;
	uint32_t acc = 0;
	int bits = 0;
	json_t *j;
	int64_t exp = 0;

	if (q == NULL || (size_t)(q - p) > sizeof(buf))
		return 0;
	for (const char *s = p + 1; s < q && *s != '='; s++) {
		int v = b64url_val((unsigned char)*s);

		if (v < 0)
			return 0;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			buf[o++] = (char)(acc >> bits & 0xff);
		}
	}
	if ((j = json_loadb(buf, o, 0, NULL)) == NULL)
		return 0;
	if (json_is_integer(json_object_get(j, "exp")))
		exp = json_integer_value(json_object_get(j, "exp"));
	else if (json_is_real(json_object_get(j, "exp")))
		exp = (int64_t)json_real_value(json_object_get(j, "exp"));
	json_decref(j);
	return exp > 0 ? exp : 0;
}

int
modal_conv_uuid(char out[37])
{
	uint8_t b[16];

	msc_random_bytes(b, sizeof(b));
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			  "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
	    b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
	    b[15]);
	return 0;
}
