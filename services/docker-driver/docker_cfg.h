/*
 * docker_cfg.h - the docker backend's part of the command line: its
 * options (docker_cfg.c's table), their defaults and checks, its tool
 * description, and its rows for the programs that serve it.
 */
#ifndef DOCKER_CFG_H
#define DOCKER_CFG_H

#include <stddef.h>

#include "msc_backend.h"
#include "msc_cfg.h"

/* What the docker backend's options set (strings as struct msc_cfg's). */
struct dock_cfg {
	const char *engine;             /* docker or podman */
	const char *docker_host;
	const char *image;
	const char *runtime;            /* --runtime NAME, or NULL */
	const char *cpu;
	const char *memory;
	const char *disk_quota;         /* --disk-quota SIZE, per computer */
	const char **run_flags;         /* --docker-run-flag */
	size_t n_run_flags;
	long driver_creations;          /* creations at once */
	const char *driver_output_buffer; /* SIZE: waiting commands' output */
	long warm_pool;                 /* ready containers; -1: default */
	long warm_pool_max;             /* what a burst grows it to */
	long warm_pool_shrink_after;    /* s without a miss, per step down */
	const char *proxy_dns;          /* --proxy-dns-server */
	const char **proxy_creds;       /* --proxy-credential */
	size_t n_proxy_creds;
	const char *proxy_cred_file;    /* --proxy-credential-file */
	const char *preview_domain;     /* --preview-domain (issue 30) */
	const char *preview_listen;     /* --preview-listen HOST:PORT */
};

extern const struct msc_cfg_table dock_cfg_table;
extern const struct msc_backend dock_backend; /* its row: docker_backend.c */
extern const struct msc_program dock_program;   /* msc-docker-driver */

/*
 * cfg's docker settings (borrowed from cfg); all unset (zero) for a cfg
 * that no program with the docker backend parsed.
 */
const struct dock_cfg *dock_cfg(const struct msc_cfg *cfg);

/* The terminal_execute description (malloc'd), or NULL (no memory). */
char *dock_cfg_describe(const struct msc_cfg *cfg);

#endif /* DOCKER_CFG_H */
