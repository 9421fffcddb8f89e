#!/bin/sh
# Prepares a Debian 12 machine and builds: packages, a running Docker
# engine, the default sandbox image, and build/ with every program.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/start-dockerd.sh
./scripts/ensure-image.sh debian:bookworm-slim
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
echo "setup: built build/mcp-sandbox-computer" >&2
