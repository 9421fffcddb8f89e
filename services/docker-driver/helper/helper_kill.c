/*
 * helper_kill.c - ending every process of one exec: its process group,
 * and every process whose environment carries the exec's marker (children
 * that called setsid() keep the marker; children that scrubbed their
 * environment usually keep the group). The same rule as the Engine path's
 * kill script (docker_exec.c), done in C from inside the container.
 *
 * Why not a cgroup: inside a default Docker container /sys/fs/cgroup is
 * read-only, so the helper cannot make one per exec.
 */
#include "helper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fastexec_wire.h"

#define HX_ENV_READ_MAX	(256 * 1024)
#define HX_KILL_ROUNDS	5

void
hx_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "msc-exec-helper: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	(void)!write(2, line, (size_t)n);
}

int64_t
hx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
hx_marker(char out[33])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char r[16];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[r[i] >> 4];
		out[2 * i + 1] = hex[r[i] & 15];
	}
	out[32] = '\0';
	return 0;
}

/* Whether /proc/<pid>/environ holds the exact entry `want`. */
static bool
has_entry(const char *pid, const char *want, char *buf)
{
	char path[300];
	size_t have = 0, wl = strlen(want);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	while (have < HX_ENV_READ_MAX - 1) {
		n = read(fd, buf + have, HX_ENV_READ_MAX - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	buf[have] = '\0';
	for (size_t i = 0; i < have;) {
		size_t l = strnlen(buf + i, have - i);

		if (l == wl && memcmp(buf + i, want, wl) == 0)
			return true;
		i += l + 1;
	}
	return false;
}

int
hx_proc_stat(pid_t pid, struct hx_stat *st)
{
	char path[64], buf[1024], *p, *save = NULL;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	/* The name, in parentheses, may hold spaces and parentheses. */
	if ((p = strrchr(buf, ')')) == NULL)
		return -EIO;
	memset(st, 0, sizeof(*st));
	/* Field 3 is the state, 5 the process group, 22 the start time. */
	for (field = 3, p = strtok_r(p + 1, " ", &save); p != NULL && field <= 22;
	    field++, p = strtok_r(NULL, " ", &save)) {
		if (field == 3)
			st->state = p[0];
		else if (field == 5)
			st->pgrp = (pid_t)strtol(p, NULL, 10);
		else if (field == 22)
			st->start = strtoull(p, NULL, 10);
	}
	return field > 22 ? 0 : -EIO;
}

/* The process group of pid, or 0. */
static pid_t
pgid_of(const char *pid)
{
	struct hx_stat st;
	long n = strtol(pid, NULL, 10);

	return n > 0 && hx_proc_stat((pid_t)n, &st) == 0 ? st.pgrp : 0;
}

int
hx_count_group(pid_t pgid)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	int n = 0;

	if (dir == NULL || pgid <= 1)
		goto out;
	while ((de = readdir(dir)) != NULL)
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
		    pgid_of(de->d_name) == pgid)
			n++;
out:
	if (dir != NULL)
		closedir(dir);
	return n;
}

static void
kill_group(pid_t g)
{
	if (g > 1 && g != getpgrp() && g != getpgid(1))
		(void)kill(-g, SIGKILL);
}

void
hx_kill_exec(const char *marker, pid_t pgid)
{
	char want[64], *buf;
	pid_t self = getpid();

	kill_group(pgid);
	if (marker == NULL || marker[0] == '\0')
		return;
	snprintf(want, sizeof(want), "%s=%s", FX_MARKER_VAR, marker);
	if ((buf = malloc(HX_ENV_READ_MAX)) == NULL)
		return;
	for (int round = 0; round < HX_KILL_ROUNDS; round++) {
		struct dirent *de;
		bool found = false;
		DIR *dir = opendir("/proc");

		if (dir == NULL)
			break;
		while ((de = readdir(dir)) != NULL) {
			pid_t p;

			if (de->d_name[0] < '1' || de->d_name[0] > '9')
				continue;
			p = (pid_t)atoi(de->d_name);
			if (p == self || p == 1 ||
			    !has_entry(de->d_name, want, buf))
				continue;
			found = true;
			kill_group(pgid_of(de->d_name));
			(void)kill(p, SIGKILL);
		}
		closedir(dir);
		if (!found)
			break;
	}
	free(buf);
}
