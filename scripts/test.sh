#!/bin/sh
# Runs every test: unit (cmocka), integration (the official MCP SDK client
# against the real program and a real Docker engine: stdio all-in-one and
# split, Streamable HTTP with the official conformance suite, the dashboard
# in headless Chromium), the fuzz corpus, under ASan+UBSan, then 30 s of
# libFuzzer.
#
# The release build runs the unit tests, the package, the Podman and runsc
# runs, the acceptance cases and the timing-sensitive files (the suite
# 'timing', in the release build alone); every other test runs in the
# sanitizer build only.
# The sanitizer and fuzzer builds compile, at the lowest priority, while the
# release tests run: those mostly wait on the engine. The ASan tests start
# as soon as the ASan build is done, in two streams (the unit tests, the
# cloud fakes and the WebAssembly backends beside the engine's files); the
# fuzzer build and a ThreadSanitizer
# build of the in-process unit tests (the suite 'threads', only their
# executables) go on compiling at the lowest priority meanwhile, and run
# after the shorter stream: a few minutes.
set -eu
cd "$(dirname "$0")/.."
./scripts/setup.sh
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
(
	# asan.status: "ok" once build-asan is built, builds.status once the
	# fuzzer and ThreadSanitizer builds are; "failed" otherwise (also when
	# this job stops on an error below: never left empty).
	trap '[ -s "$logs/asan.status" ] || echo failed >"$logs/asan.status"
	      [ -s "$logs/builds.status" ] || echo failed >"$logs/builds.status"' EXIT
	if [ -d build-asan ]; then meson setup --reconfigure build-asan
	else meson setup build-asan -Db_sanitize=address,undefined \
		-Db_lundef=false; fi
	nice -n 19 ninja -C build-asan
	echo ok >"$logs/asan.status"
	nice -n 19 ./scripts/fuzz.sh build
	if [ -d build-tsan ]; then meson setup --reconfigure build-tsan
	else meson setup build-tsan -Db_sanitize=thread -Db_lundef=false; fi
	# shellcheck disable=SC2046
	nice -n 19 ninja -C build-tsan $(meson introspect --tests build-tsan |
		python3 -c 'import json, os, sys
print(" ".join(sorted({os.path.relpath(t["cmd"][0], "build-tsan")
    for t in json.load(sys.stdin)
    if any(x.endswith(":threads") for x in t["suite"])})))')
	echo ok >"$logs/builds.status"
) >"$logs/builds" 2>&1 &
builds=$!
echo "== tests (release build)" >&2
# The release build runs what users run as built: the unit tests, the
# package, the Podman and runsc runs (registered in it alone), the
# acceptance cases and the timing-sensitive files. Every other file runs
# in the sanitizer build only, which checks its behaviour and memory in
# one pass (each run twice had CI past its 45 minutes).
meson test -C build --print-errorlogs --suite unit --suite package \
	--suite podman --suite runsc
./scripts/no-skips.py build
meson test -C build --print-errorlogs --no-rebuild integration/exec
./scripts/no-skips.py build
meson test -C build --print-errorlogs --no-rebuild --suite timing
./scripts/no-skips.py build
echo "== tests under ASan and UBSan" >&2
while [ ! -s "$logs/asan.status" ]; do sleep 2; done
if [ "$(cat "$logs/asan.status")" != ok ]; then
	wait "$builds" || true
	tail -40 "$logs/builds" >&2
	echo "test.sh: the sanitizer build failed" >&2
	exit 1
fi
# Two streams at once: the files of the suites 'aside' (the cloud fakes
# and the WebAssembly backends: their own containers and folders, never
# the engine's sandbox network or the kilntainers containers the others
# count and clean) and 'unit' (no engine at all) beside all the rest.
# Integration files run one at a time in each stream. meson writes each
# stream's log under its own --logbase. The shorter stream, 'aside', goes
# on with the ThreadSanitizer run of the in-process unit tests and 30 s of
# libFuzzer once their builds are done.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(
	rc=0
	meson test -C build-asan --print-errorlogs --no-rebuild --suite aside \
		--suite unit --logbase aside || rc=1
	./scripts/no-skips.py build-asan aside || rc=1
	unset ASAN_OPTIONS UBSAN_OPTIONS
	echo "== unit tests under ThreadSanitizer"
	while [ ! -s "$logs/builds.status" ]; do sleep 2; done
	if [ "$(cat "$logs/builds.status")" != ok ]; then
		tail -40 "$logs/builds"
		echo "test.sh: the fuzzer or ThreadSanitizer build failed"
		exit 1
	fi
	# report_mutex_bugs=0 and tests/unit/tsan.supp: NNG 1.5 (not
	# instrumented) now and then locks one of its own mutexes after
	# destroying it while a socket closes (in msc_server_stop, about one
	# run in 20-40 of a session test; report_mutex_bugs=0 alone still let
	# "use of an invalid mutex" through); data races are all reported.
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:report_mutex_bugs=0:suppressions=$PWD/tests/unit/tsan.supp \
		meson test -C build-tsan --print-errorlogs --no-rebuild \
		--suite threads || rc=1
	echo "== libFuzzer, 30 s"
	./scripts/fuzz.sh 30 || rc=1
	exit "$rc"
) >"$logs/aside" 2>&1 &
aside=$!
main_rc=0
meson test -C build-asan --print-errorlogs --no-rebuild --no-suite timing \
	--no-suite aside --no-suite unit || main_rc=$?
./scripts/no-skips.py build-asan || main_rc=1
aside_rc=0
wait "$aside" || aside_rc=$?
wait "$builds" || true
echo "== tests under ASan and UBSan: the suites 'aside' and 'unit'; ThreadSanitizer; libFuzzer" >&2
cat "$logs/aside" >&2
[ "$main_rc" -eq 0 ] && [ "$aside_rc" -eq 0 ] || exit 1
