#include "msc_fleet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct msc_fleet {
	size_t n;
	char ids[MSC_FLEET_MAX][64];
	char urls[MSC_FLEET_MAX][256];  /* for msc_fleet_reopen */
	struct msc_client *clients[MSC_FLEET_MAX];
};

/* Dials driver `id` at url; over TLS its certificate must say so. */
static int
open_driver(const char *url, const char *id, struct msc_client **cp)
{
	char role[96];

	snprintf(role, sizeof(role), "driver:%s", id);
	return msc_client_open(url, role, cp);
}

int
msc_fleet_reopen(const struct msc_fleet *of, struct msc_fleet **fp)
{
	struct msc_fleet *f = calloc(1, sizeof(*f));
	int rv;

	if (f == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < of->n; i++) {
		memcpy(f->ids[i], of->ids[i], sizeof(f->ids[i]));
		memcpy(f->urls[i], of->urls[i], sizeof(f->urls[i]));
		if ((rv = open_driver(f->urls[i], f->ids[i],
			 &f->clients[i])) != 0) {
			msc_fleet_close(f);
			return rv;
		}
		f->n = i + 1;
	}
	*fp = f;
	return 0;
}

int
msc_fleet_open(const struct msc_cfg *cfg, const char *default_url,
    struct msc_fleet **fp)
{
	struct msc_fleet *f = calloc(1, sizeof(*f));
	size_t n = cfg->n_driver_urls;
	int rv;

	if (f == NULL)
		return -ENOMEM;
	if (n > MSC_FLEET_MAX) {
		msc_cfg_error("at most %d drivers", MSC_FLEET_MAX);
		free(f);
		return -EINVAL;
	}
	if (n == 0) {
		snprintf(f->ids[0], sizeof(f->ids[0]), "%s", cfg->driver_id);
		snprintf(f->urls[0], sizeof(f->urls[0]), "%s",
		    default_url != NULL ? default_url : "");
		if ((rv = open_driver(default_url, f->ids[0],
			 &f->clients[0])) != 0) {
			free(f);
			return rv;
		}
		f->n = 1;
		*fp = f;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const char *url;

		(void)msc_cfg_driver(cfg, i, f->ids[i], sizeof(f->ids[i]), &url);
		snprintf(f->urls[i], sizeof(f->urls[i]), "%s", url);
		for (size_t j = 0; j < i; j++)
			if (strcmp(f->ids[i], f->ids[j]) == 0) {
				msc_cfg_error("two drivers are named '%s'",
				    f->ids[i]);
				msc_fleet_close(f);
				return -EINVAL;
			}
		if ((rv = open_driver(url, f->ids[i], &f->clients[i])) != 0) {
			msc_cfg_error("invalid --driver-url '%s'", url);
			msc_fleet_close(f);
			return rv;
		}
		f->n = i + 1;
	}
	*fp = f;
	return 0;
}

void
msc_fleet_close(struct msc_fleet *f)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < f->n; i++)
		msc_client_close(f->clients[i]);
	free(f);
}

void
msc_fleet_shutdown(struct msc_fleet *f)
{
	for (size_t i = 0; i < f->n; i++)
		msc_client_shutdown(f->clients[i]);
}

size_t
msc_fleet_size(const struct msc_fleet *f)
{
	return f->n;
}

const char *
msc_fleet_id(const struct msc_fleet *f, size_t i)
{
	return f->ids[i];
}

struct msc_client *
msc_fleet_client(const struct msc_fleet *f, size_t i)
{
	return f->clients[i];
}

int
msc_fleet_index(const struct msc_fleet *f, const char *id)
{
	if (id == NULL || *id == '\0')
		return 0;
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->ids[i], id) == 0)
			return (int)i;
	return -1;
}
