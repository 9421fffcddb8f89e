#!/bin/sh
# Benchmark terminal_execute through the stdio edge on the Docker backend against a bare
# `docker exec` of the same container, and append a dated section to bench/RESULTS.md.
#
#   bench/run.sh [--no-split] [extra bench.mjs args, e.g. --serial 200 --concurrent 400]
#
# Env: MSC_BIN (default build/mcp-sandbox-computer), MSC_RUN_SPLIT (default scripts/run-split),
#      BENCH_COMMAND (default "true"), BENCH_NO_APPEND=1 (print the tables only).
# Exits 1 when any call failed (a small run is a test: tests/bench/meson.build).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${MSC_BIN:-$repo/build/mcp-sandbox-computer}
split=${MSC_RUN_SPLIT:-$repo/scripts/run-split}
cmd=${BENCH_COMMAND:-true}
do_split=1
if [ "${1:-}" = "--no-split" ]; then do_split=0; shift; fi

[ -x "$bin" ] || { echo "bench: $bin not built (meson setup build && ninja -C build)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "bench: no Docker engine (scripts/start-dockerd.sh)" >&2; exit 1; }
if [ ! -d "$repo/tests/integration/node_modules/@modelcontextprotocol/sdk" ]; then
	npm ci --prefix "$repo/tests/integration" >&2
fi

tmp=$(mktemp -d /tmp/msc-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "bench: all-in-one ($bin)" >&2
status=0
node "$here/bench.mjs" --bin "$bin" --label all-in-one --command "$cmd" "$@" >"$tmp/aio.md" || status=1
cat "$tmp/aio.md"
if [ "$do_split" = 1 ] && [ -x "$split" ]; then
	echo "bench: split ($split)" >&2
	node "$here/bench.mjs" --bin "$split" --label split --command "$cmd" "$@" >"$tmp/split.md" || status=1
	cat "$tmp/split.md"
fi

[ "$status" = 0 ] || echo "bench: some calls failed (see the errors column)" >&2
[ "${BENCH_NO_APPEND:-}" = 1 ] && exit "$status"

rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo uncommitted)
dver=$(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?')
{
	[ -s "$here/RESULTS.md" ] || printf '# Benchmark results\n\nAppended by `bench/run.sh`; latest last. Latencies are client-side wall-clock per call (SDK client over stdio, session setup and warm-up excluded); docker exec rows spawn the `docker` CLI per call against the same containers in the same run. Ratios: ours / docker exec (latency: higher is slower; calls/s: lower is slower).\n'
	printf '\n## %s (rev %s, %s cores, Docker %s, node %s, command `%s`)\n\n' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" "$rev" "$(nproc)" "$dver" "$(node --version)" "$cmd"
	[ -s "$tmp/aio.md" ] && cat "$tmp/aio.md"
	if [ -s "$tmp/split.md" ]; then
		printf '\n'
		cat "$tmp/split.md"
	fi
} >>"$here/RESULTS.md"
echo "bench: appended to $here/RESULTS.md" >&2
exit "$status"
