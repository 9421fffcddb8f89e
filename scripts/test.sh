#!/bin/sh
# Runs every test: unit (cmocka), integration (the official MCP SDK client
# against the real program and a real Docker engine: stdio all-in-one and
# split, Streamable HTTP with the official conformance suite, the dashboard
# in headless Chromium), the fuzz corpus, all of it again under ASan+UBSan,
# then 30 s of libFuzzer.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
echo "== tests (release build)" >&2
meson test -C build --print-errorlogs
./scripts/no-skips.py build
echo "== tests under ASan and UBSan" >&2
if [ -d build-asan ]; then meson setup --reconfigure build-asan >/dev/null
else meson setup build-asan -Db_sanitize=address,undefined \
	-Db_lundef=false >/dev/null; fi
ninja -C build-asan >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	meson test -C build-asan --print-errorlogs
./scripts/no-skips.py build-asan
echo "== libFuzzer, 30 s" >&2
./scripts/fuzz.sh 30
