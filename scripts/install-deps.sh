#!/bin/sh
# Installs the Debian 12 packages needed to build, run and test
# mcp-sandbox-computer. Idempotent; needs root (or sudo).
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# lintian and docker-compose (v1; Debian 12 has no Compose v2) check the package
# and the compose files (tests/package); podman runs the Podman integration
# tests (scripts/start-podman.sh); runsc (gVisor) runs the --runtime runsc
# tests (scripts/register-runsc.sh).
PKGS="meson ninja-build pkg-config cmake gcc clang libclang-rt-14-dev \
protobuf-c-compiler libprotobuf-c-dev libnng-dev libmbedtls-dev \
libjansson-dev libcurl4-openssl-dev libcmocka-dev libmicrohttpd-dev \
docker.io debootstrap ca-certificates curl chromium python3 \
lld wasi-libc libclang-rt-14-dev-wasm32 wabt binaryen \
python3-grpcio python3-grpc-tools iproute2 nftables squid-openssl \
lintian docker-compose podman runsc bison patch llvm"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing
fi
# Node.js runs the MCP test client; the machine may already have one.
if ! command -v node >/dev/null 2>&1; then
	$SUDO apt-get install -y -qq --no-install-recommends nodejs npm
fi
