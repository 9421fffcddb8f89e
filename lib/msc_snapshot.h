/*
 * msc_snapshot.h - snapshot ids and names (issue 31), checked the same
 * way by the session service and the drivers before anything reaches a
 * backend: an id is "snap-" and 32 lowercase hex digits (128 random
 * bits), a name at most 64 letters, digits, spaces, '.', '_' or '-'.
 */
#ifndef MSC_SNAPSHOT_H
#define MSC_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

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

/*
 * Snapshots in use, for a driver that copies or creates from one while
 * another call may delete it: a restore or a fork pins its snapshot for
 * as long as it reads it; a delete claims the snapshot first and is
 * refused while it is pinned, and a pin is refused while a delete holds
 * the claim. Thread-safe.
 */
struct msc_snap_pins;

int msc_snap_pins_new(struct msc_snap_pins **pp);
/* Frees. Accepts NULL. */
void msc_snap_pins_free(struct msc_snap_pins *p);
/* 0 (pinned: unpin later), -ENOENT (a delete holds it), -ENOMEM. */
int msc_snap_pin(struct msc_snap_pins *p, const char *id);
void msc_snap_unpin(struct msc_snap_pins *p, const char *id);
/* 0 (claimed: release later), -EBUSY (pinned, or another delete's). */
int msc_snap_claim(struct msc_snap_pins *p, const char *id);
void msc_snap_release(struct msc_snap_pins *p, const char *id);
/*
 * Counts one more snapshot being made, given the `have` this principal
 * keeps: 0 (unreserve when made or failed), or -EDQUOT at `max` with the
 * reference's advice in err.
 */
int msc_snap_reserve(struct msc_snap_pins *p, size_t have, long max,
    char *err, size_t errlen);
void msc_snap_unreserve(struct msc_snap_pins *p);

#endif /* MSC_SNAPSHOT_H */
