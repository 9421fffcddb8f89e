/*
 * msc_cfg_tools.c - the tool groups an operator turns on (--tools, env
 * KILNTAINERS_TOOLS): a comma-separated list of the names below. A new
 * group is one line in `groups` and its bit in msc_cfg.h.
 */
#include "msc_cfg.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned bit;
} groups[] = {
	{ "terminal", MSC_TOOLS_TERMINAL },     /* always on */
	{ "lifecycle", MSC_TOOLS_LIFECYCLE },   /* ENABLE_LIFECYCLE_TOOLS */
	{ "processes", MSC_TOOLS_PROCESSES },   /* issue 28 */
	{ "files", MSC_TOOLS_FILES },           /* issue 29 */
	{ "snapshots", MSC_TOOLS_SNAPSHOTS },   /* issue 31 */
	{ "ports", MSC_TOOLS_PORTS },           /* issue 30 */
};

static int
group_bit(const char *name, size_t len, unsigned *bit)
{
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (strlen(groups[i].name) == len &&
		    strncmp(groups[i].name, name, len) == 0) {
			*bit = groups[i].bit;
			return 0;
		}
	return -ENOENT;
}

int
msc_cfg_tools_parse(struct msc_cfg *cfg)
{
	unsigned bits = MSC_TOOLS_TERMINAL;
	const char *p = cfg->tools;

	if (cfg->lifecycle_tools)
		bits |= MSC_TOOLS_LIFECYCLE;
	while (p != NULL && *p != '\0') {
		size_t len = strcspn(p, ", ");
		unsigned bit;

		if (len > 0 && group_bit(p, len, &bit) != 0) {
			char names[256] = "";

			for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]);
			    i++) {
				if (i > 0)
					strcat(names, ", ");
				strcat(names, groups[i].name);
			}
			msc_cfg_error("--tools: unknown tool group '%.*s' (the "
			    "groups: %s)", (int)(len > 64 ? 64 : len), p, names);
			return -EINVAL;
		}
		if (len > 0)
			bits |= bit;
		p += len;
		p += strspn(p, ", ");
	}
	if (cfg->max_background_processes < 1 ||
	    cfg->max_background_processes > 100000) {
		msc_cfg_error("--max-background-processes must be 1 to 100000.");
		return -EINVAL;
	}
	if (cfg->process_log_limit < 1024 ||
	    cfg->process_log_limit > (1L << 40)) {
		msc_cfg_error("--process-log-limit must be at least 1024 bytes.");
		return -EINVAL;
	}
	if (cfg->max_snapshots < 1 || cfg->max_snapshots > 100000) {
		msc_cfg_error("--max-snapshots (or KILNTAINERS_MAX_SNAPSHOTS) "
		    "must be 1 to 100000.");
		return -EINVAL;
	}
	if (cfg->max_principal_snapshots < 0 ||
	    cfg->max_principal_snapshots > 100000) {
		msc_cfg_error("--max-principal-snapshots (or "
		    "KILNTAINERS_MAX_PRINCIPAL_SNAPSHOTS) must be 0 to 100000 "
		    "(0: no share).");
		return -EINVAL;
	}
	cfg->tool_groups = bits;
	cfg->lifecycle_tools = (bits & MSC_TOOLS_LIFECYCLE) != 0;
	return 0;
}
