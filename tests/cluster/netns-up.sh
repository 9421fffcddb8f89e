#!/bin/sh
# netns-up.sh PREFIX NAME:IP...
# Makes one host per NAME out of a network namespace (PREFIX-NAME, its
# interface eth0 with IP/24) wired to a bridge in a switch namespace
# (PREFIX-sw, bridge br0). The root namespace gets a port too, as
# 10.77.0.1 on interface PREFIX-root, so that the test runner reaches the
# hosts. Each host's switch port is h-NAME in PREFIX-sw: `ip netns exec
# PREFIX-sw ip link set h-NAME down` cuts that host off. Whatever an
# earlier run of the same PREFIX left is removed first (netns-down.sh).
# The bridge lives in its own namespace so that the root namespace's
# firewall (Docker sets FORWARD to DROP) never sees the cluster's traffic.
#   tests/cluster/netns-up.sh mscnt session:10.77.0.2 inventory:10.77.0.3
set -eu
[ $# -ge 1 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "netns-up.sh: needs root" >&2; exit 1; }
here=$(dirname "$0")
p=$1
shift
case "$p" in
'' | *[!a-z0-9]* | ?????????*) echo "netns-up.sh: PREFIX must be 1-8 of a-z0-9" >&2; exit 2 ;;
esac
"$here/netns-down.sh" "$p"

sw=$p-sw
ip netns add "$sw"
ip -n "$sw" link set lo up
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up

# port NAME NS: a veth pair, h-NAME in the switch on br0, eth0 in NS
# (or $p-root in the root namespace for NS = "").
port() {
	ip link add "$p-t0" type veth peer name "$p-t1"
	ip link set "$p-t1" netns "$sw"
	ip -n "$sw" link set "$p-t1" name "h-$1"
	ip -n "$sw" link set "h-$1" master br0
	ip -n "$sw" link set "h-$1" up
	if [ -n "$2" ]; then
		ip link set "$p-t0" netns "$2"
		ip -n "$2" link set "$p-t0" name eth0
	else
		ip link set "$p-t0" name "$p-root"
	fi
}

port root ""
ip addr add 10.77.0.1/24 dev "$p-root"
ip link set "$p-root" up
for spec in "$@"; do
	name=${spec%%:*}
	addr=${spec#*:}
	ns=$p-$name
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	port "$name" "$ns"
	ip -n "$ns" addr add "$addr/24" dev eth0
	ip -n "$ns" link set eth0 up
done
