#!/bin/sh
# image-check.sh [COMMIT | --worktree]: builds deploy/Dockerfile from a clean export of COMMIT
# (default HEAD; `git archive`, so no build directories or node_modules go into the context), or
# with --worktree from the working tree as it is (.dockerignore leaves those out), and smoke-tests
# the image: --version, then the all-in-one server over HTTP with the engine's socket, one
# terminal_execute, and the session's end removes its computer; go_busybox answers, and the tools
# `--backend wasm` compiles modules with are there. Needs the Docker engine and the
# Debian mirror (apt-get runs inside the build). Removes its image and container at the end.
# Not wired into meson (about a minute with a warm apt cache; the build needs the network).
#   tests/cluster/image-check.sh
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
commit=${1:-HEAD}
tag=msc-image-check:$$
id=imagecheck$$
port=$((20000 + $$ % 20000))
ctr=""
cleanup() {
	[ -z "$ctr" ] || docker rm -f "$ctr" >/dev/null 2>&1 || true
	docker ps -aq --filter "label=kilntainers.driver=$id" | xargs -r docker rm -f >/dev/null 2>&1 || true
	docker rmi "$tag" >/dev/null 2>&1 || true
}
trap cleanup EXIT

start=$(date +%s)
if [ "$commit" = --worktree ]; then
	DOCKER_BUILDKIT=0 docker build -q -f "$repo/deploy/Dockerfile" -t "$tag" "$repo" >/dev/null
	what="the working tree"
else
	git -C "$repo" archive "$commit" | DOCKER_BUILDKIT=0 docker build -q -f deploy/Dockerfile -t "$tag" - >/dev/null
	what=$(git -C "$repo" rev-parse --short "$commit")
fi
echo "image-check: built $what in $(($(date +%s) - start)) s," \
	"$(docker image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1 / 1e6}')"
docker run --rm "$tag" --version
# The wasm backends: the toolbox runner answers, and what compiles user modules is there.
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"terminal_execute","arguments":{"command":"echo wasm-ok"}}}' |
	docker run --rm -i "$tag" --backend go_busybox 2>&1)
case "$out" in
*'"stdout":"wasm-ok\n"'*) ;;
*) echo "image-check: go_busybox failed: $out" >&2; exit 1 ;;
esac
docker run --rm --entrypoint sh "$tag" -c 'command -v wasm2c cc && test -f /usr/src/wasm2c/wasm-rt.h' >/dev/null ||
	{ echo "image-check: wasm2c, cc or the wasm2c headers are missing" >&2; exit 1; }
# The host's network namespace and CAP_NET_ADMIN: the driver loads the
# sandbox network's packet filter into the host's kernel.
ctr=$(docker run -d -e MSC_FAST_EXEC=0 -v /var/run/docker.sock:/var/run/docker.sock \
	--network host --cap-add NET_ADMIN "$tag" --transport http --host 127.0.0.1 \
	--port "$port" --allow-unauthenticated-http --driver-id "$id")
i=0
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 50 ] || { docker logs "$ctr" >&2; echo "image-check: the server did not start" >&2; exit 1; }
	sleep 0.2
done
node --input-type=module -e "
const u = 'http://127.0.0.1:$port/mcp';
const H = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const r = await fetch(u, { method: 'POST', headers: H, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'image-check', version: '1' } } }) });
const sid = r.headers.get('mcp-session-id');
const c = await (await fetch(u, { method: 'POST', headers: { ...H, 'Mcp-Session-Id': sid }, body: JSON.stringify({ jsonrpc: '2.0',
  id: 2, method: 'tools/call', params: { name: 'terminal_execute', arguments: { command: 'echo ok' } } }) })).json();
if (c.result?.structuredContent?.stdout !== 'ok\n') { console.error(JSON.stringify(c)); process.exit(1); }
const d = await fetch(u, { method: 'DELETE', headers: { 'Mcp-Session-Id': sid } });
if (d.status !== 200) process.exit(1);
"
sleep 1
left=$(docker ps -aq --filter "label=kilntainers.driver=$id" | wc -l)
[ "$left" = 0 ] || { echo "image-check: $left computer(s) left after the session ended" >&2; exit 1; }
echo "image-check: ok (terminal_execute through the image, computer removed at session end)"
