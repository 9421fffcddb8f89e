/*
 * wasm_compile.c - compiles a user's module for msc-wasm-exec, once per
 * content (wasm_compile.h). The work happens in a private temporary
 * directory inside the cache; each tool runs as its own process group
 * with stdin and stdout on /dev/null, stderr in a log whose start becomes
 * the error detail, and an environment of its own (tool_env): nothing of
 * the server's (LD_PRELOAD, CPATH, GCC_EXEC_PREFIX, COMPILER_PATH, CC,
 * CFLAGS, ...) reaches wasm2c or cc, and PATH is /usr/bin:/bin.
 */
#include "wasm_compile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/sha256.h>

#define MSC_WASM_ABI_ONLY       /* the number, not the wasm-rt types */
#include "runner_module.h"

#define MAX_WASM_BYTES (512u << 20)
#define BIG_WASM_BYTES (1u << 20)       /* from here on cc -O0, not -O1 */
#define DETAIL_MAX 480
#define TOOL_PATH "/usr/bin:/bin"

/* The whole environment of every tool. */
static char *const tool_env[] = { "PATH=" TOOL_PATH, "LC_ALL=C", NULL };

/*
 * wasm-rt's memory-check mode for user modules: the one meson.build pins
 * for the runners (wasm_rt_pin); the glue refuses any other.
 */
#define WASM_RT_PIN_CFLAGS "-DWASM_RT_MEMCHECK_SIGNAL_HANDLER=1", \
	"-DWASM_RT_SKIP_SIGNAL_RECOVERY=0", "-DWASM_RT_USE_STACK_DEPTH_COUNT=0"

struct job {
	const char *wasm_path;
	char tmp[4096];
	char *err;
	size_t errlen;
};

static const char *const tmp_files[] = { "in.wasm", "module.wasm",
	"glue.c", "module.c", "module.h", "module.so", "log", NULL };

static int
failf(struct job *j, int rv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
failf(struct job *j, int rv, const char *fmt, ...)
{
	char detail[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(j->err, j->errlen, "Failed to compile WASM module '%s': %s",
	    j->wasm_path, detail);
	return rv;
}

static const char *
fuel_tool(void)
{
	static const char *const cands[] = {
#ifdef MSC_WASM_FUEL_BUILD
		MSC_WASM_FUEL_BUILD,
#endif
#ifdef MSC_WASM_FUEL_INSTALLED
		MSC_WASM_FUEL_INSTALLED,
#endif
		NULL };
	const char *env = getenv("MSC_WASM_FUEL");

	if (env != NULL && *env != '\0')
		return env;
	for (int i = 0; cands[i] != NULL; i++)
		if (access(cands[i], X_OK) == 0)
			return cands[i];
	return NULL;
}

/*
 * The program to run for name: env override (a path), else the first
 * executable name in TOOL_PATH, written to out. Returns 0 or -ENOENT.
 */
static int
tool_path(const char *name, const char *override, char *out, size_t len)
{
	const char *env = override != NULL ? getenv(override) : NULL;
	const char *dirs[] = { "/usr/bin", "/bin", NULL };

	if (env != NULL && *env != '\0') {
		snprintf(out, len, "%s", env);
		return 0;
	}
	for (int i = 0; dirs[i] != NULL; i++) {
		snprintf(out, len, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return 0;
	}
	snprintf(out, len, "%s", name);
	return -ENOENT;
}

/* Seconds each tool may take: env MSC_WASM_COMPILE_STEP_S or the default. */
static unsigned
step_seconds(void)
{
	const char *env = getenv("MSC_WASM_COMPILE_STEP_S");
	char *end;
	long v;

	if (env == NULL || *env == '\0')
		return WASM_COMPILE_STEP_S;
	v = strtol(env, &end, 10);
	return *end == '\0' && v > 0 && v <= 86400 ? (unsigned)v :
	    WASM_COMPILE_STEP_S;
}

/* Hashes fd to its end; with out >= 0 also copies the bytes there. */
static int
hash_fd(int fd, int out, char hex[65], size_t *sizep)
{
	mbedtls_sha256_context s;
	unsigned char sum[32];
	char buf[65536];
	size_t total = 0;
	ssize_t n;
	int rv = 0;

	mbedtls_sha256_init(&s);
	mbedtls_sha256_starts_ret(&s, 0);
	while (rv == 0 && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno != EINTR)
				rv = -errno;
			continue;
		}
		if ((total += (size_t)n) > MAX_WASM_BYTES) {
			rv = -EFBIG;
			break;
		}
		mbedtls_sha256_update_ret(&s, (unsigned char *)buf, (size_t)n);
		for (ssize_t done = 0, w; out >= 0 && done < n; done += w)
			if ((w = write(out, buf + done, (size_t)(n - done))) < 0) {
				rv = -errno;
				break;
			}
	}
	mbedtls_sha256_finish_ret(&s, sum);
	mbedtls_sha256_free(&s);
	if (rv != 0)
		return rv;
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", sum[i]);
	*sizep = total;
	return 0;
}

static void
join(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static void
remove_tmp(struct job *j)
{
	char p[4200];

	if (j->tmp[0] == '\0')
		return;
	for (int i = 0; tmp_files[i] != NULL; i++) {
		join(p, sizeof(p), j->tmp, tmp_files[i]);
		unlink(p);
	}
	rmdir(j->tmp);
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits for pid until deadline (ms); kills its group then. */
static int
wait_deadline(pid_t pid, uint64_t deadline, int *wstatus)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	for (;;) {
		pid_t r = waitpid(pid, wstatus, WNOHANG);
		uint64_t now = now_ms();

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {  /* someone else reaped it */
			if (pidfd >= 0)
				close(pidfd);
			return -errno;
		}
		if (now >= deadline) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR)
				;
			if (pidfd >= 0)
				close(pidfd);
			return -ETIMEDOUT;
		}
		if (pidfd >= 0) {
			struct pollfd p = { pidfd, POLLIN, 0 };
			uint64_t left = deadline - now;

			(void)poll(&p, 1, left > 1000 ? 1000 : (int)left);
		} else {
			usleep(10000);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return 0;
}

/* The start of the log, one line, for an error message. */
static void
log_detail(struct job *j, char *out, size_t len)
{
	char p[4200], buf[DETAIL_MAX + 1];
	ssize_t n = -1;
	int fd;

	join(p, sizeof(p), j->tmp, "log");
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, DETAIL_MAX);
		close(fd);
	}
	if (n <= 0) {
		snprintf(out, len, "(no message)");
		return;
	}
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	for (char *c = buf; *c != '\0'; c++)
		if (*c == '\n' || *c == '\t')
			*c = ' ';
	snprintf(out, len, "%s", buf);
}

