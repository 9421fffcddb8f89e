/*
 * session_records.c - the sessions' records (session_int.h): one is
 * opened (making room by ending an unused one when a table is full),
 * found for its principal, touched, referenced and ended (its computers
 * released); and the limits a session's calls and computers are checked
 * against. Every handler of the service calls down into these; they call
 * only the principals' records (session_principal.c) and the releases
 * (session_owners.c). Everything here is under s->mu.
 *
 * Every session is on two lists, least recently used first: the
 * server's and its principal's. When a table is full, the least recently
 * used session that costs nothing to drop (no computer, no call, no
 * task; never a sandbox handle, which ends by idle expiry only) is ended
 * to make room.
 */
#include "session_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msc_log.h"

/* Sessions looked at, from the least recently used, to find one to drop. */
#define EVICT_SCAN 256

#define SANDBOX_LIMIT_TEXT                                                    \
	"Sandbox limit reached; release an existing handle"

void
sess_ref_locked(struct sess *ss)
{
	ss->refs++;
}

void
sess_put(struct sess_service *s, struct sess *ss)
{
	pthread_mutex_lock(&s->mu);
	sess_unref(ss);
	pthread_mutex_unlock(&s->mu);
}

void
sess_unref(struct sess *ss)
{
	if (--ss->refs > 0)
		return;
	msc_map_free(ss->owned);
	free(ss);
}

bool
sess_computers_full_locked(const struct sess_service *s,
    const struct sess *ss, char *msg, size_t msglen)
{
	long max = s->cfg->max_session_computers;

	if ((long)msc_map_len(ss->owned) + ss->creating < max)
		return false;
	snprintf(msg, msglen, "This session already holds %ld computers, the "
	    "limit (--max-session-computers). Use one of them (omit "
	    "computer_id for the session's default computer), or remove one "
	    "with computer_delete, and retry.", max);
	return true;
}

