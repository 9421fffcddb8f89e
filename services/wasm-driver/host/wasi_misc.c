/*
 * wasi_misc.c - args, environ, clocks, random bytes, scheduling, exit and
 * the (absent) sockets of the WASI host.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "wasi_int.h"

/* Counts the strings of list and the bytes they take with their NULs. */
static uint32_t
list_sizes(char *const *list, uint32_t *countp, uint32_t *bytesp)
{
	uint64_t count = 0, bytes = 0;

	for (; list != NULL && *list != NULL; list++) {
		count++;
		bytes += strlen(*list) + 1;
	}
	if (count > UINT32_MAX / 4 || bytes > UINT32_MAX)
		return WASI_E2BIG;
	*countp = (uint32_t)count;
	*bytesp = (uint32_t)bytes;
	return 0;
}

static uint32_t
sizes_get(struct wasi_ctx *c, char *const *list, uint32_t countp,
    uint32_t sizep)
{
	uint32_t count, bytes, rv;

	if ((rv = list_sizes(list, &count, &bytes)) != 0)
		return rv;
	if (wasi_mem(c, countp, 4) == NULL || wasi_mem(c, sizep, 4) == NULL)
		return WASI_EFAULT;
	wasi_put_u32(c, countp, count);
	wasi_put_u32(c, sizep, bytes);
	return 0;
}

/* Writes the pointers at ptrs and the strings at buf, as *_get do. */
static uint32_t
list_get(struct wasi_ctx *c, char *const *list, uint32_t ptrs, uint32_t buf)
{
	uint32_t count, bytes, rv, at = buf;

	if ((rv = list_sizes(list, &count, &bytes)) != 0)
		return rv;
	if (wasi_mem(c, ptrs, (uint64_t)count * 4) == NULL ||
	    wasi_mem(c, buf, bytes) == NULL)
		return WASI_EFAULT;
	for (uint32_t i = 0; i < count; i++) {
		size_t len = strlen(list[i]) + 1;

		wasi_put_u32(c, ptrs + i * 4, at);
		wasi_put(c, at, list[i], len);
		at += (uint32_t)len;
	}
	return 0;
}

uint32_t
WASI_FN(args_sizes_get)(struct wasi_ctx *c, uint32_t argcp, uint32_t sizep)
{
	return sizes_get(c, c->argv, argcp, sizep);
}

uint32_t
WASI_FN(args_get)(struct wasi_ctx *c, uint32_t argv, uint32_t buf)
{
	return list_get(c, c->argv, argv, buf);
}

uint32_t
WASI_FN(environ_sizes_get)(struct wasi_ctx *c, uint32_t countp,
    uint32_t sizep)
{
	return sizes_get(c, c->envp, countp, sizep);
}

uint32_t
WASI_FN(environ_get)(struct wasi_ctx *c, uint32_t envp, uint32_t buf)
{
	return list_get(c, c->envp, envp, buf);
}

static int
host_clock(uint32_t id, clockid_t *out)
{
	static const clockid_t ids[] = { CLOCK_REALTIME, CLOCK_MONOTONIC,
		CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID };

	if (id >= sizeof(ids) / sizeof(ids[0]))
		return -1;
	*out = ids[id];
	return 0;
}

uint32_t
WASI_FN(clock_res_get)(struct wasi_ctx *c, uint32_t id, uint32_t resp)
{
	struct timespec ts;
	clockid_t cid;

	if (host_clock(id, &cid) != 0)
		return WASI_EINVAL;
	if (clock_getres(cid, &ts) != 0)
		return wasi_errno(errno);
	if (!wasi_put_u64(c, resp, (uint64_t)ts.tv_sec * 1000000000u +
		(uint64_t)ts.tv_nsec))
		return WASI_EFAULT;
	return 0;
}

uint32_t
WASI_FN(clock_time_get)(struct wasi_ctx *c, uint32_t id, uint64_t precision,
    uint32_t timep)
{
	struct timespec ts;
	clockid_t cid;

	(void)precision;
	if (host_clock(id, &cid) != 0)
		return WASI_EINVAL;
	if (clock_gettime(cid, &ts) != 0)
		return wasi_errno(errno);
	if (!wasi_put_u64(c, timep, ts.tv_sec < 0 ? 0 :
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec))
		return WASI_EFAULT;
	return 0;
}

uint32_t
WASI_FN(random_get)(struct wasi_ctx *c, uint32_t buf, uint32_t len)
{
	uint8_t *p = wasi_mem(c, buf, len);
	size_t done = 0;

	if (p == NULL)
		return WASI_EFAULT;
	while (done < len) {
		ssize_t n = getrandom(p + done, len - done, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return wasi_errno(errno);
		}
		done += (size_t)n;
	}
	return 0;
}

uint32_t
WASI_FN(sched_yield)(struct wasi_ctx *c)
{
	(void)c;
	sched_yield();
	return 0;
}

void
WASI_FN(proc_exit)(struct wasi_ctx *c, uint32_t code)
{
	c->exit_code = code;
	c->on_exit(c);
}

uint32_t
WASI_FN(proc_raise)(struct wasi_ctx *c, uint32_t sig)
{
	(void)c;
	(void)sig;
	return WASI_ENOSYS;
}

/* No network: every socket call fails. */
uint32_t
WASI_FN(sock_accept)(struct wasi_ctx *c, uint32_t fd, uint32_t flags,
    uint32_t fdp)
{
	(void)c;
	(void)fd;
	(void)flags;
	(void)fdp;
	return WASI_ENOTSUP;
}

uint32_t
WASI_FN(sock_recv)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t flags, uint32_t lenp, uint32_t oflagsp)
{
	(void)c;
	(void)fd;
	(void)iovs;
	(void)niovs;
	(void)flags;
	(void)lenp;
	(void)oflagsp;
	return WASI_ENOTSUP;
}

uint32_t
WASI_FN(sock_send)(struct wasi_ctx *c, uint32_t fd, uint32_t iovs,
    uint32_t niovs, uint32_t flags, uint32_t lenp)
{
	(void)c;
	(void)fd;
	(void)iovs;
	(void)niovs;
	(void)flags;
	(void)lenp;
	return WASI_ENOTSUP;
}

uint32_t
WASI_FN(sock_shutdown)(struct wasi_ctx *c, uint32_t fd, uint32_t how)
{
	(void)c;
	(void)fd;
	(void)how;
	return WASI_ENOTSUP;
}
