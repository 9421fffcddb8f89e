/*
 * e2b_cfg.h - the e2b backend's part of the command line: its options
 * (e2b_cfg.c's table), its tool description and its row.
 */
#ifndef E2B_CFG_H
#define E2B_CFG_H

#include <stddef.h>

#include "msc_backend.h"
#include "msc_cfg.h"

/* What the e2b backend's options set (strings as struct msc_cfg's). */
struct e2b_cfg {
	const char *e2b_api_key, *e2b_template, *e2b_sandbox_timeout;
	const char **e2b_metadata, **e2b_env;
	size_t n_e2b_metadata, n_e2b_env;
};

extern const struct msc_cfg_table e2b_cfg_table;
extern const struct msc_backend e2b_backend; /* its row: cloud_backend.c */

/*
 * cfg's E2B settings (borrowed from cfg); all unset (zero) for a cfg
 * that no program with this backend parsed.
 */
const struct e2b_cfg *e2b_cfg(const struct msc_cfg *cfg);

/* The terminal_execute description (malloc'd), or NULL (no memory, or a
 * template of the operator's own, which no text fits). */
char *e2b_cfg_describe(const struct msc_cfg *cfg);

#endif /* E2B_CFG_H */
