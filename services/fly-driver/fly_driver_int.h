/* fly_driver_int.h - state shared by the fly-driver's files. */
#ifndef FLY_DRIVER_INT_H
#define FLY_DRIVER_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "driver.pb-c.h"
#include "fly_api.h"
#include "fly_conv.h"
#include "fly_driver.h"
#include "msc_cfg.h"
#include "msc_driver_known.h"
#include "msc_http.h"
#include "msc_rpc.h"

#define FLY_ERRLEN 1024
#define FLY_APPLEN 128


/* What the driver remembers of a computer's Machine. */
struct fly_known {
	char machine_id[64];
	bool temporary;
};

struct fly_driver {
	const struct msc_cfg *cfg;
	struct fly_guest guest;
	const char *base_url;        /* the Machines API */
	struct msc_driver *svc;      /* the Driver service (lib) */
	struct msc_known *known;     /* computer id -> struct fly_known */
	pthread_mutex_t setup_mu;    /* one setup at a time */
	struct fly_api *api;         /* set once by fly_setup */
	char app[FLY_APPLEN];
	struct msc_lease_renewer *lease; /* temporaries' leases (fly_lease.c) */
};

/* Credentials and the app, once (fly_setup.c). */
int fly_setup(struct fly_driver *d, char *err, size_t errlen);

/* Machine helpers (fly_machines.c). */
int fly_call(struct fly_driver *d, const char *method, const char *path,
    json_t *body, int timeout_ms, bool retry, long *statusp, json_t **respp,
    char *err, size_t errlen);
int fly_find(struct fly_driver *d, const char *id, json_t **mp, char *err,
    size_t errlen);
int fly_machine_get(struct fly_driver *d, const char *mid, json_t **mp,
    char *err, size_t errlen);
int fly_machine_id(struct fly_driver *d, const char *id,
    struct fly_known *k, char *err, size_t errlen);
void fly_forget(struct fly_driver *d, const char *id);
void fly_remember(struct fly_driver *d, const char *id, const char *mid,
    bool temporary);
int fly_exec_once(struct fly_driver *d, const char *mid, json_t *argv,
    const char *stdin_data, size_t stdin_len, unsigned timeout_s,
    json_t **replyp, char *err, size_t errlen);
int fly_died(struct fly_driver *d, const char *id, const char *mid,
    char *err, size_t errlen);

/* Blocking operations, run on the pool (fly_computers.c). */
int fly_create(struct fly_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen);
/* fly_create recording principal (msc_principal.h) in the Machine's
 * metadata; fly_owner reads it ("" for none; -ENOENT: no such computer). */
int fly_create_owned(struct fly_driver *d, const char *id, bool temporary,
    const char *principal, Msc__V1__Computer *out, char *err, size_t errlen);
int fly_owner(struct fly_driver *d, const char *id, char *tag, size_t taglen,
    char *err, size_t errlen);
int fly_attach(struct fly_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int fly_restart(struct fly_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int fly_reset(struct fly_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int fly_stop(struct fly_driver *d, const char *id, bool remove, char *err,
    size_t errlen);
int fly_list(struct fly_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen);

/* Commands (fly_exec.c). */
int fly_exec(struct fly_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen);

#endif /* FLY_DRIVER_INT_H */
