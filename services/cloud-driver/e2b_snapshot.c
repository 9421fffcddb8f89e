/*
 * e2b_snapshot.c - snapshots on E2B (issue 31) through its snapshot API:
 * POST /sandboxes/{id}/snapshots makes a persistent snapshot template of
 * a sandbox (E2B pauses it meanwhile; files and, as E2B documents it,
 * memory are saved, so a computer made from it may find the processes
 * of then running on; we count on the files), GET
 * /snapshots lists the team's, DELETE /templates/{snapshotID} removes
 * one, and a sandbox created with templateID = snapshotID starts from it.
 *
 * E2B keeps nothing with a snapshot but its name, so the name is the
 * record: "kt-<32 hex of the snapshot id>-<maker's tag or x>-<unix
 * time>-<computer id>", all within E2B's lowercase template names; a
 * restarted server lists the team's snapshots and finds ours by it. The
 * snapshot's own name (computer_snapshot's `name`) is not kept on E2B.
 */
#include "e2b_driver_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msc_http.h"
#include "msc_log.h"
#include "msc_principal.h"
#include "msc_time.h"

#define T_SNAP 300000           /* a snapshot of a large disk takes a while */
#define T_OP 30000
#define SNAP_PAGES 50           /* of 100: the team's snapshots we read */
#define T_LIST 120000           /* all the pages of one listing */
/* The last time a name may say: 9999-12-31T23:59:59Z. */
#define TIME_MAX 253402300799LL
/*
 * E2B's snapshot ids: "templateID:tag", or "team/alias:tag" when named
 * (letters, digits, '_', '-', one '/' and ':'); no '.', so that no ref
 * is a "." or ".." path segment.
 */
#define REF_CHARS                                                             \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:/"

bool
e2b_snap_ref_ok(const char *ref)
{
	size_t n = strlen(ref);

	return n > 0 && n < sizeof(((struct cloud_snap_rec *)0)->ref) &&
	    strspn(ref, REF_CHARS) == n && ref[0] != '/' && ref[0] != ':' &&
	    ref[n - 1] != '/' && strchr(ref, '/') == strrchr(ref, '/');
}

/* The E2B name of record r. */
static void
alias_of(const struct cloud_snap_rec *r, char *out, size_t len)
{
	struct tm tm = { 0 };
	long long t = 0;

	if (strptime(r->created, "%Y-%m-%dT%H:%M:%SZ", &tm) != NULL)
		t = (long long)timegm(&tm);
	snprintf(out, len, "kt-%s-%s-%lld-%s", r->id + 5,
	    r->owner[0] != '\0' ? r->owner : "x", t, r->computer);
}

/*
 * Reads one of a snapshot's names ("team/alias:tag", "alias:tag" or
 * "alias") into r; false when it is not one of ours.
 */
