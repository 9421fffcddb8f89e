/*
 * docker_fxbudget.c - the output that waiting commands may hold at once
 * (--driver-output-buffer), over all of them and split evenly between
 * the principals; see docker_fastexec.h.
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

/* n bytes as text: MiB, or KiB under one MiB. */
static void
size_text(uint64_t n, char *buf, size_t len)
{
	if (n >= 1 << 20)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(n >> 20));
	else
		snprintf(buf, len, "%llu KiB", (unsigned long long)(n >> 10));
}

/*
 * A named principal's charge of n, with k named principals holding
 * output (itself included): it holds at most an equal share, cap /
 * (k + 1), and all of them leave one such share free, used <= cap -
 * cap / (k + 1). So their shares sum to less than the bound, and a
 * principal that holds nothing yet finds some of it free however many
 * came before (cap / (k + 1) - cap / (k + 2) at least). 0, or -ENOBUFS
 * with err; under b->mu.
 */
static int
share_check(struct dock_fx_budget *b, struct dock_fx_holder *h, uint64_t n,
    char *err, size_t errlen)
{
	size_t k = msc_map_len(b->holders);
	uint64_t share = b->cap / (k + 1);
	char t[32];

	if (h->held + n > share) {
		size_text(share, t, sizeof(t));
		snprintf(err, errlen, "the command was killed: your commands "
		    "waiting on this driver hold your share of its bound on "
		    "their output, %s (--driver-output-buffer split evenly "
		    "between the %zu principal%s whose commands hold output "
		    "and one more); retry when some end, or write big output "
		    "to a file", t, k, k == 1 ? "" : "s");
		return -ENOBUFS;
	}
	if (b->used + n > b->cap - share) {
		size_text(b->cap - share, t, sizeof(t));
		snprintf(err, errlen, "the command was killed: the commands "
		    "waiting on this driver hold all it keeps for the %zu "
		    "principal%s whose commands hold output, %s (one share of "
		    "--driver-output-buffer stays free for another); retry "
		    "when some end, or write big output to a file", k,
		    k == 1 ? "" : "s", t);
		return -ENOBUFS;
	}
	return 0;
}

int
dock_fx_charge_add(struct dock_fx_budget *b, const char *principal,
    struct dock_fx_charge *ch, uint64_t n, char *err, size_t errlen)
{
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
	if (ch->holder != NULL)
		rv = share_check(b, ch->holder, n, err, errlen);
	if (rv == 0 && b->used + n > b->cap) {
		snprintf(err, errlen, "the command was killed: the commands "
		    "waiting on this driver hold its bound on their output, "
		    "%llu MiB (--driver-output-buffer); retry when some end, "
		    "or write big output to a file",
		    (unsigned long long)(b->cap >> 20));
		rv = -ENOBUFS;
	} else if (rv == 0) {
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
