/*
 * drivers.h - the composition root's list of backends: every backend
 * this program links (--backend NAME picks the one whose driver service
 * it starts), the operator commands some of them add, and every program
 * of a split server (for split-args).
 */
#ifndef MSC_PROGRAM_DRIVERS_H
#define MSC_PROGRAM_DRIVERS_H

#include <stddef.h>
#include <stdio.h>

#include "msc_backend.h"
#include "msc_cfg.h"

/* mcp-sandbox-computer: every role, every backend. */
extern const struct msc_program drivers_program;

/* Every program of a split server, and their count. */
extern const struct msc_program *const drivers_split[];
extern const size_t drivers_nsplit;

/* What the operator command line does with a backend beyond its row. */
struct driver_ops {
	const struct msc_backend *backend;
	/* The command line's start (it runs one command); NULL: start. */
	int (*start_tool)(const struct msc_cfg *cfg, const char *url,
	    void **hp);
	/* The operator's network commands (NULL: the backend has none). */
	int (*network)(void *h, const char *id, const char *mode, char *msg,
	    size_t msglen);
	int (*network_log)(const char *id, FILE *out);
};

/* The command line's row of cfg->chosen (never NULL after a parse). */
const struct driver_ops *drivers_find(const struct msc_cfg *cfg);

#endif /* MSC_PROGRAM_DRIVERS_H */