bool
sess_calls_full_locked(const struct sess_service *s,
    const struct sess_principal *pr, const struct sess *ss, char *msg,
    size_t msglen)
{
	long max = s->cfg->max_session_commands;
	long share = pr != NULL ? sess_share(pr, s->cfg->max_principal_calls)
				: -1;

	if (s->calls >= s->cfg->max_pending_calls) {
		snprintf(msg, msglen, "Server request queue is full; retry in "
		    "a few seconds.");
		return true;
	}
	if (share >= 0 && pr->calls >= share) {
		snprintf(msg, msglen, "This client already has %ld calls in "
		    "flight, its share (--max-principal-calls). Wait for one "
		    "to finish and retry.", share);
		return true;
	}
	if (ss == NULL || ss->running + ss->lc_running < max)
		return false;
	snprintf(msg, msglen, "This session already has %ld commands in "
	    "flight, the limit (--max-session-commands). Wait for one to "
	    "finish (give long commands a shorter timeout) and retry.", max);
	return true;
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

/*
 * Whether principal pr may open one more session (a handle when
 * `sandbox`), after making room where it can; else `msg` says why.
 */
static bool
may_open_locked(struct sess_service *s, struct sess_principal *pr,
    bool sandbox, char *msg, size_t msglen)
{
	long max_sandboxes = s->cfg->max_sandboxes > 0 ? s->cfg->max_sandboxes
						       : SESS_MAX_SESSIONS;
	long share = sess_share(pr, s->cfg->max_principal_sessions);
	long sandbox_share = sess_share(pr, s->cfg->max_principal_sandboxes);

	/* Handles end by idle expiry only, never to make room. */
	if (sandbox && sandbox_share >= 0 && pr->sandboxes >= sandbox_share) {
		snprintf(msg, msglen, SANDBOX_LIMIT_TEXT " (this client holds "
		    "%ld, its share: --max-principal-sandboxes)",
		    sandbox_share);
		return false;
	}
	if (sandbox && s->n_sandboxes >= (size_t)max_sandboxes) {
		snprintf(msg, msglen, SANDBOX_LIMIT_TEXT);
		return false;
	}
	if (share >= 0 && pr->sessions >= share &&
	    !sess_evict_locked(s, pr)) {
		snprintf(msg, msglen, "too many sessions: this client holds "
		    "%ld, its share (--max-principal-sessions); end one "
		    "(DELETE /mcp or computer_release) and retry", share);
		return false;
	}
	if (msc_map_len(s->sessions) >= SESS_MAX_SESSIONS &&
	    !sess_evict_locked(s, NULL)) {
		snprintf(msg, msglen, "too many sessions");
		return false;
	}
	return true;
}

int
sess_open_locked(struct sess_service *s, const char *principal,
    uint32_t idle_timeout_s, bool sandbox, struct sess **ssp, char *msg,
    size_t msglen)
{
	unsigned char raw[SESS_RANDOM_BYTES];
	struct sess_principal *pr;
	struct sess *ss;
	bool ok;

	snprintf(msg, msglen, "too many sessions");
	if (s->stopping)
		return -ESHUTDOWN;
	if ((pr = sess_principal_get_locked(s, principal)) == NULL)
		return -ENOMEM;
	/* Making room may end pr's last session: pr must outlive that. */
	pr->pins++;
	ok = may_open_locked(s, pr, sandbox, msg, msglen);
	pr->pins--;
	if (!ok) {
		sess_principal_release_locked(s, pr);
		return -ENOSPC;
	}
	if ((ss = calloc(1, sizeof(*ss))) == NULL ||
	    msc_map_new(&ss->owned) != 0) {
		free(ss);
		sess_principal_release_locked(s, pr);
		return -ENOMEM;
	}
	/* "<run><random>": the inventory tells runs apart by the prefix. */
	msc_random_bytes(raw, sizeof(raw));
	memcpy(ss->id, s->epoch, SESS_EPOCH_LEN);
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(ss->id + SESS_EPOCH_LEN + 2 * i, 3, "%02x", raw[i]);
	/* Independent of the id, so logs and drivers learn nothing of it. */
	msc_random_bytes(raw, SESS_TAG_LEN / 2);
	for (size_t i = 0; i < SESS_TAG_LEN / 2; i++)
		snprintf(ss->tag + 2 * i, 3, "%02x", raw[i]);
	ss->refs = 1;
	STAILQ_INIT(&ss->queue);
	LIST_INIT(&ss->live);
	ss->sandbox = sandbox;
	ss->idle_timeout_s = idle_timeout_s;
	ss->last_active_ms = msc_now_ms();
	ss->pr = pr;
	if (msc_map_put(s->sessions, ss->id, ss) != 0) {
		sess_unref(ss);
		sess_principal_release_locked(s, pr);
		return -ENOMEM;
	}
	TAILQ_INSERT_TAIL(&s->lru, ss, lru_all);
	TAILQ_INSERT_TAIL(&pr->lru, ss, lru_own);
	pr->sessions++;
	if (sandbox) {
		s->n_sandboxes++;
		pr->sandboxes++;
	}
	*ssp = ss;
	return 0;
}

struct release_args {
	struct sess_service *s;
	struct closing *c;
	const char *owner;
};

static void
release_one(void *arg, const char *key, void *value)
{
	struct release_args *ra = arg;

	sess_release_locked(ra->s, key, ra->owner, SESS_OWN_TEMPORARY(value),
	    SESS_OWN_DRIVER(value), false, ra->c);
}

int
sess_end_locked(struct sess_service *s, struct sess *ss,
    struct msc_call *call)
{
	struct release_args ra = { s, NULL, ss->id };

	ra.c = sess_closing_new(s, call, msc_map_len(ss->owned));
	if (ra.c == NULL)
		return -ENOMEM;
	msc_map_del(s->sessions, ss->id);
	ss->closed = true;
	TAILQ_REMOVE(&s->lru, ss, lru_all);
	TAILQ_REMOVE(&ss->pr->lru, ss, lru_own);
	ss->pr->sessions--;
	if (ss->sandbox) {
		s->n_sandboxes--;
		ss->pr->sandboxes--;
	}
	msc_map_each(ss->owned, release_one, &ra);
	msc_log_debug("session %s ended", ss->tag);
	sess_principal_release_locked(s, ss->pr);
	sess_unref(ss);
	sess_closing_step_locked(ra.c);
	return 0;
}
