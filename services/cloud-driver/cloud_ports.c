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
	char owner[128];        /* the principal who exposed it, or "" */
	uint16_t port;
	uint64_t seq;           /* when exposed or moved (cloud_ports_mark) */
};

TAILQ_HEAD(rows, row);

struct cloud_ports {
	pthread_mutex_t mu;
	struct rows rows;       /* in order of exposure */
	size_t n;
	uint64_t seq;           /* stamps of rows */
	/* Sandboxes a reset, restart or delete is ending, newest last: an
	 * exposure on one of them is refused (it would be a dead URL). */
	char retired[CLOUD_PORTS_RETIRED][128];
	size_t n_retired;
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

static size_t
count_owner_locked(struct cloud_ports *p, const char *owner)
{
	struct row *r;
	size_t n = 0;

	TAILQ_FOREACH (r, &p->rows, link)
		n += strcmp(r->owner, owner) == 0;
	return n;
}

static bool
retired_locked(struct cloud_ports *p, const char *sbx)
{
	for (size_t i = 0; i < CLOUD_PORTS_RETIRED; i++)
		if (strcmp(p->retired[i], sbx) == 0)
			return true;
	return false;
}

int
cloud_ports_set(struct cloud_ports *p, const Msc__V1__SnapshotRequest *req,
    const char *sbx, const char *url, const char *note,
    Msc__V1__Preview *out, char *err, size_t errlen)
{
	const char *id = req->computer_id;
	const char *owner = req->principal != NULL ? req->principal : "";
	uint16_t port = (uint16_t)req->port;
	struct row *r;
	int rv = 0;

	if (strlen(id) >= sizeof(r->id) || strlen(sbx) >= sizeof(r->sbx) ||
	    strlen(owner) >= sizeof(r->owner)) {
		snprintf(err, errlen, "computer, sandbox or principal id too "
		    "long");
		return -EINVAL;
	}
	pthread_mutex_lock(&p->mu);
	if (retired_locked(p, sbx)) {
		/* A reset or delete of the computer ended this sandbox
		 * while the caller looked: its rows are not to be touched. */
		pthread_mutex_unlock(&p->mu);
		snprintf(err, errlen, "Computer '%s' is being reset, restarted "
		    "or deleted: try again when it is done.", id);
		return -ESTALE;
	}
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
		/* One principal cannot take the whole server's share. */
		if (owner[0] != '\0' && count_owner_locked(p, owner) >=
		    CLOUD_PORTS_PER_PRINCIPAL) {
			pthread_mutex_unlock(&p->mu);
			snprintf(err, errlen, "A principal exposes at most %d "
			    "ports at once: unexpose one first.",
			    CLOUD_PORTS_PER_PRINCIPAL);
			return -EDQUOT;
		}
		if ((r = calloc(1, sizeof(*r))) == NULL) {
			pthread_mutex_unlock(&p->mu);
			return -ENOMEM;
		}
		snprintf(r->id, sizeof(r->id), "%s", id);
		snprintf(r->sbx, sizeof(r->sbx), "%s", sbx);
		snprintf(r->owner, sizeof(r->owner), "%s", owner);
		r->port = port;
		r->seq = ++p->seq;
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

uint64_t
cloud_ports_mark(struct cloud_ports *p)
{
	uint64_t seq;

	if (p == NULL)
		return 0;
	pthread_mutex_lock(&p->mu);
	seq = p->seq;
	pthread_mutex_unlock(&p->mu);
	return seq;
}

/* Whether list l has computer id in sandbox sbx. */
static bool
listed(const Msc__V1__ComputerList *l, const char *id, const char *sbx)
{
	for (size_t i = 0; i < l->n_computers; i++) {
		const Msc__V1__Computer *c = l->computers[i];

		if (c->computer_id != NULL && c->sandbox_id != NULL &&
		    strcmp(c->computer_id, id) == 0 &&
		    strcmp(c->sandbox_id, sbx) == 0)
			return true;
	}
	return false;
}

int
cloud_ports_fill_list(struct cloud_ports *p, Msc__V1__ComputerList *l,
    bool complete, uint64_t mark)
{
	struct row *r, *next;
	int rv = 0;

	if (p != NULL && complete) {
		/* Rows of sandboxes gone meanwhile (a provider's timeout, a
		 * delete elsewhere) would hold their share for good. */
		pthread_mutex_lock(&p->mu);
		for (r = TAILQ_FIRST(&p->rows); r != NULL; r = next) {
			next = TAILQ_NEXT(r, link);
			if (r->seq > mark || listed(l, r->id, r->sbx))
				continue;
			TAILQ_REMOVE(&p->rows, r, link);
			p->n--;
			free(r);
		}
		pthread_mutex_unlock(&p->mu);
	}
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
cloud_ports_retire(struct cloud_ports *p, const char *sbx)
{
	if (p == NULL || sbx == NULL || sbx[0] == '\0' ||
	    strlen(sbx) >= sizeof(p->retired[0]))
		return;
	pthread_mutex_lock(&p->mu);
	if (!retired_locked(p, sbx)) {
		snprintf(p->retired[p->n_retired % CLOUD_PORTS_RETIRED],
		    sizeof(p->retired[0]), "%s", sbx);
		p->n_retired++;
	}
	pthread_mutex_unlock(&p->mu);
}

void
cloud_ports_moved(struct cloud_ports *p, const char *id, const char *old,
    const char *sbx)
{
	struct row *r, *next;

	if (p == NULL || sbx == NULL || strlen(sbx) >= sizeof(r->sbx))
		return;
	pthread_mutex_lock(&p->mu);
	for (r = TAILQ_FIRST(&p->rows); r != NULL; r = next) {
		next = TAILQ_NEXT(r, link);
		if (strcmp(r->id, id) != 0)
			continue;
		if (old == NULL || strcmp(r->sbx, old) != 0) {
			/* Not the sandbox that was reset: an earlier
			 * computer's of this id (deleted, timed out). */
			TAILQ_REMOVE(&p->rows, r, link);
			p->n--;
			free(r);
			continue;
		}
		snprintf(r->sbx, sizeof(r->sbx), "%s", sbx);
		r->seq = ++p->seq;
	}
	pthread_mutex_unlock(&p->mu);
}

/* One label: [A-Za-z0-9-], 1 to 63 characters, no '-' at either end. */
static bool
label_ok(const char *s, size_t n)
{
	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

bool
cloud_ports_host_ok(const char *host)
{
	const char *s = host, *dot;

	if (host == NULL || strlen(host) > CLOUD_PORTS_HOST_MAX)
		return false;
	for (;;) {
		dot = strchr(s, '.');
		if (!label_ok(s, dot != NULL ? (size_t)(dot - s) : strlen(s)))
			return false;
		if (dot == NULL)
			return true;
		s = dot + 1;
	}
}
