/*
 * session_principal.c - who owns each session, handle and task, and what
 * each owner may hold: the principal the edge authenticated (a name of
 * --tokens-file; empty for the one principal of a server with a single
 * token or none). A named principal holds at most its share of the
 * server's sessions, handles, calls in flight and tasks (the
 * --max-principal-* flags), so that one under its share is served even
 * when another is at its own; the unnamed principal is alone and bound
 * by the server's limits only, as before principals existed.
 *
 * A principal's record calls nothing of the service's: the sessions'
 * records (session_records.c) count against it. Everything here is
 * under s->mu.
 */
#include "session_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sess_principal *
sess_principal_get_locked(struct sess_service *s, const char *name)
{
	struct sess_principal *pr;

	if (name == NULL)
		name = "";
	if (strlen(name) > SESS_PRINCIPAL_MAX)
		return NULL;
	if ((pr = msc_map_get(s->principals, name)) != NULL)
		return pr;
	if ((pr = calloc(1, sizeof(*pr))) == NULL)
		return NULL;
	snprintf(pr->name, sizeof(pr->name), "%s", name);
	msc_principal_tag(name, pr->tag);
	TAILQ_INIT(&pr->lru);
	if (msc_map_put(s->principals, pr->name, pr) != 0) {
		free(pr);
		return NULL;
	}
	return pr;
}

void
sess_principal_release_locked(struct sess_service *s,
    struct sess_principal *pr)
{
	if (pr == NULL || pr->sessions > 0 || pr->tasks > 0 ||
	    pr->calls > 0 || pr->pins > 0)
		return;
	(void)msc_map_del(s->principals, pr->name);
	free(pr);
}

bool
sess_principal_is(const struct sess_principal *pr, const char *name)
{
	return strcmp(pr->name, name != NULL ? name : "") == 0;
}

long
sess_share(const struct sess_principal *pr, long share)
{
	return pr->name[0] == '\0' || share <= 0 ? -1 : share;
}