/* Runs argv (argv[0] a path) with tool_env within the step deadline. */
static int
run_tool(struct job *j, const char *what, char *const argv[])
{
	char logp[4200], detail[DETAIL_MAX + 1];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int rv, wstatus = 0;
	pid_t pid;

	join(logp, sizeof(logp), j->tmp, "log");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, logp, O_WRONLY | O_CREAT |
	    O_TRUNC, 0600);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
	    POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	rv = posix_spawn(&pid, argv[0], &fa, &at, argv, tool_env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rv != 0)
		return failf(j, -rv, "cannot run %s (%s): %s", what, argv[0],
		    strerror(rv));
	rv = wait_deadline(pid, now_ms() + step_seconds() * 1000ull,
	    &wstatus);
	if (rv == -ETIMEDOUT)
		return failf(j, rv, "%s took longer than %u s", what,
		    step_seconds());
	if (rv != 0)
		return failf(j, rv, "cannot wait for %s: %s", what,
		    strerror(-rv));
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		return 0;
	log_detail(j, detail, sizeof(detail));
	if (WIFSIGNALED(wstatus))
		return failf(j, -EIO, "%s was killed by signal %d: %s", what,
		    WTERMSIG(wstatus), detail);
	return failf(j, -EINVAL, "%s failed: %s", what, detail);
}

/* Copies the module into the job's directory and checks it is unchanged. */
static int
copy_in(struct job *j, int fd, const char *hex)
{
	char p[4200], hex2[65];
	size_t size;
	int out, rv;

	join(p, sizeof(p), j->tmp, "in.wasm");
	if ((out = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
		 0600)) < 0)
		return failf(j, -errno, "cannot write %s: %s", p,
		    strerror(errno));
	if (lseek(fd, 0, SEEK_SET) < 0) {
		rv = -errno;
		close(out);
		return failf(j, rv, "cannot read it again: %s", strerror(-rv));
	}
	rv = hash_fd(fd, out, hex2, &size);
	if (close(out) != 0 && rv == 0)
		rv = -errno;
	if (rv != 0)
		return failf(j, rv, "cannot copy it: %s", strerror(-rv));
	if (strcmp(hex, hex2) != 0)
		return failf(j, -EAGAIN, "the file changed while it was read");
	return 0;
}

