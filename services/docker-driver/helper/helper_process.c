/*
 * helper_process.c - background processes (issue 28): the helper run as
 * a plain command inside its computer,
 *
 *   msc-exec-helper --process start [--stdin] [--log-limit N] [--max N]
 *                   [--label TEXT] -- ARGV...
 *   msc-exec-helper --process list
 *   msc-exec-helper --process output ID OFFSET MAX_BYTES BUDGET WAIT_MS [RE]
 *   msc-exec-helper --process kill ID SIGNAL GRACE_MS
 *
 * each printing one JSON object on stdout (exit 0), or one line on stderr
 * (exit 2). The state lives in the computer, one folder per process under
 * HX_PROC_ROOT, so it outlives the MCP connection and the server:
 *
 *   label     the command as the agent gave it
 *   started   Unix seconds
 *   pid       the command's pid, which is also its process group, and
 *             its start time (clock ticks after boot, /proc/PID/stat)
 *   status    "exited N" or "killed SIG", once the command ended
 *   alive     locked (flock) by the supervisor while it lives
 *   reap.lock locked shared by a kill while it signals, exclusive by the
 *             supervisor while it reaps the command
 *   log, log.0, offsets   the bounded output (below)
 *
 * `start` forks a supervisor that leaves the exec (setsid, and a re-exec
 * with an environment without KILNTAINERS_EXEC, so the exec's end does not
 * kill it by marker) and runs the command in its own session and process
 * group, stdin from the given text or /dev/null, stdout and stderr into
 * one pipe. The supervisor appends what it reads to `log`; when `log`
 * holds half the limit it becomes `log.0` (the older half is dropped), so
 * the newest bytes are kept, at most the limit, and `cat log.0 log` reads
 * them in order. `offsets` holds the stream offsets where log.0 and log
 * begin; a reader locks `offsets.lock` shared while it reads, the
 * supervisor exclusive while it rotates.
 *
 * A process is running while its supervisor holds `alive`; a folder whose
 * `alive` is free and which has no `status` ended with its computer (a
 * restart): it reads as killed, without a signal.
 *
 * The supervisor reads the command's exit without reaping it (WNOWAIT)
 * and reaps it only when it ends itself, under `reap.lock`: until then
 * the zombie keeps the pid, and so the process group's number, from being
 * reused, and a kill signals only the group whose leader has the start
 * time in `pid`.
 *
 * The sandboxed code can change all of this (it runs as the same user);
 * what it must not do is make these commands, which the server calls,
 * hang, crash or act for another user: HX_PROC_ROOT and each folder are
 * used only if private to this user (hxp_private_dir), files only if they
 * are regular files (hxp_open_file), locks are waited for a bounded time
 * (hxp_lock).
 */
#include "helper.h"
#include "helper_process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- one process's state ----------------------------------------------- */

struct pstate {
	char dir[PATH_MAX];
	char label[4096];
	long long started, pid;
	unsigned long long start;       /* the leader's; 0: not kept */
	bool running, ended_unknown, signaled;
	int code;                       /* exit code or signal */
	long long first, total;         /* offsets kept: [first, total) */
};

static void
log_sizes(const char *dir, long long *first, long long *total)
{
	char buf[64], path[PATH_MAX];
	long long old_at = 0, cur_at = 0;
	struct stat st;

	if (hxp_read_small(dir, "offsets", buf, sizeof(buf)) > 0)
		(void)sscanf(buf, "%lld %lld", &old_at, &cur_at);
	snprintf(path, sizeof(path), "%s/log", dir);
	*total = cur_at + (lstat(path, &st) == 0 && S_ISREG(st.st_mode) ?
	    st.st_size : 0);
	snprintf(path, sizeof(path), "%s/log.0", dir);
	*first = lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? old_at : cur_at;
}

