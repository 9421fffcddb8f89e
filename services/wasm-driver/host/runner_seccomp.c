/*
 * runner_seccomp.c - the runner's seccomp filter (runner_seccomp.h),
 * a classic BPF program written here rather than made by libseccomp: the
 * list is short and fixed, and the runners then need no library beyond
 * libc. Its shape:
 *
 *   arch != ours                      -> kill
 *   mmap, mprotect with PROT_EXEC     -> kill   (no new code after setup)
 *   ioctl other than FIONREAD, TCGETS -> kill
 *   a call in `allowed`               -> allow
 *   anything else                     -> kill
 *
 * The numbers come from <sys/syscall.h> of the architecture we build for,
 * so x86-64's x32 calls (nr | __X32_SYSCALL_BIT) never match and die.
 */
#include "runner_seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <termios.h>

#if defined(__x86_64__)
#define RUNNER_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define RUNNER_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "runner_seccomp.c: add this architecture's AUDIT_ARCH_* value"
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "runner_seccomp.c: argument offsets assume little endian"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define RUNNER_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUNNER_SANITIZED 1
#endif
#endif
#ifndef RUNNER_SANITIZED
#define RUNNER_SANITIZED 0
#endif

#define NR_OFF offsetof(struct seccomp_data, nr)
#define ARCH_OFF offsetof(struct seccomp_data, arch)
/* The low 32 bits of argument i (little endian). */
#define ARG_OFF(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define MAX_INSNS 256

/* What the WASI host, wasm-rt and libc call once the guest runs. */
static const int allowed[] = {
	/* fds: the guest's stdio and files under the root's fd */
	SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_pread64,
	SYS_pwrite64, SYS_preadv, SYS_pwritev, SYS_lseek, SYS_close,
	SYS_fcntl, SYS_fstat, SYS_newfstatat, SYS_statx, SYS_getdents64,
	SYS_ftruncate, SYS_fsync, SYS_fdatasync, SYS_fallocate,
	SYS_fadvise64, SYS_dup, SYS_dup3,
	/* paths, relative to a directory fd (openat2 RESOLVE_IN_ROOT; no
	 * openat: the host opens nothing else once the guest runs) */
	SYS_openat2, SYS_mkdirat, SYS_unlinkat, SYS_renameat2,
	SYS_symlinkat, SYS_linkat, SYS_readlinkat, SYS_utimensat,
	/* time, poll_oneoff, random_get, sched_yield */
	SYS_clock_gettime, SYS_clock_getres, SYS_clock_nanosleep,
	SYS_nanosleep, SYS_gettimeofday, SYS_ppoll, SYS_getrandom,
	SYS_sched_yield, SYS_restart_syscall,
	/* malloc, memory.grow (mprotect below), traps (siglongjmp) */
	SYS_brk, SYS_munmap, SYS_mremap, SYS_madvise, SYS_rt_sigprocmask,
	SYS_rt_sigreturn,
	SYS_exit, SYS_exit_group,
#ifdef SYS_renameat
	SYS_renameat,
#endif
#ifdef SYS_dup2
	SYS_dup2,
#endif
#ifdef SYS_poll
	SYS_poll,
#endif
#ifdef SYS_readlink
	SYS_readlink,   /* /proc/self/fd/N: a directory's guest path */
#endif
#if RUNNER_SANITIZED
	/* The runners are never sanitized (host/meson.build), but this file
	 * is also linked into sanitized tests: ASan's exit path resets the
	 * signal stack, and its reports need the thread's ids. */
	SYS_sigaltstack, SYS_getpid, SYS_gettid,
#endif
};

struct prog {
	struct sock_filter insn[MAX_INSNS];
	unsigned short n;
};

static void
emit(struct prog *p, unsigned short code, unsigned char jt,
    unsigned char jf, unsigned int k)
{
	if (p->n < MAX_INSNS)
		p->insn[p->n] = (struct sock_filter){ code, jt, jf, k };
	p->n++;
}

static void
ret(struct prog *p, unsigned int action)
{
	emit(p, BPF_RET | BPF_K, 0, 0, action);
}

static void
load(struct prog *p, unsigned int off)
{
	emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, off);
}

/* if (A == k) fall through, else skip the next `skip` instructions. */
static void
if_eq(struct prog *p, unsigned int k, unsigned char skip)
{
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, skip, k);
}

/* nr == sys: allow when argument arg has none of the bits in `bits`. */
static void
allow_without_bits(struct prog *p, int sys, int arg, unsigned int bits)
{
	if_eq(p, (unsigned int)sys, 4);
	load(p, ARG_OFF(arg));
	emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, bits);
	ret(p, SECCOMP_RET_KILL_PROCESS);
	ret(p, SECCOMP_RET_ALLOW);
	/* Only other calls get here, with A still the call's number. */
}

static void
build(struct prog *p)
{
	p->n = 0;
	load(p, ARCH_OFF);
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, RUNNER_AUDIT_ARCH);
	ret(p, SECCOMP_RET_KILL_PROCESS);

	load(p, NR_OFF);
	allow_without_bits(p, SYS_mmap, 2, PROT_EXEC);
	allow_without_bits(p, SYS_mprotect, 2, PROT_EXEC);
	/* ioctl: FIONREAD (poll_oneoff) and TCGETS (isatty) only. */
	if_eq(p, SYS_ioctl, 6);
	load(p, ARG_OFF(1));
	if_eq(p, FIONREAD, 1);
	ret(p, SECCOMP_RET_ALLOW);
	if_eq(p, TCGETS, 1);
	ret(p, SECCOMP_RET_ALLOW);
	ret(p, SECCOMP_RET_KILL_PROCESS);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(*allowed); i++) {
		if_eq(p, (unsigned int)allowed[i], 1);
		ret(p, SECCOMP_RET_ALLOW);
	}
	ret(p, SECCOMP_RET_KILL_PROCESS);
}

int
runner_seccomp_install(void)
{
	static struct prog p;
	struct sock_fprog fp;

	build(&p);
	if (p.n > MAX_INSNS)
		return -E2BIG;
	fp.len = p.n;
	fp.filter = p.insn;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) != 0)
		return -errno;
	return 0;
}
