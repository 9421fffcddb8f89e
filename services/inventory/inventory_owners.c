/*
 * inventory_owners.c - owners that the inventory learns or loses without
 * an Acquire or a Release: the session service restarted (ForgetOwners:
 * the owners of its earlier run are gone), or its connection to this
 * inventory came back up (Claim: the computers its sessions hold, which
 * an inventory that restarted has no record of).
 */
#include "inventory_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inventory.pb-c.h"
#include "msc_log.h"

struct forget {
	struct inv_service *s;
	const char *keep;               /* owner prefix of the live run */
	char (*ids)[MSC_SLUG_MAX + 1];
	struct msc_client **drivers;    /* NULL: permanent, keep it */
	size_t n;
};

static void
collect_ready(void *arg, const char *key, void *value)
{
	struct forget *f = arg;
	struct record *r = value;

	size_t keep = strlen(f->keep);

	if (!r->ready)
		return;         /* a creation under way has live waiters */
	for (size_t i = 0; i < r->n_owners;) {
		if (strncmp(r->owners[i], f->keep, keep) == 0) {
			i++;
			continue;
		}
		free(r->owners[i]);
		r->owners[i] = r->owners[--r->n_owners];
	}
	if (r->n_owners > 0)
		return;
	snprintf(f->ids[f->n], sizeof(f->ids[f->n]), "%s", key);
	if (r->temporary)
		inv_counts_removed_locked(f->s, r->driver);
	f->drivers[f->n++] = r->temporary ? inv_driver_of(f->s, r) : NULL;
}

static void
forgot_one(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	(void)arg;
	if (resp != NULL)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st->code != MSC__V1__CODE__OK)
		msc_log_warn("inventory: stopping an orphaned computer failed: "
			     "%s", st->message);
}

void
inv_h_forget_owners(void *state, struct msc_call *call,
    const ProtobufCMessage *req)
{
	struct inv_service *s = state;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	struct forget f = { s, NULL, NULL, NULL, 0 };
	size_t n;

	f.keep = ((const Msc__V1__ForgetOwnersRequest *)req)->keep_prefix;
	pthread_mutex_lock(&s->mu);
	n = msc_map_len(s->records);
	f.ids = calloc(n + 1, sizeof(*f.ids));
	f.drivers = calloc(n + 1, sizeof(*f.drivers));
	if (f.ids == NULL || f.drivers == NULL) {
		pthread_mutex_unlock(&s->mu);
		free(f.ids);
		free(f.drivers);
		msc_call_fail(call, MSC__V1__CODE__RESOURCE_EXHAUSTED, "oom");
		return;
	}
	msc_map_each(s->records, collect_ready, &f);
	for (size_t i = 0; i < f.n; i++) {
		struct record *r = msc_map_del(s->records, f.ids[i]);

		if (r != NULL)
			inv_record_free(r);
	}
	pthread_mutex_unlock(&s->mu);
	for (size_t i = 0; i < f.n; i++) {
		Msc__V1__ComputerRef ref = MSC__V1__COMPUTER_REF__INIT;

		if (f.drivers[i] == NULL)
			continue;
		ref.computer_id = f.ids[i];
		msc_log_info("stopping temporary computer %s: its sessions are "
			     "gone", f.ids[i]);
		(void)msc_client_call(f.drivers[i], &msc__v1__driver__descriptor,
		    "Stop", &ref.base, INV_STOP_TIMEOUT_MS, forgot_one, NULL);
	}
	free(f.ids);
	free(f.drivers);
	msc_call_reply(call, &e.base);
}

/*
 * A record for a computer known only from a claim: what the session
 * knows (id, mode, driver, its principal) stands in for the driver's answer. Returns
 * NULL when out of memory.
 */
static struct record *
claimed_record(struct inv_service *s, const char *id, bool temporary,
    int driver, const char *principal)
{
	Msc__V1__Computer c = MSC__V1__COMPUTER__INIT;
	struct record *r;
	uint8_t buf[512];
	size_t len;

	c.computer_id = (char *)id;
	c.temporary = temporary;
	c.driver = (char *)msc_fleet_id(s->fleet, (size_t)driver);
	c.principal = (char *)principal;
	if ((len = msc__v1__computer__get_packed_size(&c)) > sizeof(buf) ||
	    (r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	msc__v1__computer__pack(&c, buf);
	if ((r->computer = msc__v1__computer__unpack(NULL, len, buf)) == NULL) {
		free(r);
		return NULL;
	}
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->ready = true;
	r->temporary = temporary;
	r->driver = driver;
	return r;
}

/* Applies one claim (lock held); false when its record is busy. */
static bool
claim_one(struct inv_service *s, const Msc__V1__Claim *cl, size_t *addedp)
{
	char id[MSC_SLUG_MAX + 1];
	struct record *r;
	int driver;

	driver = cl->driver[0] != '\0' ? msc_fleet_index(s->fleet, cl->driver)
				       : -1;
	if (msc_slug_normalize(cl->computer_id, id) != 0 ||
	    cl->owner[0] == '\0' || driver < 0) {
		msc_log_warn("inventory: claim of '%s' on driver '%s' ignored: "
			     "unknown computer or driver", cl->computer_id,
		    cl->driver);
		return true;
	}
	r = msc_map_get(s->records, id);
	if (r != NULL && !r->ready)
		return false;   /* the driver works on it: its waiters decide */
	if (r == NULL) {
		if ((r = claimed_record(s, id, cl->temporary, driver,
		    cl->principal)) == NULL)
			return false;
		if (msc_map_put(s->records, r->id, r) != 0) {
			inv_record_free(r);
			return false;
		}
		(*addedp)++;
	} else if (r->temporary != cl->temporary) {
		msc_log_warn("inventory: claim of '%s' as %s ignored: it is %s",
		    id, cl->temporary ? "temporary" : "permanent",
		    r->temporary ? "temporary" : "permanent");
		return true;
	}
	if (cl->exclusive && r->temporary)
		r->exclusive = true;
	return inv_owner_add(r, cl->owner) == 0;
}

void
inv_h_claim(void *state, struct msc_call *call, const ProtobufCMessage *req)
{
	const Msc__V1__ClaimRequest *cr = (const void *)req;
	struct inv_service *s = state;
	Msc__V1__Empty e = MSC__V1__EMPTY__INIT;
	size_t busy = 0, added = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < cr->n_claims; i++)
		if (!claim_one(s, cr->claims[i], &added))
			busy++;
	pthread_mutex_unlock(&s->mu);
	if (added > 0)
		msc_log_info("inventory: %zu computer(s) learnt again from the "
			     "session service", added);
	if (busy > 0)
		msc_call_fail(call, MSC__V1__CODE__UNAVAILABLE,
		    "%zu of %zu claims wait for a computer being found or "
		    "made; send them again", busy, cr->n_claims);
	else
		msc_call_reply(call, &e.base);
}
