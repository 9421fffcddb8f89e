#!/bin/sh
# netns-down.sh PREFIX
# Removes what netns-up.sh PREFIX made: kills every process still running
# in a PREFIX-* namespace, deletes those namespaces (their veths go with
# them) and the root namespace's PREFIX-root interface. Safe to run when
# nothing is there.
set -u
[ $# -eq 1 ] || { sed -n '2,6p' "$0" >&2; exit 2; }
p=$1
case "$p" in
'' | *[!a-z0-9]* | ?????????*) echo "netns-down.sh: PREFIX must be 1-8 of a-z0-9" >&2; exit 2 ;;
esac
for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
	case "$ns" in
	"$p"-*) ;;
	*) continue ;;
	esac
	pids=$(ip netns pids "$ns" 2>/dev/null)
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
	ip netns del "$ns" 2>/dev/null
done
for link in "$p-root" "$p-t0" "$p-t1"; do
	ip link del "$link" 2>/dev/null
done
exit 0
