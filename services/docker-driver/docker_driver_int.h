/* docker_driver_int.h - state shared by the docker-driver's files. */
#ifndef DOCK_DRIVER_INT_H
#define DOCK_DRIVER_INT_H

#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#include "docker_api.h"
#include "docker_driver.h"
#include "driver.pb-c.h"
#include "msc_cfg.h"
#include "msc_map.h"
#include "msc_pool.h"
#include "msc_rpc.h"

#define DOCK_NAME_PREFIX "kilntainer-"
#define DOCK_ERRLEN 1024

struct dock_job;

/* Per computer: the exec queue that keeps its commands serial. */
struct dock_lane {
	bool busy;
	struct dock_job *head, *tail;
};

struct dock_driver {
	const struct msc_cfg *cfg;
	struct dock_engine *engine;
	struct msc_pool *pool;
	struct msc_server *srv;
	json_t *create_template;    /* body built from the flags, once */
	pthread_mutex_t mu;         /* guards lanes and validated */
	struct msc_map *lanes;      /* computer id -> struct dock_lane */
	bool validated;             /* engine answered and image present */
};

/* Blocking operations, run on the pool (docker_computers.c). */
int dock_validate(struct dock_driver *d, char *err, size_t errlen);
int dock_create(struct dock_driver *d, const char *id, bool temporary,
    Msc__V1__Computer *out, char *err, size_t errlen);
int dock_attach(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int dock_restart(struct dock_driver *d, const char *id,
    Msc__V1__Computer *out, char *err, size_t errlen);
int dock_reset(struct dock_driver *d, const char *id, Msc__V1__Computer *out,
    char *err, size_t errlen);
int dock_stop(struct dock_driver *d, const char *id, bool remove, char *err,
    size_t errlen);
int dock_list(struct dock_driver *d, Msc__V1__ComputerList *out, char *err,
    size_t errlen);
int dock_exec(struct dock_driver *d, const Msc__V1__ExecRequest *req,
    Msc__V1__ExecResult *out, char *err, size_t errlen);

/* Builds the create body template from cfg; prints startup errors. */
int dock_build_template(const struct msc_cfg *cfg, json_t **outp);

/* Frees the strings dock_create/attach/restart/list put in a Computer. */
void dock_computer_fini(Msc__V1__Computer *c);
void dock_list_fini(Msc__V1__ComputerList *l);

#endif /* DOCK_DRIVER_INT_H */
