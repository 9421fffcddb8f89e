/*
 * helper.h - the exec helper's parts (msc_exec_helper.c: PID 1, the
 * listener and the reaper; helper_session.c: one exec per connection;
 * helper_kill.c: killing an exec's processes). Static, libc only.
 */
#ifndef MSC_EXEC_HELPER_H
#define MSC_EXEC_HELPER_H

#include <stdint.h>
#include <sys/types.h>

/* Random 128-bit hex marker; 0 or a negative errno. */
int hx_marker(char out[33]);

/*
 * Serves one exec on connection `conn` (see fastexec_wire.h); every
 * process it starts carries KILNTAINERS_EXEC=<marker>. Runs in a forked
 * process; returns its exit status: 0 when the exec was handled (its
 * processes killed if it timed out, passed the limit or was abandoned),
 * nonzero when it could not clean up (the parent then kills by marker).
 */
int hx_session(int conn, const char *marker);

/*
 * Sends SIGKILL to process group `pgid` (when > 1) and to every process
 * whose environment holds KILNTAINERS_EXEC=<marker>, and to the process
 * groups those lead, in a few rounds. Never kills the caller's group or
 * that of PID 1.
 */
void hx_kill_exec(const char *marker, pid_t pgid);

/*
 * `msc-exec-helper --process ...`: background processes, run as a plain
 * command in the computer (helper_process.c); the exit status.
 */
int hx_process_main(int argc, char **argv);

/*
 * `msc-exec-helper --file read|write|edit ...`: the file tools, run as a
 * plain command in the computer (helper_file.c); the exit status.
 */
int hx_file_main(int argc, char **argv);

/* A process as /proc/<pid>/stat shows it. */
struct hx_stat {
	char state;                     /* R, S, D, Z (a zombie), ... */
	pid_t pgrp;
	unsigned long long start;       /* clock ticks after boot */
};

/* Reads /proc/<pid>/stat into st; 0 or -errno. */
int hx_proc_stat(pid_t pid, struct hx_stat *st);

/* The processes in process group `pgid` now (from /proc). */
int hx_count_group(pid_t pgid);

/* One line on stderr, prefixed "msc-exec-helper: ". */
void hx_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Monotonic milliseconds. */
int64_t hx_now_ms(void);

#endif /* MSC_EXEC_HELPER_H */
