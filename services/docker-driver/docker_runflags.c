/*
 * docker_runflags.c - `docker run` flags onto a /containers/create body.
 *
 * One table row per flag: its names, whether it takes a value, where the
 * result goes (top level or HostConfig), the JSON key, and how the value
 * is converted. Converters for composite values (--mount, --device,
 * --ulimit, --gpus, sizes) live in docker_runflags_conv.c.
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

#include "docker_runflags.h"
#include "docker_runflags_int.h"

enum rf_kind {
	RF_BOOL,	/* key = true (or the given true/false) */
	RF_STR,		/* key = value */
	RF_INT,		/* key = integer */
	RF_SIZE,	/* key = bytes ("512m") */
	RF_SIZE_SWAP,	/* key = bytes, or -1 */
	RF_LIST,	/* key += [value] */
	RF_MAP,		/* key[k] = v from "k=v" */
	RF_CONV,	/* a converter from docker_runflags_conv.c */
};

struct rf_flag {
	const char	*name;		/* long name without "--" */
	const char	*alias;		/* second long name or NULL */
	char		 shortc;	/* one-letter name or 0 */
	enum rf_kind	 kind;
	bool		 host;		/* under HostConfig */
	const char	*key;
	rf_conv_fn	*conv;
};

static const struct rf_flag rf_flags[] = {
	{ "add-host", NULL, 0, RF_CONV, true, "ExtraHosts", rf_conv_add_host },
	{ "blkio-weight", NULL, 0, RF_INT, true, "BlkioWeight", NULL },
	{ "cap-add", NULL, 0, RF_LIST, true, "CapAdd", NULL },
	{ "cap-drop", NULL, 0, RF_LIST, true, "CapDrop", NULL },
	{ "cgroup-parent", NULL, 0, RF_STR, true, "CgroupParent", NULL },
	{ "cgroupns", NULL, 0, RF_STR, true, "CgroupnsMode", NULL },
	{ "cpu-period", NULL, 0, RF_INT, true, "CpuPeriod", NULL },
	{ "cpu-quota", NULL, 0, RF_INT, true, "CpuQuota", NULL },
	{ "cpu-shares", NULL, 'c', RF_INT, true, "CpuShares", NULL },
	{ "cpus", NULL, 0, RF_CONV, true, "NanoCpus", rf_conv_cpus },
	{ "cpuset-cpus", NULL, 0, RF_STR, true, "CpusetCpus", NULL },
	{ "cpuset-mems", NULL, 0, RF_STR, true, "CpusetMems", NULL },
	{ "device", NULL, 0, RF_CONV, true, "Devices", rf_conv_device },
	{ "device-cgroup-rule", NULL, 0, RF_LIST, true,
	    "DeviceCgroupRules", NULL },
	{ "dns", NULL, 0, RF_LIST, true, "Dns", NULL },
	{ "dns-option", "dns-opt", 0, RF_LIST, true, "DnsOptions", NULL },
	{ "dns-search", NULL, 0, RF_LIST, true, "DnsSearch", NULL },
	{ "domainname", NULL, 0, RF_STR, false, "Domainname", NULL },
	{ "env", NULL, 'e', RF_CONV, false, "Env", rf_conv_env },
	{ "gpus", NULL, 0, RF_CONV, true, "DeviceRequests", rf_conv_gpus },
	{ "group-add", NULL, 0, RF_LIST, true, "GroupAdd", NULL },
	{ "hostname", NULL, 'h', RF_STR, false, "Hostname", NULL },
	{ "init", NULL, 0, RF_BOOL, true, "Init", NULL },
	{ "ipc", NULL, 0, RF_STR, true, "IpcMode", NULL },
	{ "label", NULL, 'l', RF_CONV, false, "Labels", rf_conv_label },
	{ "log-driver", NULL, 0, RF_CONV, true,
	    "LogConfig", rf_conv_log_driver },
	{ "log-opt", NULL, 0, RF_CONV, true, "LogConfig", rf_conv_log_opt },
	{ "memory", NULL, 'm', RF_SIZE, true, "Memory", NULL },
	{ "memory-reservation", NULL, 0, RF_SIZE, true,
	    "MemoryReservation", NULL },
	{ "memory-swap", NULL, 0, RF_SIZE_SWAP, true, "MemorySwap", NULL },
	{ "memory-swappiness", NULL, 0, RF_INT, true,
	    "MemorySwappiness", NULL },
	{ "mount", NULL, 0, RF_CONV, true, "Mounts", rf_conv_mount },
	{ "network", "net", 0, RF_STR, true, "NetworkMode", NULL },
	{ "oom-kill-disable", NULL, 0, RF_BOOL, true, "OomKillDisable", NULL },
	{ "oom-score-adj", NULL, 0, RF_INT, true, "OomScoreAdj", NULL },
	{ "pid", NULL, 0, RF_STR, true, "PidMode", NULL },
	{ "pids-limit", NULL, 0, RF_INT, true, "PidsLimit", NULL },
	{ "privileged", NULL, 0, RF_BOOL, true, "Privileged", NULL },
	{ "read-only", NULL, 0, RF_BOOL, true, "ReadonlyRootfs", NULL },
	{ "runtime", NULL, 0, RF_STR, true, "Runtime", NULL },
	{ "security-opt", NULL, 0, RF_LIST, true, "SecurityOpt", NULL },
	{ "shm-size", NULL, 0, RF_SIZE, true, "ShmSize", NULL },
	{ "stop-signal", NULL, 0, RF_STR, false, "StopSignal", NULL },
	{ "stop-timeout", NULL, 0, RF_INT, false, "StopTimeout", NULL },
	{ "storage-opt", NULL, 0, RF_MAP, true, "StorageOpt", NULL },
	{ "sysctl", NULL, 0, RF_MAP, true, "Sysctls", NULL },
	{ "tmpfs", NULL, 0, RF_CONV, true, "Tmpfs", rf_conv_tmpfs },
	{ "ulimit", NULL, 0, RF_CONV, true, "Ulimits", rf_conv_ulimit },
	{ "user", NULL, 'u', RF_STR, false, "User", NULL },
	{ "userns", NULL, 0, RF_STR, true, "UsernsMode", NULL },
	{ "uts", NULL, 0, RF_STR, true, "UTSMode", NULL },
	{ "volume", NULL, 'v', RF_CONV, true, "Binds", rf_conv_volume },
	{ "workdir", NULL, 'w', RF_STR, false, "WorkingDir", NULL },
};

