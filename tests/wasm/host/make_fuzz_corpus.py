#!/usr/bin/env python3
"""Writes the seed inputs of tests/fuzz/fuzz_wasi_args.c (its input format
is described there) into tests/fuzz/corpus-wasi/."""
import os
import struct
import sys

NASTY = ["..", "../", "../outside/secret", "/etc/passwd",
         "/proc/self/root/etc/passwd", "hostlink/secret", "hostlink",
         "a/b/../../..", ".", "/", "dir/..", "dir/../../x", "file", "dir",
         "dir/", "link-up", "../../../../../../tmp", "abs",
         "/proc/self/fd/3", "dir/./sub", "file/", "x\0y", "",
         "ABS_SECRET", "ABS_OUTSIDE", "ABS_NEW"]  # host paths, at run time
OPS = {n: i for i, n in enumerate([
    "args_get", "args_sizes_get", "environ_get", "environ_sizes_get",
    "clock_res_get", "clock_time_get", "fd_advise", "fd_allocate",
    "fd_close", "fd_datasync", "fd_fdstat_get", "fd_fdstat_set_flags",
    "fd_fdstat_set_rights", "fd_filestat_get", "fd_filestat_set_size",
    "fd_filestat_set_times", "fd_pread", "fd_prestat_get",
    "fd_prestat_dir_name", "fd_pwrite", "fd_read", "fd_readdir",
    "fd_renumber", "fd_seek", "fd_sync", "fd_tell", "fd_write",
    "path_create_directory", "path_filestat_get",
    "path_filestat_set_times", "path_link", "path_open", "path_readlink",
    "path_remove_directory", "path_rename", "path_symlink",
    "path_unlink_file", "poll_oneoff", "proc_raise", "sched_yield",
    "random_get", "sock_accept", "sock_recv", "sock_send",
    "sock_shutdown", "proc_exit"])}


def small(v):
    return bytes([1, v])


def mem(v):
    return bytes([2]) + struct.pack("<H", v)


def a64(v):
    return bytes([1]) + struct.pack("<Q", v)


def call(name, *args, x=a64(0), y=a64(0)):
    args = list(args) + [small(0)] * (7 - len(args))
    return bytes([OPS[name]]) + b"".join(args) + x + y


def path(off, name, length=None):
    """Pokes a nasty path (no NUL) at off; returns (bytes, len)."""
    i = NASTY.index(name)
    n = len(name.encode()) if length is None else length
    return bytes([0xe1, i]) + struct.pack("<H", off), n


def poke(off, data):
    return bytes([0xf0]) + struct.pack("<H", off) + bytes([len(data)]) + data


def at(fd, name, off=100, length=None):
    """A (fd, ptr, len) triple for a nasty path poked at off."""
    b, n = path(off, name, length)
    return b, [small(fd), mem(off), small(n)]


def seeds():
    out = {}
    mem_size = struct.pack("<H", 0xffff)
    # 1: open outside through "..", create, write.
    b, a = at(3, "../outside/secret")
    iov = poke(300, struct.pack("<II", 400, 6)) + poke(400, b"PWNED\n")
    out["open-dotdot"] = (mem_size + b + iov + call(
        "path_open", a[0], small(1), a[1], a[2], small(9), small(0),
        mem(200), x=a64(0xffffffff), y=a64(0xffffffff)) + call(
        "fd_write", small(4), mem(300), small(1), mem(500)))
    # 2: guest symlink up, then read through it; readdir of the root.
    s = poke(100, b"../../..") + poke(120, b"up")
    p = poke(140, b"up/outside/secret")
    out["symlink-up"] = (mem_size + s + call(
        "path_symlink", mem(100), small(8), small(3), mem(120),
        small(2)) + p + call(
        "path_open", small(3), small(1), mem(140), small(17), small(0),
        small(0), mem(200), x=a64(2), y=a64(2)) + call(
        "fd_readdir", small(3), mem(1000), mem(4000), mem(600),
        x=a64(0)))
    # 3: mkdir/rename/link/unlink at host-made links and "..".
    b1, a1 = at(3, "dir/../../x", 100)
    b2, a2 = at(3, "file", 200)
    b3, a3 = at(3, "hostlink/secret", 300)
    out["changes"] = (mem_size + b1 + b2 + b3 + call(
        "path_create_directory", *a1) + call(
        "path_rename", a2[0], a2[1], a2[2], small(3), a3[1], a3[2]) + call(
        "path_link", small(3), small(1), a3[1], a3[2], small(3), a2[1],
        a2[2]) + call("path_unlink_file", *a3) + call(
        "path_remove_directory", *at(3, "..", 400)[1]))
    # 4: args, environ, clocks, random, a short sleep, sockets.
    sub = struct.pack("<QB7xIIQQH6x", 7, 0, 1, 0, 500, 0, 0)
    out["misc"] = (mem_size + call("args_sizes_get", mem(0), mem(4)) +
                   call("args_get", mem(8), mem(64)) +
                   call("environ_get", mem(128), mem(160)) +
                   call("clock_time_get", small(1), mem(200), x=a64(1)) +
                   call("random_get", mem(300), mem(100)) +
                   poke(400, sub) +
                   call("poll_oneoff", mem(400), mem(600), small(1),
                        mem(700)) +
                   call("sock_recv", small(0)) + call("sched_yield"))
    # 5: file descriptor calls on a file and a directory.
    b, a = at(3, "file")
    out["fdops"] = (mem_size + b + call(
        "path_open", a[0], small(0), a[1], a[2], small(0), small(0),
        mem(200), x=a64(0x7e), y=a64(0)) + call(
        "fd_seek", small(4), small(0), mem(210), x=a64(5)) + call(
        "fd_pread", small(4), mem(300), small(1), mem(220), x=a64(0)) +
        call("fd_filestat_get", small(4), mem(400)) +
        call("fd_fdstat_get", small(3), mem(500)) +
        call("fd_renumber", small(4), small(3)) +
        call("fd_prestat_get", small(3), mem(600)) +
        call("fd_close", small(3)))
    # 6: the host's absolute paths next to the root, as long as they are
    # under /tmp/fuzz-wasi-XXXXXX/outside/.
    for name, n in (("ABS_SECRET", 36), ("ABS_NEW", 33)):
        if True:
            b, a = at(3, name, 100, n)
            out["abs-%s" % name.lower()] = (
                mem_size + b + call(
                    "path_open", a[0], small(1), a[1], a[2], small(9),
                    small(0), mem(200), x=a64(0xffffffff), y=a64(0)) +
                call("path_unlink_file", *a) +
                call("path_create_directory", *a))
    # 7: proc_exit, then a tiny memory.
    out["exit"] = mem_size + call("proc_exit", small(3))
    out["tiny-mem"] = (struct.pack("<H", 7) + call(
        "args_get", mem(0), mem(4)) + call("fd_write", small(1), mem(0),
                                          small(1), mem(4)))
    return out


def main():
    dest = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "fuzz", "corpus-wasi")
    for name, data in seeds().items():
        with open(os.path.join(dest, name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
