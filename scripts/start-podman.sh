#!/bin/sh
# Starts Podman's Docker-compatible API (`podman system service`) for the Podman
# integration tests, on $MSC_PODMAN_SOCK (default /run/msc-podman/podman.sock), unless
# it answers already, and gives it the test image (copied from the Docker engine).
# Its containers.conf (CONTAINERS_CONF) sets default_ulimits: runc on these machines
# cannot raise RLIMIT_NOFILE or RLIMIT_NPROC to Podman's defaults, so without it every
# `podman run` fails with "error setting rlimit". Logs to /tmp/podman-service.log.
set -eu
sock=${MSC_PODMAN_SOCK:-/run/msc-podman/podman.sock}
image=${MSC_PODMAN_IMAGE:-debian:bookworm-slim}
dir=$(dirname "$sock")
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
ping() { curl -fs --max-time 2 --unix-socket "$sock" http://podman/_ping >/dev/null 2>&1; }
command -v podman >/dev/null 2>&1 || { echo "start-podman: podman is not installed" >&2; exit 1; }
if ! ping; then
	$SUDO mkdir -p "$dir"
	$SUDO sh -c "cat > '$dir/containers.conf'" <<CONF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
CONF
	$SUDO sh -c "CONTAINERS_CONF='$dir/containers.conf' nohup podman system service \
		--time=0 'unix://$sock' >/tmp/podman-service.log 2>&1 &"
	i=0
	while ! ping; do
		i=$((i + 1))
		if [ "$i" -gt 60 ]; then
			echo "start-podman: the Podman API did not answer within 30 s" >&2
			tail -20 /tmp/podman-service.log >&2 || true
			exit 1
		fi
		sleep 0.5
	done
	# The same trust as Docker's socket: root and the docker group.
	$SUDO chmod 0660 "$sock"
	if getent group docker >/dev/null 2>&1; then
		$SUDO chgrp docker "$sock" "$dir"
		$SUDO chmod 0750 "$dir"
	fi
fi
# The test image: no registry is reachable, so it comes from the Docker engine.
if ! $SUDO podman image exists "$image"; then
	docker save "$image" | $SUDO podman load -q >/dev/null
fi
