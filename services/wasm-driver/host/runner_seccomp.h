/*
 * runner_seccomp.h - the runner's last step before guest code runs:
 * no_new_privs and a seccomp allowlist of the system calls the WASI host
 * and wasm-rt make while a guest runs (file calls relative to the root's
 * fd, memory, clocks, poll, exit). Anything else kills the process
 * (SIGSYS), as does a system call of another architecture or ABI.
 */
#ifndef RUNNER_SECCOMP_H
#define RUNNER_SECCOMP_H

/*
 * Sets PR_SET_NO_NEW_PRIVS and installs the filter on the calling thread
 * (the runner has one). Returns 0, or a negative errno (the prctl that
 * failed); then nothing is installed. Never blocks.
 */
int runner_seccomp_install(void);

#endif /* RUNNER_SECCOMP_H */
