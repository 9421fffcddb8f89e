/*
 * modal_cfg.h - the modal backend's part of the command line: its options
 * (modal_cfg.c's table), its tool description and its row.
 */
#ifndef MODAL_CFG_H
#define MODAL_CFG_H

#include <stddef.h>

#include "msc_backend.h"
#include "msc_cfg.h"

/* What the modal backend's options set (strings as struct msc_cfg's). */
struct modal_cfg {
	const char *modal_token_id, *modal_token_secret, *modal_app_name;
	const char *modal_cpu, *modal_memory, *gpu, *region, *sandbox_timeout;
	const char *modal_ports;        /* --modal-ports: tunnels (issue 30) */
	const char *image;              /* --image, as docker's */
};

extern const struct msc_cfg_table modal_cfg_table;
extern const struct msc_backend modal_backend; /* its row: cloud_backend.c */

/*
 * cfg's Modal settings (borrowed from cfg); all unset (zero) for a cfg
 * that no program with this backend parsed.
 */
const struct modal_cfg *modal_cfg(const struct msc_cfg *cfg);

/* The terminal_execute description (malloc'd), or NULL (no memory). */
char *modal_cfg_describe(const struct msc_cfg *cfg);

#endif /* MODAL_CFG_H */
