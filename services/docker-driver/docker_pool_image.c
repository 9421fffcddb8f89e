/*
 * docker_pool_image.c - which image a taken pool container must run,
 * known without asking the engine at each take: a watcher thread follows
 * the engine's image events (GET /events, type image). Any image event
 * (a pull, build, tag, untag, load, removal) makes the next one who asks
 * inspect the image again; so does every ask while the watcher does not
 * follow the engine (not yet connected, or its stream broke), as every
 * take did before. The refill threads ask after each refill, so a take
 * finds the answer ready. Docker only: Podman 4.3's events did not show
 * a rebuilt tag before the next take (integration/pool on Podman), so
 * there every take asks.
 */
#include "docker_driver_int.h"
#include "docker_pool.h"
#include "docker_pool_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docker_api_int.h"
#include "msc_log.h"

#define IMAGE_EVENTS_PATH \
	"/events?filters=%7B%22type%22%3A%5B%22image%22%5D%7D"
#define WATCH_RETRY_MS 1000

/* The engine answered the events request: from now on nothing is missed. */
static void
watch_up(void *arg)
{
	struct dock_pool *p = arg;

	pthread_mutex_lock(&p->mu);
	p->image_watched = true;
	p->image_gen++;         /* what came before it was not seen */
	pthread_mutex_unlock(&p->mu);
}

/* Event lines: whatever they say, the image may have changed. */
static int
watch_event(const char *data, size_t len, void *arg)
{
	struct dock_pool *p = arg;

	(void)data;
	(void)len;
	pthread_mutex_lock(&p->mu);
	p->image_gen++;
	pthread_mutex_unlock(&p->mu);
	return 0;
}

static void *
watcher_main(void *arg)
{
	struct dock_pool *p = arg;
	char err[DOCK_ERRLEN];
	bool warned = false;

	while (!p->image_watch_stop) {
		struct dock_http_req req = { .method = "GET",
			.path = IMAGE_EVENTS_PATH, .timeout_ms = 0,
			.sink = watch_event, .sink_arg = p,
			.headers_done = watch_up,
			.cancel = &p->image_watch_stop };
		struct dock_http_res res;
		int rv = dock_http(p->d->engine, &req, &res, err, sizeof(err));

		pthread_mutex_lock(&p->mu);
		p->image_watched = false;
		pthread_mutex_unlock(&p->mu);
		if (rv == 0)
			dock_http_res_fini(&res);
		if (p->image_watch_stop)
			break;
		if (!warned)
			msc_log_info("warm pool: not following the engine's "
				     "image events (%s); each take asks for "
				     "the image until it can", rv != 0 ? err :
				     "the stream ended");
		warned = true;
		for (int i = 0; i < WATCH_RETRY_MS / 100 &&
		    !p->image_watch_stop; i++)
			dock_sleep_ms(100);
	}
	return NULL;
}

int
dock_pool_image_start(struct dock_pool *p)
{
	if (pthread_create(&p->image_watcher, NULL, watcher_main, p) != 0)
		return -1;
	p->image_watching = true;
	return 0;
}

void
dock_pool_image_stop(struct dock_pool *p)
{
	if (!p->image_watching)
		return;
	p->image_watch_stop = true;
	pthread_join(p->image_watcher, NULL);
	p->image_watching = false;
	free(p->image_id);
	p->image_id = NULL;
}

/* The id of the image the configured name points to now, or NULL. */
static char *
inspect_image(struct dock_driver *d)
{
	char path[DOCK_PATH_MAX], err[DOCK_ERRLEN], *id = NULL;
	json_t *img = NULL;

	if (dock_path(path, sizeof(path), "/images/%s/json%s", dock_cfg(d->cfg)->image,
		"", err, sizeof(err)) < 0 ||
	    dock_get_json(d->engine, path, "inspect image", T_POOL_OP, &img,
		err, sizeof(err)) != 0)
		return NULL;
	if (json_string_value(json_object_get(img, "Id")) != NULL)
		id = strdup(json_string_value(json_object_get(img, "Id")));
	json_decref(img);
	return id;
}

char *
dock_pool_image_id(struct dock_pool *p)
{
	char *id = NULL;
	uint64_t gen;

	pthread_mutex_lock(&p->mu);
	if (p->image_watched && p->image_id != NULL &&
	    p->image_id_gen == p->image_gen)
		id = strdup(p->image_id);
	gen = p->image_gen;
	pthread_mutex_unlock(&p->mu);
	if (id != NULL)
		return id;
	if ((id = inspect_image(p->d)) == NULL)
		return NULL;
	pthread_mutex_lock(&p->mu);
	/* Kept only when no event came while it was asked. */
	if (p->image_gen == gen) {
		char *kept = strdup(id);

		if (kept != NULL) {
			free(p->image_id);
			p->image_id = kept;
			p->image_id_gen = gen;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return id;
}
