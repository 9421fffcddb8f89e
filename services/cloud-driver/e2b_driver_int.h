/* e2b_driver_int.h - state shared by the E2B backend's files. */
#ifndef E2B_DRIVER_INT_H
#define E2B_DRIVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>
#include <jansson.h>

#include "driver.pb-c.h"
#include "e2b_conv.h"
#include "cloud_ports.h"
#include "e2b_driver.h"
#include "msc_cfg.h"
#include "msc_driver_known.h"
#include "msc_http.h"
#include "cloud_snap.h"

#define E2B_ERRLEN 1024

/* What the driver remembers of a computer's sandbox. */
struct e2b_known {
	char sbx[128];
	char token[256];        /* envdAccessToken; "" when not secure */
	char domain[128];
	char envd_version[32];
	bool temporary;
	uint64_t refreshed_ms;
};

struct e2b_driver {
	const struct msc_cfg *cfg;
	char *api_url;          /* control plane, no trailing slash */
	char *sandbox_url;      /* envd override (E2B_SANDBOX_URL), or NULL */
	char *domain;           /* E2B_DOMAIN, default e2b.app */
	char *key_hdr;          /* "X-API-Key: ..." or NULL when missing */
	const char *template_id;
	long lifetime_s;
	json_t *metadata, *envs;
	struct msc_driver *svc;
	struct msc_known *known;        /* computer id -> struct e2b_known */
	struct msc_lease_renewer *lease; /* temporaries' timeouts (e2b_lease.c) */
	struct cloud_ports *ports;      /* exposed ports (e2b_ports.c) */
	struct cloud_snap snap;         /* snapshots (e2b_snapshot.c) */
};

/* The snapshot calls of E2B (e2b_snapshot.c), for cloud_snap_init. */
extern const struct cloud_snap_ops e2b_snap_ops;
/* Whether ref is an E2B snapshot id as we use one in a path. */
bool e2b_snap_ref_ok(const char *ref);
/*
 * Reads one of a snapshot's E2B names ("team/alias:tag", "alias:tag" or
 * "alias") into r (all but ref); false when it is not one of ours.
 */
bool e2b_snap_parse_name(const char *name, struct cloud_snap_rec *r);

/* One control-plane call under the key and a deadline (e2b_api.c). */
int e2b_api(struct e2b_driver *d, const char *method, const char *path,
    json_t *body, int timeout_ms, bool retry, json_t **respp,
    char *next, size_t nextlen, char *err, size_t errlen);

/* Sandboxes (e2b_sandboxes.c). */
int e2b_lookup(struct e2b_driver *d, const char *id, struct e2b_known *k,
    char *err, size_t errlen);
void e2b_forget(struct e2b_driver *d, const char *id);
int e2b_died(struct e2b_driver *d, const char *id, const char *sbx,
    char *err, size_t errlen);

int e2b_create(struct e2b_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen);
/* e2b_create recording principal (msc_principal.h) in the sandbox's
 * metadata; e2b_owner reads it ("" for none; -ENOENT: no such computer). */
int e2b_create_owned(struct e2b_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen);
int e2b_owner(struct e2b_driver *d, const char *id, char *tag, size_t taglen,
    char *err, size_t errlen);
/* e2b_create from template_id (a snapshot's, say), recording principal
 * when not "". */
int e2b_create_tpl(struct e2b_driver *d, const char *id, bool temporary,
    const char *template_id, const char *principal, Msc__V1__Computer *out,
    char *err, size_t errlen);
/* Computer id's sandbox, resumed when paused (*sp: a new reference). */
int e2b_running(struct e2b_driver *d, const char *id, json_t **sp, char *err,
    size_t errlen);
/* Kills sandbox s of computer id (gone already is fine) and forgets it. */
int e2b_kill(struct e2b_driver *d, const char *id, json_t *s, char *err,
    size_t errlen);
int e2b_attach(struct e2b_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int e2b_restart(struct e2b_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int e2b_reset(struct e2b_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int e2b_stop(struct e2b_driver *d, const char *id, bool remove, char *err,
    size_t errlen);
int e2b_list(struct e2b_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen);

/* Commands through envd's process API (e2b_exec.c). */
int e2b_exec(struct e2b_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen);
/* The running background processes, for Computer.processes_ended. */
int e2b_processes(void *be, const char *id);

/* Driver/ExposePort: the sandbox's own host for the port (e2b_ports.c). */
int e2b_expose_port(void *be, const Msc__V1__SnapshotRequest *req,
    Msc__V1__Preview *out, char *err, size_t errlen);

#endif /* E2B_DRIVER_INT_H */
