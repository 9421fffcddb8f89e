/*
 * runner.c - one guest command in one short-lived process:
 *
 *   <runner> --root DIR [--cwd GUESTPATH] [--max-memory-mib N] [--fuel N]
 *	[--status-fd FD] [--module FILE.so] [--cpu-seconds N]
 *	[--disk-quota BYTES] [--env NAME=VALUE]... -- ARGV0 [ARGS...]
 *
 * The runner's fds 0-2 are the guest's; DIR is the guest's "/" (fd 3).
 * Every other inherited fd but --status-fd is closed first.
 * --cwd (default "/") is normalised inside the root ("/../.." is "/"),
 * made like mkdir -p, and given to the guest as env PWD, which our
 * toolbox chdir()s to; wasi-libc itself starts in "/", so a module that
 * ignores PWD sees relative paths from "/". The guest's environment is
 * PWD, HOME=/ and the --env entries, nothing of the runner's.
 * --max-memory-mib (default 256, at most 4096) caps the linear memory:
 * memory.grow fails beyond it, so malloc returns NULL in the guest.
 * --fuel sets the module's __fuel counter (msc-wasm-fuel) before _start.
 * --cpu-seconds sets RLIMIT_CPU as a backstop to the caller's SIGKILL.
 * --disk-quota bounds the bytes stored under DIR, by every runner of it
 * together (wasi_quota.c): past it a write is cut short, then ENOSPC.
 *
 * At the end one line goes to --status-fd:
 *   exit <code>     _start returned (0) or proc_exit(code); code clamped
 *                   to 0..255 and also the runner's exit status
 *   fuel            the fuel ran out; exit status 124
 *   trap <message>  any other trap (out of bounds, unreachable, call stack
 *                   exhausted, ...); also "[kilntainers: WASM trap: <msg>]"
 *                   on stderr; exit status 1
 *   error <message> the runner could not start the guest (bad flags, root,
 *                   module); the message also on stderr; exit status 125
 *
 * Once the module is instantiated, and before its _start runs, the runner
 * sets no_new_privs and its seccomp allowlist (runner_seccomp.h): from
 * then on a system call the WASI host does not make kills the runner.
 *
 *   <runner> --spare-fd FD
 *
 * starts ahead of its command (the driver's spare, wasm_runner.c) and
 * reads the command line above from FD, a socket: a 32-bit length in host
 * byte order, then that many bytes of NUL-ended arguments (argv[0]
 * first), at most RUNNER_SPARE_MAX. EOF before a whole request (the
 * driver let go of it) ends it with status 0 and no output. Before it
 * reads, a spare does what needs no command line: msc-wasm-busybox
 * instantiates its module (the memory-limit check and the fuel come after
 * the request, as for any runner) and the seccomp filter is built; it is
 * installed, as always, just before _start. A spare serves one command.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "runner_files.h"
#include "runner_module.h"
#include "runner_seccomp.h"
#include "wasi_host.h"
#include "wasm-rt-impl.h"

/* The mode meson.build pins (wasm_rt_pin), checked where it is used. */
#if WASM_RT_MEMCHECK_SIGNAL_HANDLER != 1 || WASM_RT_SKIP_SIGNAL_RECOVERY != 0 \
    || WASM_RT_USE_STACK_DEPTH_COUNT != 0
#error "runner.c: wasm-rt must be built with guard pages (wasm_rt_pin)"
#endif

#define EXIT_JUMP 0x4000        /* proc_exit's longjmp value: no trap code */
#define MAX_ENV 64
#define PAGES_PER_MIB 16
#define STACK_BYTES (8u << 20)
#define NOFILE_FOR_QUOTA 4096
#define RUNNER_SPARE_MAX (8u << 20)

struct runner_opts {
	const char *root, *cwd, *module;
	long long mem_mib, fuel, cpu_s, disk_quota;
	int status_fd;
	char *env[MAX_ENV + 3];
	int nenv;
	char **argv;
};

/* A module instantiated (instantiate()), maybe ahead of its command. */
struct runner_inst {
	void *inst;             /* NULL: not instantiated */
	wasm_rt_memory_t *mem;
	int64_t *fuel;          /* NULL when instantiating trapped */
	int trap;               /* that trap, or 0 */
};

static int err_fd = 2;          /* the runner's own stderr, kept apart */
static int status_fd = -1;

