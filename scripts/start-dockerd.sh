#!/bin/sh
# Starts a Docker engine when none answers on /var/run/docker.sock
# (CI machines and fresh hosts without systemd). Logs to /tmp/dockerd.log.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if docker info >/dev/null 2>&1; then
	exit 0
fi
if command -v systemctl >/dev/null 2>&1 && systemctl start docker 2>/dev/null; then
	:
else
	$SUDO sh -c 'nohup dockerd >/tmp/dockerd.log 2>&1 &'
fi
i=0
while ! docker info >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -gt 60 ]; then
		echo "start-dockerd: the engine did not answer within 30 s" >&2
		tail -20 /tmp/dockerd.log >&2 || true
		exit 1
	fi
	sleep 0.5
done
