#!/usr/bin/env bash
# Run the official MCP conformance suite against the Streamable HTTP server.
#
#   tests/http/conformance.sh [-o RESULTS_DIR]
#
# Starts MSC_BIN (default build/mcp-sandbox-computer) with --transport http on a free loopback
# port, token-less (KILNTAINERS_AUTH_TOKEN unset), and runs, one --scenario at a time:
#   @modelcontextprotocol/conformance 0.1.16:  the generic server scenarios (GENERIC below)
#   conformance-next (0.2.0-alpha.12):          server-session-lifecycle, server-initialize,
#                                               dns-rebinding-protection (2025-11-25 wire), and
#                                               --requirements 2026-07-28 (every scenario of the
#                                               new revision at its own wire, stateless) against
#                                               conformance-2026-baseline.yml
# The fixture scenarios (tools-call-*, resources-read-*, prompts-get-*, ...) call tools,
# resources and prompts that only the suite's fixture server has; they are not run.
# Node 22 (npm package `node`, node_modules/.bin) is first on PATH: the suite needs it.
# Prints each scenario's check summary and a final "Total: P passed, F failed" line; exit 0 only
# if every scenario passed. Exit 77 (skip) when node_modules is missing. The server is stopped
# with SIGTERM at the end and every container it made (label msc.http-test-run=<run>) removed.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
BIN="${MSC_BIN:-$REPO/build/mcp-sandbox-computer}"
DOCKER="${MSC_DOCKER:-docker}"
OUTDIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o|--output-dir) OUTDIR="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "conformance: unknown argument $1" >&2; exit 2 ;;
  esac
done

STABLE="$HERE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
NEXT="$HERE/node_modules/conformance-next/dist/index.js"
if [ ! -e "$STABLE" ] || [ ! -e "$NEXT" ] || [ ! -x "$HERE/node_modules/.bin/node" ]; then
  echo "conformance: dependencies missing; run: npm ci --prefix '$HERE' (skipping)" >&2
  exit 77
fi
[ -x "$BIN" ] || { echo "conformance: binary not found: $BIN" >&2; exit 1; }
export PATH="$HERE/node_modules/.bin:$PATH"
NODE_VERSION="$(node --version)"
case "$NODE_VERSION" in
  v2[2-9].*|v[3-9][0-9].*) ;;
  *) echo "conformance: need Node >= 22 from node_modules/.bin, got $NODE_VERSION" >&2; exit 1 ;;
esac

GENERIC=(server-initialize ping tools-list resources-list prompts-list dns-rebinding-protection server-sse-multiple-streams)
NEXT_SCENARIOS=(server-session-lifecycle server-initialize dns-rebinding-protection)

RUN="htconf$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
TMP="$(mktemp -d /tmp/msc-http-conformance.XXXXXX)"
SERVER_PID=""

cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null
    for _ in $(seq 1 150); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
  fi
  [ -n "$SERVER_PID" ] && wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
  local ids
  ids="$("$DOCKER" ps -aq --filter "label=msc.http-test-run=$RUN" 2>/dev/null)"
  # shellcheck disable=SC2086
  [ -n "$ids" ] && "$DOCKER" rm -f $ids >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PORT="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
URL="http://127.0.0.1:$PORT/mcp"
env -u KILNTAINERS_AUTH_TOKEN "$BIN" --transport http --host 127.0.0.1 --port "$PORT" \
  "--docker-run-flag=--label=msc.http-test-run=$RUN" >"$TMP/server.out" 2>"$TMP/server.err" &
SERVER_PID=$!
ready=0
for _ in $(seq 1 200); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
  if node -e 'fetch(process.argv[1]).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))' "http://127.0.0.1:$PORT/healthz"; then
    ready=1; break
  fi
  sleep 0.1
done
if [ "$ready" != 1 ]; then
  echo "conformance: server did not become ready on $URL; stderr:" >&2
  tail -n 30 "$TMP/server.err" >&2
  exit 1
fi
echo "conformance: server $BIN on $URL (node $NODE_VERSION)"

passed=0
failed=0
failed_names=()
summary=()
run_one() { # label suite-js scenario
  local label="$1" js="$2" scenario="$3" out="$TMP/$1-$3.log" rc opts=()
  [ -n "$OUTDIR" ] && opts=(-o "$OUTDIR/$label")
  node "$js" server --url "$URL" --scenario "$scenario" "${opts[@]}" >"$out" 2>&1
  rc=$?
  local line
  line="$(grep -E '^(Passed|Total):' "$out" | tail -n 1)"
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    summary+=("✓ [$label] $scenario: ${line:-passed}")
  else
    failed=$((failed + 1))
    failed_names+=("[$label] $scenario")
    summary+=("✗ [$label] $scenario: ${line:-exit $rc}")
    echo "----- [$label] $scenario failed (exit $rc); suite output:"
    cat "$out"
    echo "-----"
  fi
}

for s in "${GENERIC[@]}"; do run_one "0.1.16" "$STABLE" "$s"; done
for s in "${NEXT_SCENARIOS[@]}"; do run_one "0.2.0-alpha.12" "$NEXT" "$s"; done

# MCP 2026-07-28: the whole requirement set; only the fixture scenarios (and server-stateless's four
# fixture checks) may fail, as conformance-2026-baseline.yml lists; any other failure, or a baseline
# entry that passes, fails this step. The tasks and pending scenarios are not scored.
req_out="$TMP/requirements-2026-07-28.log"
req_opts=()
[ -n "$OUTDIR" ] && req_opts=(-o "$OUTDIR/requirements-2026-07-28")
node "$NEXT" server --url "$URL" --requirements 2026-07-28 \
  --expected-failures "$HERE/conformance-2026-baseline.yml" "${req_opts[@]}" >"$req_out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -q 'Baseline check passed' "$req_out"; then
  passed=$((passed + 1))
  summary+=("✓ [0.2.0-alpha.12] --requirements 2026-07-28: $(grep -E '^Total:' "$req_out" | tail -n 1) (baseline: fixtures)")
else
  failed=$((failed + 1))
  failed_names+=("[0.2.0-alpha.12] --requirements 2026-07-28")
  summary+=("✗ [0.2.0-alpha.12] --requirements 2026-07-28: exit $rc")
  echo "----- --requirements 2026-07-28 failed (exit $rc); suite output:"
  cat "$req_out"
  echo "-----"
fi

if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "conformance: the server died during the run; stderr tail:"
  tail -n 30 "$TMP/server.err"
  failed=$((failed + 1))
  failed_names+=("server exited")
fi
if [ -s "$TMP/server.out" ]; then
  echo "conformance: the server wrote to stdout (it must not):"
  head -c 2000 "$TMP/server.out"; echo
  failed=$((failed + 1))
  failed_names+=("stdout not empty")
fi

echo "=== SUMMARY ==="
printf '%s\n' "${summary[@]}"
[ "$failed" -gt 0 ] && printf 'failed: %s\n' "${failed_names[*]}"
echo "Total: $passed passed, $failed failed"
[ "$failed" = 0 ]
