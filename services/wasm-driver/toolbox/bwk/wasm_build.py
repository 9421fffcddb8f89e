#!/usr/bin/env python3
"""Builds busybox.wasm: the toolbox, BWK awk and toybox for wasm32-wasi.

    wasm_build.py OUT CLANG WASM_OPT LLVM_NM BWK_DIR \
        TOOLBOX_SRC... -- AWK_SRC... -- AWK_CFLAG... \
        -- TOYBOX_SRC... -- TOYBOX_CFLAG...

1. Compiles our sources (warnings are errors), awk's (with bwk/bwk_shim.h
   ahead of each, warnings off: not our code) and toybox's (TOYBOX_CFLAG
   name tbx/tbx_shim.h; our own tbx/*.c among them keep warnings on).
2. Joins awk's and toybox's objects, between bwk_begin.o and bwk_end.o,
   into one relocatable object, so that their variables sit between the
   markers.
3. Links (without -O: clang would run wasm-opt itself and drop the function
   names step 4 needs).
4. wasm-opt --asyncify instruments only awk's and toybox's functions and
   bwk.c's unwinding ones (the "onlylist"), so that exit() in them unwinds
   to the applet (bwk.c); then -O2 and the names and debug sections go.
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

TOOLBOX_FLAGS = ["-O2", "-std=gnu11", "-D_GNU_SOURCE", "-Wall", "-Wextra",
                 "-Wpedantic", "-Werror"]
AWK_FLAGS = ["-O2", "-w", "-D_WASI_EMULATED_SIGNAL"]
# Toybox: only wasi-libc's headers and ours (tbx/include), never the
# host's /usr/include that clang would search after them.
TOYBOX_FLAGS = ["-O2", "-std=gnu11", "-funsigned-char", "-nostdlibinc",
                "-isystem", "/usr/include/wasm32-wasi",
                "-D_WASI_EMULATED_SIGNAL", "-D_WASI_EMULATED_MMAN",
                "-D_WASI_EMULATED_PROCESS_CLOCKS", "-D_WASI_EMULATED_GETPID"]
# toybox's own warning set (its configure), as errors, for tbx/*.c
OUR_WARNINGS = ["-Wall", "-Wundef", "-Wno-char-subscripts", "-Wno-pointer-sign",
                "-Werror"]
# bwk.c's functions that unwind or sit between awk and its catcher.
UNWINDING = ["bwk_start_unwind", "bwk_rethrow", "bwk_exit", "bwk_throw_exit",
             "bwk_run_main"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write("%s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
        raise SystemExit(1)
    return p.stdout


def main():
    out, clang, wasm_opt, nm, bwk_dir = sys.argv[1:6]
    rest = sys.argv[6:]
    i = rest.index("--")
    j = rest.index("--", i + 1)
    k = rest.index("--", j + 1)
    m = rest.index("--", k + 1)
    ours, awk, awk_flags = rest[:i], rest[i + 1:j], rest[j + 1:k]
    tbx, tbx_flags = rest[k + 1:m], rest[m + 1:]
    tbx_dir = os.path.join(os.path.dirname(bwk_dir), "tbx")
    shim = os.path.join(bwk_dir, "bwk_shim.h")
    cc = [clang, "--target=wasm32-wasi"]
    with tempfile.TemporaryDirectory(prefix="busybox-wasm-") as tmp:
        jobs = []
        for n, src in enumerate(ours):
            jobs.append((cc + TOOLBOX_FLAGS, src, "t%03d.o" % n))
        for n, src in enumerate(awk):
            jobs.append((cc + AWK_FLAGS + awk_flags +
                         ["-I", os.path.join(bwk_dir, "include"),
                          "-include", shim], src, "a%03d.o" % n))
        for n, src in enumerate(tbx):
            mine = os.path.dirname(os.path.abspath(src)) == tbx_dir
            jobs.append((cc + TOYBOX_FLAGS + tbx_flags +
                         (OUR_WARNINGS if mine else ["-w"]) +
                         # xwrap.c keeps its xrun (tbx_shim.h)
                         (["-DTBX_XWRAP"] if os.path.basename(src) ==
                          "xwrap.c" else []), src, "x%03d.o" % n))
        for name in ("bwk_begin", "bwk_end"):
            jobs.append((cc + ["-O2"], os.path.join(bwk_dir, name + ".c"),
                         name + ".o"))
        with concurrent.futures.ThreadPoolExecutor(
                max_workers=os.cpu_count() or 2) as ex:
            list(ex.map(lambda j: run(j[0] + ["-c", j[1], "-o",
                                              os.path.join(tmp, j[2])]),
                        jobs))
        awk_objs = [os.path.join(tmp, "a%03d.o" % n) for n in range(len(awk))]
        awk_objs += [os.path.join(tmp, "x%03d.o" % n) for n in range(len(tbx))]
        awk_o = os.path.join(tmp, "bwk-awk.o")
        run(cc + ["-nostdlib", "-Wl,-r", "-o", awk_o,
                  os.path.join(tmp, "bwk_begin.o")] + awk_objs +
            [os.path.join(tmp, "bwk_end.o")])
        funcs = set(UNWINDING)
        for line in run([nm, "--defined-only", awk_o]).splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in ("T", "t"):
                # A static function whose name another object also uses is
                # "name.1" (or .2...) in the linked module: list those too
                # (instrumenting one of ours as well costs only time).
                funcs.update([f[2]] + ["%s.%d" % (f[2], k)
                                       for k in range(1, 4)])
        onlylist = os.path.join(tmp, "onlylist")
        with open(onlylist, "w") as f:
            f.write(",".join(sorted(funcs)))
        raw = os.path.join(tmp, "raw.wasm")
        run(cc + ["-Wl,-z,stack-size=1048576", "-o", raw] +
            [os.path.join(tmp, "t%03d.o" % n) for n in range(len(ours))] +
            [awk_o, "-lwasi-emulated-signal", "-lwasi-emulated-mman",
             "-lwasi-emulated-process-clocks", "-lwasi-emulated-getpid",
             # toybox's printf formats floats as long double
             "-lc-printscan-long-double", "-lm"])
        p = subprocess.run([wasm_opt, raw, "--asyncify",
                            "--pass-arg=asyncify-onlylist@@" + onlylist,
                            "-O2", "--strip-debug", "--strip-producers",
                            "-o", out], capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write(p.stderr)
            return 1
        if os.environ.get("WASM_BUILD_KEEP"):	# for debugging: names kept
            keep = os.environ["WASM_BUILD_KEEP"]
            shutil.copy(raw, keep + ".raw.wasm")
            shutil.copy(onlylist, keep + ".onlylist")
        # Inlined static functions are in the list but gone (a warning
        # each): fine. These must be there, or nothing would unwind.
        for f in ("execute", "FATAL", "bwk_exit", "bwk_run_main"):
            if "function name: %s " % f in p.stderr:
                sys.stderr.write("wasm_build: %s not instrumented\n" % f)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
