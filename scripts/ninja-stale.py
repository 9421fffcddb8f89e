#!/usr/bin/env python3
"""Lists the objects of a ninja build dir that may be stale: compiled while one of their inputs
changed (a file saved during a build, as when editing on a busy machine). Ninja 1.11 logs the
output's mtime after the command, which is newer than such an edit, so it never rebuilds them;
an ASan build dir whose lib/msc_driver.c.o kept the code from before an edit made saved in the
middle of a 28 s compile failed integration/e2b-tools while the release build passed.

  scripts/ninja-stale.py BUILD_DIR [--fix]    (--fix removes them, so the next ninja rebuilds them)

Exit 1 when some were found (and not removed).
"""
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith('-'):
        sys.exit(__doc__)
    build, fix = sys.argv[1], '--fix' in sys.argv[2:]
    log = {}
    with open(os.path.join(build, '.ninja_log')) as f:
        for line in f:
            if line.startswith('#'):
                continue
            start_ms, end_ms, mtime_ns, out, _ = line.rstrip('\n').split('\t')
            log[out] = (int(start_ms), int(end_ms), int(mtime_ns))   # the last build of each wins
    deps = subprocess.run(['ninja', '-C', build, '-t', 'deps'], capture_output=True, text=True,
                          check=True).stdout
    stale, out = {}, None
    for line in deps.splitlines():
        if line and not line.startswith(' '):
            out = line.split(':')[0]
            continue
        path = line.strip()
        if not path or out not in log:
            continue
        start_ms, end_ms, mtime_ns = log[out]
        began = mtime_ns / 1e9 - (end_ms - start_ms) / 1000
        try:
            changed = os.stat(os.path.join(build, path)).st_mtime
        except OSError:
            continue
        if began < changed <= mtime_ns / 1e9 + 0.001:
            stale.setdefault(out, path)
    for out, path in sorted(stale.items()):
        print(f'{out}: {path} changed while it compiled')
        if fix:
            try:
                os.unlink(os.path.join(build, out))
            except FileNotFoundError:
                pass
    sys.exit(1 if stale and not fix else 0)


if __name__ == '__main__':
    main()
