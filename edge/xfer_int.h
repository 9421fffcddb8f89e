/*
 * xfer_int.h - what the local side's files share (xfer_local.c: the
 * confinement; xfer_src.c: uploads; xfer_dst.c: downloads).
 */
#ifndef EDGE_XFER_INT_H
#define EDGE_XFER_INT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "msc_tar.h"
#include "xfer.h"

#define XFER_TRAILER (2 * MSC_TAR_BLOCK)

/* A local path placed below one allowed folder. */
struct xfer_place {
	int rootfd;                     /* the folder (O_PATH) */
	char rel[PATH_MAX];             /* below it; "." the folder itself */
	char shown[PATH_MAX];           /* the whole path, normalized */
};

/* A folder whose own mode is set last (its owner could not write it). */
struct final {
	char *name;
	unsigned mode;
};

/* openat2(2): -1 with errno set. */
int xfer_openat2(int dfd, const char *path, int flags, uint64_t resolve);
/*
 * Normalizes path (joined to the workspace when relative) and finds the
 * allowed folder it is below (p->rootfd open, the caller closes it); 0,
 * or -EACCES/-EINVAL with err set.
 */
int xfer_locate(const struct xfer_allow *a, const char *path,
    struct xfer_place *p, char *err, size_t errlen);
/*
 * Opens dfd/name, a regular file and nothing else (never a symlink, a
 * fifo or a device, even one swapped in after a check): looked at through
 * O_PATH, then opened again through that very inode with flags. With
 * O_CREAT, a name that is not there is made (O_EXCL). -1 with errno set;
 * on something not a regular file errno is EINVAL and *found its mode.
 */
int xfer_open_reg(int dfd, const char *name, int flags, mode_t mode,
    mode_t *found);
/* "a folder", "a fifo", ... */
const char *xfer_kind(mode_t m);
/* The agent's text for an open of `shown` that failed with e; -e. */
int xfer_open_error(const char *shown, int e, char *err, size_t errlen);

#endif /* EDGE_XFER_INT_H */
