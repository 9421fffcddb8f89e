#!/bin/sh
# Prepares a Debian 12 machine and builds: packages, a running Docker
# engine and Podman's API service, the default sandbox image, and build/
# with every program.
set -eu
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
# The toolbox's maintained sources (original-awk, toybox) in third_party/.
./scripts/fetch-toolbox-sources.sh
./scripts/start-dockerd.sh
# gVisor as the engine's runtime "runsc" (daemon.json, reloaded; idempotent).
./scripts/register-runsc.sh
./scripts/ensure-image.sh debian:bookworm-slim
# Podman's API socket for the Podman integration tests (tests/integration/meson.build).
./scripts/start-podman.sh
# The test clients (the MCP SDK, the conformance suite, playwright-core):
# before meson setup, which enables the tests that find them.
# Installed anew when the lock file changed since (npm keeps its copy in
# node_modules/.package-lock.json).
for d in tests/integration tests/http tests/browser; do
	[ -f "$d/package-lock.json" ] || continue
	if [ ! -f "$d/node_modules/.package-lock.json" ] ||
	    [ "$d/package-lock.json" -nt "$d/node_modules/.package-lock.json" ]; then
		npm ci --prefix "$d" --no-audit --no-fund >/dev/null
	fi
done
# Reconfigured each time: tests are enabled by what is installed.
if [ -d build ]; then meson setup --reconfigure build >/dev/null
else meson setup build >/dev/null; fi
ninja -C build >/dev/null
echo "setup: built build/mcp-sandbox-computer" >&2
