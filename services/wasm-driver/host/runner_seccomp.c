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
 * with the call numbers found by a binary search (tree()), not one by one.
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
#include <stdlib.h>
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

/* What the filter does with one call number of ours. */
enum rule {
	RULE_ALLOW,
	RULE_NO_EXEC,           /* mmap, mprotect: kill with PROT_EXEC */
	RULE_IOCTL,             /* FIONREAD and TCGETS only */
};

struct entry {
	unsigned int nr;
	enum rule rule;
};

/* Calls per leaf of the search tree, checked one by one. */
#define LEAF 4

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

/* A == e->nr: its rule's verdict; else on to the next instruction, with
 * A still the call's number. */
static void
check(struct prog *p, const struct entry *e)
{
	switch (e->rule) {
	case RULE_ALLOW:
		if_eq(p, e->nr, 1);
		ret(p, SECCOMP_RET_ALLOW);
		break;
	case RULE_NO_EXEC:      /* the protection is argument 2 of both */
		if_eq(p, e->nr, 4);
		load(p, ARG_OFF(2));
		emit(p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, PROT_EXEC);
		ret(p, SECCOMP_RET_KILL_PROCESS);
		ret(p, SECCOMP_RET_ALLOW);
		break;
	case RULE_IOCTL:
		if_eq(p, e->nr, 6);
		load(p, ARG_OFF(1));
		if_eq(p, FIONREAD, 1);
		ret(p, SECCOMP_RET_ALLOW);
		if_eq(p, TCGETS, 1);
		ret(p, SECCOMP_RET_ALLOW);
		ret(p, SECCOMP_RET_KILL_PROCESS);
		break;
	}
}

/*
 * The calls e[0..n) (sorted by number) as a binary search on A: a few
 * comparisons reach a leaf of at most LEAF checks, then kill. The kernel
 * runs the filter once per call number when it is installed (to cache the
 * calls it always allows), so its cost is in the path, not only the size.
 */
static void
tree(struct prog *p, const struct entry *e, size_t n)
{
	size_t mid = n / 2;
	unsigned short at;

	if (n <= LEAF) {
		for (size_t i = 0; i < n; i++)
			check(p, &e[i]);
		ret(p, SECCOMP_RET_KILL_PROCESS);
		return;
	}
	/* A >= e[mid].nr: jump over the lower half. */
	at = p->n;
	emit(p, BPF_JMP | BPF_JGE | BPF_K, 0, 0, e[mid].nr);
	tree(p, e, mid);
	if (at < MAX_INSNS) {
		if (p->n - at - 1 > 255)
			p->n = MAX_INSNS + 1;   /* too far: build() fails */
		else
			p->insn[at].jt = (unsigned char)(p->n - at - 1);
	}
	tree(p, e + mid, n - mid);
}

static int
by_nr(const void *a, const void *b)
{
	unsigned int x = ((const struct entry *)a)->nr;
	unsigned int y = ((const struct entry *)b)->nr;

	return x < y ? -1 : x > y;
}

#define NALLOWED (sizeof(allowed) / sizeof(*allowed))

static void
build(struct prog *p)
{
	struct entry e[NALLOWED + 3] = {
		{ SYS_mmap, RULE_NO_EXEC },
		{ SYS_mprotect, RULE_NO_EXEC },
		{ SYS_ioctl, RULE_IOCTL },
	};
	size_t n = 3;

	for (size_t i = 0; i < NALLOWED; i++)
		e[n++] = (struct entry){ (unsigned int)allowed[i], RULE_ALLOW };
	qsort(e, n, sizeof(*e), by_nr);
	p->n = 0;
	for (size_t i = 1; i < n; i++)
		if (e[i].nr == e[i - 1].nr) {   /* a number twice: a typo */
			p->n = MAX_INSNS + 1;
			return;
		}
	load(p, ARCH_OFF);
	emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, RUNNER_AUDIT_ARCH);
	ret(p, SECCOMP_RET_KILL_PROCESS);
	load(p, NR_OFF);
	tree(p, e, n);
}

static struct prog filter;       /* built once, by the first call below */

int
runner_seccomp_prepare(void)
{
	if (filter.n == 0)
		build(&filter);
	return filter.n > MAX_INSNS ? -E2BIG : 0;
}

int
runner_seccomp_install(void)
{
	struct sock_fprog fp;
	int rv;

	if ((rv = runner_seccomp_prepare()) != 0)
		return rv;
	fp.len = filter.n;
	fp.filter = filter.insn;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -errno;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) != 0)
		return -errno;
	return 0;
}

const struct sock_filter *
runner_seccomp_program(unsigned *len)
{
	if (runner_seccomp_prepare() != 0)
		return NULL;
	*len = filter.n;
	return filter.insn;
}

const int *
runner_seccomp_allowed(size_t *n)
{
	*n = NALLOWED;
	return allowed;
}
