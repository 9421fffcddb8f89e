/*
 * msc_backend.h - one backend, as the composition root lists it: its
 * --backend name, its option table, its startup validation and the
 * driver service it starts. Each backend's folder defines its rows
 * (services/NAME-driver/NAME_backend.c); a program lists the rows it serves
 * (struct msc_program), the all-in-one all of them
 * (programs/mcp-sandbox-computer/drivers.c). lib names no backend.
 */
#ifndef MSC_BACKEND_H
#define MSC_BACKEND_H

#include "msc_cfg.h"

/* What the edge may offer on a backend (its gates; the driver refuses
 * the rest itself). */
enum {
	MSC_BACKEND_HELPER = 1u << 0,    /* the exec helper: processes */
	MSC_BACKEND_FILES = 1u << 1,     /* file_read, file_write, ... */
	MSC_BACKEND_SNAPSHOTS = 1u << 2,
};

struct msc_backend {
	const char *name;                       /* --backend NAME */
	const struct msc_cfg_table *options;    /* may be another row's */
	/* Its checks when it is the one --backend names (the network
	 * flags it cannot honour, ...): prints and returns -EINVAL, or 0. */
	int (*validate)(const struct msc_cfg *cfg);
	/* Serves msc.v1.Driver on url; *hp is passed to stop(). */
	int (*start)(const struct msc_cfg *cfg, const char *url, void **hp);
	void (*stop)(void *h);
	unsigned caps;                          /* MSC_BACKEND_* */
	/* Why it serves no preview URLs (the agent reads it), or NULL. */
	const char *preview_refusal;
};

/*
 * Refuses --network-allow, --network-deny and the options named in
 * `extra` (NULL-terminated, checked with msc_cfg_given) with
 * "kilntainers: error: <why>" when any is given; returns -EINVAL or 0.
 * allow_ok: --network-allow alone is honoured (the backend maps it).
 */
int msc_backend_net_refuse(const struct msc_cfg *cfg, bool allow_ok,
    const char *const *extra, const char *why);

#endif /* MSC_BACKEND_H */
