#!/bin/sh
# Benchmark terminal_execute over the Streamable HTTP transport on the Docker backend (1, 8 and
# 64 concurrent sessions, each its own Mcp-Session-Id and computer) against a bare `docker exec`
# of the same containers, plus the server's RSS with 1,000 idle sessions, and append a dated
# section to bench/RESULTS.md.
#
#   bench/http-run.sh [extra http-bench.mjs args, e.g. --concurrency 1,8 --idle-sessions 2000]
#
# Env: MSC_BIN (default build/mcp-sandbox-computer), BENCH_COMMAND (default "true"),
#      BENCH_NO_APPEND=1 (print the tables only).
# Exits 1 when any call failed or the server exited (a small run is a test: tests/bench/meson.build).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
bin=${MSC_BIN:-$repo/build/mcp-sandbox-computer}
cmd=${BENCH_COMMAND:-true}

[ -x "$bin" ] || { echo "http-bench: $bin not built (meson setup build && ninja -C build)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "http-bench: no Docker engine (scripts/start-dockerd.sh)" >&2; exit 1; }
if [ ! -d "$repo/tests/http/node_modules/@modelcontextprotocol/sdk" ]; then
	npm ci --prefix "$repo/tests/http" >&2
fi

tmp=$(mktemp -d /tmp/msc-http-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "http-bench: all-in-one over HTTP ($bin)" >&2
status=0
MSC_BIN="$bin" node "$here/http-bench.mjs" --bin "$bin" --command "$cmd" "$@" >"$tmp/http.md" || status=1
cat "$tmp/http.md"
[ "$status" = 0 ] || echo "http-bench: some calls failed (see the errors column)" >&2
[ "${BENCH_NO_APPEND:-}" = 1 ] && exit "$status"

rev=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo uncommitted)
if [ -n "$(git -C "$repo" status --porcelain 2>/dev/null | head -n 1)" ]; then rev="$rev+dirty"; fi
dver=$(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?')
{
	[ -s "$here/RESULTS.md" ] || printf '# Benchmark results\n\nAppended by `bench/run.sh` and `bench/http-run.sh`; latest last.\n'
	printf '\n## %s HTTP transport (rev %s, %s cores, Docker %s, node %s, command `%s`)\n\n' \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" "$rev" "$(nproc)" "$dver" "$(node --version)" "$cmd"
	printf 'Appended by `bench/http-run.sh`: SDK clients over Streamable HTTP (one server process, each session its own Mcp-Session-Id and computer, each session making its calls one after another); docker exec rows spawn the `docker` CLI per call against the same containers at the same concurrency in the same run. VmRSS from /proc/<pid>/status.\n\n'
	[ -s "$tmp/http.md" ] && cat "$tmp/http.md"
} >>"$here/RESULTS.md"
echo "http-bench: appended to $here/RESULTS.md" >&2
exit "$status"
