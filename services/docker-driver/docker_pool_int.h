/* docker_pool_int.h - state shared by the warm pool's files. */
#ifndef DOCK_POOL_INT_H
#define DOCK_POOL_INT_H

#include <pthread.h>
#include <stdbool.h>

#include <jansson.h>

#define POOL_MAX 256
#define POOL_THREADS 4
#define T_POOL_OP 30000

struct pool_ctr {
	char cid[65];
	char name[128];
	json_t *ctr;            /* its inspect JSON (owned) */
	bool helper;
};

struct dock_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int target;
	int limit;              /* --driver-creations */
	struct pool_ctr *ready[POOL_MAX];
	int n_ready;
	int filling;            /* refills under way */
	int cold;               /* cold creations under way */
	bool stopping;
	bool reaped;            /* an earlier run's containers removed */
	int n_threads;
	pthread_t threads[POOL_THREADS];
	struct dock_driver *d;
	/* docker_pool_rename.c: taken containers still to be renamed. */
	struct pool_rename *renames;
	pthread_t renamer;
	bool renaming;          /* the renamer thread runs */
};

struct pool_rename {
	char cid[65];
	char name[128];         /* kilntainer-<id> */
	struct pool_rename *next;
};

void dock_pool_ctr_free(struct pool_ctr *pc);
/* Removes a pool container (logging why, when given). */
void dock_pool_discard(struct dock_driver *d, struct pool_ctr *pc,
    const char *why);
/* Queues the rename of container cid to `name`; 0 or -ENOMEM. */
int dock_pool_rename_later(struct dock_pool *p, const char *cid,
    const char *name);
/* The renamer thread: renames in order, until stopped with none left. */
void *dock_pool_renamer_main(void *arg);


#endif /* DOCK_POOL_INT_H */
