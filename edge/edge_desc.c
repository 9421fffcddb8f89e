/*
 * edge_desc.c - the tool description, fetched once in the background.
 */
#include "edge_desc.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "msc_log.h"
#include "tools.h"

/* Each ask waits this long, so a stop is noticed as soon. */
#define ASK_MS 1000

struct edge_desc {
	const struct msc_cfg *cfg;
	struct msc_client *session;
	pthread_t thread;
	bool threaded;
	pthread_mutex_t mu;             /* guards text, given_up, stopping */
	pthread_cond_t cv;
	char *text;                     /* owned, once known */
	bool given_up;                  /* the session refused for good */
	bool stopping;
};

static bool
stopping(struct edge_desc *d)
{
	bool s;

	pthread_mutex_lock(&d->mu);
	s = d->stopping;
	pthread_mutex_unlock(&d->mu);
	return s;
}

static void *
fetch(void *arg)
{
	struct edge_desc *d = arg;
	char *backend_text = NULL, *text = NULL;
	char err[512];
	int rv = -EIO;

	while (!stopping(d)) {
		rv = tools_fetch_description(d->session, ASK_MS, &backend_text,
		    err, sizeof(err));
		if (rv != -EAGAIN)
			break;
		nanosleep(&(struct timespec){ 0, 200000000 }, NULL);
	}
	if (rv == 0) {
		text = tools_description(d->cfg, backend_text);
		free(backend_text);
	} else if (rv != -EAGAIN)
		msc_log_err("cannot get the tool description: %s", err);
	pthread_mutex_lock(&d->mu);
	d->text = text;
	d->given_up = text == NULL;
	pthread_cond_broadcast(&d->cv);
	pthread_mutex_unlock(&d->mu);
	return NULL;
}

int
edge_desc_start(const struct msc_cfg *cfg, struct msc_client *session,
    struct edge_desc **dp)
{
	struct edge_desc *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return -ENOMEM;
	d->cfg = cfg;
	d->session = session;
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->cv, NULL);
	if (cfg->tool_instruction_override != NULL) {
		if ((d->text = tools_description(cfg, NULL)) == NULL) {
			edge_desc_stop(d);
			return -ENOMEM;
		}
	} else if (pthread_create(&d->thread, NULL, fetch, d) != 0) {
		edge_desc_stop(d);
		return -EAGAIN;
	} else
		d->threaded = true;
	*dp = d;
	return 0;
}

const char *
edge_desc_get(struct edge_desc *d, int wait_ms)
{
	struct timespec until;
	const char *text;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&d->mu);
	while (d->text == NULL && !d->given_up)
		if (pthread_cond_timedwait(&d->cv, &d->mu, &until) != 0)
			break;
	text = d->text;
	pthread_mutex_unlock(&d->mu);
	return text;
}

void
edge_desc_stop(struct edge_desc *d)
{
	if (d == NULL)
		return;
	pthread_mutex_lock(&d->mu);
	d->stopping = true;
	pthread_mutex_unlock(&d->mu);
	if (d->threaded)
		pthread_join(d->thread, NULL);
	free(d->text);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
}
