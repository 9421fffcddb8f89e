/*
 * test_wasm_hardening.c - attacks on the runners and on the compile step:
 *   - a module reading and writing out of bounds of its memory (oob.wat:
 *     a load and a store at the end, the farthest address plus offset,
 *     memory.copy, memory.fill, past a grown end) traps cleanly, and an
 *     access in bounds still works;
 *   - runners have no_new_privs, a seccomp filter and no fd they inherited
 *     but stdio and the status fd while a guest runs (/proc/<pid> of
 *     msc-wasm-busybox and msc-wasm-exec while their guest reads stdin),
 *     started for the command or as the driver's spare;
 *   - the filter kills what the host never needs (sockets, exec, PROT_EXEC
 *     memory, other ioctls, x32 calls) and lets the rest through; its
 *     program, run here on every call number, does what
 *     runner_seccomp.h says;
 *   - a poisoned server environment (LD_PRELOAD, GCC_EXEC_PREFIX,
 *     COMPILER_PATH, CPATH pointing at planted files) does not reach
 *     msc-wasm-fuel, wasm2c or cc;
 *   - a module compiled in another wasm-rt memory-check mode is refused.
 *
 * usage: test_wasm_hardening RUNNER PROBE.wasm TINY.wasm OOB.wasm
 *	[BUSYBOX_RUNNER]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "runner_seccomp.h"
#include "wasm_compile.h"
#include "wasm_harness.h"

static struct wh w;
static char cache[400];

/* oob.wat picks its case by argc: argv[0] plus n - 1 words. */
static void
out_of_bounds(const char *so)
{
	static const char *const words[] = { "oob", "a", "b", "c", "d", "e",
		"f", NULL };
	static const char *const what[] = { "", "load past the end",
		"store across the end", "load at 0xffffffff+0xffffffff",
		"memory.copy from beyond the end",
		"memory.fill beyond the end", "load past a grown end" };

	for (int n = 1; n <= 7; n++) {
		const char *argv[20] = { w.runner, "--root", w.root,
			"--module", so, "--status-fd", "3", "--" };
		struct wh_run r;
		int k = 8;

		for (int i = 0; i < n; i++)
			argv[k++] = words[i];
		argv[k] = NULL;
		wh_spawn(&r, argv, NULL, 0);
		if (n == 7) {           /* in bounds: the value read back */
			WH_CHECK(r.code == 7 && strcmp(r.status, "exit 7") == 0);
		} else {
			WH_CHECK(r.code == 1 && strcmp(r.status, "trap Out-of-"
			    "bounds access in linear memory or a table") == 0);
			if (r.code != 1)
				fprintf(stderr, "  %s: status '%s' code %d\n",
				    what[n], r.status, r.code);
			else
				printf("  %s: %s\n", what[n], r.status);
		}
		wh_run_free(&r);
	}
}

