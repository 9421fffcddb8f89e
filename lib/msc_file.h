/*
 * msc_file.h - small files read whole.
 */
#ifndef MSC_FILE_H
#define MSC_FILE_H

#include <stddef.h>

/*
 * Reads the regular file open at fd whole, up to `max` bytes, into a new
 * buffer (*bufp, owned by the caller, NUL-terminated; *lenp its length).
 * Borrows fd (left open). 0, -EINVAL (not a regular file), -EFBIG (larger
 * than max), -ENOMEM, or -errno of a failed read. Blocks on the read.
 */
int msc_file_read_whole(int fd, size_t max, char **bufp, size_t *lenp);

#endif /* MSC_FILE_H */
