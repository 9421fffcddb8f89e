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

#define HX_PROC_ROOT		"/tmp/kiln-processes"
#define HX_PROC_KEEP_ENDED	64      /* ended folders kept per computer */
#define HX_PROC_STDIN_MAX	(2 * 1024 * 1024)
#define HX_PROC_POLL_MS		50
#define HX_PROC_WAIT_MAX_MS	30000
#define HX_PROC_LOG_MIN		1024
#define HX_EXIT_ERR		2

extern char **environ;

/* ---- small pieces ------------------------------------------------------ */

static int
fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
fail(const char *fmt, ...)
{
	char line[600];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(2, line, (size_t)n);
	return HX_EXIT_ERR;
}

static bool
parse_num(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* A process id as `start` makes them: "p" and a decimal number. */
static bool
valid_id(const char *id)
{
	size_t n = strlen(id);

	if (n < 2 || n > 12 || id[0] != 'p')
		return false;
	for (size_t i = 1; i < n; i++)
		if (id[i] < '0' || id[i] > '9')
			return false;
	return true;
}

static int
write_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0)
		return -errno;
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		p = (const char *)p + w;
		len -= (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0)
		return -errno;
	return 0;
}

/* Reads at most cap-1 bytes of dir/name, NUL-terminated; -errno. */
static ssize_t
read_small(const char *dir, const char *name, char *buf, size_t cap)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

/* ---- JSON output ------------------------------------------------------- */

struct out {
	char *p;
	size_t len, cap;
};

