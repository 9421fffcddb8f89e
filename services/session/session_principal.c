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
 * Every session is on two lists, least recently used first: the
 * server's and its principal's. When a table is full, the least recently
 * used session that costs nothing to drop (no computer, no call, no
 * task; never a sandbox handle, which ends by idle expiry only) is ended
 * to make room. Everything here is under s->mu.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"

/* Sessions looked at, from the least recently used, to find one to drop. */
#define EVICT_SCAN 256

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

struct sess *
sess_find_locked(struct sess_service *s, const char *id, const char *principal)
{
	struct sess *ss = msc_map_get(s->sessions, id);

	if (ss == NULL || !sess_principal_is(ss->pr, principal))
		return NULL;    /* another principal's: as unknown */
	return ss;
}

void
sess_touch_locked(struct sess_service *s, struct sess *ss)
{
	ss->last_active_ms = msc_now_ms();
	if (ss->closed)
		return;
	TAILQ_REMOVE(&s->lru, ss, lru_all);
	TAILQ_INSERT_TAIL(&s->lru, ss, lru_all);
	TAILQ_REMOVE(&ss->pr->lru, ss, lru_own);
	TAILQ_INSERT_TAIL(&ss->pr->lru, ss, lru_own);
}

long
sess_share(const struct sess_principal *pr, long share)
{
	return pr->name[0] == '\0' || share <= 0 ? -1 : share;
}

/* Whether ending ss loses nothing but its id (lock held). */
static bool
evictable(const struct sess *ss)
{
	return !ss->sandbox && ss->idle_timeout_s != 0 && ss->running == 0 &&
	    ss->lc_running == 0 && ss->queued == 0 && ss->tasks == 0 &&
	    !ss->resolving && ss->creating == 0 &&
	    ss->default_id[0] == '\0' && msc_map_len(ss->owned) == 0;
}

bool
sess_evict_locked(struct sess_service *s, struct sess_principal *pr)
{
	struct sess *ss;
	int n = 0;

	if (pr != NULL) {
		TAILQ_FOREACH(ss, &pr->lru, lru_own) {
			if (evictable(ss))
				break;
			if (++n == EVICT_SCAN)
				return false;
		}
	} else {
		TAILQ_FOREACH(ss, &s->lru, lru_all) {
			if (evictable(ss))
				break;
			if (++n == EVICT_SCAN)
				return false;
		}
	}
	if (ss == NULL)
		return false;
	msc_log_info("session %s of %s ended to make room (unused, least "
	    "recently active)", ss->tag, ss->pr->name[0] != '\0'
		? ss->pr->name : "the one principal");
	return sess_end_locked(s, ss, NULL) == 0;
}