/* Reads "Name:\tvalue" from /proc/<pid>/status; -1 if absent. */
static long
status_field(pid_t pid, const char *name)
{
	char p[64], line[256];
	size_t n = strlen(name);
	long v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	if ((f = fopen(p, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* Sends a spare (fd req, closed here) argv as its command line. */
static void
spare_send(int req, const char *const argv[])
{
	char buf[4096];
	uint32_t len = 0;

	for (int i = 0; argv[i] != NULL; i++) {
		size_t n = strlen(argv[i]) + 1;

		if (4 + len + n > sizeof(buf)) {
			fprintf(stderr, "spare_send: too long\n");
			exit(2);
		}
		memcpy(buf + 4 + len, argv[i], n);
		len += (uint32_t)n;
	}
	memcpy(buf, &len, sizeof(len));
	if (write(req, buf, 4 + len) != (ssize_t)(4 + len))
		perror("spare_send");
	close(req);
}

/*
 * Starts argv (a guest that reads its stdin, kept open here) with an extra
 * inherited fd 9, as a server's socket or file might be, and checks while
 * the guest runs: NoNewPrivs and Seccomp of the runner, and fd 9 closed.
 * With spare, argv[0] starts as the driver's spare (--spare-fd 4), gets
 * ready with its module instantiated, and then gets argv.
 */
static void
confined_while_running(const char *label, const char *const argv[],
    bool spare)
{
	long nnp = -1, sec = -1;
	char fd9[64];
	bool alive, open9;
	int in[2], sv[2], st;
	pid_t pid;

	if (pipe(in) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		perror("pipe");
		exit(2);
	}
	if ((pid = fork()) == 0) {
		const char *sp[] = { argv[0], "--spare-fd", "4", NULL };
		int fd = open("/dev/null", O_RDWR);

		close(in[1]);
		dup2(in[0], 0);
		dup2(fd, 1);
		dup2(fd, 9);            /* no FD_CLOEXEC: inherited */
		if (spare)
			dup2(sv[1], 4);
		execv(argv[0], (char *const *)(spare ? sp : argv));
		_exit(127);
	}
	close(in[0]);
	close(sv[1]);
	if (spare) {
		usleep(50000);  /* ready, waiting for its command line */
		spare_send(sv[0], argv);
	} else
		close(sv[0]);
	/* The filter goes in just before _start; then the guest blocks in
	 * read(0) until we close in[1]. */
	for (int i = 0; i < 500 && sec != 2; i++) {
		usleep(10000);
		nnp = status_field(pid, "NoNewPrivs");
		sec = status_field(pid, "Seccomp");
	}
	snprintf(fd9, sizeof(fd9), "/proc/%d/fd/9", (int)pid);
	open9 = access(fd9, F_OK) == 0;
	/* Not reaped yet: all of that was read from the live runner. */
	alive = waitpid(pid, &st, WNOHANG) == 0;
	printf("  %s: NoNewPrivs %ld, Seccomp %ld, inherited fd 9 %s%s\n",
	    label, nnp, sec, open9 ? "OPEN" : "closed",
	    alive ? "" : " (ENDED TOO SOON)");
	WH_CHECK(alive);
	WH_CHECK(nnp == 1 && sec == 2);
	WH_CHECK(!open9);
	close(in[1]);
	if (alive) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
}

static void
runner_status(const char *probe_so, const char *busybox)
{
	const char *exec[] = { w.runner, "--root", w.root, "--module",
		probe_so, "--", "probe", "cat", NULL };
	const char *bb[] = { busybox, "--root", w.root, "--", "busybox",
		"cat", NULL };

	confined_while_running("msc-wasm-exec probe cat", exec, false);
	confined_while_running("msc-wasm-exec probe cat, spare", exec, true);
	if (busybox != NULL) {
		confined_while_running("msc-wasm-busybox cat", bb, false);
		confined_while_running("msc-wasm-busybox cat, spare", bb,
		    true);
	}
}

enum probe_call { CALL_NONE, CALL_SOCKET, CALL_EXECVE, CALL_MMAP_EXEC,
	CALL_MPROTECT_EXEC, CALL_IOCTL_TIOCSTI, CALL_X32_WRITE };

/*
 * In a child: install the filter, do what a guest run does (write, mmap
 * read/write, FIONREAD), then `call`. Returns the wait status.
 */
static int
filtered_child(enum probe_call call)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		void *p;
		int avail;

		if (runner_seccomp_install() != 0)
			_exit(3);
		if (write(2, "", 0) != 0)
			_exit(4);
		p = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(5);
		(void)ioctl(0, FIONREAD, &avail);
		switch (call) {
		case CALL_NONE:
			break;
		case CALL_SOCKET:
			(void)socket(AF_INET, SOCK_STREAM, 0);
			break;
		case CALL_EXECVE:
			execl("/bin/true", "true", (char *)NULL);
			break;
		case CALL_MMAP_EXEC:
			(void)mmap(NULL, 4096, PROT_READ | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			break;
		case CALL_MPROTECT_EXEC:
			(void)mprotect(p, 4096, PROT_READ | PROT_EXEC);
			break;
		case CALL_IOCTL_TIOCSTI:
			(void)ioctl(0, TIOCSTI, "x");
			break;
		case CALL_X32_WRITE:
#ifdef __x86_64__
			(void)syscall(0x40000000 | SYS_write, 2, "", 0);
#else
			raise(SIGSYS);
#endif
			break;
		}
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return st;
}

static void
filter_kills(void)
{
	static const struct {
		enum probe_call call;
		const char *what;
	} bad[] = {
		{ CALL_SOCKET, "socket" },
		{ CALL_EXECVE, "execve" },
		{ CALL_MMAP_EXEC, "mmap PROT_EXEC" },
		{ CALL_MPROTECT_EXEC, "mprotect PROT_EXEC" },
		{ CALL_IOCTL_TIOCSTI, "ioctl TIOCSTI" },
		{ CALL_X32_WRITE, "x32 write" },
	};
	int st = filtered_child(CALL_NONE);

	WH_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		st = filtered_child(bad[i].call);
		WH_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
		printf("  %s after the filter: %s %d\n", bad[i].what,
		    WIFSIGNALED(st) ? "signal" : "exit",
		    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
}

/*
 * Runs the filter's program on sd in userspace, as the kernel would: the
 * instructions it uses (loads of the call's words, jumps on constants,
 * returns). -1 for anything else or a jump off the end.
 */
static long
bpf_run(const struct sock_filter *f, unsigned len,
    const struct seccomp_data *sd)
{
	uint32_t a = 0;

	for (unsigned pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		bool t;

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (i->k % 4 != 0 || i->k + 4 > sizeof(*sd))
				return -1;
			memcpy(&a, (const char *)sd + i->k, 4);
			continue;
		case BPF_RET | BPF_K:
			return i->k;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			continue;
		case BPF_JMP | BPF_JEQ | BPF_K:
			t = a == i->k;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			t = a >= i->k;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			t = a > i->k;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			t = (a & i->k) != 0;
			break;
		default:
			return -1;
		}
		pc += t ? i->jt : i->jf;
	}
	return -1;
}

/* What runner_seccomp.h promises for sd: allow or kill. */
static uint32_t
filter_spec(const struct seccomp_data *sd)
{
	size_t n;
	const int *allowed = runner_seccomp_allowed(&n);

#if defined(__x86_64__)
	if (sd->arch != AUDIT_ARCH_X86_64)
#elif defined(__aarch64__)
	if (sd->arch != AUDIT_ARCH_AARCH64)
#endif
		return SECCOMP_RET_KILL_PROCESS;
	if (sd->nr == SYS_mmap || sd->nr == SYS_mprotect)
		return (sd->args[2] & PROT_EXEC) != 0 ?
		    SECCOMP_RET_KILL_PROCESS : SECCOMP_RET_ALLOW;
	if (sd->nr == SYS_ioctl)
		return (uint32_t)sd->args[1] == FIONREAD ||
		    (uint32_t)sd->args[1] == TCGETS ? SECCOMP_RET_ALLOW :
		    SECCOMP_RET_KILL_PROCESS;
	for (size_t i = 0; i < n; i++)
		if (sd->nr == allowed[i])
			return SECCOMP_RET_ALLOW;
	return SECCOMP_RET_KILL_PROCESS;
}

/*
 * The program against its promise, call by call: every number up to 1023,
 * each with the x32 bit, and the numbers at the top; the argument-checked
 * calls with and without what they refuse; another architecture. Then the
 * kernel's cost of installing it, which it pays per command.
 */
static void
filter_program(void)
{
	static const uint32_t arches[] = {
#if defined(__x86_64__)
		AUDIT_ARCH_X86_64, AUDIT_ARCH_I386,
#elif defined(__aarch64__)
		AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM,
#endif
	};
	static const uint64_t arg_sets[][3] = {
		{ 0, 0, PROT_READ | PROT_WRITE }, { 0, 0, PROT_EXEC },
		{ 0, 0, PROT_READ | PROT_EXEC }, { 0, FIONREAD, 0 },
		{ 0, TCGETS, 0 }, { 0, TIOCSTI, 0 },
		{ 0, 0x100000000ull | FIONREAD, 0 },
	};
	unsigned len = 0, mismatches = 0, allowed = 0, checked = 0;
	const struct sock_filter *f = runner_seccomp_program(&len);
	struct timespec t0, t1;
	int p[2];

	WH_CHECK(f != NULL && len > 0);
	if (f == NULL)
		return;
	for (size_t a = 0; a < sizeof(arches) / sizeof(*arches); a++)
		for (uint32_t k = 0; k < 1024 + 8; k++) {
			uint32_t nr = k < 1024 ? k : 0xfffffff8u + (k - 1024);

			for (int x32 = 0; x32 < 2; x32++)
				for (size_t s = 0; s < sizeof(arg_sets) /
				    sizeof(*arg_sets); s++) {
					struct seccomp_data sd = {
						.nr = (int)(x32 ? nr | 0x40000000u :
						    nr),
						.arch = arches[a] };
					long got;
					uint32_t want;

					memcpy(sd.args, arg_sets[s],
					    sizeof(arg_sets[s]));
					got = bpf_run(f, len, &sd);
					want = filter_spec(&sd);
					checked++;
					allowed += want == SECCOMP_RET_ALLOW;
					if (got != (long)want && mismatches++ < 5)
						fprintf(stderr, "  filter: call %u "
						    "arch %x arg1 %llx arg2 %llx: %lx, "
						    "not %x\n", (unsigned)sd.nr,
						    sd.arch, (unsigned long long)
						    sd.args[1], (unsigned long long)
						    sd.args[2], got, want);
				}
		}
	WH_CHECK(mismatches == 0 && allowed > 0);
	printf("  filter program: %u instructions, %u cases, %u allowed, %u "
	    "differ from runner_seccomp.h\n", len, checked, allowed,
	    mismatches);
	/* The install, in a child (it cannot be undone). */
	if (pipe(p) != 0)
		return;
	if (fork() == 0) {
		double us;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (runner_seccomp_install() != 0)
			_exit(1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		us = (double)(t1.tv_sec - t0.tv_sec) * 1e6 +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
		(void)!write(p[1], &us, sizeof(us));
		_exit(0);
	}
	close(p[1]);
	{
		double us = -1;
		int st;

		(void)!read(p[0], &us, sizeof(us));
		close(p[0]);
		wait(&st);
		printf("  filter install: %.0f us\n", us);
		WH_CHECK(us >= 0);
	}
}

static void
sh(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "setup failed: %s\n", cmd);
		exit(2);
	}
}

/*
 * Compiles tiny.wasm into a fresh cache with env name=value set in our
 * environment; the planted file must never run or be read.
 */
static void
poisoned(const char *tiny, const char *name, const char *value,
    const char *marker)
{
	char dir[600], err[1024], *so = NULL;
	static int n;
	int rv;

	snprintf(dir, sizeof(dir), "%s/cache-poison-%d", w.base, n++);
	unlink(marker);
	setenv(name, value, 1);
	rv = wasm_compile_module(tiny, dir, &so, err, sizeof(err));
	unsetenv(name);
	WH_CHECK(rv == 0 && so != NULL);
	WH_CHECK(!wh_exists(marker));
	printf("  %s=%s: compile %s, planted file %s\n", name, value,
	    rv == 0 ? "ok" : err, wh_exists(marker) ? "USED" : "unused");
	free(so);
}

static void
clean_compile_env(const char *tiny)
{
	char cmd[2400], marker[400], v[600];

	snprintf(marker, sizeof(marker), "%s/planted-ran", w.base);
	/* LD_PRELOAD: a library whose constructor leaves the marker. */
	snprintf(cmd, sizeof(cmd), "printf '#include <fcntl.h>\\n"
	    "__attribute__((constructor)) static void f(void)"
	    "{ close(open(\"%s\", O_CREAT | O_WRONLY, 0600)); }\\n' > "
	    "%s/evil.c && cc -shared -fPIC -w -o %s/evil.so %s/evil.c",
	    marker, w.base, w.base, w.base);
	sh(cmd);
	snprintf(v, sizeof(v), "%s/evil.so", w.base);
	poisoned(tiny, "LD_PRELOAD", v, marker);
	/* GCC_EXEC_PREFIX and COMPILER_PATH: a cc1 that leaves it (where
	 * gcc looks: PREFIX/<machine>/<version>/cc1, PATH/cc1). */
	snprintf(cmd, sizeof(cmd), "d=%s/gep/$(cc -dumpmachine)/$(cc "
	    "-dumpversion) && mkdir -p $d %s/cp && printf '#!/bin/sh\\n"
	    ": > %s; exit 1\\n' > $d/cc1 && chmod +x $d/cc1 && "
	    "cp $d/cc1 %s/cp/cc1", w.base, w.base, marker, w.base);
	sh(cmd);
	snprintf(v, sizeof(v), "%s/gep/", w.base);
	poisoned(tiny, "GCC_EXEC_PREFIX", v, marker);
	snprintf(v, sizeof(v), "%s/cp", w.base);
	poisoned(tiny, "COMPILER_PATH", v, marker);
	/* CPATH: a planted <stdint.h> that would fail the compile. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/inc && printf '#error "
	    "planted\\n' > %s/inc/stdint.h", w.base, w.base);
	sh(cmd);
	snprintf(v, sizeof(v), "%s/inc", w.base);
	poisoned(tiny, "CPATH", v, marker);
}

/* cc adding another memory-check mode: the glue's #error refuses it. */
static void
other_mode_refused(const char *tiny)
{
	char wrap[400], dir[400], cmd[1200], err[1024], *so = NULL;
	int rv;

	snprintf(wrap, sizeof(wrap), "%s/cc-other-mode", w.base);
	snprintf(cmd, sizeof(cmd), "printf '#!/bin/sh\\nexec /usr/bin/cc "
	    "\"$@\" -UWASM_RT_MEMCHECK_SIGNAL_HANDLER "
	    "-DWASM_RT_MEMCHECK_SIGNAL_HANDLER=0\\n' > %s && chmod +x %s",
	    wrap, wrap);
	sh(cmd);
	snprintf(dir, sizeof(dir), "%s/cache-other-mode", w.base);
	setenv("MSC_WASM_CC", wrap, 1);
	rv = wasm_compile_module(tiny, dir, &so, err, sizeof(err));
	unsetenv("MSC_WASM_CC");
	WH_CHECK(rv == -EINVAL && so == NULL);
	WH_CHECK(strstr(err, "the runners' wasm-rt uses guard pages") != NULL);
	printf("  other memory-check mode: %s\n", rv != 0 ? err : "built");
	free(so);
}

int
main(int argc, char **argv)
{
	char *oob, *probe;

	if (argc < 5) {
		fprintf(stderr, "usage: %s RUNNER PROBE TINY OOB [BUSYBOX]\n",
		    argv[0]);
		return 2;
	}
	if (wh_setup(&w, argv[1], NULL) != 0) {
		perror("setup");
		return 2;
	}
	snprintf(cache, sizeof(cache), "%s/cache", w.base);
	oob = wh_compile(argv[4], cache, NULL);
	probe = wh_compile(argv[2], cache, NULL);
	out_of_bounds(oob);
	runner_status(probe, argc > 5 ? argv[5] : NULL);
	filter_program();
	filter_kills();
	clean_compile_env(argv[3]);
	other_mode_refused(argv[3]);
	free(oob);
	free(probe);
	printf("%s: %d failed checks\n", argv[0], wh_failures);
	return wh_failures != 0;
}