static void
out_raw(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *p = realloc(o->p, cap);

		if (p == NULL) {
			(void)fail("out of memory");
			_exit(HX_EXIT_ERR);
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = '\0';
}

static void
out_cstr(struct out *o, const char *s)
{
	out_raw(o, s, strlen(s));
}

static void
out_fmt(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
out_fmt(struct out *o, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_raw(o, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf) - 1);
}

/* The escaped size of byte c in a JSON string (bytes >= 0x80 as they are:
 * the session service repairs invalid UTF-8). */
static size_t
esc_len(unsigned char c)
{
	if (c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r')
		return 2;
	return c < 0x20 ? 6 : 1;
}

static void
out_esc_byte(struct out *o, unsigned char c)
{
	char b[8];

	switch (c) {
	case '"': out_cstr(o, "\\\""); return;
	case '\\': out_cstr(o, "\\\\"); return;
	case '\n': out_cstr(o, "\\n"); return;
	case '\t': out_cstr(o, "\\t"); return;
	case '\r': out_cstr(o, "\\r"); return;
	}
	if (c < 0x20) {
		snprintf(b, sizeof(b), "\\u%04x", c);
		out_raw(o, b, 6);
	} else
		out_raw(o, (const char *)&c, 1);
}

static void
out_str(struct out *o, const char *s, size_t n)
{
	out_cstr(o, "\"");
	for (size_t i = 0; i < n; i++)
		out_esc_byte(o, (unsigned char)s[i]);
	out_cstr(o, "\"");
}

static int
out_print(struct out *o)
{
	size_t off = 0;

	out_cstr(o, "\n");
	while (off < o->len) {
		ssize_t w = write(1, o->p + off, o->len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return HX_EXIT_ERR;
		off += (size_t)w;
	}
	free(o->p);
	return 0;
}

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
static bool
alive(const char *dir)
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

	if (read_small(dir, "offsets", buf, sizeof(buf)) > 0)
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
	if (!valid_id(id) || stat(ps->dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return -ENOENT;
	if (read_small(ps->dir, "label", ps->label, sizeof(ps->label)) < 0)
		ps->label[0] = '\0';
	if (read_small(ps->dir, "started", buf, sizeof(buf)) > 0)
		(void)parse_num(strtok(buf, "\n"), 0, LLONG_MAX, &ps->started);
	if (read_small(ps->dir, "pid", buf, sizeof(buf)) > 0)
		(void)parse_num(strtok(buf, "\n"), 0, INT_MAX, &ps->pid);
	ps->code = -1;
	if (read_small(ps->dir, "status", buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%15s %d", what, &code) == 2) {
		ps->signaled = strcmp(what, "killed") == 0;
		ps->code = code;
	} else if (alive(ps->dir))
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
	out_fmt(o, "\"process_id\": \"%s\", \"command\": ", id);
	out_str(o, ps->label, strlen(ps->label));
	out_fmt(o, ", \"pid\": %lld, \"started_at\": %lld, \"state\": \"%s\", "
	    "\"exit_code\": ", ps->pid, ps->started, state_name(ps));
	if (!ps->running && !ps->signaled && !ps->ended_unknown)
		out_fmt(o, "%d", ps->code);
	else
		out_cstr(o, "null");
	out_cstr(o, ", \"signal\": ");
	if (ps->signaled)
		out_fmt(o, "%d", ps->code);
	else
		out_cstr(o, "null");
	out_fmt(o, ", \"output_bytes\": %lld, \"log\": \"%s/log\"", ps->total,
	    ps->dir);
	if (ps->ended_unknown)
		out_cstr(o, ", \"note\": \"ended with its computer (restart or "
		    "reset)\"");
}

/* ---- the supervisor ---------------------------------------------------- */

struct sup {
	const char *dir;
	long long limit;
	long long old_at, cur_at, cur_len;
	int log_fd, rot_fd;
};

static int
save_offsets(struct sup *s)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%lld %lld\n", s->old_at, s->cur_at);

	return write_file(s->dir, "offsets", buf, (size_t)n);
}

static int
open_log(struct sup *s)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/log", s->dir);
	s->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
	    0644);
	return s->log_fd < 0 ? -errno : 0;
}

/* log becomes log.0 (the older half dropped) once it holds limit/2. */
static void
rotate(struct sup *s)
{
	char from[PATH_MAX], to[PATH_MAX];

	(void)flock(s->rot_fd, LOCK_EX);
	snprintf(from, sizeof(from), "%s/log", s->dir);
	snprintf(to, sizeof(to), "%s/log.0", s->dir);
	close(s->log_fd);
	if (rename(from, to) == 0) {
		s->old_at = s->cur_at;
		s->cur_at += s->cur_len;
		s->cur_len = 0;
	}
	(void)save_offsets(s);
	if (open_log(s) != 0)
		s->log_fd = -1;
	(void)flock(s->rot_fd, LOCK_UN);
}

static void
append(struct sup *s, const char *p, size_t n)
{
	while (n > 0) {
		long long room = s->limit / 2 - s->cur_len;
		size_t take = (long long)n < room ? n : (size_t)room;
		ssize_t w;

		if (room <= 0) {
			rotate(s);
			continue;
		}
		if (s->log_fd < 0)
			return;
		w = write(s->log_fd, p, take);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;         /* a full disk: the output is dropped */
		s->cur_len += w;
		p += w;
		n -= (size_t)w;
	}
}

static void
write_status(const char *dir, int st)
{
	char buf[32];
	int n;

	if (WIFSIGNALED(st))
		n = snprintf(buf, sizeof(buf), "killed %d\n", WTERMSIG(st));
	else
		n = snprintf(buf, sizeof(buf), "exited %d\n", WEXITSTATUS(st));
	(void)write_file(dir, "status", buf, (size_t)n);
}

/*
 * --process supervise DIR LIMIT STDIN(0|1) -- ARGV: runs in a clean
 * environment, detached; never returns to an exec.
 */
static int
supervise(int argc, char **argv)
{
	struct sup s = { .log_fd = -1 };
	char path[PATH_MAX], buf[65536];
	long long use_stdin;
	int alive_fd, pfd[2], in_fd, status = 0;
	bool exited = false;
	pid_t pid;

	if (argc < 5 || strcmp(argv[3], "--") != 0 ||
	    !parse_num(argv[1], HX_PROC_LOG_MIN, LLONG_MAX / 4, &s.limit) ||
	    !parse_num(argv[2], 0, 1, &use_stdin))
		return fail("supervise: bad arguments");
	s.dir = argv[0];
	snprintf(path, sizeof(path), "%s/alive", s.dir);
	if ((alive_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    flock(alive_fd, LOCK_EX) != 0)
		return fail("supervise: %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/offsets.lock", s.dir);
	if ((s.rot_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    save_offsets(&s) != 0 || open_log(&s) != 0 ||
	    pipe2(pfd, O_CLOEXEC) != 0) {
		(void)write_file(s.dir, "status", "exited 127\n", 11);
		return fail("supervise: %s", strerror(errno));
	}
	if (use_stdin)
		snprintf(path, sizeof(path), "%s/stdin", s.dir);
	else
		snprintf(path, sizeof(path), "/dev/null");
	in_fd = open(path, O_RDONLY | O_CLOEXEC);
	if ((pid = fork()) < 0) {
		(void)write_file(s.dir, "status", "exited 127\n", 11);
		return fail("supervise: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		setsid();       /* its own session and process group */
		signal(SIGPIPE, SIG_DFL);
		if (in_fd >= 0)
			dup2(in_fd, 0);
		else
			close(0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execvp(argv[4], argv + 4);
		dprintf(2, "%s: %s\n", argv[4], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (in_fd >= 0)
		close(in_fd);
	close(pfd[1]);
	{
		int n = snprintf(buf, sizeof(buf), "%ld\n", (long)pid);

		(void)write_file(s.dir, "pid", buf, (size_t)n);
	}
	/*
	 * Until the pipe's EOF: the command's children may hold it after
	 * the command ended (its status is written then, the log goes on).
	 */
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		ssize_t n;

		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = true;
			write_status(s.dir, status);
		}
		if (poll(&p, 1, exited ? -1 : 200) < 0 && errno != EINTR)
			break;
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(pfd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		append(&s, buf, (size_t)n);
	}
	if (!exited && waitpid(pid, &status, 0) == pid)
		write_status(s.dir, status);
	return 0;
}

/* ---- start ------------------------------------------------------------- */

/* Running processes now; drops the oldest ended folders past the keep. */
static int
count_and_prune(void)
{
	DIR *d = opendir(HX_PROC_ROOT);
	struct dirent *e;
	long long ended[HX_PROC_KEEP_ENDED + 1];
	int nended = 0, running = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char dir[PATH_MAX], buf[16];
		long long n;

		if (!valid_id(e->d_name))
			continue;
		snprintf(dir, sizeof(dir), HX_PROC_ROOT "/%s", e->d_name);
		if (read_small(dir, "status", buf, sizeof(buf)) < 0 &&
		    alive(dir)) {
			running++;
			continue;
		}
		(void)parse_num(e->d_name + 1, 0, LLONG_MAX, &n);
		/* Keep the newest HX_PROC_KEEP_ENDED ended ones. */
		ended[nended++] = n;
		if (nended <= HX_PROC_KEEP_ENDED)
			continue;
		int oldest = 0;

		for (int i = 1; i < nended; i++)
			if (ended[i] < ended[oldest])
				oldest = i;
		char victim[PATH_MAX], f[PATH_MAX + 32];
		static const char *const files[] = { "label", "started", "pid",
			"status", "alive", "log", "log.0", "offsets",
			"offsets.lock", "stdin" };

		snprintf(victim, sizeof(victim), HX_PROC_ROOT "/p%lld",
		    ended[oldest]);
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(f, sizeof(f), "%s/%s", victim, files[i]);
			(void)unlink(f);
		}
		(void)rmdir(victim);
		ended[oldest] = ended[--nended];
	}
	closedir(d);
	return running;
}

static int
next_id(char id[24])
{
	char buf[32];
	long long n = 0;

	if (read_small(HX_PROC_ROOT, "next", buf, sizeof(buf)) > 0)
		(void)parse_num(strtok(buf, "\n"), 0, 1000000000000LL, &n);
	for (int tries = 0; tries < 1000; tries++) {
		char dir[PATH_MAX];

		n++;
		snprintf(id, 24, "p%lld", n);
		snprintf(dir, sizeof(dir), HX_PROC_ROOT "/%s", id);
		if (mkdir(dir, 0700) == 0) {
			int len = snprintf(buf, sizeof(buf), "%lld\n", n);

			return write_file(HX_PROC_ROOT, "next", buf,
			    (size_t)len);
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static int
copy_stdin(const char *dir)
{
	char path[PATH_MAX], buf[65536];
	size_t total = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/stdin", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(0, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
		if (total > HX_PROC_STDIN_MAX || write(fd, buf, (size_t)n) !=
		    n) {
			close(fd);
			return -EFBIG;
		}
	}
	return close(fd) == 0 ? 0 : -errno;
}

/* The environment without KILNTAINERS_EXEC (the exec's kill marker). */
static char **
clean_env(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	if ((env = calloc(n + 1, sizeof(char *))) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "KILNTAINERS_EXEC=", 17) != 0)
			env[k++] = environ[i];
	return env;
}

static int
start(int argc, char **argv)
{
	long long limit = 1024 * 1024, max = 16;
	const char *label = NULL;
	bool use_stdin = false;
	char id[24], dir[PATH_MAX], buf[64], lim[32];
	int i, root_fd, running, rv, n;
	struct out o = { 0 };
	pid_t pid;

	for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--stdin") == 0)
			use_stdin = true;
		else if (strcmp(argv[i], "--log-limit") == 0 && i + 1 < argc &&
		    parse_num(argv[i + 1], HX_PROC_LOG_MIN, LLONG_MAX / 4,
			&limit))
			i++;
		else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc &&
		    parse_num(argv[i + 1], 1, 100000, &max))
			i++;
		else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc)
			label = argv[++i];
		else
			return fail("start: bad option %s", argv[i]);
	}
	if (i + 1 >= argc)
		return fail("start: no command");
	argv += i + 1;
	argc -= i + 1;
	if (mkdir(HX_PROC_ROOT, 0700) != 0 && errno != EEXIST)
		return fail("cannot make %s: %s", HX_PROC_ROOT,
		    strerror(errno));
	if ((root_fd = open(HX_PROC_ROOT, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0 || flock(root_fd, LOCK_EX) != 0)
		return fail("cannot lock %s: %s", HX_PROC_ROOT,
		    strerror(errno));
	if ((running = count_and_prune()) >= max)
		return fail("At most %lld background processes run in one "
		    "computer; %d are running. End one with process_kill.",
		    max, running);
	if ((rv = next_id(id)) != 0)
		return fail("cannot make a process folder: %s",
		    strerror(-rv));
	snprintf(dir, sizeof(dir), HX_PROC_ROOT "/%s", id);
	if (label == NULL)
		label = argv[0];
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)time(NULL));
	if (write_file(dir, "label", label, strlen(label)) != 0 ||
	    write_file(dir, "started", buf, (size_t)n) != 0 ||
	    (use_stdin && (rv = copy_stdin(dir)) != 0))
		return fail("cannot write %s: %s", dir, strerror(errno));
	/* The folder exists before the lock goes: a second start counts it. */
	snprintf(lim, sizeof(lim), "%lld", limit);
	char **env = clean_env();
	char **sargv = calloc((size_t)argc + 8, sizeof(char *));

	if (env == NULL || sargv == NULL)
		return fail("out of memory");
	sargv[0] = "msc-exec-helper";
	sargv[1] = "--process";
	sargv[2] = "supervise";
	sargv[3] = dir;
	sargv[4] = lim;
	sargv[5] = use_stdin ? "1" : "0";
	sargv[6] = "--";
	for (i = 0; i < argc; i++)
		sargv[7 + i] = argv[i];
	if ((pid = fork()) < 0)
		return fail("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		setsid();
		if (fork() != 0)
			_exit(0);
		/* Detached: no descriptor of the exec is kept. */
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		for (int fd = 3; fd < 1024; fd++)
			if (fd != null)
				close(fd);
		if (null > 2)
			close(null);
		execve("/proc/self/exe", sargv, env);
		_exit(127);
	}
	(void)waitpid(pid, NULL, 0);
	/* Until the supervisor holds its lock: a list right after sees it. */
	for (int t = 0; t < 100 && !alive(dir); t++) {
		if (read_small(dir, "status", buf, sizeof(buf)) > 0)
			break;
		usleep(10000);
	}
	close(root_fd);
	out_cstr(&o, "{");
	out_fmt(&o, "\"process_id\": \"%s\", \"command\": ", id);
	out_str(&o, label, strlen(label));
	out_fmt(&o, ", \"log\": \"%s/log\", \"log_limit\": %lld}", dir, limit);
	free(sargv);
	free(env);
	return out_print(&o);
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

	out_cstr(&o, "{\"processes\": [");
	while (d != NULL && (e = readdir(d)) != NULL &&
	    n < sizeof(ids) / sizeof(ids[0]))
		if (valid_id(e->d_name) && (ids[n] = strdup(e->d_name)) != NULL)
			n++;
	if (d != NULL)
		closedir(d);
	qsort(ids, n, sizeof(ids[0]), cmp_ids);
	for (size_t i = 0; i < n; i++) {
		struct pstate ps;

		if (load(ids[i], &ps) == 0) {
			out_cstr(&o, o.p[o.len - 1] == '[' ? "{" : ", {");
			out_state(&o, ids[i], &ps);
			out_cstr(&o, "}");
		}
		free(ids[i]);
	}
	out_cstr(&o, "]}");
	return out_print(&o);
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
	if (read_small(dir, "offsets", obuf, sizeof(obuf)) > 0)
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

	if (argc < 5 || !parse_num(argv[1], 0, LLONG_MAX / 2, &offset) ||
	    !parse_num(argv[2], 1, 16 * 1024 * 1024, &max_bytes) ||
	    !parse_num(argv[3], 64, 64 * 1024 * 1024, &budget) ||
	    !parse_num(argv[4], 0, HX_PROC_WAIT_MAX_MS, &wait_ms))
		return fail("output: bad arguments");
	if (load(argv[0], &ps) != 0)
		return fail("Unknown process_id %s in this computer; "
		    "process_list shows its processes.", argv[0]);
	if (has_re) {
		int rc = regcomp(&re, argv[5], REG_EXTENDED | REG_NEWLINE);

		if (rc != 0) {
			char e[200];

			regerror(rc, &re, e, sizeof(e));
			return fail("pattern: not a valid POSIX extended "
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
				return fail("out of memory");
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
			return fail("process %s was removed", argv[0]);
	}
	/* The bytes returned: at most max_bytes, their escapes in budget. */
	long long avail = ps.total - start_at;
	size_t want = (size_t)(avail < max_bytes ? avail : max_bytes);
	char *nb = realloc(buf, want + 1);

	if (nb == NULL)
		return fail("out of memory");
	buf = nb;
	got = read_log(ps.dir, start_at, start_at + (long long)want, buf);
	while (take < got && used + esc_len((unsigned char)buf[take]) <=
	    (size_t)budget)
		used += esc_len((unsigned char)buf[take++]);
	/* Not inside a UTF-8 sequence, when cut. */
	if (take < got) {
		size_t back = take;

		while (back > 0 && back + 4 > take &&
		    ((unsigned char)buf[back] & 0xC0) == 0x80)
			back--;
		if (back > 0 && ((unsigned char)buf[take] & 0xC0) == 0x80)
			take = back;
	}
	out_cstr(&o, "{");
	out_state(&o, argv[0], &ps);
	out_cstr(&o, ", \"output\": ");
	out_str(&o, buf != NULL ? buf : "", take);
	out_fmt(&o, ", \"offset\": %lld, \"more\": %s", start_at +
	    (long long)take, start_at + (long long)take < ps.total ? "true" :
	    "false");
	if (truncated)
		out_cstr(&o, ", \"dropped\": true");
	if (has_re) {
		out_fmt(&o, ", \"matched\": %s", matched ? "true" : "false");
		if (matched) {
			out_cstr(&o, ", \"match\": ");
			out_str(&o, match, strlen(match));
		}
		regfree(&re);
	}
	out_cstr(&o, "}");
	free(buf);
	return out_print(&o);
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
	if (parse_num(s, 1, 64, &n))
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

	if (argc < 3 || !parse_num(argv[2], 0, HX_PROC_WAIT_MAX_MS, &grace))
		return fail("kill: bad arguments");
	if ((sig = signal_number(argv[1])) < 0)
		return fail("signal: unknown signal %s (TERM, KILL, INT, HUP, "
		    "QUIT, USR1, USR2, STOP, CONT or a number)", argv[1]);
	if (load(argv[0], &ps) != 0)
		return fail("Unknown process_id %s in this computer; "
		    "process_list shows its processes.", argv[0]);
	/* The group outlives the command while its children do. */
	if (alive(ps.dir) && ps.pid > 1 && !group_gone((pid_t)ps.pid)) {
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

			if (read_small(ps.dir, "status", buf, sizeof(buf)) > 0)
				break;
			usleep(HX_PROC_POLL_MS * 1000);
		}
	}
	(void)load(argv[0], &ps);
	out_cstr(&o, "{");
	out_state(&o, argv[0], &ps);
	out_fmt(&o, ", \"signal_sent\": %d, \"escalated_to_kill\": %s}", sig,
	    escalated ? "true" : "false");
	return out_print(&o);
}

int
hx_process_main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return fail("usage: --process start|list|output|kill ...");
	if (strcmp(argv[1], "start") == 0)
		return start(argc - 2, argv + 2);
	if (strcmp(argv[1], "supervise") == 0)
		return supervise(argc - 2, argv + 2);
	if (strcmp(argv[1], "list") == 0)
		return list();
	if (strcmp(argv[1], "output") == 0)
		return output(argc - 2, argv + 2);
	if (strcmp(argv[1], "kill") == 0)
		return kill_process(argc - 2, argv + 2);
	return fail("unknown --process command %s", argv[1]);
}
