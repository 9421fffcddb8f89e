#!/usr/bin/env python3
"""Fails when a meson test run skipped a test (exit 77): in CI every test
must run, so a missing dependency is an error, not a silent skip.

    no-skips.py BUILD_DIR [LOGBASE]   (reads BUILD_DIR/meson-logs/LOGBASE.json,
                                       LOGBASE testlog by default: meson test's --logbase)
"""
import json
import sys

skipped = []
logbase = sys.argv[2] if len(sys.argv) > 2 else "testlog"
with open(sys.argv[1] + "/meson-logs/" + logbase + ".json") as f:
    for line in f:
        t = json.loads(line)
        if t.get("result") == "SKIP":
            skipped.append(t["name"])
if skipped:
    sys.stderr.write("tests skipped (a dependency is missing):\n  " +
                     "\n  ".join(skipped) + "\n")
    sys.exit(1)