bool
e2b_snap_parse_name(const char *name, struct cloud_snap_rec *r)
{
	const char *a = strrchr(name, '/'), *p;
	char buf[256], *f[4], *save = NULL, *end;
	size_t n;
	long long t;
	time_t tt;
	struct tm tm;

	a = a != NULL ? a + 1 : name;
	n = strcspn(a, ":");
	if (n >= sizeof(buf) || strncmp(a, "kt-", 3) != 0)
		return false;
	memcpy(buf, a + 3, n - 3);
	buf[n - 3] = '\0';
	/* hex, owner, time, then the computer id (which has hyphens). */
	for (int i = 0; i < 3; i++)
		if ((f[i] = strtok_r(i == 0 ? buf : NULL, "-", &save)) == NULL)
			return false;
	p = save;
	if (p == NULL || strlen(f[0]) != MSC_SNAPSHOT_HEX)
		return false;
	snprintf(r->id, sizeof(r->id), MSC_SNAPSHOT_PREFIX "%s", f[0]);
	if (!msc_snapshot_id_valid(r->id) || !msc_slug_valid(p))
		return false;
	if (strcmp(f[1], "x") == 0)
		r->owner[0] = '\0';
	else if (strlen(f[1]) == MSC_PRINCIPAL_TAG_LEN &&
	    cloud_snap_owner_ok(f[1]))
		snprintf(r->owner, sizeof(r->owner), "%s", f[1]);
	else
		return false;
	errno = 0;
	t = strtoll(f[2], &end, 10);
	if (end == f[2] || *end != '\0' || errno != 0 || t < 0 ||
	    t > TIME_MAX)
		return false;
	tt = (time_t)t;
	if (gmtime_r(&tt, &tm) == NULL || strftime(r->created,
	    sizeof(r->created), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return false;
	snprintf(r->computer, sizeof(r->computer), "%s", p);
	r->name[0] = '\0';
	return true;
}

/* One row of GET /snapshots: ours into r, else false. */
static bool
parse_row(json_t *row, struct cloud_snap_rec *r)
{
	const char *sid = json_string_value(json_object_get(row, "snapshotID"));
	json_t *names = json_object_get(row, "names"), *v;
	size_t i;

	if (sid == NULL || !e2b_snap_ref_ok(sid))
		return false;
	memset(r, 0, sizeof(*r));
	snprintf(r->ref, sizeof(r->ref), "%s", sid);
	json_array_foreach (names, i, v)
		if (json_is_string(v) &&
		    e2b_snap_parse_name(json_string_value(v), r))
			return true;
	return e2b_snap_parse_name(sid, r);
}

static int
snap_list(void *be, struct cloud_snap_rec **recsp, size_t *np, char *err,
    size_t errlen)
{
	struct e2b_driver *d = be;
	struct cloud_snap_rec *recs = NULL, r;
	char path[2048], next[512] = "", esc[1600] = "";
	size_t n = 0, cap = 0, rows = 0;
	uint64_t until = msc_now_ms() + T_LIST;
	int rv = 0, page;

	for (page = 0; page < SNAP_PAGES; page++) {
		json_t *arr = NULL, *row;
		uint64_t now = msc_now_ms();
		size_t i;

		if (now >= until) {
			snprintf(err, errlen, "E2B's snapshot list took longer "
			    "than %d s", T_LIST / 1000);
			rv = -ETIMEDOUT;
			break;
		}
		snprintf(path, sizeof(path), "/snapshots?limit=100%s%s",
		    esc[0] != '\0' ? "&nextToken=" : "", esc);
		next[0] = '\0';
		if ((rv = e2b_api(d, "GET", path, NULL, until - now < T_OP ?
		    (int)(until - now) : T_OP, true, &arr, next, sizeof(next),
		    err, errlen)) != 0)
			break;
		if ((rows += json_array_size(arr)) > CLOUD_SNAP_LIST_MAX) {
			json_decref(arr);
			snprintf(err, errlen, "E2B's snapshot list has more "
			    "than %d records: refused", CLOUD_SNAP_LIST_MAX);
			rv = -EDQUOT;
			break;
		}
		json_array_foreach (arr, i, row) {
			if (!parse_row(row, &r))
				continue;
			if (n == cap) {
				size_t c = cap ? cap * 2 : 16;
				void *p = realloc(recs, c * sizeof(*recs));

				if (p == NULL) {
					rv = -ENOMEM;
					break;
				}
				recs = p;
				cap = c;
			}
			recs[n++] = r;
		}
		json_decref(arr);
		if (rv != 0 || next[0] == '\0')
			break;
		if (msc_http_escape(next, esc, sizeof(esc)) != 0) {
			snprintf(err, errlen, "E2B's snapshot list: a page "
			    "cursor too long");
			rv = -EPROTO;
			break;
		}
	}
	/* Never a part of the list as if it were all (a quota undercount). */
	if (rv == 0 && page == SNAP_PAGES) {
		snprintf(err, errlen, "E2B's snapshot list has more than %d "
		    "pages: refused (the team keeps too many snapshots)",
		    SNAP_PAGES);
		rv = -EDQUOT;
	}
	if (rv != 0) {
		free(recs);
		return rv;
	}
	*recsp = recs;
	*np = n;
	return 0;
}

static int
snap_get(void *be, const char *id, struct cloud_snap_rec *rec, char *err,
    size_t errlen)
{
	struct cloud_snap_rec *recs = NULL;
	size_t n = 0;
	int rv;

	if ((rv = snap_list(be, &recs, &n, err, errlen)) != 0)
		return rv;
	rv = -ENOENT;
	for (size_t i = 0; i < n; i++)
		if (strcmp(recs[i].id, id) == 0) {
			*rec = recs[i];
			rv = 0;
			break;
		}
	free(recs);
	return rv;
}

static int
snap_save(void *be, struct cloud_snap_rec *r, char *err, size_t errlen)
{
	struct e2b_driver *d = be;
	char alias[256], path[256], why[E2B_ERRLEN];
	const char *sid;
	json_t *s = NULL, *body, *reply = NULL;
	int rv;

	if ((rv = e2b_running(d, r->computer, &s, err, errlen)) != 0)
		return rv;
	alias_of(r, alias, sizeof(alias));
	snprintf(path, sizeof(path), "/sandboxes/%s/snapshots",
	    json_string_value(json_object_get(s, "sandboxID")));
	json_decref(s);
	if ((body = json_pack("{s:s}", "name", alias)) == NULL)
		return -ENOMEM;
	/* Not retried on 5xx: a retry could make a second snapshot. */
	rv = e2b_api(d, "POST", path, body, T_SNAP, false, &reply, NULL, 0,
	    err, errlen);
	json_decref(body);
	if (rv == 0 && ((sid = json_string_value(json_object_get(reply,
	    "snapshotID"))) == NULL || !e2b_snap_ref_ok(sid))) {
		snprintf(err, errlen, "the reply has no valid snapshotID");
		rv = -EPROTO;
	} else if (rv == 0)
		snprintf(r->ref, sizeof(r->ref), "%s", sid);
	json_decref(reply);
	if (rv == -ENOENT) {
		snprintf(err, errlen, MSC_SNAPSHOT_WENT, r->computer);
		return -ECONNABORTED;
	}
	if (rv != 0) {
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "Cannot snapshot computer '%s': %s",
		    r->computer, why);
	}
	return rv;
}

static int
snap_remove(void *be, const struct cloud_snap_rec *r, char *err,
    size_t errlen)
{
	char path[2048], esc[1600];

	if (!e2b_snap_ref_ok(r->ref) ||
	    msc_http_escape(r->ref, esc, sizeof(esc)) != 0) {
		snprintf(err, errlen, "not an E2B snapshot id");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/templates/%s", esc);
	return e2b_api(be, "DELETE", path, NULL, T_OP, true, NULL, NULL, 0,
	    err, errlen);
}

static int
snap_create(void *be, const char *id, bool temporary, const char *principal,
    const struct cloud_snap_rec *r, Msc__V1__Computer *out, char *err,
    size_t errlen)
{
	return e2b_create_tpl(be, id, temporary, r->ref, principal, out, err,
	    errlen);
}

static int
snap_restore(void *be, const char *id, const struct cloud_snap_rec *r,
    Msc__V1__Computer *out, char *err, size_t errlen)
{
	struct e2b_driver *d = be;
	char why[E2B_ERRLEN], ignore[E2B_ERRLEN];
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	char principal[MSC_PRINCIPAL_TAG_LEN + 1];
	const char *tmp, *p;
	json_t *s = NULL;
	bool temporary;
	int rv;

	if ((rv = e2b_running(d, id, &s, err, errlen)) != 0)
		return rv;
	tmp = e2b_conv_meta(s, E2B_META_TEMPORARY);
	temporary = tmp == NULL || strcmp(tmp, "false") != 0;
	/* What replaces it is the same principal's. */
	p = e2b_conv_meta(s, E2B_META_PRINCIPAL);
	snprintf(principal, sizeof(principal), "%s", p != NULL ? p : "");
	rv = e2b_kill(d, id, s, err, errlen);
	json_decref(s);
	if (rv != 0)
		return rv;
	if ((rv = e2b_create_tpl(d, id, temporary, r->ref, principal, out,
	    err, errlen)) == 0)
		return 0;
	/* Never left gone: made again from the configured template. */
	snprintf(why, sizeof(why), "%s", err);
	if (e2b_create_owned(d, id, temporary, principal, &c, ignore,
	    sizeof(ignore)) != 0) {
		msc_log_warn("restore of %s failed and so did its factory "
		    "reset: %s", id, ignore);
		return rv;
	}
	msc_computer_fini(&c);
	snprintf(err, errlen, MSC_SNAPSHOT_FELL_BACK, why);
	return rv;
}

const struct cloud_snap_ops e2b_snap_ops = {
	.backend = "e2b",
	.save = snap_save,
	.list = snap_list,
	.get = snap_get,
	.remove = snap_remove,
	.restore = snap_restore,
	.create = snap_create,
};
