/*
 * wasm_cfg.h - the WebAssembly backends' (wasm, go_busybox) part of the
 * command line: their options (wasm_cfg.c's table, shared), their tool
 * descriptions and their rows for the programs that serve them.
 */
#ifndef WASM_CFG_H
#define WASM_CFG_H

#include <stddef.h>

#include "msc_backend.h"
#include "msc_cfg.h"

/* What the wasm backends' options set (strings as struct msc_cfg's). */
struct wasm_cfg {
	const char *wasm_path, *wasm_max_memory, *wasm_fuel;
	const char *disk_quota;         /* --disk-quota SIZE, per computer */
	long output_limit;              /* --output-limit, as the session's */
};

extern const struct msc_cfg_table wasm_cfg_table;
/* The rows that put the backends in a program (wasm_backend.c). */
extern const struct msc_backend wasm_backend, busybox_backend;
extern const struct msc_program wasm_program;   /* msc-wasm-driver */
/* Why each serves no preview URLs (the agent reads it). */
extern const char wasm_preview_refusal[], busybox_preview_refusal[];

/* The network flags refused: prints and returns -EINVAL, or 0. */
int wasm_cfg_validate(const struct msc_cfg *cfg);

/*
 * cfg's wasm settings (borrowed from cfg); all unset (zero) for a cfg
 * that no program with these backends parsed.
 */
const struct wasm_cfg *wasm_cfg(const struct msc_cfg *cfg);

/* The terminal_execute description of cfg->backend (malloc'd), or NULL
 * (no memory). */
char *wasm_cfg_describe(const struct msc_cfg *cfg);

#endif /* WASM_CFG_H */
