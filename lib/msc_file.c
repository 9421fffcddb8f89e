/*
 * msc_file.c - small files read whole (msc_file.h).
 */
#include "msc_file.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int
msc_file_read_whole(int fd, size_t max, char **bufp, size_t *lenp)
{
	struct stat st;
	size_t got = 0, size;
	char *buf;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size < 0 || (unsigned long long)st.st_size > max)
		return -EFBIG;
	size = (size_t)st.st_size;
	if ((buf = malloc(size + 1)) == NULL)
		return -ENOMEM;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			return -e;
		}
		if (n == 0)
			break;  /* shorter than its size said: what there is */
		got += (size_t)n;
	}
	buf[got] = '\0';
	*bufp = buf;
	*lenp = got;
	return 0;
}
