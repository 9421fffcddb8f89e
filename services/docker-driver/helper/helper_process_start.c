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
#include <spawn.h>
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
	s->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC, 0644);
	return s->log_fd < 0 ? -errno : 0;
}

/* log becomes log.0 (the older half dropped) once it holds limit/2. */
static void
rotate(struct sup *s)
{
	char from[PATH_MAX], to[PATH_MAX];

	/* Held too long (by the sandboxed code): rotated all the same. */
	(void)hxp_lock(s->rot_fd, LOCK_EX, HX_PROC_LOCK_MS);
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
write_status(const char *dir, const siginfo_t *si)
{
	char buf[32];
	int n;

	if (si->si_code == CLD_EXITED)
		n = snprintf(buf, sizeof(buf), "exited %d\n", si->si_status);
	else
		n = snprintf(buf, sizeof(buf), "killed %d\n", si->si_status);
	(void)hxp_write_file(dir, "status", buf, (size_t)n);
}

/* Whether the command ended; it is left a zombie (see helper_process.c). */
static bool
command_ended(pid_t pid, siginfo_t *si, int flags)
{
	memset(si, 0, sizeof(*si));
	return waitid(P_PID, (id_t)pid, si, WEXITED | WNOWAIT | flags) == 0 &&
	    si->si_pid == pid;
}

/* A new lock file in dir, locked with op if not 0 (never waited for). */
static int
open_lock(const char *dir, const char *name, int op)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0)
		return -errno;
	if (op != 0 && flock(fd, op | LOCK_NB) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/*
 * --process supervise DIR LIMIT STDIN(0|1) ALIVE_FD -- ARGV: runs in a
 * clean environment, detached; never returns to an exec. ALIVE_FD is
 * DIR/alive, which start locked before it forked us: the process counts
 * as running from its start, and start does not wait for us.
 */
int
hxp_supervise(int argc, char **argv)
{
	struct sup s = { .log_fd = -1 };
	char path[PATH_MAX], buf[65536];
	long long use_stdin, alive_fd;
	int reap_fd, pfd[2], in_fd, n;
	bool exited = false;
	struct hx_stat st;
	siginfo_t si;
	pid_t pid;

	if (argc < 6 || strcmp(argv[4], "--") != 0 ||
	    !hxp_parse_num(argv[1], HX_PROC_LOG_MIN, LLONG_MAX / 4, &s.limit) ||
	    !hxp_parse_num(argv[2], 0, 1, &use_stdin) ||
	    !hxp_parse_num(argv[3], 3, INT_MAX, &alive_fd))
		return hxp_fail("supervise: bad arguments");
	s.dir = argv[0];
	/* The lock is ours while we live, not the command's. */
	if (fcntl((int)alive_fd, F_SETFD, FD_CLOEXEC) != 0 ||
	    (reap_fd = open_lock(s.dir, "reap.lock", 0)) < 0 ||
	    (s.rot_fd = open_lock(s.dir, "offsets.lock", 0)) < 0 ||
	    save_offsets(&s) != 0 || open_log(&s) != 0 ||
	    pipe2(pfd, O_CLOEXEC) != 0) {
		(void)hxp_write_file(s.dir, "status", "exited 127\n", 11);
		return hxp_fail("supervise: %s: %s", s.dir, strerror(errno));
	}
	if (use_stdin)
		snprintf(path, sizeof(path), "%s/stdin", s.dir);
	else
		snprintf(path, sizeof(path), "/dev/null");
	in_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
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
		execvp(argv[5], argv + 5);
		dprintf(2, "%s: %s\n", argv[5], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (in_fd >= 0)
		close(in_fd);
	close(pfd[1]);
	/* Its start time tells its group from a later one of that number. */
	if (hx_proc_stat(pid, &st) != 0)
		st.start = 0;
	n = snprintf(buf, sizeof(buf), "%ld %llu\n", (long)pid, st.start);
	(void)hxp_write_file(s.dir, "pid", buf, (size_t)n);
	/*
	 * Until the pipe's EOF: the command's children may hold it after
	 * the command ended (its status is written then, the log goes on).
	 */
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		ssize_t r;

		if (!exited && command_ended(pid, &si, WNOHANG)) {
			exited = true;
			write_status(s.dir, &si);
		}
		if (poll(&p, 1, exited ? -1 : 200) < 0 && errno != EINTR)
			break;
		if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = read(pfd[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		append(&s, buf, (size_t)r);
	}
	if (!exited && command_ended(pid, &si, 0))
		write_status(s.dir, &si);
	/* Reaped last, while no kill is signalling its group. */
	(void)hxp_lock(reap_fd, LOCK_EX, HX_PROC_LOCK_MS);
	(void)waitpid(pid, NULL, 0);
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
		if (!hxp_private_dir(dir))
			continue;       /* not one of ours: not followed */
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
			"status", "alive", "reap.lock", "log", "log.0",
			"offsets", "offsets.lock", "stdin" };

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

	(void)hxp_read_num(HX_PROC_ROOT, "next", 0, 1000000000000LL, &n);
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
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0)
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

/* Runs the supervisor (argv, env) with alive_fd as its descriptor 3. */
static int
spawn_supervisor(char **argv, char **env, int alive_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	int rv;

	/* Equal descriptors: dup2 would leave its close-on-exec on. */
	if (alive_fd == 3 && fcntl(3, F_SETFD, 0) != 0)
		return errno;
	if ((rv = posix_spawn_file_actions_init(&fa)) != 0)
		return rv;
	if ((rv = posix_spawnattr_init(&at)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return rv;
	}
	if ((rv = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID)) == 0 &&
	    (rv = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
		O_RDWR, 0)) == 0 &&
	    (rv = posix_spawn_file_actions_adddup2(&fa, 0, 1)) == 0 &&
	    (rv = posix_spawn_file_actions_adddup2(&fa, 0, 2)) == 0 &&
	    (alive_fd == 3 || (rv = posix_spawn_file_actions_adddup2(&fa,
		alive_fd, 3)) == 0) &&
	    (rv = posix_spawn_file_actions_addclosefrom_np(&fa, 4)) == 0)
		rv = posix_spawn(pid, "/proc/self/exe", &fa, &at, argv, env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	return rv;
}

int
hxp_start(int argc, char **argv)
{
	long long limit = 1024 * 1024, max = 16;
	const char *label = NULL;
	bool use_stdin = false;
	char id[24], dir[PATH_MAX], buf[64], lim[32];
	int i, root_fd, alive_fd, running, rv, n;
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
	if (hxp_root_refused())
		return HX_EXIT_ERR;
	if ((root_fd = open(HX_PROC_ROOT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) < 0 || (rv = hxp_lock(root_fd, LOCK_EX,
	    HX_PROC_LOCK_MS)) == -EWOULDBLOCK)
		return hxp_fail("cannot lock %s: %s", HX_PROC_ROOT, root_fd < 0 ?
		    strerror(errno) : "another process has held it for too "
		    "long");
	if (rv != 0)
		return hxp_fail("cannot lock %s: %s", HX_PROC_ROOT,
		    strerror(-rv));
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
	if ((rv = hxp_write_file(dir, "label", label, strlen(label))) != 0 ||
	    (rv = hxp_write_file(dir, "started", buf, (size_t)n)) != 0 ||
	    (use_stdin && (rv = copy_stdin(dir)) != 0))
		return hxp_fail("cannot write %s: %s", dir, strerror(-rv));
	/* The folder exists before the lock goes: a second start counts it. */
	snprintf(lim, sizeof(lim), "%lld", limit);
	char **env = clean_env();
	char **sargv = calloc((size_t)argc + 9, sizeof(char *));

	if (env == NULL || sargv == NULL)
		return hxp_fail("out of memory");
	/* Running from now: the supervisor inherits the lock. */
	if ((alive_fd = open_lock(dir, "alive", LOCK_EX)) < 0)
		return hxp_fail("cannot lock %s/alive: %s", dir,
		    strerror(-alive_fd));
	sargv[0] = "msc-exec-helper";
	sargv[1] = "--process";
	sargv[2] = "supervise";
	sargv[3] = dir;
	sargv[4] = lim;
	sargv[5] = use_stdin ? "1" : "0";
	sargv[6] = "3";         /* alive_fd, below */
	sargv[7] = "--";
	for (i = 0; i < argc; i++)
		sargv[8 + i] = argv[i];
	/*
	 * The supervisor: a new session, no descriptor of the exec (so the
	 * exec ends when we do), `alive` locked. posix_spawn returns once it
	 * has exec'd; it is not waited for: it is init's once we exit.
	 */
	if ((rv = spawn_supervisor(sargv, env, alive_fd, &pid)) != 0) {
		(void)hxp_write_file(dir, "status", "exited 127\n", 11);
		return hxp_fail("cannot start the supervisor: %s",
		    strerror(rv));
	}
	close(alive_fd);        /* the lock stays, with the supervisor's */
	close(root_fd);
	hxp_out_cstr(&o, "{");
	hxp_out_fmt(&o, "\"process_id\": \"%s\", \"command\": ", id);
	hxp_out_str(&o, label, strlen(label));
	hxp_out_fmt(&o, ", \"log\": \"%s/log\", \"log_limit\": %lld}", dir, limit);
	free(sargv);
	free(env);
	return hxp_out_print(&o);
}
