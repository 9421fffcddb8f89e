/*
 * docker_preview_resolve.c - the preview listener's engine questions
 * (issue 30) off its poll loop: one thread asks the engine where a
 * capability's computer is (dock_preview_target) for the requests whose
 * address is not kept, so that a slow engine never stalls the other
 * connections. Questions and answers are bounded lists (one question per
 * connection at most, DOCK_RESOLVE_MAX in all); each answer wakes the
 * loop through a pipe.
 */
#include "docker_preview.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

struct item {
	STAILQ_ENTRY(item) link;
	struct dock_resolved a;
	char cap[DOCK_PREVIEW_CAP_LEN + 1];
	bool fresh;
};

STAILQ_HEAD(items, item);

struct dock_resolver {
	struct dock_preview *p;
	pthread_mutex_t mu;     /* guards asked, done, n, stop */
	pthread_cond_t cv;
	struct items asked, done;
	size_t n;               /* items in either list */
	bool stop;
	int wake[2];            /* an answer is in done */
	pthread_t thread;
};

static void *
resolver_main(void *arg)
{
	struct dock_resolver *r = arg;
	struct item *it;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->stop && STAILQ_EMPTY(&r->asked))
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop)
			break;
		it = STAILQ_FIRST(&r->asked);
		STAILQ_REMOVE_HEAD(&r->asked, link);
		pthread_mutex_unlock(&r->mu);
		/* Blocking: one engine call at most, with its deadline. */
		it->a.rv = dock_preview_target(r->p, it->cap, it->fresh,
		    it->a.ip, sizeof(it->a.ip), &it->a.port);
		pthread_mutex_lock(&r->mu);
		STAILQ_INSERT_TAIL(&r->done, it, link);
		(void)!write(r->wake[1], "x", 1);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int
dock_resolver_start(struct dock_preview *p, struct dock_resolver **rp)
{
	struct dock_resolver *r = calloc(1, sizeof(*r));
	int rv;

	if (r == NULL)
		return -ENOMEM;
	r->p = p;
	STAILQ_INIT(&r->asked);
	STAILQ_INIT(&r->done);
	if (pipe2(r->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		rv = -errno;
		free(r);
		return rv;
	}
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if ((rv = pthread_create(&r->thread, NULL, resolver_main, r)) != 0) {
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		close(r->wake[0]);
		close(r->wake[1]);
		free(r);
		return -rv;
	}
	*rp = r;
	return 0;
}

int
dock_resolver_fd(const struct dock_resolver *r)
{
	return r->wake[0];
}

bool
dock_resolver_ask(struct dock_resolver *r, uint64_t serial, const char *cap,
    bool fresh)
{
	struct item *it;

	pthread_mutex_lock(&r->mu);
	if (r->n >= DOCK_RESOLVE_MAX || (it = calloc(1, sizeof(*it))) ==
	    NULL) {
		pthread_mutex_unlock(&r->mu);
		return false;
	}
	it->a.serial = serial;
	snprintf(it->cap, sizeof(it->cap), "%s", cap);
	it->fresh = fresh;
	STAILQ_INSERT_TAIL(&r->asked, it, link);
	r->n++;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return true;
}

bool
dock_resolver_answer(struct dock_resolver *r, struct dock_resolved *out)
{
	struct item *it;
	char drain[64];

	pthread_mutex_lock(&r->mu);
	if ((it = STAILQ_FIRST(&r->done)) == NULL) {
		while (read(r->wake[0], drain, sizeof(drain)) > 0)
			;
		pthread_mutex_unlock(&r->mu);
		return false;
	}
	STAILQ_REMOVE_HEAD(&r->done, link);
	r->n--;
	pthread_mutex_unlock(&r->mu);
	*out = it->a;
	free(it);
	return true;
}

void
dock_resolver_stop(struct dock_resolver *r)
{
	struct item *it;

	if (r == NULL)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	while ((it = STAILQ_FIRST(&r->asked)) != NULL) {
		STAILQ_REMOVE_HEAD(&r->asked, link);
		free(it);
	}
	while ((it = STAILQ_FIRST(&r->done)) != NULL) {
		STAILQ_REMOVE_HEAD(&r->done, link);
		free(it);
	}
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	close(r->wake[0]);
	close(r->wake[1]);
	free(r);
}
