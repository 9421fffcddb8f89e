/*
 * inventory_records.c - a record of a computer in use: its owners (who
 * holds it), whether another holds it, its driver, and its end. Every
 * handler of the service calls down into these; they call nothing of it.
 */
#include "inventory_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "driver.pb-c.h"

static bool
has_owner(const struct record *r, const char *owner)
{
	for (size_t i = 0; i < r->n_owners; i++)
		if (strcmp(r->owners[i], owner) == 0)
			return true;
	return false;
}

bool
inv_owner_has(const struct record *r, const char *owner)
{
	return has_owner(r, owner);
}

bool
inv_held_by_other(const struct record *r, const char *owner)
{
	return r->temporary && r->exclusive && r->n_owners > 0 &&
	    (owner == NULL || !has_owner(r, owner));
}

int
inv_owner_add(struct record *r, const char *owner)
{
	char **grown, *dup;

	if (has_owner(r, owner))
		return 0;
	if ((dup = strdup(owner)) == NULL)
		return -ENOMEM;
	grown = realloc(r->owners, (r->n_owners + 1) * sizeof(*grown));
	if (grown == NULL) {
		free(dup);
		return -ENOMEM;
	}
	grown[r->n_owners++] = dup;
	r->owners = grown;
	return 0;
}

void
inv_owner_del(struct record *r, const char *owner)
{
	for (size_t i = 0; i < r->n_owners; i++) {
		if (strcmp(r->owners[i], owner) == 0) {
			free(r->owners[i]);
			r->owners[i] = r->owners[--r->n_owners];
			return;
		}
	}
}

void
inv_record_free(struct record *r)
{
	for (size_t i = 0; i < r->n_owners; i++)
		free(r->owners[i]);
	free(r->owners);
	if (r->computer != NULL)
		protobuf_c_message_free_unpacked(&r->computer->base, NULL);
	free(r);
}

struct msc_client *
inv_driver_of(struct inv_service *s, const struct record *r)
{
	return msc_fleet_client(s->fleet, (size_t)r->driver);
}
