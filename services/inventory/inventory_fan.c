/*
 * inventory_fan.c - one call to every driver of the fleet at once, and
 * one callback when all have answered (or failed, or timed out).
 */
#include "inventory_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fan_call {
	struct inv_fan *fan;
	size_t i;
};

static void
fan_reply(void *arg, const struct msc_status *st, ProtobufCMessage *resp)
{
	struct fan_call *fc = arg;
	struct inv_fan *f = fc->fan;
	bool last;

	f->r[fc->i].code = st->code;
	f->r[fc->i].reason = st->reason;
	snprintf(f->r[fc->i].msg, sizeof(f->r[fc->i].msg), "%s", st->message);
	f->r[fc->i].resp = resp;
	free(fc);
	pthread_mutex_lock(&f->mu);
	last = --f->left == 0;
	pthread_mutex_unlock(&f->mu);
	if (last)
		f->done(f->arg, f);
}

int
inv_fan_out(struct inv_service *s, const char *method,
    const ProtobufCMessage *req, int timeout_ms, inv_fan_fn done, void *arg)
{
	size_t n = msc_fleet_size(s->fleet);
	struct inv_fan *f = calloc(1, sizeof(*f));
	bool last;

	if (f == NULL)
		return -ENOMEM;
	f->n = n;
	f->left = n + 1;        /* one extra step: ours, below */
	f->done = done;
	f->arg = arg;
	pthread_mutex_init(&f->mu, NULL);
	for (size_t i = 0; i < n; i++) {
		struct fan_call *fc = malloc(sizeof(*fc));
		int rv;

		if (fc != NULL) {
			fc->fan = f;
			fc->i = i;
		}
		rv = fc == NULL ? -ENOMEM
				    : msc_client_call(msc_fleet_client(s->fleet,
						      i),
					  &msc__v1__driver__descriptor, method,
					  req, timeout_ms, fan_reply, fc);

		if (rv == 0)
			continue;
		free(fc);
		f->r[i].code = MSC__V1__CODE__UNAVAILABLE;
		f->r[i].reason = MSC__V1__REASON__REASON_UNSPECIFIED;
		snprintf(f->r[i].msg, sizeof(f->r[i].msg),
		    "driver '%s' cannot be reached", msc_fleet_id(s->fleet, i));
		pthread_mutex_lock(&f->mu);
		f->left--;
		pthread_mutex_unlock(&f->mu);
	}
	pthread_mutex_lock(&f->mu);
	last = --f->left == 0;
	pthread_mutex_unlock(&f->mu);
	if (last)
		done(arg, f);
	return 0;
}

void
inv_fan_free(struct inv_fan *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->r[i].resp != NULL)
			protobuf_c_message_free_unpacked(f->r[i].resp, NULL);
	pthread_mutex_destroy(&f->mu);
	free(f);
}

int
inv_fan_first_ok(const struct inv_fan *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->r[i].code == MSC__V1__CODE__OK)
			return (int)i;
	return -1;
}

int
inv_fan_first_error(const struct inv_fan *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->r[i].code != MSC__V1__CODE__OK &&
		    f->r[i].code != MSC__V1__CODE__NOT_FOUND)
			return (int)i;
	return -1;
}
