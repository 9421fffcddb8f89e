/*
 * msc_snapshot.h - snapshot ids and names (issue 31), checked the same
 * way by the session service and the drivers before anything reaches a
 * backend: an id is "snap-" and 32 lowercase hex digits (128 random
 * bits), a name at most 64 letters, digits, spaces, '.', '_' or '-'.
 */
#ifndef MSC_SNAPSHOT_H
#define MSC_SNAPSHOT_H

#include <stdbool.h>

#define MSC_SNAPSHOT_PREFIX "snap-"
#define MSC_SNAPSHOT_HEX 32
#define MSC_SNAPSHOT_ID_LEN (5 + MSC_SNAPSHOT_HEX)
#define MSC_SNAPSHOT_NAME_MAX 64
#define MSC_SNAPSHOT_ID_ERROR                                                 \
	"snapshot_id must be a snapshot id as computer_snapshot returned "    \
	"it: snap- and 32 lowercase hex digits."
#define MSC_SNAPSHOT_NAME_ERROR                                               \
	"name must be at most 64 letters, digits, spaces, '.', '_' or '-'."

/* Whether s is a well-formed snapshot id. */
bool msc_snapshot_id_valid(const char *s);

/* Whether s is an acceptable snapshot name ("" is). */
bool msc_snapshot_name_valid(const char *s);

/* Writes a new random snapshot id (kernel CSPRNG) into out. */
void msc_snapshot_id_new(char out[MSC_SNAPSHOT_ID_LEN + 1]);

#endif /* MSC_SNAPSHOT_H */
