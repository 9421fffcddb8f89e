/*
 * fly_cfg.h - the fly backend's part of the command line: its options
 * (fly_cfg.c's table) and their environment fallbacks, its tool
 * description, and its rows for the programs that serve it.
 */
#ifndef FLY_CFG_H
#define FLY_CFG_H

#include <stddef.h>

#include "msc_backend.h"
#include "msc_cfg.h"

/* What the fly backend's options set (strings as struct msc_cfg's). */
struct fly_cfg {
	const char *fly_cli, *fly_app, *fly_token, *fly_image, *fly_region;
	const char *fly_cpu_kind, *fly_cpus, *fly_memory, *fly_rootfs_size;
	const char *fly_api_url, *fly_org;
};

extern const struct msc_cfg_table fly_cfg_table;
/* The rows that put the backend in a program (fly_backend.c). */
extern const struct msc_backend fly_backend;
extern const struct msc_program fly_program;    /* msc-fly-driver */
/* Why the backend serves no preview URLs (the agent reads it). */
extern const char fly_preview_refusal[];

/* --network-allow and friends refused: prints and returns -EINVAL, or 0. */
int fly_cfg_validate(const struct msc_cfg *cfg);

/*
 * cfg's Fly settings (borrowed from cfg); all unset (zero) for a cfg
 * that no program with this backend parsed.
 */
const struct fly_cfg *fly_cfg(const struct msc_cfg *cfg);

/* The terminal_execute description (malloc'd), or NULL (no memory). */
char *fly_cfg_describe(const struct msc_cfg *cfg);

#endif /* FLY_CFG_H */
