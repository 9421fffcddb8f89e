/*
 * msc_principal.h - the tag that stands for a principal (a name of
 * --tokens-file) wherever a computer records who made it: a backend's
 * labels or metadata outlive the server, so they hold a hash of the name
 * (never the name's token, and not the name itself). The one principal
 * of a server with a single token or none has the empty tag, and its
 * computers record nothing, as the reference's.
 */
#ifndef MSC_PRINCIPAL_H
#define MSC_PRINCIPAL_H

#include <stdbool.h>

#define MSC_PRINCIPAL_TAG_LEN 32        /* hex digits */

/* The label a backend keeps the tag in (a container engine's). */
#define MSC_PRINCIPAL_LABEL "kilntainers.principal"

/* Writes the tag of principal `name` ("" for "" or NULL) to out. */
void msc_principal_tag(const char *name, char out[MSC_PRINCIPAL_TAG_LEN + 1]);

/*
 * Whether the principal tagged `caller` may reach a computer that
 * records `owner`: one that records none is anyone's (made by a server
 * without principals, or on a backend that keeps no labels); else only
 * its own principal's. The one principal of a server without
 * principals (the empty tag) is its operator and reaches every one, as
 * the reference does.
 */
bool msc_principal_may(const char *owner, const char *caller);

/*
 * Whether `p` may be recorded as a principal with a snapshot: at most 64
 * letters, digits and "._-@" (a tag is 32 hex digits; "" is none).
 */
bool msc_principal_valid(const char *p);

/* The text given to a principal that names another's computer. */
#define MSC_PRINCIPAL_NOT_YOURS "Computer '%s' belongs to another " \
	"principal: choose another computer_id."

#endif /* MSC_PRINCIPAL_H */
