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

/* The texts every driver gives (a printf format of the snapshot id). */
#define MSC_SNAPSHOT_NOT_FOUND "Snapshot '%s' was not found."
#define MSC_SNAPSHOT_PINNED                                                    \
	"Snapshot '%s' is in use: a computer is being restored or created "   \
	"from it (retry when it is done)."
/* ... of a computer id: */
#define MSC_SNAPSHOT_WENT                                                      \
	"Computer '%s' was reset or deleted while its snapshot was taken: "   \
	"nothing was saved."
/* ... after the text of why a restore failed: */
#define MSC_SNAPSHOT_FELL_BACK                                                 \
	"%s It was factory reset instead: same id, lifecycle and owner, with " \
	"the image's files."

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
 * Counts one more snapshot being made by `principal` (a tag), given the
 * `have` this driver keeps, `mine` of them that principal's: 0
 * (unreserve with the same principal when made or failed), or -EDQUOT
 * with the advice in err at `max` (--max-snapshots, the reference's
 * text) or at the principal's `share` (--max-principal-snapshots, issue
 * 27's shares for snapshots), counting those being made. The empty tag
 * (the one principal of a server without --tokens-file) and a share of
 * 0 are bound by `max` only.
 */
int msc_snap_reserve_as(struct msc_snap_pins *p, const char *principal,
    size_t have, size_t mine, long max, long share, char *err,
    size_t errlen);
void msc_snap_unreserve_as(struct msc_snap_pins *p, const char *principal);

#endif /* MSC_SNAPSHOT_H */
