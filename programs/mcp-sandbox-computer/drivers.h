/*
 * drivers.h - the backends linked into the all-in-one program and the
 * command line: --backend NAME picks the driver service to start.
 */
#ifndef MSC_PROGRAM_DRIVERS_H
#define MSC_PROGRAM_DRIVERS_H

#include <stddef.h>
#include <stdio.h>

#include "msc_cfg.h"

struct driver_ops {
	const char *backend;
	/* Serves msc.v1.Driver on url; *hp is passed to stop(). */
	int (*start)(const struct msc_cfg *cfg, const char *url, void **hp);
	/* The command line's (it runs one command), when not start's. */
	int (*start_tool)(const struct msc_cfg *cfg, const char *url,
	    void **hp);
	void (*stop)(void *h);
	/* The operator's network commands (NULL: the backend has none). */
	int (*network)(void *h, const char *id, const char *mode, char *msg,
	    size_t msglen);
	int (*network_log)(const char *id, FILE *out);
};

/* The driver of cfg->backend, or NULL after a startup error. */
const struct driver_ops *drivers_find(const struct msc_cfg *cfg);

#endif /* MSC_PROGRAM_DRIVERS_H */
