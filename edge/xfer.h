/*
 * xfer.h - the local side of computer_upload and computer_download (issue
 * 29): a local path confined to the folders the server may use (the
 * client's MCP roots, --workspace), read into tar batches or written from
 * a tar stream (lib/msc_tar.h), with bounded memory and limits.
 *
 * Confinement: a path is absolute (or relative to --workspace), has no
 * ".." part, and lies below one allowed folder by name; it is then opened
 * from that folder with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS),
 * so a symlink that leads out of it (absolute, or by "..") is refused by
 * the kernel, at open time, race-free. Below the top nothing is followed:
 * an upload sends symlinks as symlinks, a download opens each member's
 * folder with RESOLVE_NO_SYMLINKS and makes only symlinks whose target
 * stays inside what it writes.
 */
#ifndef EDGE_XFER_H
#define EDGE_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most files, folders and symlinks one transfer carries. */
#define XFER_ENTRIES_MAX 200000
/* The most file bytes one transfer carries. */
#define XFER_BYTES_MAX (8LL * 1024 * 1024 * 1024)
/* Folders nested at most this deep. */
#define XFER_DEPTH_MAX 64

/* The folders local paths may be in: real paths, no trailing '/'. */
struct xfer_allow {
	const char *const *dirs;
	size_t n;
	const char *workspace;  /* relative paths' base, or NULL */
};

struct xfer_counts {
	long long files, folders, symlinks, bytes, skipped;
};

struct xfer_src;
struct xfer_dst;

/*
 * Opens local `path` (a file or folder) to upload; 0, or a negative errno
 * with the agent's error text in err.
 */
int xfer_src_open(const struct xfer_allow *a, const char *path,
    struct xfer_src **out, char *err, size_t errlen);
/*
 * The next batch into buf (cap bytes, at least 64 KiB): a whole tar
 * stream whose first entry is "." (the top) or a later piece; *last when
 * nothing is left after it. 0, or a negative errno with err set.
 */
int xfer_src_next(struct xfer_src *s, uint8_t *buf, size_t cap, size_t *n,
    bool *last, char *err, size_t errlen);
const struct xfer_counts *xfer_src_counts(const struct xfer_src *s);
/* The local path as resolved (for the answer). */
const char *xfer_src_path(const struct xfer_src *s);
void xfer_src_free(struct xfer_src *s);

/* Opens local `path` (made: a file or a folder, as the stream says) to
 * download into; its parent must exist. 0 or a negative errno, err set. */
int xfer_dst_open(const struct xfer_allow *a, const char *path,
    struct xfer_dst **out, char *err, size_t errlen);
/* Writes what p[0..n) of the stream completes; 0 or -errno, err set
 * (-EFBIG: more stream than XFER_BYTES_MAX of files and the entries'
 * headers take). */
int xfer_dst_feed(struct xfer_dst *d, const uint8_t *p, size_t n, char *err,
    size_t errlen);
/* Whether the stream's end-of-archive was read: ask for no more. */
bool xfer_dst_ended(const struct xfer_dst *d);
/* The stream ended: checks it whole and gives folders their modes. */
int xfer_dst_finish(struct xfer_dst *d, char *err, size_t errlen);
const struct xfer_counts *xfer_dst_counts(const struct xfer_dst *d);
const char *xfer_dst_path(const struct xfer_dst *d);
void xfer_dst_free(struct xfer_dst *d);

/* Whether normalized `path` is the real folder `dir` or below it. */
bool xfer_below(const char *dir, const char *path);

/*
 * A folder named by the operator or the client, as kept in xfer_allow:
 * its real path (malloc'd), or NULL with errno set (not a folder).
 */
char *xfer_allow_dir(const char *path);

#endif /* EDGE_XFER_H */
