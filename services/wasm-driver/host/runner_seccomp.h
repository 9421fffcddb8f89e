/*
 * runner_seccomp.h - the runner's last step before guest code runs:
 * no_new_privs and a seccomp allowlist of the system calls the WASI host
 * and wasm-rt make while a guest runs (file calls relative to the root's
 * fd, memory, clocks, poll, exit). Anything else kills the process
 * (SIGSYS), as does a system call of another architecture or ABI.
 */
#ifndef RUNNER_SECCOMP_H
#define RUNNER_SECCOMP_H

#include <stddef.h>

/*
 * Builds the filter (once; a spare does it before its command line
 * comes). 0, or -E2BIG when the program does not fit. Never blocks.
 */
int runner_seccomp_prepare(void);

/*
 * Sets PR_SET_NO_NEW_PRIVS and installs the filter (built first if
 * runner_seccomp_prepare was not called) on the calling thread (the
 * runner has one). Returns 0, or a negative errno (-E2BIG, or the prctl
 * that failed); then nothing is installed. Never blocks.
 */
int runner_seccomp_install(void);

/* For tests: the program (built if need be; NULL when it cannot be), and
 * the calls allowed whatever their arguments (`allowed`, n of them). */
struct sock_filter;
const struct sock_filter *runner_seccomp_program(unsigned *len);
const int *runner_seccomp_allowed(size_t *n);

#endif /* RUNNER_SECCOMP_H */
