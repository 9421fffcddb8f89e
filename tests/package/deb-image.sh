#!/bin/sh
# deb-image.sh: the Debian package and the image, as users install them.
#  1. deploy/Dockerfile's first stage builds the .deb with dpkg-buildpackage in a clean
#     debian:bookworm-slim (so debian/control's Build-Depends are complete); lintian must
#     report no error; the files, the dependencies and the units (installed, not enabled).
#  2. `apt-get install ./mcp-sandbox-computer_*.deb` on a fresh Debian 12 resolves, the
#     recommended engine included (simulated in a clean container: no engine is installed).
#  3. `docker compose up --build` of compose.yaml (docker-compose 1.29: Debian 12 has no
#     Compose v2): its second stage really installs the .deb with apt, without recommends,
#     into a clean debian:bookworm-slim; one terminal_execute over Streamable HTTP on
#     127.0.0.1, and the session's end removes its computer.
#  4. The installed program finds its helpers: the exec helper is each new computer's PID 1,
#     go_busybox runs on the installed runner.
#  5. The acceptance cases (tests/integration/exec.test.mjs, the official MCP SDK client)
#     through the installed program in that image, against this host's engine.
# Needs the Docker engine with debian:bookworm-slim, Debian's package registry (apt-get runs
# inside the build), lintian, docker-compose, node and `npm ci --prefix tests/integration`.
# Removes the images, containers and folders it makes.
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
proj=mscpkg$$
btag=msc-pkg-build:$$
id=pkgtest$$
port=$((20000 + $$ % 20000))
tmp=$(mktemp -d)
fx=/run/msc-pkgtest-$$
bctr=""
log() { echo "deb-image: $*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
cleanup() {
	[ -z "$bctr" ] || docker rm -f "$bctr" >/dev/null 2>&1 || true
	docker ps -aq --filter "label=msc-pkg-test=$$" | xargs -r docker rm -f >/dev/null 2>&1 || true
	docker ps -aq --filter "label=kilntainers.driver=$id" | xargs -r docker rm -f >/dev/null 2>&1 || true
	(cd "$repo" && MSC_HTTP_PORT=$port docker-compose -p "$proj" down --rmi local >/dev/null 2>&1) || true
	docker rmi "$btag" >/dev/null 2>&1 || true
	rm -rf "$tmp" "$fx"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
for p in docker docker-compose lintian node dpkg-deb curl; do
	command -v "$p" >/dev/null || fail "$p is not installed (scripts/install-deps.sh)"
done
[ -d "$repo/tests/integration/node_modules" ] || fail "npm ci --prefix tests/integration first"
t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }

# 1. The .deb, built by dpkg-buildpackage in the Dockerfile's first stage.
# --force-rm: a failed step leaves no intermediate container behind.
DOCKER_BUILDKIT=0 docker build -q --force-rm --target build -f "$repo/deploy/Dockerfile" -t "$btag" "$repo" \
	>/dev/null 2>"$tmp/build-deb.txt" || { cat "$tmp/build-deb.txt" >&2; fail "building the .deb"; }
bctr=$(docker create "$btag")
docker cp "$bctr:/deb/." "$tmp/"
docker rm "$bctr" >/dev/null; bctr=""
deb=$(ls "$tmp"/mcp-sandbox-computer_*_amd64.deb)
log "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) in $(elapsed)"

# Its exit status also counts the overridden tags that --show-overrides lists (2), so the E:
# lines decide; any other status is lintian failing to run.
rc=0; lintian --show-overrides "$deb" >"$tmp/lintian.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 2 ] || { cat "$tmp/lintian.txt" >&2; fail "lintian exited $rc"; }
! grep -q '^E:' "$tmp/lintian.txt" || { cat "$tmp/lintian.txt" >&2; fail "lintian reports errors"; }
log "lintian: $(grep -c '^E:' "$tmp/lintian.txt" || true) errors," \
	"$(grep -c '^W:' "$tmp/lintian.txt" || true) warnings," \
	"$(grep -c '^O:' "$tmp/lintian.txt" || true) overridden"
sed 's/^/  /' "$tmp/lintian.txt" >&2

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/files"
lx=/usr/libexec/mcp-sandbox-computer
for f in /usr/bin/mcp-sandbox-computer /usr/bin/msc-make-certs \
	$lx/msc-session $lx/msc-inventory $lx/msc-edge $lx/msc-docker-driver $lx/msc-fly-driver \
	$lx/msc-cloud-driver $lx/msc-wasm-driver $lx/msc-exec-helper $lx/msc-wasm-busybox \
	$lx/msc-wasm-exec $lx/msc-wasm-fuel \
	/lib/systemd/system/msc-session.service /lib/systemd/system/msc-inventory.service \
	/lib/systemd/system/msc-edge.service /lib/systemd/system/msc-docker-driver.service; do
	grep -qx "$f" "$tmp/files" || fail "$f is not in the package"
done
# Only the server and the certificate maker are on PATH.
[ "$(grep -c '^/usr/s\?bin/.' "$tmp/files")" = 2 ] || fail "unexpected programs on PATH: $(grep '^/usr/s\?bin/.' "$tmp/files")"
for u in msc-session msc-inventory msc-edge msc-docker-driver; do
	dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./lib/systemd/system/$u.service" |
		grep -q "^ExecStart=$lx/$u " || fail "$u.service does not start $lx/$u"
done
dpkg-deb -f "$deb" Depends | grep -q 'nftables' || fail "Depends lacks nftables"
dpkg-deb -f "$deb" Depends | grep -q 'binaryen' || fail "Depends lacks binaryen (msc-wasm-fuel)"
dpkg-deb -f "$deb" Recommends | grep -q 'docker.io | podman' || fail "the engine is not recommended"
! dpkg-deb -f "$deb" Depends | grep -q 'docker\|podman' || fail "the engine must not be required"
# Installed disabled: the maintainer scripts start no unit, and enable one only where the
# administrator had enabled it before (an upgrade keeps that state); the image below checks that
# a fresh install enables none.
dpkg-deb -e "$deb" "$tmp/ctl"
! grep -q 'deb-systemd-invoke' "$tmp/ctl/postinst" || fail "postinst starts a unit"
[ "$(grep -c 'deb-systemd-helper enable' "$tmp/ctl/postinst")" = \
	"$(grep -c 'deb-systemd-helper --quiet was-enabled' "$tmp/ctl/postinst")" ] ||
	fail "postinst enables a unit that was not enabled"

# 2. apt on a fresh Debian 12 resolves everything, Recommends (the engine) included.
docker run --rm --label "msc-pkg-test=$$" -v "$tmp:/deb:ro" debian:bookworm-slim sh -c \
	'apt-get update -qq && apt-get install -s -y /deb/'"$(basename "$deb")" >"$tmp/apt-s.txt" 2>&1 ||
	{ cat "$tmp/apt-s.txt" >&2; fail "apt cannot install the package"; }
for p in mcp-sandbox-computer nftables docker.io libnng1 libmicrohttpd12 binaryen; do
	grep -q "^Inst $p " "$tmp/apt-s.txt" || { cat "$tmp/apt-s.txt" >&2; fail "apt would not install $p"; }
done
log "apt install ./$(basename "$deb") resolves on debian:bookworm-slim, docker.io recommended ($(elapsed))"

# 3. docker compose up --build (compose.yaml; the image installs the .deb with apt).
cd "$repo"
export MSC_HTTP_PORT=$port
# Compose builds with the docker CLI (the same builder as step 1, whose layers it reuses).
COMPOSE_DOCKER_CLI_BUILD=1 DOCKER_BUILDKIT=0 docker-compose -p "$proj" up -d --build \
	>"$tmp/up.txt" 2>&1 || { cat "$tmp/up.txt" >&2; fail "docker-compose up --build"; }
img=$(docker inspect -f '{{.Image}}' "$(docker-compose -p "$proj" ps -q mcp-sandbox-computer)")
log "compose up --build: image $(echo "$img" | cut -c8-19)," \
	"$(docker image inspect -f '{{.Size}}' "$img" | awk '{printf "%.0f MB", $1 / 1e6}') ($(elapsed))"
i=0
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do
	i=$((i + 1))
	[ "$i" -lt 100 ] || { docker-compose -p "$proj" logs >&2; fail "the server did not start"; }
	sleep 0.2
done
[ "$(docker image inspect -f '{{index .Config.Labels "io.modelcontextprotocol.server.name"}}' "$img")" = \
	"$(node -p 'require("./server.json").name')" ] || fail "the image's registry label is not server.json's name"
# The guard: a rebound DNS name is refused on the loopback listener.
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: attacker.example:80' -X POST \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-d '{}' "http://127.0.0.1:$port/mcp")
[ "$code" = 421 ] || fail "a foreign Host got $code, not 421"
node "$repo/tests/package/http-call.mjs" "$port" >"$tmp/computer" || { docker-compose -p "$proj" logs >&2; fail "terminal_execute over HTTP"; }
sleep 1
[ -z "$(docker ps -aq --filter "label=kilntainers.computer-id=$(cat "$tmp/computer")")" ] ||
	fail "computer $(cat "$tmp/computer") left after the session ended"
log "terminal_execute over HTTP through the compose service on 127.0.0.1:$port; computer removed ($(elapsed))"
docker-compose -p "$proj" stop -t 10 >/dev/null 2>&1

# 4-5. The installed program, run from the image as the tests' MSC_BIN: the engine's socket, the
# host's network, process and cgroup namespaces and CAP_SYS_PTRACE (the driver reaches each
# computer's helper socket through /proc/PID/root after checking its cgroup), and a helper
# folder the engine sees at the same path: the fast exec path, with the installed helper.
mkdir -m 700 "$fx"
cat >"$tmp/msc-in-image" <<EOF
#!/bin/sh
envs=""
for v in \$(env | sed -n 's/^\(MSC_[A-Z0-9_]*\|KILNTAINERS_[A-Z0-9_]*\|ENABLE_LIFECYCLE_TOOLS\|FLY_[A-Z_]*\)=.*/\1/p'); do
	envs="\$envs -e \$v"
done
# shellcheck disable=SC2086
exec docker run --rm -i --label msc-pkg-test=$$ --network host --pid host --cgroupns host \\
	--cap-add NET_ADMIN --cap-add SYS_PTRACE \\
	-v /var/run/docker.sock:/var/run/docker.sock -v $fx:$fx -e MSC_FAST_EXEC_DIR=$fx \$envs \\
	$img "\$@"
EOF
chmod +x "$tmp/msc-in-image"
call() { # call ARGS-JSON FLAGS...: one tools/call on stdio, no initialize (as image-check does)
	a=$1; shift
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"terminal_execute","arguments":'"$a"'}}' |
		"$tmp/msc-in-image" "$@" 2>&1
}
out=$(call '{"command":"tr \"\\\\0\" \" \" </proc/1/cmdline"}' --driver-id "$id" || true)
case "$out" in
*'fast exec off'*) fail "the fast exec path is off: $out" ;;
*'"stdout":"/.msc-helper /.msc/sock '*) ;;
*) fail "a new computer does not run the installed exec helper as PID 1: $out" ;;
esac
out=$(call '{"command":"echo wasm-ok"}' --backend go_busybox || true)
case "$out" in
*'"stdout":"wasm-ok\n"'*) ;;
*) fail "go_busybox on the installed runner: $out" ;;
esac
docker run --rm --label "msc-pkg-test=$$" --entrypoint sh "$img" -c \
	'test -f /lib/systemd/system/msc-edge.service && ! ls /etc/systemd/system/*.wants/msc-* 2>/dev/null' ||
	fail "a unit is enabled in the image"
log "the installed program finds the exec helper and the go_busybox runner ($(elapsed))"

cd "$repo/tests/integration"
MSC_BIN="$tmp/msc-in-image" node --test --test-reporter=spec exec.test.mjs >"$tmp/exec.txt" 2>&1 ||
	{ cat "$tmp/exec.txt" >&2; fail "the acceptance cases through the installed program"; }
grep -E '^ℹ (tests|pass|fail) ' "$tmp/exec.txt" | tr '\n' ' ' >&2; echo >&2
log "ok: exec.test.mjs through the installed program ($(elapsed) in all)"
