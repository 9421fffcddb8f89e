/* msc_snapshot.c - snapshot ids and names (msc_snapshot.h). */
#include "msc_snapshot.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_map.h"
#include "msc_random.h"

bool
msc_snapshot_id_valid(const char *s)
{
	size_t n = strnlen(s, MSC_SNAPSHOT_ID_LEN + 1);

	return n == MSC_SNAPSHOT_ID_LEN &&
	    strncmp(s, MSC_SNAPSHOT_PREFIX, 5) == 0 &&
	    strspn(s + 5, "0123456789abcdef") == MSC_SNAPSHOT_HEX;
}

bool
msc_snapshot_name_valid(const char *s)
{
	size_t n = strnlen(s, MSC_SNAPSHOT_NAME_MAX + 1);

	return n <= MSC_SNAPSHOT_NAME_MAX &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		"0123456789 ._-") == n;
}

void
msc_snapshot_id_new(char out[MSC_SNAPSHOT_ID_LEN + 1])
{
	uint8_t b[MSC_SNAPSHOT_HEX / 2];

	msc_random_bytes(b, sizeof(b));
	memcpy(out, MSC_SNAPSHOT_PREFIX, 5);
	for (size_t i = 0; i < sizeof(b); i++) {
		out[5 + 2 * i] = "0123456789abcdef"[b[i] >> 4];
		out[5 + 2 * i + 1] = "0123456789abcdef"[b[i] & 15];
	}
	out[MSC_SNAPSHOT_ID_LEN] = '\0';
}

/* ---- pins --------------------------------------------------------------- */

struct msc_snap_pins {
	pthread_mutex_t mu;
	struct msc_map *uses;   /* id -> struct use */
	int making;             /* snapshots being made (msc_snap_reserve_as) */
	struct msc_map *making_by;      /* principal tag -> int, of making */
};

struct use {
	int n;                  /* restores and forks reading it; -1: deleting */
};

int
msc_snap_pins_new(struct msc_snap_pins **pp)
{
	struct msc_snap_pins *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return -ENOMEM;
	if (msc_map_new(&p->uses) != 0) {
		free(p);
		return -ENOMEM;
	}
	if (msc_map_new(&p->making_by) != 0) {
		msc_map_free(p->uses);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	*pp = p;
	return 0;
}

static void
free_use(void *arg, const char *key, void *value)
{
	(void)arg;
	(void)key;
	free(value);
}

void
msc_snap_pins_free(struct msc_snap_pins *p)
{
	if (p == NULL)
		return;
	msc_map_each(p->uses, free_use, NULL);
	msc_map_free(p->uses);
	msc_map_each(p->making_by, free_use, NULL);
	msc_map_free(p->making_by);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* A pin (pin: n + 1, refused while deleting) or the claim (n = -1,
 * refused while anything holds it). */
static int
change(struct msc_snap_pins *p, const char *id, bool pin)
{
	struct use *u;
	int rv = 0;

	pthread_mutex_lock(&p->mu);
	u = msc_map_get(p->uses, id);
	if (u != NULL && !pin)
		rv = -EBUSY;
	else if (u != NULL && u->n < 0)
		rv = -ENOENT;
	else if (u != NULL)
		u->n++;
	else if ((u = malloc(sizeof(*u))) == NULL)
		rv = -ENOMEM;
	else {
		u->n = pin ? 1 : -1;
		if (msc_map_put(p->uses, id, u) != 0) {
			free(u);
			rv = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return rv;
}

/* Drops one pin, or the claim; the entry goes at zero. */
static void
drop(struct msc_snap_pins *p, const char *id)
{
	struct use *u;

	pthread_mutex_lock(&p->mu);
	u = msc_map_get(p->uses, id);
	if (u != NULL && (u->n < 0 || --u->n == 0))
		free(msc_map_del(p->uses, id));
	pthread_mutex_unlock(&p->mu);
}

int
msc_snap_pin(struct msc_snap_pins *p, const char *id)
{
	return change(p, id, true);
}

void
msc_snap_unpin(struct msc_snap_pins *p, const char *id)
{
	drop(p, id);
}

int
msc_snap_claim(struct msc_snap_pins *p, const char *id)
{
	return change(p, id, false);
}

void
msc_snap_release(struct msc_snap_pins *p, const char *id)
{
	drop(p, id);
}

int
msc_snap_reserve_as(struct msc_snap_pins *p, const char *principal,
    size_t have, size_t mine, long max, long share, char *err,
    size_t errlen)
{
	bool shared = principal[0] != '\0' && share > 0;
	int *by = NULL, rv = 0;

	pthread_mutex_lock(&p->mu);
	if (shared)
		by = msc_map_get(p->making_by, principal);
	if (have + (size_t)p->making >= (size_t)max)
		rv = -EDQUOT;
	else if (shared && mine + (size_t)(by != NULL ? *by : 0) >=
	    (size_t)share)
		rv = -ENOSPC;   /* the share's, told apart below */
	else if (shared && by == NULL && ((by = calloc(1, sizeof(*by))) ==
	    NULL || msc_map_put(p->making_by, principal, by) != 0)) {
		free(by);
		rv = -ENOMEM;
	} else {
		p->making++;
		if (shared)
			(*by)++;
	}
	pthread_mutex_unlock(&p->mu);
	if (rv == -EDQUOT)
		snprintf(err, errlen, "This server keeps at most %ld snapshots "
		    "(--max-snapshots): delete one with snapshot_delete "
		    "first.", max);
	else if (rv == -ENOSPC) {
		snprintf(err, errlen, "You keep at most %ld snapshots "
		    "(--max-principal-snapshots): delete one of yours with "
		    "snapshot_delete first.", share);
		rv = -EDQUOT;
	} else if (rv == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	return rv;
}

void
msc_snap_unreserve_as(struct msc_snap_pins *p, const char *principal)
{
	int *by;

	pthread_mutex_lock(&p->mu);
	p->making--;
	if (principal[0] != '\0' &&
	    (by = msc_map_get(p->making_by, principal)) != NULL &&
	    --*by <= 0)
		free(msc_map_del(p->making_by, principal));
	pthread_mutex_unlock(&p->mu);
}
