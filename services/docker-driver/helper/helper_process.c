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
 *   pid       the command's pid, which is also its process group
 *   status    "exited N" or "killed SIG", once the command ended
 *   alive     locked (flock) by the supervisor while it lives
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
	bool running, ended_unknown, signaled;
	int code;                       /* exit code or signal */
	long long first, total;         /* offsets kept: [first, total) */
};

/* Whether the supervisor of `dir` still holds its `alive` lock. */
bool
hxp_alive(const char *dir)
{
	char path[PATH_MAX];
	bool held;
	int fd;

	snprintf(path, sizeof(path), "%s/alive", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

static void
log_sizes(const char *dir, long long *first, long long *total)
{
	char buf[64], path[PATH_MAX];
	long long old_at = 0, cur_at = 0;
	struct stat st;

	if (hxp_read_small(dir, "offsets", buf, sizeof(buf)) > 0)
		(void)sscanf(buf, "%lld %lld", &old_at, &cur_at);
	snprintf(path, sizeof(path), "%s/log", dir);
	*total = cur_at + (stat(path, &st) == 0 ? st.st_size : 0);
	snprintf(path, sizeof(path), "%s/log.0", dir);
	*first = stat(path, &st) == 0 ? old_at : cur_at;
}

static int
load(const char *id, struct pstate *ps)
{
	char buf[64], what[16];
	struct stat st;
	int code;

	memset(ps, 0, sizeof(*ps));
	snprintf(ps->dir, sizeof(ps->dir), HX_PROC_ROOT "/%s", id);
	if (!hxp_valid_id(id) || stat(ps->dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return -ENOENT;
	if (hxp_read_small(ps->dir, "label", ps->label, sizeof(ps->label)) < 0)
		ps->label[0] = '\0';
	if (hxp_read_small(ps->dir, "started", buf, sizeof(buf)) > 0)
		(void)hxp_parse_num(strtok(buf, "\n"), 0, LLONG_MAX, &ps->started);
	if (hxp_read_small(ps->dir, "pid", buf, sizeof(buf)) > 0)
		(void)hxp_parse_num(strtok(buf, "\n"), 0, INT_MAX, &ps->pid);
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
	hxp_out_fmt(o, ", \"pid\": %lld, \"started_at\": %lld, \"state\": \"%s\", "
	    "\"exit_code\": ", ps->pid, ps->started, state_name(ps));
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
	DIR *d = opendir(HX_PROC_ROOT);
	struct dirent *e;
	char *ids[HX_PROC_KEEP_ENDED + 1024];
	size_t n = 0;
	struct out o = { 0 };

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
	char path[PATH_MAX], obuf[64];
	long long old_at = 0, cur_at = 0;
	size_t got = 0;
	int lock_fd;

	snprintf(path, sizeof(path), "%s/offsets.lock", dir);
	lock_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (lock_fd >= 0)
		(void)flock(lock_fd, LOCK_SH);
	if (hxp_read_small(dir, "offsets", obuf, sizeof(obuf)) > 0)
		(void)sscanf(obuf, "%lld %lld", &old_at, &cur_at);
	for (int part = 0; part < 2 && from < to; part++) {
		long long at = part == 0 ? old_at : cur_at;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, part == 0 ?
		    "log.0" : "log");
		if (part == 0 && from >= cur_at)
			continue;
		if (from < at || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
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
			size_t want = (size_t)(ps.total - offset);
			char *nb = realloc(buf, want + 1);
			regmatch_t m;

			if (nb == NULL)
				return hxp_fail("out of memory");
			buf = nb;
			got = read_log(ps.dir, offset, ps.total, buf);
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

static bool
group_gone(pid_t pgid)
{
	return kill(-pgid, 0) != 0 && errno == ESRCH;
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
	if (load(argv[0], &ps) != 0)
		return hxp_fail("Unknown process_id %s in this computer; "
		    "process_list shows its processes.", argv[0]);
	/* The group outlives the command while its children do. */
	if (hxp_alive(ps.dir) && ps.pid > 1 && !group_gone((pid_t)ps.pid)) {
		(void)kill(-(pid_t)ps.pid, sig);
		if (sig == SIGTERM) {
			int64_t until = hx_now_ms() + grace;

			while (!group_gone((pid_t)ps.pid) &&
			    hx_now_ms() < until)
				usleep(HX_PROC_POLL_MS * 1000);
			if (!group_gone((pid_t)ps.pid)) {
				(void)kill(-(pid_t)ps.pid, SIGKILL);
				escalated = true;
			}
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
