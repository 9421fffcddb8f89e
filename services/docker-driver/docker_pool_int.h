/* docker_pool_int.h - state shared by the warm pool's files. */
#ifndef DOCK_POOL_INT_H
#define DOCK_POOL_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <jansson.h>

#define POOL_MAX 256
#define POOL_THREADS 8
#define T_POOL_OP 30000

struct pool_ctr {
	char cid[65];
	char name[128];
	json_t *ctr;            /* its inspect JSON (owned) */
	bool helper;
	uint64_t answered_ms;   /* its helper's last answer (under mu) */
	bool checking;          /* being asked again (recheck, under mu) */
};

struct dock_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int base;               /* --warm-pool (0: off) */
	int cap;                /* --warm-pool-max, at least base */
	int target;             /* base..cap: grown by misses, shrunk by time */
	uint64_t resized_ms;    /* the last miss or shrink */
	uint64_t shrink_ms;     /* --warm-pool-shrink-after, in ms */
	uint64_t missed_ms;     /* the last miss */
	bool in_burst;          /* since a miss (docker_pool_size.c) */
	int burst_asked;        /* computers asked for in this burst */
	int limit;              /* --driver-creations */
	struct pool_ctr *ready[POOL_MAX];
	int n_ready;
	int filling;            /* refills under way */
	int waiting_takes;      /* takes waiting for one (wait_refill) */
	int cold;               /* cold creations under way */
	bool stopping;
	/*
	 * Engine work held back (refills, renames) while the computer taken
	 * last runs its first command, until it ends or hold_until_ms, so
	 * that command does not share the cores with a container's start.
	 */
	uint64_t hold_until_ms;
	char hold_name[128];    /* that computer's container name */
	int n_threads;
	pthread_t threads[POOL_THREADS];
	struct dock_driver *d;
	const struct dock_pool_computers *computers;    /* docker_pool.h */
	/* docker_pool_rename.c: taken containers still to be renamed. */
	STAILQ_HEAD(, pool_rename) renames;
	pthread_t renamer;
	bool renaming;          /* the renamer thread runs */
	/* docker_pool_image.c: the image id, kept while events say nothing. */
	pthread_t image_watcher;
	bool image_watching;    /* the watcher thread runs */
	volatile bool image_watch_stop;
	bool image_watched;     /* its event stream is open (under mu) */
	uint64_t image_gen;     /* image events seen (under mu) */
	char *image_id;         /* as of image_id_gen; owned (under mu) */
	uint64_t image_id_gen;
};

struct pool_rename {
	char cid[65];
	char name[128];         /* kilntainer-<id> */
	STAILQ_ENTRY(pool_rename) link; /* in the pool's renames */
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
/*
 * With p->mu held: whether a piece of engine work waits (a first command
 * runs and a container is still ready), *ms how long at most. *since is
 * the caller's: 0 before its first ask, set by the first that holds, so
 * that one piece waits POOL_HOLD_MS at most in all; reset when not held.
 */
bool dock_pool_held(const struct dock_pool *p, uint64_t *since, int64_t *ms);
/* Holds engine work back for the first command of `name`, just taken
 * (takes p->mu). */
void dock_pool_hold_for(struct dock_pool *p, const char *name);

/*
 * docker_pool_image.c: starts and stops the thread that follows the
 * engine's image events; dock_pool_image_id is the id the image name
 * points to now (the kept one when no event came since it was asked,
 * else asked from the engine), NULL when the engine does not say; the
 * caller frees it. Takes p->mu.
 */
int dock_pool_image_start(struct dock_pool *p);
void dock_pool_image_stop(struct dock_pool *p);
char *dock_pool_image_id(struct dock_pool *p);

/* docker_pool_size.c, all with p->mu held but dock_pool_missed. */
/* Waits on p->cv at most ms (-1: without a bound). */
void dock_pool_wait_ms(struct dock_pool *p, int64_t ms);
/*
 * Steps the target down when its time came; returns a waiting container
 * beyond the target (to remove) or NULL, and in *next_ms the time until
 * the next step (-1: none due).
 */
struct pool_ctr *dock_pool_shrink(struct dock_pool *p, int64_t *next_ms);
/*
 * A new computer took a waiting container (hit) or found none (a miss:
 * the target grows by one, and a burst opens or goes on): during a burst
 * the target grows to what the burst asked for. Takes p->mu.
 */
void dock_pool_asked(struct dock_pool *p, bool hit);


#endif /* DOCK_POOL_INT_H */