/* Flags that would take the container out of the server's hands. */
static const char *const rf_managed[] = {
	"--rm", "-d", "--detach", "--name", "-i", "--interactive", "-t",
	"--tty", "--entrypoint", "--restart", NULL
};

#define RF_NFLAGS	(sizeof(rf_flags) / sizeof(rf_flags[0]))

static bool
rf_is_managed(const char *name)
{
	size_t	i;

	for (i = 0; rf_managed[i] != NULL; i++)
		if (strcmp(name, rf_managed[i]) == 0)
			return true;
	/* Clusters of managed one-letter flags: -it, -dit, -ti... */
	if (name[0] == '-' && name[1] != '-' && name[1] != '\0' &&
	    strspn(name + 1, "dit") == strlen(name + 1))
		return true;
	return false;
}

static void
rf_unsupported(const char *name, char *err, size_t errlen)
{
	size_t	i, o;
	int	n;

	n = snprintf(err, errlen, "unsupported --docker-run-flag '%s'; "
	    "supported: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return;
	o = (size_t)n;
	for (i = 0; i < RF_NFLAGS && o < errlen; i++) {
		n = snprintf(err + o, errlen - o, "%s--%s", i > 0 ? ", " : "",
		    rf_flags[i].name);
		if (n < 0)
			return;
		o += (size_t)n;
	}
}

/* Finds the flag for a name such as "--memory" or "-m". */
static const struct rf_flag *
rf_lookup(const char *name)
{
	size_t	i;

	for (i = 0; i < RF_NFLAGS; i++) {
		if (name[1] == '-') {
			if (strcmp(name + 2, rf_flags[i].name) == 0 ||
			    (rf_flags[i].alias != NULL &&
			    strcmp(name + 2, rf_flags[i].alias) == 0))
				return &rf_flags[i];
		} else if (name[2] == '\0' && rf_flags[i].shortc != 0 &&
		    name[1] == rf_flags[i].shortc) {
			return &rf_flags[i];
		}
	}
	return NULL;
}

static int
rf_bool_value(const char *flag, const char *v, bool *out, char *err,
    size_t errlen)
{
	if (v == NULL || strcmp(v, "true") == 0 || strcmp(v, "1") == 0) {
		*out = true;
		return 0;
	}
	if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0) {
		*out = false;
		return 0;
	}
	snprintf(err, errlen, "--docker-run-flag '%s': '%s' is not true or "
	    "false", flag, v);
	return -EINVAL;
}

