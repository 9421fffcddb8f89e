#!/bin/sh
# Runs the libFuzzer targets for $1 seconds in all (default 60) with ASan
# and UBSan: the JSON-RPC reader from tests/fuzz/corpus, then the WASI host
# (fuzz_wasi_args) from tests/fuzz/corpus-wasi, then the network policy
# names (fuzz_netpolicy) from tests/fuzz/corpus-netpolicy, then the tar
# reader (fuzz_tar) from tests/fuzz/corpus-tar.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
if [ ! -d build-fuzz ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
# fuzz.sh build: only compile the targets (scripts/test.sh does it early).
if [ "$secs" = build ]; then
	targets="tests/fuzz/fuzz_jsonrpc tests/fuzz/fuzz_netpolicy tests/fuzz/fuzz_tar"
	if ninja -C build-fuzz -t query tests/fuzz/fuzz_wasi_args >/dev/null 2>&1; then
		targets="$targets tests/fuzz/fuzz_wasi_args"
	fi
	exec ninja -C build-fuzz $targets >/dev/null
fi
ninja -C build-fuzz tests/fuzz/fuzz_jsonrpc >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A third of the time (at least 1 s) goes to the WASI host's target.
wsecs=$((secs / 3))
[ "$wsecs" -ge 1 ] || wsecs=1
# A sixth (at least 1 s) to the network policy names (fuzz_netpolicy).
nsecs=$((secs / 6))
[ "$nsecs" -ge 1 ] || nsecs=1
# A sixth (at least 1 s) to the tar reader (fuzz_tar).
tsecs=$((secs / 6))
[ "$tsecs" -ge 1 ] || tsecs=1
jsecs=$((secs - wsecs - nsecs - tsecs))
[ "$jsecs" -ge 1 ] || jsecs=1
mkdir "$work/jsonrpc" "$work/wasi" "$work/netpolicy" "$work/tar"
# run NAME ARGS...: one target; its last lines shown, its failure (a crash,
# a sanitizer report) this script's, with the input kept in crash-* here.
run() {
	name=$1
	shift
	if ! "$@" >"$work/$name.log" 2>&1; then
		grep -E "ERROR|SUMMARY|runtime error" "$work/$name.log" | head -20 >&2
		echo "fuzz.sh: $name failed" >&2
		exit 1
	fi
	tail -5 "$work/$name.log"
}
cp tests/fuzz/corpus/* "$work/jsonrpc/"
run jsonrpc ./build-fuzz/tests/fuzz/fuzz_jsonrpc -max_total_time="$jsecs" \
	-max_len=65536 -print_final_stats=1 "$work/jsonrpc"
if ninja -C build-fuzz -t query tests/fuzz/fuzz_wasi_args >/dev/null 2>&1; then
	ninja -C build-fuzz tests/fuzz/fuzz_wasi_args >/dev/null
	cp tests/fuzz/corpus-wasi/* "$work/wasi/"
	run wasi ./build-fuzz/tests/fuzz/fuzz_wasi_args \
		-max_total_time="$wsecs" -max_len=4096 -timeout=10 \
		-print_final_stats=1 "$work/wasi"
fi
ninja -C build-fuzz tests/fuzz/fuzz_netpolicy >/dev/null
cp tests/fuzz/corpus-netpolicy/* "$work/netpolicy/"
run netpolicy ./build-fuzz/tests/fuzz/fuzz_netpolicy -max_total_time="$nsecs" \
	-max_len=1024 -print_final_stats=1 "$work/netpolicy"
ninja -C build-fuzz tests/fuzz/fuzz_tar >/dev/null
cp tests/fuzz/corpus-tar/* "$work/tar/"
run tar ./build-fuzz/tests/fuzz/fuzz_tar -max_total_time="$tsecs" \
	-max_len=140000 -print_final_stats=1 "$work/tar"
