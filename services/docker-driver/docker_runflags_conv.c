/*
 * docker_runflags_conv.c - converters for the composite `docker run` flag
 * values: sizes, --mount, --volume, --device, --ulimit, --gpus and friends,
 * and the create body's get-or-create helpers (rf_object, rf_array) that
 * docker_runflags.c and docker_runflags_mount.c also use.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "docker_runflags_int.h"

#define RF_PART_MAX	4096

/* Returns the object at `key` in `parent`, creating it when absent. */
json_t *
rf_object(json_t *parent, const char *key)
{
	json_t	*o = json_object_get(parent, key);

	if (json_is_object(o))
		return o;
	o = json_object();
	if (o == NULL || json_object_set_new(parent, key, o) < 0)
		return NULL;
	return o;
}

/* Returns the array at `key` in `parent`, creating it when absent. */
json_t *
rf_array(json_t *parent, const char *key)
{
	json_t	*a = json_object_get(parent, key);

	if (json_is_array(a))
		return a;
	a = json_array();
	if (a == NULL || json_object_set_new(parent, key, a) < 0)
		return NULL;
	return a;
}

int
rf_parse_int(const char *v, long long *out)
{
	char		*end;
	long long	 n;

	if (v == NULL || *v == '\0')
		return -EINVAL;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0')
		return -EINVAL;
	*out = n;
	return 0;
}

int
rf_parse_size(const char *v, long long *out)
{
	const char	*p = v, *units = "kmgtp", *u;
	char		 num[64];
	double		 x, mul = 1;
	size_t		 n;

	n = strspn(p, "0123456789");
	if (n == 0)
		return -EINVAL;
	p += n;
	while (*p == '.' && p[1] >= '0' && p[1] <= '9')
		p += 1 + strspn(p + 1, "0123456789");
	if ((size_t)(p - v) >= sizeof(num))
		return -EINVAL;
	memcpy(num, v, (size_t)(p - v));
	num[p - v] = '\0';
	x = strtod(num, NULL);
	if (*p == ' ')
		p++;
	if (*p != '\0' && (u = strchr(units, *p | 0x20)) != NULL) {
		for (n = 0; n <= (size_t)(u - units); n++)
			mul *= 1024;
		p++;
	}
	if (*p == 'i' || *p == 'I')
		p++;
	if (*p == 'b' || *p == 'B')
		p++;
	if (*p != '\0')
		return -EINVAL;
	x *= mul;
	if (x >= 9.2e18)
		return -EINVAL;
	*out = (long long)x;
	return 0;
}

/* Splits s on `sep` into at most `max` parts in buf; returns the count. */
static int
rf_split(const char *s, char sep, char *buf, size_t buflen, char **parts,
    int max)
{
	char	*p;
	int	 n = 0;

	if (snprintf(buf, buflen, "%s", s) >= (int)buflen)
		return -1;
	p = buf;
	parts[n++] = p;
	while ((p = strchr(p, sep)) != NULL) {
		if (n == max)
			return -1;
		*p++ = '\0';
		parts[n++] = p;
	}
	return n;
}

static int
rf_inval(char *err, size_t errlen, const char *fmt, const char *v)
{
	snprintf(err, errlen, fmt, v);
	return -EINVAL;
}

int
rf_conv_cpus(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	char	*end;
	double	 x;

	(void)body;
	x = strtod(v, &end);
	if (*end != '\0' || end == v || !(x > 0) || x > 1e6)
		return rf_inval(err, errlen, "'%s' is not a CPU count", v);
	return json_object_set_new(dst, "NanoCpus",
	    json_integer((json_int_t)(x * 1e9 + 0.5))) < 0 ? -ENOMEM : 0;
}

int
rf_conv_env(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	const char	*val;
	json_t		*a;
	char		*kv;
	int		 rc;

	(void)dst;
	if (*v == '=')
		return rf_inval(err, errlen, "'%s' has no variable name", v);
	if ((a = rf_array(body, "Env")) == NULL)
		return -ENOMEM;
	if (strchr(v, '=') != NULL)
		return json_array_append_new(a, json_string(v)) < 0 ?
		    -ENOMEM : 0;
	/* "-e NAME" copies NAME from our environment, as docker run does. */
	if ((val = getenv(v)) == NULL)
		return 0;
	if (asprintf(&kv, "%s=%s", v, val) < 0)
		return -ENOMEM;
	rc = json_array_append_new(a, json_string(kv)) < 0 ? -ENOMEM : 0;
	free(kv);
	return rc;
}

/* Sets obj[k] = v from "k=v" ("k" alone gives ""). */
static int
rf_kv_set(json_t *obj, const char *kv)
{
	const char	*eq = strchr(kv, '=');
	char		*k;
	int		 rc;

	if (eq == NULL)
		return json_object_set_new(obj, kv, json_string("")) < 0 ?
		    -ENOMEM : 0;
	if ((k = strndup(kv, (size_t)(eq - kv))) == NULL)
		return -ENOMEM;
	rc = json_object_set_new(obj, k, json_string(eq + 1)) < 0 ? -ENOMEM :
	    0;
	free(k);
	return rc;
}