/* The four steps, in j->tmp; leaves module.so there. */
static int
build(struct job *j, size_t size)
{
	char in[4200], mod[4200], glue[4200], c[4200], so[4200], inc[4200];
	char w2c_path[4096], cc_path[4096];
	const char *fuel = fuel_tool();
	int rv;

	if (fuel == NULL)
		return failf(j, -ENOENT, "msc-wasm-fuel is not installed (set "
		    "MSC_WASM_FUEL)");
	if (tool_path("wasm2c", "MSC_WASM_WASM2C", w2c_path,
		sizeof(w2c_path)) != 0)
		return failf(j, -ENOENT, "wasm2c is not in " TOOL_PATH
		    " (install wabt)");
	if (tool_path("cc", "MSC_WASM_CC", cc_path, sizeof(cc_path)) != 0)
		return failf(j, -ENOENT, "cc is not in " TOOL_PATH
		    " (install gcc)");

	join(in, sizeof(in), j->tmp, "in.wasm");
	join(mod, sizeof(mod), j->tmp, "module.wasm");
	join(glue, sizeof(glue), j->tmp, "glue.c");
	join(c, sizeof(c), j->tmp, "module.c");
	join(so, sizeof(so), j->tmp, "module.so");
	snprintf(inc, sizeof(inc), "-I%s", j->tmp);
	{
		char *const check[] = { (char *)fuel, "--check-wasi", in, mod,
			NULL };
		char *const g[] = { (char *)fuel, "--glue", "module",
			"module.h", glue, NULL };
		char *const w2c[] = { w2c_path, "-n", "module", "-o", c, mod,
			NULL };
		char *const cc[] = { cc_path, "-shared", "-fPIC",
			size < BIG_WASM_BYTES ? "-O1" : "-O0", "-w",
			WASM_RT_PIN_CFLAGS, "-I/usr/src/wasm2c", inc, "-o", so,
			c, glue, "-lm", NULL };

		if ((rv = run_tool(j, "msc-wasm-fuel", check)) != 0 ||
		    (rv = run_tool(j, "msc-wasm-fuel --glue", g)) != 0 ||
		    (rv = run_tool(j, "wasm2c", w2c)) != 0 ||
		    (rv = run_tool(j, "cc", cc)) != 0)
			return rv;
	}
	return 0;
}

int
wasm_compile_module(const char *wasm_path, const char *cache_dir,
    char **so_path_out, char *err, size_t errlen)
{
	struct job j = { .wasm_path = wasm_path, .err = err,
		.errlen = errlen };
	char hex[65], dst[4200], built[4200], *out;
	struct stat st;
	size_t size;
	int fd, rv;

	if ((fd = open(wasm_path, O_RDONLY | O_CLOEXEC)) < 0) {
		rv = -errno;
		if (rv == -ENOENT || rv == -ENOTDIR) {
			snprintf(err, errlen, "WASM file not found: '%s'",
			    wasm_path);
			return -ENOENT;
		}
		return failf(&j, rv, "%s", strerror(-rv));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return failf(&j, -EINVAL, "not a regular file");
	}
	if ((rv = hash_fd(fd, -1, hex, &size)) != 0) {
		close(fd);
		return failf(&j, rv, "cannot read it: %s", strerror(-rv));
	}
	if (mkdir(cache_dir, 0700) != 0 && errno != EEXIST) {
		rv = -errno;
		close(fd);
		return failf(&j, rv, "cannot make the cache %s: %s", cache_dir,
		    strerror(-rv));
	}
	snprintf(dst, sizeof(dst), "%s/%s-%d.so", cache_dir, hex,
	    MSC_WASM_ABI);
	if (stat(dst, &st) == 0 && S_ISREG(st.st_mode)) {
		close(fd);
		goto found;
	}
	snprintf(j.tmp, sizeof(j.tmp), "%s/.tmp-%.12s-XXXXXX", cache_dir, hex);
	if (mkdtemp(j.tmp) == NULL) {
		rv = -errno;
		j.tmp[0] = '\0';
		close(fd);
		return failf(&j, rv, "cannot make a directory in %s: %s",
		    cache_dir, strerror(-rv));
	}
	rv = copy_in(&j, fd, hex);
	close(fd);
	if (rv == 0)
		rv = build(&j, size);
	join(built, sizeof(built), j.tmp, "module.so");
	if (rv == 0 && rename(built, dst) != 0)
		rv = failf(&j, -errno, "cannot move it into the cache: %s",
		    strerror(errno));
	remove_tmp(&j);
	if (rv != 0)
		return rv;
found:
	if ((out = strdup(dst)) == NULL)
		return failf(&j, -ENOMEM, "out of memory");
	*so_path_out = out;
	return 0;
}
