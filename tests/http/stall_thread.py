#!/usr/bin/env python3
"""stall_thread.py PID COMM SECONDS: stops one thread of a running process (the
first whose /proc/PID/task/TID/comm is COMM) for SECONDS, the others running on,
as a machine too loaded to schedule that thread would. ptrace(PTRACE_SEIZE) and
PTRACE_INTERRUPT act on one thread only; PTRACE_DETACH lets it go. Prints
"stopped" once the thread is stopped; exits 0 after letting it go."""
import ctypes
import os
import sys
import time

PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT = 17, 0x4206, 0x4207
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(req, tid):
    if libc.ptrace(req, tid, None, None) != 0:
        err = ctypes.get_errno()
        sys.exit(f"stall_thread: ptrace({req:#x}, {tid}): {os.strerror(err)}")


def main():
    pid, comm, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    tasks = f"/proc/{pid}/task"
    tid = next((int(t) for t in sorted(os.listdir(tasks))
                if open(f"{tasks}/{t}/comm").read().strip() == comm), None)
    if tid is None:
        sys.exit(f"stall_thread: no thread named {comm} in {pid}")
    ptrace(PTRACE_SEIZE, tid)
    ptrace(PTRACE_INTERRUPT, tid)
    os.waitpid(tid, WALL)
    print("stopped", flush=True)
    time.sleep(seconds)
    ptrace(PTRACE_DETACH, tid)


main()