int
rf_conv_label(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	json_t	*o;

	(void)dst;
	if (*v == '=')
		return rf_inval(err, errlen, "'%s' has no label name", v);
	if ((o = rf_object(body, "Labels")) == NULL)
		return -ENOMEM;
	return rf_kv_set(o, v);
}

int
rf_conv_log_driver(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	json_t	*o;

	(void)body;
	(void)err;
	(void)errlen;
	if ((o = rf_object(dst, "LogConfig")) == NULL)
		return -ENOMEM;
	return json_object_set_new(o, "Type", json_string(v)) < 0 ? -ENOMEM :
	    0;
}

int
rf_conv_log_opt(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	json_t	*o;

	(void)body;
	if (strchr(v, '=') == NULL || *v == '=')
		return rf_inval(err, errlen, "'%s' is not key=value", v);
	if ((o = rf_object(dst, "LogConfig")) == NULL ||
	    (o = rf_object(o, "Config")) == NULL)
		return -ENOMEM;
	return rf_kv_set(o, v);
}

int
rf_conv_add_host(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	json_t	*a;
	char	*hv;
	size_t	 k;
	int	 rc;

	(void)body;
	k = strcspn(v, ":=");
	if (k == 0 || v[k] == '\0' || v[k + 1] == '\0')
		return rf_inval(err, errlen, "'%s' is not host:ip", v);
	if ((a = rf_array(dst, "ExtraHosts")) == NULL)
		return -ENOMEM;
	if (asprintf(&hv, "%.*s:%s", (int)k, v, v + k + 1) < 0)
		return -ENOMEM;
	rc = json_array_append_new(a, json_string(hv)) < 0 ? -ENOMEM : 0;
	free(hv);
	return rc;
}

int
rf_conv_tmpfs(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	const char	*colon = strchr(v, ':');
	json_t		*o;
	char		*path;
	int		 rc;

	(void)body;
	if (v[0] != '/')
		return rf_inval(err, errlen, "'%s' is not an absolute path",
		    v);
	if ((o = rf_object(dst, "Tmpfs")) == NULL)
		return -ENOMEM;
	path = strndup(v, colon != NULL ? (size_t)(colon - v) : strlen(v));
	if (path == NULL)
		return -ENOMEM;
	rc = json_object_set_new(o, path, json_string(colon != NULL ?
	    colon + 1 : "")) < 0 ? -ENOMEM : 0;
	free(path);
	return rc;
}

int
rf_conv_ulimit(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	static const char *const names[] = { "core", "cpu", "data", "fsize",
	    "locks", "memlock", "msgqueue", "nice", "nofile", "nproc", "rss",
	    "rtprio", "rttime", "sigpending", "stack", NULL };
	char		 buf[RF_PART_MAX], lim[RF_PART_MAX], *kv[2], *sh[2];
	json_t		*a, *u;
	long long	 soft, hard;
	size_t		 i;
	int		 ok = 0;

	(void)body;
	if (rf_split(v, '=', buf, sizeof(buf), kv, 2) != 2)
		return rf_inval(err, errlen, "'%s' is not name=soft[:hard]", v);
	for (i = 0; names[i] != NULL; i++)
		if (strcmp(kv[0], names[i]) == 0)
			ok = 1;
	if (!ok)
		return rf_inval(err, errlen, "unknown ulimit in '%s'", v);
	ok = rf_split(kv[1], ':', lim, sizeof(lim), sh, 2);
	if (ok < 1 || rf_parse_int(sh[0], &soft) < 0 ||
	    (ok == 2 && rf_parse_int(sh[1], &hard) < 0))
		return rf_inval(err, errlen, "'%s' is not name=soft[:hard]", v);
	if (ok == 1)
		hard = soft;
	if (soft > hard && hard != -1)
		return rf_inval(err, errlen, "soft limit above hard in '%s'",
		    v);
	if ((a = rf_array(dst, "Ulimits")) == NULL)
		return -ENOMEM;
	/* A repeated name replaces the earlier one, as docker run does. */
	json_array_foreach(a, i, u) {
		if (strcmp(json_string_value(json_object_get(u,
		    "Name")) != NULL ?
		    json_string_value(json_object_get(u, "Name")) : "",
		    kv[0]) == 0) {
			json_array_remove(a, i);
			break;
		}
	}
	u = json_pack("{s:s,s:I,s:I}", "Name", kv[0], "Soft",
	    (json_int_t)soft, "Hard", (json_int_t)hard);
	return u == NULL || json_array_append_new(a, u) < 0 ? -ENOMEM : 0;
}

static bool
rf_device_mode(const char *m)
{
	size_t	n = strlen(m);

	return n > 0 && n <= 3 && strspn(m, "rwm") == n;
}