static void
status_line(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (status_fd < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	(void)!write(status_fd, buf, (size_t)n);
}

/* A setup error: message on stderr and the status fd, exit 125. */
static int
setup_error(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dprintf(err_fd, "msc-wasm: %s\n", msg);
	status_line("error %s", msg);
	return 125;
}

/*
 * Ends the runner with status rv, its outcome told: the guest's stdout and
 * stderr and the status pipe are closed first, so that the driver has all
 * of it at once, while the exit's teardown (unmapping this process's
 * memory, most of an exit's time) runs beside its reply; and the CPU is
 * offered first to whoever those closes woke (the driver, when the kernel
 * woke it on this CPU, would else wait for that teardown).
 */
static void __attribute__((noreturn))
leave(int rv)
{
	(void)close(1);
	(void)close(2);
	if (err_fd > 2)
		(void)close(err_fd);
	if (status_fd >= 0)
		(void)close(status_fd);
	(void)sched_yield();
	_exit(rv);
}

static int
number(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Reads all of len bytes from fd; false on EOF or an error first. */
static bool
read_all(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* A spare's command line, read from fd (--spare-fd): argc and argv in
 * memory that lives until the runner ends. Exits when the request is
 * absent (0) or malformed (125). */
static void
spare_request(const char *fdtext, int *argc, char ***argv)
{
	long long fd;
	uint32_t len;
	char *buf, **v;
	size_t n = 0;

	if (number(fdtext, 0, INT32_MAX, &fd) != 0)
		_exit(125);
	if (!read_all((int)fd, &len, sizeof(len)))
		_exit(0);
	if (len == 0 || len > RUNNER_SPARE_MAX || (buf = malloc(len)) == NULL)
		_exit(125);
	if (!read_all((int)fd, buf, len))
		_exit(0);
	close((int)fd);
	if (buf[len - 1] != '\0')
		_exit(125);
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\0';
	if ((v = calloc(n + 1, sizeof(*v))) == NULL)
		_exit(125);
	for (size_t i = 0, k = 0; k < n; k++) {
		v[k] = buf + i;
		i += strlen(buf + i) + 1;
	}
	*argc = (int)n;
	*argv = v;
}

/* Finds --status-fd first, so that errors in other flags reach it too. */
static void
early_status_fd(int argc, char **argv)
{
	long long v;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		const char *s = NULL;

		if (strcmp(argv[i], "--status-fd") == 0 && i + 1 < argc)
			s = argv[i + 1];
		else if (strncmp(argv[i], "--status-fd=", 12) == 0)
			s = argv[i] + 12;
		if (s != NULL && number(s, 0, INT32_MAX, &v) == 0 &&
		    fcntl((int)v, F_GETFD) >= 0)
			status_fd = (int)v;
	}
}

static int
parse(int argc, char **argv, struct runner_opts *o)
{
	static const struct option lo[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "cwd", required_argument, NULL, 'c' },
		{ "max-memory-mib", required_argument, NULL, 'm' },
		{ "fuel", required_argument, NULL, 'f' },
		{ "status-fd", required_argument, NULL, 's' },
		{ "module", required_argument, NULL, 'M' },
		{ "cpu-seconds", required_argument, NULL, 'C' },
		{ "env", required_argument, NULL, 'e' },
		{ "disk-quota", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	long long v;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (ch) {
		case 'r':
			o->root = optarg;
			break;
		case 'c':
			o->cwd = optarg;
			break;
		case 'M':
			o->module = optarg;
			break;
		case 'm':
			if (number(optarg, 1, 4096, &o->mem_mib) != 0)
				return setup_error("--max-memory-mib: '%s' is "
				    "not 1 to 4096", optarg);
			break;
		case 'f':
			if (number(optarg, 1, INT64_MAX, &o->fuel) != 0)
				return setup_error("--fuel: '%s' is not a "
				    "positive integer", optarg);
			break;
		case 'C':
			if (number(optarg, 1, 1 << 30, &o->cpu_s) != 0)
				return setup_error("--cpu-seconds: '%s' is not "
				    "a positive integer", optarg);
			break;
		case 'D':
			if (number(optarg, 0, INT64_MAX, &o->disk_quota) != 0)
				return setup_error("--disk-quota: '%s' is not a "
				    "number of bytes", optarg);
			break;
		case 's':
			if (number(optarg, 0, INT32_MAX, &v) != 0 ||
			    fcntl((int)v, F_GETFD) < 0)
				return setup_error("--status-fd: '%s' is not an "
				    "open fd", optarg);
			o->status_fd = status_fd = (int)v;
			fcntl(status_fd, F_SETFD, FD_CLOEXEC);
			break;
		case 'e':
			if (o->nenv >= MAX_ENV || strchr(optarg, '=') == NULL)
				return setup_error("--env: '%s' is not NAME="
				    "VALUE (at most %d)", optarg, MAX_ENV);
			o->env[o->nenv++] = optarg;
			break;
		default:
			return setup_error("unknown or incomplete option '%s'",
			    argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return setup_error("usage: runner --root DIR [--cwd PATH] "
		    "[--max-memory-mib N] [--fuel N] [--status-fd FD] "
		    "[--module FILE.so] -- ARGV0 [ARGS...]");
	if (o->root == NULL)
		return setup_error("--root DIR is required");
	o->argv = argv + optind;
	return 0;
}

/*
 * Closes every fd the runner inherited beyond 0-2 and the status fd: the
 * guest's fds are only the ones the WASI host hands it, and nothing of
 * the server's (sockets, files) stays reachable in this process.
 */
static void
close_inherited(void)
{
	unsigned keep = (unsigned)status_fd;
	bool done;
	long max;

	if (status_fd < 3)              /* none, or one of 0-2 */
		done = close_range(3, ~0u, 0) == 0;
	else
		done = (keep == 3 || close_range(3, keep - 1, 0) == 0) &&
		    close_range(keep + 1, ~0u, 0) == 0;
	if (done)
		return;
	/* No close_range (Linux < 5.9): one by one. */
	max = sysconf(_SC_OPEN_MAX);
	for (long fd = 3; fd < (max > 0 ? max : 65536); fd++)
		if (fd != status_fd)
			(void)close((int)fd);
}

/* Opens /dev/null on any of fds 0-2 that is closed, and keeps stderr. */
static void
fix_stdio(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0) {
			int n = open("/dev/null", O_RDWR);

			if (n >= 0 && n != fd) {
				dup2(n, fd);
				close(n);
			}
		}
	err_fd = fcntl(2, F_DUPFD_CLOEXEC, 10);
	if (err_fd < 0)
		err_fd = 2;
}

/* What every runner sets whatever its command line. */
static void
fixed_limits(void)
{
	struct rlimit rl;

	/* Deep guest recursion must hit a guard page, not eat the host. */
	if (getrlimit(RLIMIT_STACK, &rl) == 0 && (rl.rlim_cur ==
		RLIM_INFINITY || rl.rlim_cur > STACK_BYTES)) {
		rl.rlim_cur = STACK_BYTES;
		setrlimit(RLIMIT_STACK, &rl);
	}
	signal(SIGPIPE, SIG_IGN);       /* a closed pipe is EPIPE to the guest */
}

static void
limits(const struct runner_opts *o)
{
	struct rlimit rl;

	if (o->cpu_s > 0) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)o->cpu_s;
		setrlimit(RLIMIT_CPU, &rl);
	}
	/* The quota's scan holds a descriptor per directory level beside
	 * the guest's own (WASI_MAX_FDS): room for both, if allowed. */
	if (o->disk_quota > 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < NOFILE_FOR_QUOTA) {
		rl.rlim_cur = rl.rlim_max < NOFILE_FOR_QUOTA ? rl.rlim_max
							     : NOFILE_FOR_QUOTA;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
on_exit_jump(struct wasi_ctx *c)
{
	(void)c;
	WASM_RT_LONGJMP(wasm_rt_jmp_buf, EXIT_JUMP);
}

/*
 * Instantiates module m (its memory, data segments, tables) into ri, with
 * ctx (not yet initialised: only its address is kept) as its WASI
 * instance. Nothing of it depends on the command line, so a spare does it
 * before reading its own. A trap while instantiating is kept in ri->trap,
 * for run() to report. 0, or -ENOMEM.
 */
static int
instantiate(const struct runner_module *m, struct wasi_ctx *ctx,
    struct runner_inst *ri)
{
	jmp_buf caller;

	wasm_rt_init();
	m->init_module();
	if ((ri->inst = calloc(1, m->instance_size())) == NULL)
		return -ENOMEM;
	/* The memory lives in the instance: its address is known already. */
	ri->mem = m->memory(ri->inst);
	/* The fault handler's jump comes back to runner_main's once this
	 * frame is gone. */
	memcpy(caller, wasm_rt_jmp_buf, sizeof(caller));
	ri->trap = wasm_rt_impl_try();
	if (ri->trap == 0) {
		m->instantiate(ri->inst, ctx);
		ri->fuel = m->fuel(ri->inst);
	}
	memcpy(wasm_rt_jmp_buf, caller, sizeof(caller));
	return 0;
}

/* Runs the guest of instance ri (made for ctx); returns the runner's exit
 * status. */
static int
run(const struct runner_module *m, struct runner_inst *ri,
    const struct runner_opts *o, struct wasi_ctx *ctx)
{
	uint32_t limit = (uint32_t)o->mem_mib * PAGES_PER_MIB;
	wasm_rt_memory_t *mem = ri->mem;
	int trap = ri->trap, rv;

	if (trap == 0) {
		ctx->mem = mem;
		*ri->fuel = o->fuel > 0 ? o->fuel : INT64_MAX;
		if (mem->pages > limit) {
			char msg[160];

			snprintf(msg, sizeof(msg), "the module needs %u MiB of "
			    "memory, over the limit of %lld MiB", (mem->pages +
				PAGES_PER_MIB - 1) / PAGES_PER_MIB, o->mem_mib);
			status_line("trap %s", msg);
			dprintf(err_fd, "[kilntainers: WASM trap: %s]\n", msg);
			return 1;
		}
		if (mem->max_pages > limit)
			mem->max_pages = limit;
		if ((rv = runner_seccomp_install()) != 0)
			return setup_error("cannot install the seccomp filter: "
			    "%s", strerror(-rv));
		trap = wasm_rt_impl_try();
		if (trap == 0) {
			m->start(ri->inst);
			status_line("exit 0");
			return 0;
		}
	}
	if (trap == EXIT_JUMP) {
		uint32_t code = ctx->exit_code > 255 ? 255 : ctx->exit_code;

		status_line("exit %u", code);
		return (int)code;
	}
	if (ri->fuel != NULL && *ri->fuel < 0) {
		status_line("fuel");
		return 124;
	}
	status_line("trap %s", wasm_rt_strerror((wasm_rt_trap_t)trap));
	dprintf(err_fd, "[kilntainers: WASM trap: %s]\n",
	    wasm_rt_strerror((wasm_rt_trap_t)trap));
	return 1;
}

static _Noreturn void
runner_serve(int argc, char **argv, const struct runner_module *builtin,
    runner_module_open_fn open_module)
{
	static struct wasi_ctx ctx;
	struct runner_opts o = { .cwd = "/", .mem_mib = 256, .status_fd = -1 };
	struct runner_module dl;
	const struct runner_module *m = builtin;
	struct runner_inst ri = { 0 };
	char pwd[4200], cwd[4096], err[512];
	int rv;

	fixed_limits();
	if (argc == 3 && strcmp(argv[1], "--spare-fd") == 0) {
		/* A spare waits with all it can do without its command line
		 * done: the built-in module instantiated, the filter built.
		 * Should either fail, it is done again (and fails) below. */
		if (builtin != NULL)
			(void)instantiate(builtin, &ctx, &ri);
		(void)runner_seccomp_prepare();
		spare_request(argv[2], &argc, &argv);
	}
	early_status_fd(argc, argv);
	close_inherited();
	fix_stdio();
	if ((rv = parse(argc, argv, &o)) != 0)
		_exit(rv);
	limits(&o);
	if (o.module != NULL && open_module == NULL)
		_exit(setup_error("--module: this runner has its module built "
		    "in; msc-wasm-exec runs a module .so"));
	if (o.module != NULL) {
		if (open_module(o.module, &dl, err, sizeof(err)) != 0)
			_exit(setup_error("%s", err));
		m = &dl;
	}
	if (m == NULL)
		_exit(setup_error("no module: give --module FILE.so"));
	if (m->abi() != MSC_WASM_ABI)
		_exit(setup_error("module ABI %u, this runner needs %d: "
		    "recompile it", m->abi(), MSC_WASM_ABI));
	o.env[o.nenv++] = "HOME=/";
	o.env[o.nenv++] = pwd;
	o.env[o.nenv] = NULL;
	if ((rv = wasi_ctx_init(&ctx, o.root, o.argv, o.env,
		 on_exit_jump)) != 0)
		_exit(setup_error("cannot open the root '%s': %s", o.root,
		    rv == -ENOSYS ? "the kernel has no openat2 (Linux 5.6+ "
				    "is needed)" : strerror(-rv)));
	ctx.quota = (uint64_t)o.disk_quota;
	if ((rv = wasi_make_cwd(&ctx, o.cwd, cwd, sizeof(cwd))) != 0)
		_exit(setup_error("working directory '%s': %s", o.cwd,
		    rv == -ENOTDIR ? "not a directory" : strerror(-rv)));
	snprintf(pwd, sizeof(pwd), "PWD=%s", cwd);
	/* The file tools run here, natively, not in the guest. */
	if (runner_is_file_tool(o.argv)) {
		rv = runner_file_tool(&ctx, cwd, o.argv);
		status_line("exit %d", rv);
		leave(rv);
	}
	if (m != builtin || ri.inst == NULL) {
		ri = (struct runner_inst){ 0 };
		if (instantiate(m, &ctx, &ri) != 0)
			_exit(setup_error("out of memory"));
	}
	/* No atexit handlers or stdio buffers matter; a trap may have left
	 * the guest mid-call, so leave at once. */
	leave(run(m, &ri, &o, &ctx));
}

int
runner_main(int argc, char **argv, const struct runner_module *builtin,
    runner_module_open_fn open_module)
{
	/* A fault of the host's code (wasm-rt's handler catches every
	 * SIGSEGV) outside instantiate() and run(), which set their own
	 * jumps, ends the runner here, never in a frame that has returned. */
	if (wasm_rt_impl_try() != 0)
		_exit(setup_error("the runner faulted outside its guest"));
	runner_serve(argc, argv, builtin, open_module);
}
