#!/usr/bin/env python3
"""grep over a 10 MB tree: this build's go_busybox runner against a baseline
runner (another build's, e.g. main's), alternating call by call, and GNU grep
in a Docker container (debian:bookworm-slim, the Docker backend's default
image) on the same files.

    bench/toolbox-grep.py RUNNER [BASE_RUNNER] [--calls 40] [--tree-mb 10]
                          [--no-docker]

RUNNER is build/services/wasm-driver/host/msc-wasm-busybox (the toolbox
through wasm2c, as the server runs it: one process per command). Each call
is `RUNNER --root TREE -- busybox grep ARGS`, timed from outside (wall time
of the process, output to a pipe that is drained). In Docker the same grep
runs in a loop inside the container, each run timed with `date +%s%N` around
it (a fork and exec of grep as each call here is one of the runner). The
tree is bench/wasm-bench.mjs's: 1,500-line files of lorem ipsum, "needle" on
one line of every tenth. Prints a markdown table (p50 and min in ms; ratios
against the baseline runner and against Docker) and the load average. The
`true` row is each side's floor: the runner's start and exit, and in Docker
the loop's own cost (date and /bin/true's exec).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = [
    ["true"],
    ["grep", "-r", "-c", "needle", "tree"],
    ["grep", "-r", "needle", "tree"],
    ["grep", "-rn", "needle", "tree"],
    ["grep", "-rn", "ne.dle", "tree"],
]


def make_tree(root, mb):
    line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n"
    total = n = 0
    while total < mb * 1024 * 1024:
        sub = os.path.join(root, "tree", "d%d" % (n % 20))
        os.makedirs(sub, exist_ok=True)
        text = "".join("a needle here\n" if i == 700 and n % 10 == 0 else line
                       for i in range(1500))
        with open(os.path.join(sub, "f%d.txt" % n), "w") as f:
            f.write(text)
        total += len(text)
        n += 1
    return n


def timed(cmd, cwd):
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    ms = (time.perf_counter() - t) * 1000
    if p.returncode not in (0, 1):
        raise SystemExit("%s: exit %d: %s" % (cmd, p.returncode, p.stderr[:200]))
    return ms, p.stdout


def docker_series(root, args, calls):
    name = "msc-bench-grep-%d" % os.getpid()
    subprocess.run(["docker", "run", "-d", "--name", name,
                    "debian:bookworm-slim", "sleep", "3600"],
                   check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(["docker", "cp", os.path.join(root, "tree"),
                        name + ":/tree"], check=True)
        out = {}
        for a in args:
            cmd = " ".join(a)
            loop = ("cd / && for i in $(seq %d); do s=$(date +%%s%%N); %s "
                    ">/dev/null; e=$(date +%%s%%N); echo $((e-s)); done"
                    % (calls + 3, cmd))
            p = subprocess.run(["docker", "exec", name, "sh", "-c", loop],
                               check=True, capture_output=True, text=True)
            ns = [int(x) for x in p.stdout.split()][3:]
            out[cmd] = [x / 1e6 for x in ns]
        return out
    finally:
        subprocess.run(["docker", "rm", "-f", name], stdout=subprocess.DEVNULL)


def main():
    argv = sys.argv[1:]
    calls, mb, docker = 40, 10, True
    runners = []
    while argv:
        a = argv.pop(0)
        if a == "--calls":
            calls = int(argv.pop(0))
        elif a == "--tree-mb":
            mb = int(argv.pop(0))
        elif a == "--no-docker":
            docker = False
        else:
            runners.append(os.path.abspath(a))
    if not runners:
        print(__doc__, file=sys.stderr)
        return 2
    root = tempfile.mkdtemp(prefix="toolbox-grep-")
    try:
        files = make_tree(root, mb)
        load0 = os.getloadavg()
        rows = []
        for args in WORKLOADS:
            lat = [[] for _ in runners]
            outs = [None for _ in runners]
            for i in range(calls + 3):
                for k, r in enumerate(runners):
                    ms, out = timed([r, "--root", root, "--", "busybox"] + args,
                                    root)
                    if i >= 3:
                        lat[k].append(ms)
                    outs[k] = out
            if len(set(outs)) != 1:
                raise SystemExit("%s: the runners' outputs differ" % args)
            rows.append((" ".join(args), lat, outs[0]))
        dk = docker_series(root, [r[0].split() for r in rows], calls) \
            if docker else {}
        load1 = os.getloadavg()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    head = ["workload"] + ["runner %d p50 (min) ms" % (k + 1)
                           for k in range(len(runners))]
    if len(runners) > 1:
        head.append("runner 1 / runner 2")
    if dk:
        head += ["Docker GNU grep p50 (min) ms", "runner 1 / Docker"]
    print("| " + " | ".join(head) + " |")
    print("| --- |" + " ---: |" * (len(head) - 1))
    for cmd, lat, _ in rows:
        p50 = [statistics.median(x) for x in lat]
        cells = [cmd] + ["%.2f (%.2f)" % (statistics.median(x), min(x))
                         for x in lat]
        if len(runners) > 1:
            cells.append("%.2f" % (p50[0] / p50[1]))
        if dk:
            d = dk[cmd]
            cells += ["%.2f (%.2f)" % (statistics.median(d), min(d)),
                      "%.2f" % (p50[0] / statistics.median(d))]
        print("| " + " | ".join(cells) + " |")
    print("\n%d files, %d MB, %d calls each after 3 untimed; load average "
          "%.1f / %.1f / %.1f before, %.1f / %.1f / %.1f after"
          % ((files, mb, calls) + load0 + load1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
