/*
 * docker_runflags_mount.c - `--mount type=bind|volume|tmpfs,...` onto
 * HostConfig.Mounts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "docker_runflags_int.h"

#define RF_MOUNT_MAX	4096

static int
rf_mount_bool(const char *v, bool *out)
{
	if (v == NULL || strcmp(v, "true") == 0 || strcmp(v, "1") == 0) {
		*out = true;
		return 0;
	}
	if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* Applies one key[=value] of a --mount value to the Mount object m. */
static int
rf_mount_key(json_t *m, const char *k, const char *v, char *err,
    size_t errlen)
{
	json_t		*o;
	const char	*eq;
	char		*end, *kk;
	long long	 n;
	bool		 b;
	int		 rc;

	if (strcmp(k, "readonly") == 0 || strcmp(k, "ro") == 0) {
		if (rf_mount_bool(v, &b) < 0)
			goto bad;
		return json_object_set_new(m, "ReadOnly", json_boolean(b));
	}
	if (strcmp(k, "volume-nocopy") == 0) {
		if (rf_mount_bool(v, &b) < 0 ||
		    (o = rf_object(m, "VolumeOptions")) == NULL)
			goto bad;
		return json_object_set_new(o, "NoCopy", json_boolean(b));
	}
	if (strcmp(k, "bind-nonrecursive") == 0) {
		if (rf_mount_bool(v, &b) < 0 ||
		    (o = rf_object(m, "BindOptions")) == NULL)
			goto bad;
		return json_object_set_new(o, "NonRecursive", json_boolean(b));
	}
	if (v == NULL || *v == '\0')
		goto bad;
	if (strcmp(k, "type") == 0) {
		if (strcmp(v, "bind") != 0 && strcmp(v, "volume") != 0 &&
		    strcmp(v, "tmpfs") != 0)
			goto bad;
		return json_object_set_new(m, "Type", json_string(v));
	}
	if (strcmp(k, "source") == 0 || strcmp(k, "src") == 0)
		return json_object_set_new(m, "Source", json_string(v));
	if (strcmp(k, "target") == 0 || strcmp(k, "destination") == 0 ||
	    strcmp(k, "dst") == 0) {
		if (v[0] != '/')
			goto bad;
		return json_object_set_new(m, "Target", json_string(v));
	}
	if (strcmp(k, "consistency") == 0)
		return json_object_set_new(m, "Consistency", json_string(v));
	if (strcmp(k, "bind-propagation") == 0) {
		if ((o = rf_object(m, "BindOptions")) == NULL)
			return -ENOMEM;
		return json_object_set_new(o, "Propagation", json_string(v));
	}
	if (strcmp(k, "volume-driver") == 0) {
		if ((o = rf_object(m, "VolumeOptions")) == NULL ||
		    (o = rf_object(o, "DriverConfig")) == NULL)
			return -ENOMEM;
		return json_object_set_new(o, "Name", json_string(v));
	}
	if (strcmp(k, "volume-label") == 0 || strcmp(k, "volume-opt") == 0) {
		if ((eq = strchr(v, '=')) == NULL || eq == v)
			goto bad;
		if ((o = rf_object(m, "VolumeOptions")) == NULL)
			return -ENOMEM;
		if (strcmp(k, "volume-opt") == 0) {
			if ((o = rf_object(o, "DriverConfig")) == NULL ||
			    (o = rf_object(o, "Options")) == NULL)
				return -ENOMEM;
		} else if ((o = rf_object(o, "Labels")) == NULL) {
			return -ENOMEM;
		}
		if ((kk = strndup(v, (size_t)(eq - v))) == NULL)
			return -ENOMEM;
		rc = json_object_set_new(o, kk, json_string(eq + 1));
		free(kk);
		return rc;
	}
	if (strcmp(k, "tmpfs-size") == 0) {
		if (rf_parse_size(v, &n) < 0 ||
		    (o = rf_object(m, "TmpfsOptions")) == NULL)
			goto bad;
		return json_object_set_new(o, "SizeBytes", json_integer(n));
	}
	if (strcmp(k, "tmpfs-mode") == 0) {
		n = strtoll(v, &end, 8);
		if (*end != '\0' || n < 0 || n > 07777 ||
		    (o = rf_object(m, "TmpfsOptions")) == NULL)
			goto bad;
		return json_object_set_new(o, "Mode", json_integer(n));
	}
	snprintf(err, errlen, "unknown --mount key '%s'", k);
	return -EINVAL;
bad:
	snprintf(err, errlen, "bad --mount value for '%s'", k);
	return -EINVAL;
}

int
rf_conv_mount(const char *v, json_t *body, json_t *dst, char *err,
    size_t errlen)
{
	json_t		*m, *a;
	const char	*type, *src;
	char		 buf[RF_MOUNT_MAX], *p, *next, *eq;
	int		 rc;

	(void)body;
	if (snprintf(buf, sizeof(buf), "%s", v) >= (int)sizeof(buf)) {
		snprintf(err, errlen, "--mount value too long");
		return -EINVAL;
	}
	if ((m = json_object()) == NULL)
		return -ENOMEM;
	for (p = buf; p != NULL; p = next) {
		if ((next = strchr(p, ',')) != NULL)
			*next++ = '\0';
		if (*p == '\0')
			continue;
		if ((eq = strchr(p, '=')) != NULL)
			*eq++ = '\0';
		if ((rc = rf_mount_key(m, p, eq, err, errlen)) < 0) {
			if (rc != -EINVAL)
				rc = -ENOMEM;
			goto fail;
		}
	}
	if (json_object_get(m, "Type") == NULL &&
	    json_object_set_new(m, "Type", json_string("volume")) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	type = json_string_value(json_object_get(m, "Type"));
	src = json_string_value(json_object_get(m, "Source"));
	rc = -EINVAL;
	if (json_object_get(m, "Target") == NULL) {
		snprintf(err, errlen, "--mount needs target=<absolute path>");
		goto fail;
	}
	if (strcmp(type, "bind") == 0 && (src == NULL || src[0] != '/')) {
		snprintf(err, errlen, "a bind --mount needs source=<absolute "
		    "path>");
		goto fail;
	}
	if (strcmp(type, "tmpfs") == 0 && src != NULL) {
		snprintf(err, errlen, "a tmpfs --mount takes no source");
		goto fail;
	}
	if ((strcmp(type, "bind") != 0 && json_object_get(m, "BindOptions")) ||
	    (strcmp(type, "volume") != 0 && json_object_get(m,
	    "VolumeOptions")) || (strcmp(type, "tmpfs") != 0 &&
	    json_object_get(m, "TmpfsOptions"))) {
		snprintf(err, errlen, "--mount options do not match "
		    "type=%s", type);
		goto fail;
	}
	if ((a = rf_array(dst, "Mounts")) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	return json_array_append_new(a, m) < 0 ? -ENOMEM : 0;
fail:
	json_decref(m);
	return rc;
}
