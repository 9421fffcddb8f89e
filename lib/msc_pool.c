#include "msc_pool.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct job {
	msc_job_fn fn;
	void *arg;
};

struct msc_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t *threads;
	int nthreads;
	struct job *ring;
	size_t cap, head, len;
	bool stopping;
};

static void *
worker(void *arg)
{
	struct msc_pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->len == 0 && !p->stopping)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->len == 0)
			break;
		struct job j = p->ring[p->head];
		p->head = (p->head + 1) % p->cap;
		p->len--;
		pthread_mutex_unlock(&p->mu);
		j.fn(j.arg);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
msc_pool_new(int nthreads, size_t max_queued, struct msc_pool **pp)
{
	struct msc_pool *p;

	if (nthreads < 1 || max_queued < 1)
		return -EINVAL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	p->cap = max_queued;
	p->ring = calloc(max_queued, sizeof(*p->ring));
	p->threads = calloc((size_t)nthreads, sizeof(*p->threads));
	if (p->ring == NULL || p->threads == NULL) {
		free(p->ring);
		free(p->threads);
		free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (int i = 0; i < nthreads; i++) {
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		if (pthread_create(&p->threads[i], &attr, worker, p) != 0) {
			pthread_attr_destroy(&attr);
			break;
		}
		pthread_attr_destroy(&attr);
		p->nthreads++;
	}
	if (p->nthreads == 0) {
		msc_pool_free(p);
		return -EAGAIN;
	}
	*pp = p;
	return 0;
}

int
msc_pool_submit(struct msc_pool *p, msc_job_fn fn, void *arg)
{
	int rv = 0;

	pthread_mutex_lock(&p->mu);
	if (p->stopping)
		rv = -ESHUTDOWN;
	else if (p->len == p->cap)
		rv = -EAGAIN;
	else {
		p->ring[(p->head + p->len) % p->cap] = (struct job){ fn, arg };
		p->len++;
		pthread_cond_signal(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return rv;
}

bool
msc_pool_free(struct msc_pool *p)
{
	struct timespec until;

	if (p == NULL)
		return true;
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += MSC_POOL_STOP_WAIT_S;
	for (int i = 0; i < p->nthreads; i++) {
		if (pthread_timedjoin_np(p->threads[i], NULL, &until) != 0) {
			/* A job still blocks (a long command): leave it. */
			for (int j = i; j < p->nthreads; j++)
				pthread_detach(p->threads[j]);
			return false;
		}
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	free(p->threads);
	free(p->ring);
	free(p);
	return true;
}
