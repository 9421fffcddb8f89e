#!/usr/bin/env python3
"""Runs the toolbox acceptance cases (cases.py) through a command prefix.

    run_tests.py PREFIX...          e.g. build/.../msc-toolbox-native
    TOOLBOX_PREFIX='node run-node.mjs busybox.wasm' run_tests.py

The prefix is the command that runs the toolbox: the case's argv is
appended to it (["ls", "-la"], or ["sh", "-c", line] for shell cases).
TOOLBOX_PREFIX (split like a shell would) takes precedence over the
arguments; "{root}" in it is replaced by the case's scratch directory,
which is the sandbox root "/" for WASI runners. Each case runs in a fresh
scratch directory (also the working directory, and PWD), filled with the
fixtures of cases.py. Cases therefore use relative paths only.

TOOLBOX_FILTER=regex runs the cases whose name matches; -v prints each
case. Exit status: 0 when every case passes, 1 otherwise.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

TIMEOUT = float(os.environ.get("TOOLBOX_TIMEOUT", "30"))


def make_tree(root, files):
    for path, content in files.items():
        full = os.path.join(root, path)
        if path.endswith("/"):
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(full, mode) as f:
            f.write(content)


def run_one(prefix, root, step):
    argv = step["args"] if "args" in step else ["sh", "-c", step["sh"]]
    cmd = [p.replace("{root}", root) for p in prefix] + argv
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PWD": root,
        "HOME": root,
        "TZ": "UTC",
        "LC_ALL": "C",
        "TOOLBOX_ROOT": root,
    }
    env.update(step.get("env", {}))
    stdin = step.get("stdin", "")
    if isinstance(stdin, str):
        stdin = stdin.encode()
    try:
        p = subprocess.run(cmd, input=stdin, cwd=root, env=env,
                           capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, b"", b"timeout"
    return p.returncode, p.stdout, p.stderr


def check(step, rc, out, err, root):
    """Returns a list of failure descriptions (empty when the step passed)."""
    bad = []
    o = out.decode(errors="replace")
    e = err.decode(errors="replace")
    if rc is None:
        return ["timed out"]
    want_rc = step.get("rc", 0)
    if want_rc == "nonzero":
        if rc == 0:
            bad.append("exit 0, wanted non-zero")
    elif rc != want_rc:
        bad.append("exit %d, wanted %d" % (rc, want_rc))
    if "out" in step and o != step["out"]:
        bad.append("stdout %r\n        wanted %r" % (o, step["out"]))
    if "out_re" in step and not re.search(step["out_re"], o, re.S | re.M):
        bad.append("stdout %r\n        does not match %r" %
                   (o, step["out_re"]))
    for s in step.get("out_has", []):
        if s not in o:
            bad.append("stdout %r lacks %r" % (o, s))
    for s in step.get("out_lacks", []):
        if s in o:
            bad.append("stdout %r has %r" % (o, s))
    want_err = step.get("err", "" if want_rc == 0 and "err_has" not in step
                        else None)
    if want_err is not None and e != want_err:
        bad.append("stderr %r\n        wanted %r" % (e, want_err))
    for s in step.get("err_has", []):
        if s not in e:
            bad.append("stderr %r lacks %r" % (e, s))
    for path, content in step.get("files", {}).items():
        full = os.path.join(root, path)
        if content is None:
            if os.path.lexists(full):
                bad.append("%s exists" % path)
            continue
        try:
            with open(full, "rb") as f:
                got = f.read().decode(errors="replace")
        except OSError as ex:
            bad.append("%s: %s" % (path, ex.strerror))
            continue
        if got != content:
            bad.append("%s is %r, wanted %r" % (path, got, content))
    return bad


def main():
    args = sys.argv[1:]
    verbose = False
    if args and args[0] == "-v":
        verbose = True
        args = args[1:]
    prefix = shlex.split(os.environ["TOOLBOX_PREFIX"]) \
        if os.environ.get("TOOLBOX_PREFIX") else args
    if not prefix:
        print(__doc__, file=sys.stderr)
        return 2
    # Cases run in their scratch directory: make relative paths absolute.
    prefix = [os.path.abspath(p) if "/" in p and os.path.exists(p) else p
              for p in prefix]
    flt = re.compile(os.environ.get("TOOLBOX_FILTER", ""))
    todo = [c for c in cases.CASES if flt.search(c["name"])]
    names = set()
    failed = 0
    base = tempfile.mkdtemp(prefix="toolbox-tests-")
    try:
        for n, case in enumerate(todo, 1):
            assert case["name"] not in names, "duplicate " + case["name"]
            names.add(case["name"])
            root = os.path.join(base, "c%d" % n)
            os.makedirs(root)
            make_tree(root, cases.FIXTURES)
            make_tree(root, case.get("setup", {}))
            bad = []
            for i, step in enumerate(case.get("steps", [case])):
                rc, out, err = run_one(prefix, root, step)
                for b in check(step, rc, out, err, root):
                    bad.append("step %d: %s" % (i + 1, b) if "steps" in case
                               else b)
            if bad:
                failed += 1
                print("not ok %d %s" % (n, case["name"]))
                for b in bad:
                    print("    " + b)
            elif verbose:
                print("ok %d %s" % (n, case["name"]))
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("%d/%d toolbox cases passed" % (len(todo) - failed, len(todo)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
