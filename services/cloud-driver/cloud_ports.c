/*
 * cloud_ports.c - the exposed ports of cloud computers (cloud_ports.h):
 * one list of rows (computer, sandbox, port) under one mutex, bounded.
 */
#include "cloud_ports.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "msc_driver.h"

struct row {
	TAILQ_ENTRY(row) link;
	char id[128];           /* a slug: the driver refuses longer ones */
	char sbx[128];
	uint16_t port;
};

TAILQ_HEAD(rows, row);

struct cloud_ports {
	pthread_mutex_t mu;
	struct rows rows;       /* in order of exposure */
	size_t n;
};

int
cloud_ports_new(struct cloud_ports **pp)
{
	struct cloud_ports *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return -ENOMEM;
	pthread_mutex_init(&p->mu, NULL);
	TAILQ_INIT(&p->rows);
	*pp = p;
	return 0;
}

void
cloud_ports_free(struct cloud_ports *p)
{
	struct row *r;

	if (p == NULL)
		return;
	while ((r = TAILQ_FIRST(&p->rows)) != NULL) {
		TAILQ_REMOVE(&p->rows, r, link);
		free(r);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

/* Drops id's rows, all (sbx NULL) or those of another sandbox than sbx. */
static void
drop_locked(struct cloud_ports *p, const char *id, const char *sbx)
{
	struct row *r, *next;

	for (r = TAILQ_FIRST(&p->rows); r != NULL; r = next) {
		next = TAILQ_NEXT(r, link);
		if (strcmp(r->id, id) != 0 ||
		    (sbx != NULL && strcmp(r->sbx, sbx) == 0))
			continue;
		TAILQ_REMOVE(&p->rows, r, link);
		p->n--;
		free(r);
	}
}

/* id's ports on sandbox sbx into *portsp (malloc'd, NULL when none). */
static int
ports_locked(struct cloud_ports *p, const char *id, const char *sbx,
    uint32_t **portsp, size_t *np)
{
	uint32_t *ports = NULL;
	size_t n = 0;
	struct row *r;

	TAILQ_FOREACH (r, &p->rows, link)
		if (strcmp(r->id, id) == 0 && strcmp(r->sbx, sbx) == 0)
			n++;
	if (n > 0 && (ports = calloc(n, sizeof(*ports))) == NULL)
		return -ENOMEM;
	n = 0;
	TAILQ_FOREACH (r, &p->rows, link)
		if (strcmp(r->id, id) == 0 && strcmp(r->sbx, sbx) == 0)
			ports[n++] = r->port;
	*portsp = ports;
	*np = n;
	return 0;
}

static struct row *
find_locked(struct cloud_ports *p, const char *id, uint16_t port)
{
	struct row *r;

	TAILQ_FOREACH (r, &p->rows, link)
		if (r->port == port && strcmp(r->id, id) == 0)
			return r;
	return NULL;
}

static size_t
count_locked(struct cloud_ports *p, const char *id)
{
	struct row *r;
	size_t n = 0;

	TAILQ_FOREACH (r, &p->rows, link)
		n += strcmp(r->id, id) == 0;
	return n;
}

int
cloud_ports_set(struct cloud_ports *p, const Msc__V1__SnapshotRequest *req,
    const char *sbx, const char *url, const char *note,
    Msc__V1__Preview *out, char *err, size_t errlen)
{
	const char *id = req->computer_id;
	uint16_t port = (uint16_t)req->port;
	struct row *r;
	int rv = 0;

	if (strlen(id) >= sizeof(r->id) || strlen(sbx) >= sizeof(r->sbx)) {
		snprintf(err, errlen, "computer or sandbox id too long");
		return -EINVAL;
	}
	pthread_mutex_lock(&p->mu);
	drop_locked(p, id, sbx);        /* an earlier sandbox's ports */
	r = find_locked(p, id, port);
	if (req->unexpose) {
		if (r == NULL) {
			pthread_mutex_unlock(&p->mu);
			snprintf(err, errlen, "Port %u of computer '%s' is not "
			    "exposed.", port, id);
			return -ENOENT;
		}
		TAILQ_REMOVE(&p->rows, r, link);
		p->n--;
		free(r);
	} else if (r == NULL) {
		if (count_locked(p, id) >= CLOUD_PORTS_PER_COMPUTER ||
		    p->n >= CLOUD_PORTS_MAX) {
			pthread_mutex_unlock(&p->mu);
			snprintf(err, errlen, "A computer exposes at most %d "
			    "ports at once (and this server %d): unexpose one "
			    "first.", CLOUD_PORTS_PER_COMPUTER,
			    CLOUD_PORTS_MAX);
			return -EDQUOT;
		}
		if ((r = calloc(1, sizeof(*r))) == NULL) {
			pthread_mutex_unlock(&p->mu);
			return -ENOMEM;
		}
		snprintf(r->id, sizeof(r->id), "%s", id);
		snprintf(r->sbx, sizeof(r->sbx), "%s", sbx);
		r->port = port;
		TAILQ_INSERT_TAIL(&p->rows, r, link);
		p->n++;
	}
	rv = ports_locked(p, id, sbx, &out->ports, &out->n_ports);
	pthread_mutex_unlock(&p->mu);
	out->port = port;
	out->computer_id = strdup(id);
	out->url = strdup(req->unexpose || url == NULL ? "" : url);
	out->note = strdup(note != NULL ? note : "");
	if (rv != 0 || out->computer_id == NULL || out->url == NULL ||
	    out->note == NULL) {
		msc_preview_fini(out);
		return -ENOMEM;
	}
	return 0;
}

int
cloud_ports_fill(struct cloud_ports *p, Msc__V1__Computer *c)
{
	int rv;

	if (p == NULL || c->computer_id == NULL || c->sandbox_id == NULL)
		return 0;
	free(c->exposed_ports);
	c->exposed_ports = NULL;
	c->n_exposed_ports = 0;
	pthread_mutex_lock(&p->mu);
	rv = ports_locked(p, c->computer_id, c->sandbox_id, &c->exposed_ports,
	    &c->n_exposed_ports);
	pthread_mutex_unlock(&p->mu);
	return rv;
}

int
cloud_ports_fill_list(struct cloud_ports *p, Msc__V1__ComputerList *l)
{
	int rv = 0;

	for (size_t i = 0; rv == 0 && i < l->n_computers; i++)
		rv = cloud_ports_fill(p, l->computers[i]);
	return rv;
}

void
cloud_ports_forget(struct cloud_ports *p, const char *id)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	drop_locked(p, id, NULL);
	pthread_mutex_unlock(&p->mu);
}

void
cloud_ports_moved(struct cloud_ports *p, const char *id, const char *sbx)
{
	struct row *r;

	if (p == NULL || sbx == NULL || strlen(sbx) >= sizeof(r->sbx))
		return;
	pthread_mutex_lock(&p->mu);
	TAILQ_FOREACH (r, &p->rows, link)
		if (strcmp(r->id, id) == 0)
			snprintf(r->sbx, sizeof(r->sbx), "%s", sbx);
	pthread_mutex_unlock(&p->mu);
}
