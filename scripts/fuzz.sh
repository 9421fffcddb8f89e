#!/bin/sh
# Runs the libFuzzer target of the JSON-RPC reader for $1 seconds (default
# 60) with ASan and UBSan, starting from tests/fuzz/corpus.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
if [ ! -d build-fuzz ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=disabled \
		-Db_sanitize=address,undefined -Db_lundef=false \
		-Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi
ninja -C build-fuzz tests/fuzz/fuzz_jsonrpc >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp tests/fuzz/corpus/* "$work/"
./build-fuzz/tests/fuzz/fuzz_jsonrpc -max_total_time="$secs" \
	-max_len=65536 -print_final_stats=1 "$work" 2>&1 | tail -5