static int
load(const char *id, struct pstate *ps)
{
	char buf[64], what[16];
	int code;

	memset(ps, 0, sizeof(*ps));
	snprintf(ps->dir, sizeof(ps->dir), HX_PROC_ROOT "/%s", id);
	if (!hxp_valid_id(id) || !hxp_private_dir(ps->dir))
		return -ENOENT;
	if (hxp_read_small(ps->dir, "label", ps->label, sizeof(ps->label)) < 0)
		ps->label[0] = '\0';
	(void)hxp_read_num(ps->dir, "started", 0, LLONG_MAX, &ps->started);
	if (hxp_read_small(ps->dir, "pid", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%lld %llu", &ps->pid, &ps->start) < 1)
		ps->pid = 0;
	if (ps->pid < 0 || ps->pid > INT_MAX)
		ps->pid = 0;
	ps->code = -1;
	if (hxp_read_small(ps->dir, "status", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%15s %d", what, &code) == 2) {
		ps->signaled = strcmp(what, "killed") == 0;
		ps->code = code;
	} else if (hxp_alive(ps->dir))
		ps->running = true;
	else
		ps->ended_unknown = true;
	log_sizes(ps->dir, &ps->first, &ps->total);
	return 0;
}

static const char *
state_name(const struct pstate *ps)
{
	if (ps->running)
		return "running";
	return ps->signaled || ps->ended_unknown ? "killed" : "exited";
}

static void
out_state(struct out *o, const char *id, const struct pstate *ps)
{
	hxp_out_fmt(o, "\"process_id\": \"%s\", \"command\": ", id);
	hxp_out_str(o, ps->label, strlen(ps->label));
	/* No pid yet: its supervisor is starting it. */
	if (ps->pid > 0)
		hxp_out_fmt(o, ", \"pid\": %lld", ps->pid);
	else
		hxp_out_cstr(o, ", \"pid\": null");
	hxp_out_fmt(o, ", \"started_at\": %lld, \"state\": \"%s\", "
	    "\"exit_code\": ", ps->started, state_name(ps));
	if (!ps->running && !ps->signaled && !ps->ended_unknown)
		hxp_out_fmt(o, "%d", ps->code);
	else
		hxp_out_cstr(o, "null");
	hxp_out_cstr(o, ", \"signal\": ");
	if (ps->signaled)
		hxp_out_fmt(o, "%d", ps->code);
	else
		hxp_out_cstr(o, "null");
	hxp_out_fmt(o, ", \"output_bytes\": %lld, \"log\": \"%s/log\"", ps->total,
	    ps->dir);
	if (ps->ended_unknown)
		hxp_out_cstr(o, ", \"note\": \"ended with its computer (restart or "
		    "reset)\"");
}

/* ---- list, output, kill ------------------------------------------------ */

static int
cmp_ids(const void *a, const void *b)
{
	long long x = atoll(*(char *const *)a + 1);
	long long y = atoll(*(char *const *)b + 1);

	return x < y ? -1 : x > y;
}

static int
list(void)
{
	DIR *d;
	struct dirent *e;
	char *ids[HX_PROC_KEEP_ENDED + 1024];
	size_t n = 0;
	struct out o = { 0 };

	if (hxp_root_refused())
		return HX_EXIT_ERR;
	d = opendir(HX_PROC_ROOT);
	hxp_out_cstr(&o, "{\"processes\": [");
	while (d != NULL && (e = readdir(d)) != NULL &&
	    n < sizeof(ids) / sizeof(ids[0]))
		if (hxp_valid_id(e->d_name) && (ids[n] = strdup(e->d_name)) != NULL)
			n++;
	if (d != NULL)
		closedir(d);
	qsort(ids, n, sizeof(ids[0]), cmp_ids);
	for (size_t i = 0; i < n; i++) {
		struct pstate ps;

		if (load(ids[i], &ps) == 0) {
			hxp_out_cstr(&o, o.p[o.len - 1] == '[' ? "{" : ", {");
			out_state(&o, ids[i], &ps);
			hxp_out_cstr(&o, "}");
		}
		free(ids[i]);
	}
	hxp_out_cstr(&o, "]}");
	return hxp_out_print(&o);
}

/* Reads stream bytes [from, to) of dir's log into buf; the bytes read. */
static size_t
read_log(const char *dir, long long from, long long to, char *buf)
{
	char obuf[64];
	long long old_at = 0, cur_at = 0;
	size_t got = 0;
	int lock_fd;

	/* A lock held too long is read through: the reader is the one
	 * who holds it. */
	if ((lock_fd = hxp_open_file(dir, "offsets.lock", O_RDONLY)) >= 0)
		(void)hxp_lock(lock_fd, LOCK_SH, HX_PROC_LOCK_MS);
	if (hxp_read_small(dir, "offsets", obuf, sizeof(obuf)) > 0)
		(void)sscanf(obuf, "%lld %lld", &old_at, &cur_at);
	for (int part = 0; part < 2 && from < to; part++) {
		long long at = part == 0 ? old_at : cur_at;
		int fd;

		if (part == 0 && from >= cur_at)
			continue;
		if (from < at || (fd = hxp_open_file(dir, part == 0 ? "log.0" :
		    "log", O_RDONLY)) < 0)
			continue;
		while (from < to) {
			long long end = part == 0 && to > cur_at ? cur_at : to;
			ssize_t r = pread(fd, buf + got, (size_t)(end - from),
			    from - at);

			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
			from += r;
			if (part == 0 && from >= cur_at)
				break;
		}
		close(fd);
	}
	if (lock_fd >= 0)
		close(lock_fd);
	return got;
}

static int
output(int argc, char **argv)
{
	long long offset, max_bytes, budget, wait_ms, start_at;
	struct pstate ps;
	regex_t re;
	bool has_re = argc > 5 && argv[5][0] != '\0', matched = false;
	bool truncated = false;
	char *buf = NULL, match[256] = "";
	size_t got = 0, used = 0, take = 0;
	int64_t deadline;
	long long seen = -1;
	struct out o = { 0 };

	if (argc < 5 || !hxp_parse_num(argv[1], 0, LLONG_MAX / 2, &offset) ||
	    !hxp_parse_num(argv[2], 1, 16 * 1024 * 1024, &max_bytes) ||
	    !hxp_parse_num(argv[3], 64, 64 * 1024 * 1024, &budget) ||
	    !hxp_parse_num(argv[4], 0, HX_PROC_WAIT_MAX_MS, &wait_ms))
		return hxp_fail("output: bad arguments");
	if (hxp_root_refused())
		return HX_EXIT_ERR;
	if (load(argv[0], &ps) != 0)
		return hxp_fail("Unknown process_id %s in this computer; "
		    "process_list shows its processes.", argv[0]);
	if (has_re) {
		int rc = regcomp(&re, argv[5], REG_EXTENDED | REG_NEWLINE);

		if (rc != 0) {
			char e[200];

			regerror(rc, &re, e, sizeof(e));
			return hxp_fail("pattern: not a valid POSIX extended "
			    "regular expression: %s", e);
		}
	}
	deadline = hx_now_ms() + wait_ms;
	for (;;) {
		if (offset < ps.first) {
			offset = ps.first;
			truncated = true;
		}
		if (offset > ps.total)
			offset = ps.total;
		start_at = offset;
		bool grew = ps.total > offset;

		if (has_re && grew && ps.total != seen) {
			/* The newest HX_PROC_SCAN_MAX bytes at most. */
			long long from = ps.total - offset > HX_PROC_SCAN_MAX ?
			    ps.total - HX_PROC_SCAN_MAX : offset;
			char *nb = realloc(buf, (size_t)(ps.total - from) + 1);
			regmatch_t m;

			if (nb == NULL)
				return hxp_fail("out of memory");
			buf = nb;
			got = read_log(ps.dir, from, ps.total, buf);
			for (size_t i = 0; i < got; i++)
				if (buf[i] == '\0')
					buf[i] = '\n';
			buf[got] = '\0';
			seen = ps.total;
			if (regexec(&re, buf, 1, &m, 0) == 0) {
				size_t ml = (size_t)(m.rm_eo - m.rm_so);

				if (ml >= sizeof(match))
					ml = sizeof(match) - 1;
				memcpy(match, buf + m.rm_so, ml);
				match[ml] = '\0';
				matched = true;
			}
		}
		if (matched || !ps.running || hx_now_ms() >= deadline ||
		    (!has_re && grew))
			break;
		usleep(HX_PROC_POLL_MS * 1000);
		if (load(argv[0], &ps) != 0)
			return hxp_fail("process %s was removed", argv[0]);
	}
	/* The bytes returned: at most max_bytes, their escapes in budget. */
	long long avail = ps.total - start_at;
	size_t want = (size_t)(avail < max_bytes ? avail : max_bytes);
	char *nb = realloc(buf, want + 1);

	if (nb == NULL)
		return hxp_fail("out of memory");
	buf = nb;
	got = read_log(ps.dir, start_at, start_at + (long long)want, buf);
	while (take < got && used + hxp_esc_len((unsigned char)buf[take]) <=
	    (size_t)budget)
		used += hxp_esc_len((unsigned char)buf[take++]);
	/* Not inside a UTF-8 sequence, when cut. */
	if (take < got) {
		size_t back = take;

		while (back > 0 && back + 4 > take &&
		    ((unsigned char)buf[back] & 0xC0) == 0x80)
			back--;
		if (back > 0 && ((unsigned char)buf[take] & 0xC0) == 0x80)
			take = back;
	}
	hxp_out_cstr(&o, "{");
	out_state(&o, argv[0], &ps);
	hxp_out_cstr(&o, ", \"output\": ");
	hxp_out_str(&o, buf != NULL ? buf : "", take);
	hxp_out_fmt(&o, ", \"offset\": %lld, \"more\": %s", start_at +
	    (long long)take, start_at + (long long)take < ps.total ? "true" :
	    "false");
	if (truncated)
		hxp_out_cstr(&o, ", \"dropped\": true");
	if (has_re) {
		hxp_out_fmt(&o, ", \"matched\": %s", matched ? "true" : "false");
		if (matched) {
			hxp_out_cstr(&o, ", \"match\": ");
			hxp_out_str(&o, match, strlen(match));
		}
		regfree(&re);
	}
	hxp_out_cstr(&o, "}");
	free(buf);
	return hxp_out_print(&o);
}

static int
signal_number(const char *s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "TERM", SIGTERM }, { "KILL", SIGKILL }, { "INT", SIGINT },
		{ "HUP", SIGHUP }, { "QUIT", SIGQUIT }, { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 }, { "STOP", SIGSTOP }, { "CONT", SIGCONT },
	};
	long long n;

	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (strcmp(s, sigs[i].name) == 0)
			return sigs[i].sig;
	if (hxp_parse_num(s, 1, 64, &n))
		return (int)n;
	return -1;
}

/* Whether a process of group pgid still runs (its zombies do not). */
static bool
group_runs(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool runs = false;

	if (d == NULL)
		return kill(-pgid, 0) == 0;
	while (!runs && (e = readdir(d)) != NULL) {
		struct hx_stat st;
		long long pid;

		runs = hxp_parse_num(e->d_name, 1, INT_MAX, &pid) &&
		    hx_proc_stat((pid_t)pid, &st) == 0 && st.pgrp == pgid &&
		    st.state != 'Z' && st.state != 'X';
	}
	closedir(d);
	return runs;
}

/*
 * Sends sig to the process's group if it is still the one its supervisor
 * started: the supervisor lives, and the group's leader (a zombie once it
 * exited, which the supervisor does not reap while `reap.lock` is held
 * here) has the start time kept in `pid`. Whether it was sent.
 */
static bool
signal_group(const struct pstate *ps, int sig)
{
	pid_t pgid = (pid_t)ps->pid;
	struct hx_stat st;
	bool ours, sent = false;
	int lock_fd;

	if (pgid <= 1)
		return false;
	/* A folder of an older helper has no reap.lock and no start time. */
	lock_fd = hxp_open_file(ps->dir, "reap.lock", O_RDONLY);
	if (lock_fd >= 0 && hxp_lock(lock_fd, LOCK_SH, HX_PROC_LOCK_MS) != 0) {
		close(lock_fd);
		return false;
	}
	ours = hxp_alive(ps->dir) && (ps->start == 0 ||
	    (hx_proc_stat(pgid, &st) == 0 && st.start == ps->start &&
		st.pgrp == pgid));
	if (ours && group_runs(pgid))
		sent = kill(-pgid, sig) == 0;
	if (lock_fd >= 0)
		close(lock_fd);
	return sent;
}

static int
kill_process(int argc, char **argv)
{
	struct pstate ps;
	long long grace;
	int sig;
	bool escalated = false;
	struct out o = { 0 };

	if (argc < 3 || !hxp_parse_num(argv[2], 0, HX_PROC_WAIT_MAX_MS, &grace))
		return hxp_fail("kill: bad arguments");
	if ((sig = signal_number(argv[1])) < 0)
		return hxp_fail("signal: unknown signal %s (TERM, KILL, INT, HUP, "
		    "QUIT, USR1, USR2, STOP, CONT or a number)", argv[1]);
	if (hxp_root_refused())
		return HX_EXIT_ERR;
	if (load(argv[0], &ps) != 0)
		return hxp_fail("Unknown process_id %s in this computer; "
		    "process_list shows its processes.", argv[0]);
	/* Just started: its supervisor writes `pid` once the command runs. */
	for (int64_t until = hx_now_ms() + HX_PROC_PID_WAIT_MS; ps.running &&
	    ps.pid == 0 && hx_now_ms() < until;) {
		usleep(10000);
		(void)load(argv[0], &ps);
	}
	/* The group outlives the command while its children do. */
	if (signal_group(&ps, sig)) {
		if (sig == SIGTERM) {
			int64_t until = hx_now_ms() + grace;

			while (group_runs((pid_t)ps.pid) && hx_now_ms() < until)
				usleep(HX_PROC_POLL_MS * 1000);
			escalated = signal_group(&ps, SIGKILL);
		}
		/* Until the supervisor wrote the status (bounded). */
		for (int t = 0; t < 40 && (sig == SIGTERM || sig == SIGKILL);
		    t++) {
			char buf[32];

			if (hxp_read_small(ps.dir, "status", buf, sizeof(buf)) > 0)
				break;
			usleep(HX_PROC_POLL_MS * 1000);
		}
	}
	(void)load(argv[0], &ps);
	hxp_out_cstr(&o, "{");
	out_state(&o, argv[0], &ps);
	hxp_out_fmt(&o, ", \"signal_sent\": %d, \"escalated_to_kill\": %s}", sig,
	    escalated ? "true" : "false");
	return hxp_out_print(&o);
}

int
hx_process_main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return hxp_fail("usage: --process start|list|output|kill ...");
	if (strcmp(argv[1], "start") == 0)
		return hxp_start(argc - 2, argv + 2);
	if (strcmp(argv[1], "supervise") == 0)
		return hxp_supervise(argc - 2, argv + 2);
	if (strcmp(argv[1], "list") == 0)
		return list();
	if (strcmp(argv[1], "output") == 0)
		return output(argc - 2, argv + 2);
	if (strcmp(argv[1], "kill") == 0)
		return kill_process(argc - 2, argv + 2);
	return hxp_fail("unknown --process command %s", argv[1]);
}
