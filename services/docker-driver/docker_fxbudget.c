/*
 * docker_fxbudget.c - the output that waiting commands may hold at once
 * (--driver-output-buffer), over all of them and per principal; see
 * docker_fastexec.h.
 */
#include "docker_fastexec.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_map.h"

/* A principal's output held, while some charge of its own counts it. */
struct dock_fx_holder {
	uint64_t held;
	unsigned charges;       /* charges that point here */
	char principal[];
};

struct dock_fx_budget {
	pthread_mutex_t mu;     /* guards all below (workers give back) */
	uint64_t cap, used;
	struct msc_map *holders; /* principal -> struct dock_fx_holder, owned */
};

int
dock_fx_budget_new(uint64_t cap, struct dock_fx_budget **bp)
{
	struct dock_fx_budget *b = calloc(1, sizeof(*b));
	int rv;

	*bp = NULL;
	if (b == NULL)
		return -ENOMEM;
	if ((rv = msc_map_new(&b->holders)) != 0) {
		free(b);
		return rv;
	}
	if ((rv = pthread_mutex_init(&b->mu, NULL)) != 0) {
		msc_map_free(b->holders);
		free(b);
		return -rv;
	}
	b->cap = cap;
	*bp = b;
	return 0;
}

void
dock_fx_budget_free(struct dock_fx_budget *b)
{
	if (b == NULL)
		return;
	msc_map_free_owned(b->holders);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

/* The principal's holder, made on its first charge; under b->mu. */
static struct dock_fx_holder *
holder_of(struct dock_fx_budget *b, const char *principal)
{
	struct dock_fx_holder *h = msc_map_get(b->holders, principal);
	size_t len = strlen(principal);

	if (h != NULL)
		return h;
	if ((h = calloc(1, sizeof(*h) + len + 1)) == NULL)
		return NULL;
	memcpy(h->principal, principal, len + 1);
	if (msc_map_put(b->holders, principal, h) != 0) {
		free(h);
		return NULL;
	}
	return h;
}

int
dock_fx_charge_add(struct dock_fx_budget *b, const char *principal,
    struct dock_fx_charge *ch, uint64_t n, char *err, size_t errlen)
{
	uint64_t share = b->cap / 4 * 3;
	int rv = 0;

	pthread_mutex_lock(&b->mu);
	if (ch->budget == NULL) {
		ch->budget = b;
		if (principal[0] != '\0') {
			if ((ch->holder = holder_of(b, principal)) == NULL) {
				ch->budget = NULL;
				pthread_mutex_unlock(&b->mu);
				snprintf(err, errlen, "exec: out of memory");
				return -ENOMEM;
			}
			ch->holder->charges++;
		}
	}
	if (ch->holder != NULL && ch->holder->held + n > share) {
		snprintf(err, errlen, "the command was killed: your commands "
		    "waiting on this driver hold your share of its bound on "
		    "their output, %llu MiB (three quarters of "
		    "--driver-output-buffer); retry when some end, or write "
		    "big output to a file", (unsigned long long)(share >> 20));
		rv = -ENOBUFS;
	} else if (b->used + n > b->cap) {
		snprintf(err, errlen, "the command was killed: the commands "
		    "waiting on this driver hold its bound on their output, "
		    "%llu MiB (--driver-output-buffer); retry when some end, "
		    "or write big output to a file",
		    (unsigned long long)(b->cap >> 20));
		rv = -ENOBUFS;
	} else {
		b->used += n;
		ch->bytes += n;
		if (ch->holder != NULL)
			ch->holder->held += n;
	}
	pthread_mutex_unlock(&b->mu);
	return rv;
}

void
dock_fx_charge_release(struct dock_fx_charge *ch)
{
	struct dock_fx_budget *b = ch->budget;
	struct dock_fx_holder *h = ch->holder;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->used -= ch->bytes;
	if (h != NULL) {
		h->held -= ch->bytes;
		if (--h->charges == 0) {
			(void)msc_map_del(b->holders, h->principal);
			free(h);
		}
	}
	pthread_mutex_unlock(&b->mu);
	memset(ch, 0, sizeof(*ch));
}