static int
rf_apply_one(const struct rf_flag *f, const char *flag, const char *v,
    json_t *body, char *err, size_t errlen)
{
	json_t		*dst = body, *o;
	const char	*eq;
	char		*k;
	long long	 num;
	bool		 b;
	int		 rc;

	if (f->host && (dst = rf_object(body, "HostConfig")) == NULL)
		return -ENOMEM;
	switch (f->kind) {
	case RF_BOOL:
		if ((rc = rf_bool_value(flag, v, &b, err, errlen)) < 0)
			return rc;
		rc = json_object_set_new(dst, f->key, json_boolean(b));
		break;
	case RF_STR:
		rc = json_object_set_new(dst, f->key, json_string(v));
		break;
	case RF_INT:
		if ((rc = rf_parse_int(v, &num)) < 0)
			goto bad;
		rc = json_object_set_new(dst, f->key, json_integer(num));
		break;
	case RF_SIZE_SWAP:
		if (strcmp(v, "-1") == 0) {
			rc = json_object_set_new(dst, f->key, json_integer(-1));
			break;
		}
		/* FALLTHROUGH */
	case RF_SIZE:
		if ((rc = rf_parse_size(v, &num)) < 0)
			goto bad;
		rc = json_object_set_new(dst, f->key, json_integer(num));
		break;
	case RF_LIST:
		if ((o = rf_array(dst, f->key)) == NULL)
			return -ENOMEM;
		rc = json_array_append_new(o, json_string(v));
		break;
	case RF_MAP:
		if ((eq = strchr(v, '=')) == NULL || eq == v)
			goto bad;
		if ((o = rf_object(dst, f->key)) == NULL)
			return -ENOMEM;
		if ((k = strndup(v, (size_t)(eq - v))) == NULL)
			return -ENOMEM;
		rc = json_object_set_new(o, k, json_string(eq + 1));
		free(k);
		break;
	case RF_CONV:
		if ((rc = f->conv(v, body, dst, err, errlen)) == -EINVAL) {
			/* Prefix the converter's detail with the flag. */
			char	detail[512];

			snprintf(detail, sizeof(detail), "%s", err);
			snprintf(err, errlen, "--docker-run-flag '%s': %s",
			    flag, detail);
		}
		return rc;
	default:
		return -EINVAL;
	}
	return rc < 0 ? -ENOMEM : 0;
bad:
	snprintf(err, errlen, "--docker-run-flag '%s': invalid value '%s'",
	    flag, v);
	return -EINVAL;
}

/*
 * Splits one flag into its name and value: "--f=v", "--f v", "-f v",
 * "-f=v" and "-fv". The value may also be the next element of `flags`
 * (as the docker CLI accepts); *used_next says so.
 */
static int
rf_apply_flag(const char *const *flags, size_t n, size_t *ip, json_t *body,
    char *err, size_t errlen)
{
	const struct rf_flag	*f;
	const char		*arg = flags[*ip], *sep, *v = NULL, *next;
	char			 name[64];
	size_t			 nlen;

	while (*arg == ' ' || *arg == '\t')
		arg++;
	if (arg[0] != '-' || arg[1] == '\0') {
		snprintf(err, errlen, "--docker-run-flag '%s' is not a flag",
		    arg);
		return -EINVAL;
	}
	if (arg[1] == '-') {
		nlen = strcspn(arg, "= \t");
		sep = arg + nlen;
	} else {
		nlen = 2;
		sep = arg + 2;
	}
	if (nlen >= sizeof(name))
		nlen = sizeof(name) - 1;
	memcpy(name, arg, nlen);
	name[nlen] = '\0';
	if (*sep == '=')
		v = sep + 1;
	else if (*sep == ' ' || *sep == '\t')
		v = sep + strspn(sep, " \t");
	else if (*sep != '\0')
		v = sep;	/* "-fvalue" */
	if (rf_is_managed(name) || (arg[1] != '-' && rf_is_managed(arg))) {
		snprintf(err, errlen, "--docker-run-flag '%s' is managed by "
		    "the server and cannot be set", rf_is_managed(name) ?
		    name : arg);
		return -EINVAL;
	}
	if ((f = rf_lookup(name)) == NULL) {
		rf_unsupported(name, err, errlen);
		return -EINVAL;
	}
	if (f->kind == RF_BOOL)
		return rf_apply_one(f, name, v, body, err, errlen);
	if (v == NULL && *ip + 1 < n) {
		next = flags[*ip + 1];
		if (next[0] != '-' || (next[1] >= '0' && next[1] <= '9')) {
			v = next;
			(*ip)++;
		}
	}
	if (v == NULL || *v == '\0') {
		snprintf(err, errlen, "--docker-run-flag '%s' needs a value "
		    "(write '%s=VALUE')", name, name);
		return -EINVAL;
	}
	return rf_apply_one(f, name, v, body, err, errlen);
}

int
dock_runflags_apply(const char *const *flags, size_t n, json_t *body,
    char *err, size_t errlen)
{
	char	dummy[1];
	size_t	i;
	int	rc;

	if (err == NULL || errlen == 0) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (!json_is_object(body)) {
		snprintf(err, errlen, "create body is not an object");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (flags[i] == NULL) {
			snprintf(err, errlen, "--docker-run-flag is NULL");
			return -EINVAL;
		}
		if ((rc = rf_apply_flag(flags, n, &i, body, err, errlen)) < 0)
			return rc;
	}
	return 0;
}
