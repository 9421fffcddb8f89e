/*
 * helper_process_start.c - `--process start`: a new process folder, and
 * the supervisor that runs the command detached from the exec and keeps
 * its bounded log (the layout is in helper_process.c).
 */
#include "helper.h"
#include "helper_process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
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

	return hxp_write_file(s->dir, "offsets", buf, (size_t)n);
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
	(void)hxp_write_file(dir, "status", buf, (size_t)n);
}

/*
 * --process supervise DIR LIMIT STDIN(0|1) -- ARGV: runs in a clean
 * environment, detached; never returns to an exec.
 */
int
hxp_supervise(int argc, char **argv)
{
	struct sup s = { .log_fd = -1 };
	char path[PATH_MAX], buf[65536];
	long long use_stdin;
	int alive_fd, pfd[2], in_fd, status = 0;
	bool exited = false;
	pid_t pid;

	if (argc < 5 || strcmp(argv[3], "--") != 0 ||
	    !hxp_parse_num(argv[1], HX_PROC_LOG_MIN, LLONG_MAX / 4, &s.limit) ||
	    !hxp_parse_num(argv[2], 0, 1, &use_stdin))
		return hxp_fail("supervise: bad arguments");
	s.dir = argv[0];
	snprintf(path, sizeof(path), "%s/alive", s.dir);
	if ((alive_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    flock(alive_fd, LOCK_EX) != 0)
		return hxp_fail("supervise: %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/offsets.lock", s.dir);
	if ((s.rot_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    save_offsets(&s) != 0 || open_log(&s) != 0 ||
	    pipe2(pfd, O_CLOEXEC) != 0) {
		(void)hxp_write_file(s.dir, "status", "exited 127\n", 11);
		return hxp_fail("supervise: %s", strerror(errno));
	}
	if (use_stdin)
		snprintf(path, sizeof(path), "%s/stdin", s.dir);
	else
		snprintf(path, sizeof(path), "/dev/null");
	in_fd = open(path, O_RDONLY | O_CLOEXEC);
	if ((pid = fork()) < 0) {
		(void)hxp_write_file(s.dir, "status", "exited 127\n", 11);
		return hxp_fail("supervise: fork: %s", strerror(errno));
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

		(void)hxp_write_file(s.dir, "pid", buf, (size_t)n);
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
		char dir[PATH_MAX];
		long long n;

		if (!hxp_valid_id(e->d_name))
			continue;
		snprintf(dir, sizeof(dir), HX_PROC_ROOT "/%s", e->d_name);
		/*
		 * Running while its supervisor lives (its group may outlive
		 * the command's own exit): counted, and never removed.
		 */
		if (hxp_alive(dir)) {
			running++;
			continue;
		}
		(void)hxp_parse_num(e->d_name + 1, 0, LLONG_MAX, &n);
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

	if (hxp_read_small(HX_PROC_ROOT, "next", buf, sizeof(buf)) > 0)
		(void)hxp_parse_num(strtok(buf, "\n"), 0, 1000000000000LL, &n);
	for (int tries = 0; tries < 1000; tries++) {
		char dir[PATH_MAX];

		n++;
		snprintf(id, 24, "p%lld", n);
		snprintf(dir, sizeof(dir), HX_PROC_ROOT "/%s", id);
		if (mkdir(dir, 0700) == 0) {
			int len = snprintf(buf, sizeof(buf), "%lld\n", n);

			return hxp_write_file(HX_PROC_ROOT, "next", buf,
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

int
hxp_start(int argc, char **argv)
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
		    hxp_parse_num(argv[i + 1], HX_PROC_LOG_MIN, LLONG_MAX / 4,
			&limit))
			i++;
		else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc &&
		    hxp_parse_num(argv[i + 1], 1, 100000, &max))
			i++;
		else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc)
			label = argv[++i];
		else
			return hxp_fail("start: bad option %s", argv[i]);
	}
	if (i + 1 >= argc)
		return hxp_fail("start: no command");
	argv += i + 1;
	argc -= i + 1;
	if (mkdir(HX_PROC_ROOT, 0700) != 0 && errno != EEXIST)
		return hxp_fail("cannot make %s: %s", HX_PROC_ROOT,
		    strerror(errno));
	if ((root_fd = open(HX_PROC_ROOT, O_RDONLY | O_DIRECTORY |
	    O_CLOEXEC)) < 0 || flock(root_fd, LOCK_EX) != 0)
		return hxp_fail("cannot lock %s: %s", HX_PROC_ROOT,
		    strerror(errno));
	if ((running = count_and_prune()) >= max)
		return hxp_fail("At most %lld background processes run in one "
		    "computer; %d are running. End one with process_kill.",
		    max, running);
	if ((rv = next_id(id)) != 0)
		return hxp_fail("cannot make a process folder: %s",
		    strerror(-rv));
	snprintf(dir, sizeof(dir), HX_PROC_ROOT "/%s", id);
	if (label == NULL)
		label = argv[0];
	n = snprintf(buf, sizeof(buf), "%lld\n", (long long)time(NULL));
	if (hxp_write_file(dir, "label", label, strlen(label)) != 0 ||
	    hxp_write_file(dir, "started", buf, (size_t)n) != 0 ||
	    (use_stdin && (rv = copy_stdin(dir)) != 0))
		return hxp_fail("cannot write %s: %s", dir, strerror(errno));
	/* The folder exists before the lock goes: a second start counts it. */
	snprintf(lim, sizeof(lim), "%lld", limit);
	char **env = clean_env();
	char **sargv = calloc((size_t)argc + 8, sizeof(char *));

	if (env == NULL || sargv == NULL)
		return hxp_fail("out of memory");
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
		return hxp_fail("fork: %s", strerror(errno));
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
	for (int t = 0; t < 100 && !hxp_alive(dir); t++) {
		if (hxp_read_small(dir, "status", buf, sizeof(buf)) > 0)
			break;
		usleep(10000);
	}
	close(root_fd);
	hxp_out_cstr(&o, "{");
	hxp_out_fmt(&o, "\"process_id\": \"%s\", \"command\": ", id);
	hxp_out_str(&o, label, strlen(label));
	hxp_out_fmt(&o, ", \"log\": \"%s/log\", \"log_limit\": %lld}", dir, limit);
	free(sargv);
	free(env);
	return hxp_out_print(&o);
}