int
rf_conv_device(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	char		 buf[RF_PART_MAX], *p[3];
	const char	*host, *ctr, *mode = "rwm";
	json_t		*a, *d;
	int		 n;

	(void)body;
	if ((n = rf_split(v, ':', buf, sizeof(buf), p, 3)) < 1)
		return rf_inval(err, errlen, "'%s' is not "
		    "host[:container[:perms]]", v);
	host = ctr = p[0];
	if (n == 2 && rf_device_mode(p[1]))
		mode = p[1];
	else if (n >= 2)
		ctr = p[1];
	if (n == 3)
		mode = p[2];
	if (host[0] != '/' || ctr[0] != '/' || !rf_device_mode(mode))
		return rf_inval(err, errlen, "'%s' is not "
		    "host[:container[:perms]]", v);
	if ((a = rf_array(dst, "Devices")) == NULL)
		return -ENOMEM;
	d = json_pack("{s:s,s:s,s:s}", "PathOnHost", host, "PathInContainer",
	    ctr, "CgroupPermissions", mode);
	return d == NULL || json_array_append_new(a, d) < 0 ? -ENOMEM : 0;
}

int
rf_conv_volume(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	char	 buf[RF_PART_MAX], *p[3];
	json_t	*o;
	int	 n;

	if ((n = rf_split(v, ':', buf, sizeof(buf), p, 3)) < 1 ||
	    p[0][0] == '\0')
		return rf_inval(err, errlen, "'%s' is not "
		    "[host-path-or-volume:]container-path[:options]", v);
	if (n == 1) {
		/* An anonymous volume. */
		if (p[0][0] != '/')
			return rf_inval(err, errlen, "'%s' is not an absolute "
			    "path", v);
		if ((o = rf_object(body, "Volumes")) == NULL)
			return -ENOMEM;
		return json_object_set_new(o, p[0], json_object()) < 0 ?
		    -ENOMEM : 0;
	}
	if (p[1][0] != '/')
		return rf_inval(err, errlen, "container path in '%s' is not "
		    "absolute", v);
	if (n == 3 && strspn(p[2], "rwozZ,sharedslaveprivatencpyist") !=
	    strlen(p[2]))
		return rf_inval(err, errlen, "bad options in '%s'", v);
	if ((o = rf_array(dst, "Binds")) == NULL)
		return -ENOMEM;
	return json_array_append_new(o, json_string(v)) < 0 ? -ENOMEM : 0;
}

int
rf_conv_gpus(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	char		 val[RF_PART_MAX], buf[RF_PART_MAX], *p[32], *q;
	json_t		*a, *req, *caps, *ids;
	long long	 count = 0;
	size_t		 len;
	int		 n, i, rc = -ENOMEM;

	(void)body;
	len = strlen(v);
	if (len >= 2 && v[0] == '"' && v[len - 1] == '"') {
		snprintf(val, sizeof(val), "%.*s", (int)(len - 2), v + 1);
		v = val;
	}
	req = json_pack("{s:s,s:I,s:[],s:[]}", "Driver", "", "Count",
	    (json_int_t)0, "DeviceIDs", "Capabilities");
	caps = json_array();
	if (req == NULL || caps == NULL)
		goto fail;
	ids = json_object_get(req, "DeviceIDs");
	if (strcmp(v, "all") == 0) {
		count = -1;
	} else if (rf_parse_int(v, &count) == 0) {
		if (count < 1)
			goto bad;
	} else if (strncmp(v, "device=", 7) == 0) {
		/* "device=0,1": the rest is a list of ids. */
		if ((n = rf_split(v + 7, ',', buf, sizeof(buf), p, 32)) < 1)
			goto bad;
		for (i = 0; i < n; i++)
			if (*p[i] == '\0' || json_array_append_new(ids,
			    json_string(p[i])) < 0)
				goto bad;
	} else {
		if ((n = rf_split(v, ',', buf, sizeof(buf), p, 32)) < 1)
			goto bad;
		for (i = 0; i < n; i++) {
			if ((q = strchr(p[i], '=')) == NULL)
				goto bad;
			*q++ = '\0';
			if (strcmp(p[i], "count") == 0) {
				if (strcmp(q, "all") == 0)
					count = -1;
				else if (rf_parse_int(q, &count) < 0 ||
				    count < 1)
					goto bad;
			} else if (strcmp(p[i], "driver") == 0) {
				json_object_set_new(req, "Driver",
				    json_string(q));
			} else if (strcmp(p[i], "capabilities") == 0) {
				json_array_append_new(caps, json_string(q));
			} else if (strcmp(p[i], "device") == 0) {
				json_array_append_new(ids, json_string(q));
			} else {
				goto bad;
			}
		}
	}
	if (json_array_size(ids) > 0 && count != 0)
		goto bad;
	if (json_array_size(ids) == 0 && count == 0)
		count = -1;
	json_object_set_new(req, "Count", json_integer(count));
	if (json_array_size(caps) == 0)
		json_array_append_new(caps, json_string("gpu"));
	n = json_array_append_new(json_object_get(req, "Capabilities"), caps);
	caps = NULL;
	if (n < 0)
		goto fail;
	if ((a = rf_array(dst, "DeviceRequests")) == NULL ||
	    json_array_append_new(a, req) < 0) {
		req = NULL;
		goto fail;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not all, a count, or "
	    "count=|device=|driver=|capabilities= pairs", v);
	rc = -EINVAL;
fail:
	json_decref(caps);
	json_decref(req);
	return rc;
}
