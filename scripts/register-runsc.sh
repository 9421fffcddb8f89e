#!/bin/sh
# Registers gVisor's runsc (Debian package runsc) as the OCI runtime "runsc"
# with the local Docker engine, for --runtime runsc and its tests (issue 32).
# Idempotent: merges one key into /etc/docker/daemon.json (keeping the
# others) and reloads the engine with SIGHUP, never restarting it, only when
# the stanza changed. Podman's runtime is set where its service starts
# (scripts/start-podman.sh). Prints what it did on stderr.
#
# Networking: a runsc older than 2024-08 tells network namespaces apart by
# /proc/sys/net/core/rmem_default, which kernels from 6.10 on show in every
# namespace, so its own network stack refuses to start ("cannot run with
# network enabled in root network namespace"). There it is registered with
# --network=host: gVisor then uses the network namespace the engine made
# for the container (its bridge, the sandbox rules) through the host's
# network stack instead of its own.
set -eu
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
runsc=$(command -v runsc || true)
[ -n "$runsc" ] || { echo "register-runsc: runsc is not installed (apt-get install runsc)" >&2; exit 1; }
conf=${MSC_DOCKER_DAEMON_JSON:-/etc/docker/daemon.json}
args=""
ver=$("$runsc" --version 2>/dev/null | sed -n 's/.*version [^0-9]*\([0-9]\{8\}\).*/\1/p;s/.*release-\([0-9]\{8\}\).*/\1/p' | head -1)
if [ "${ver:-0}" -lt 20240801 ] &&
    $SUDO unshare -n test -e /proc/sys/net/core/rmem_default 2>/dev/null; then
	args="--network=host"
fi
changed=$($SUDO python3 - "$conf" "$runsc" "$args" <<'PY'
import json, os, sys
conf, path, args = sys.argv[1], sys.argv[2], sys.argv[3]
cur = {}
if os.path.exists(conf) and os.path.getsize(conf) > 0:
    with open(conf) as f:
        cur = json.load(f)
want = {"path": path}
if args:
    want["runtimeArgs"] = args.split()
if cur.get("runtimes", {}).get("runsc") == want:
    print("no")
    sys.exit(0)
cur.setdefault("runtimes", {})["runsc"] = want
os.makedirs(os.path.dirname(conf), exist_ok=True)
tmp = conf + ".msc-tmp"
with open(tmp, "w") as f:
    json.dump(cur, f, indent=2)
    f.write("\n")
os.replace(tmp, conf)
print("yes")
PY
)
if [ "$changed" = yes ]; then
	pid=$(cat /var/run/docker.pid 2>/dev/null || pidof dockerd || true)
	if command -v systemctl >/dev/null 2>&1 && systemctl is-active -q docker 2>/dev/null; then
		$SUDO systemctl reload docker
	elif [ -n "$pid" ]; then
		$SUDO kill -HUP "$pid"
	else
		echo "register-runsc: no dockerd to reload; $conf is read at its start" >&2
		exit 0
	fi
	echo "register-runsc: runsc ${args:+($args) }registered in $conf; engine reloaded" >&2
fi
i=0
until docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q '"runsc"'; do
	i=$((i + 1))
	if [ "$i" -gt 20 ]; then
		echo "register-runsc: the engine does not list runsc after the reload" >&2
		exit 1
	fi
	sleep 0.5
done
