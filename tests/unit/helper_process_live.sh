#!/bin/sh
# helper_process_live.sh HELPER: the exec helper's background-process
# commands (issue 28) run on the host, in a user, pid and mount namespace
# of their own: /tmp is a tmpfs there, and the test chooses the next pid
# (ns_last_pid) to reuse a process group's number on purpose.
#
# - process_kill does not signal a new process group that got the number
#   of a background process's group (a pid reused): the command exits at
#   once and its child leaves the group but keeps the output open, so the
#   supervisor lives on; an innocent `setsid sleep` then asks for the same
#   number. Before the supervisor kept the command's zombie, the innocent
#   got that number and the kill's TERM killed it.
# - The kill still ends what it should: a running group, and the children
#   of a command that exited (its group reached through the zombie).
#
# Exit 77 (skipped) where unprivileged user namespaces are off.
set -eu
H=${1:?usage: helper_process_live.sh PATH-TO-msc-exec-helper}
if ! unshare -Urpm --fork --mount-proc true 2>/dev/null; then
	echo "SKIP: unshare -Urpm (unprivileged user namespaces) is not allowed here"
	exit 77
fi
exec unshare -Urpm --fork --mount-proc sh -eu -c '
H=$1
fail() { echo "FAIL: $*"; exit 1; }
pgrp_of() { cut -d" " -f5 "/proc/$1/stat" 2>/dev/null || echo 0; }
# The processes of group $1 that run (not zombies).
running_in() {
	n=0
	for s in /proc/[0-9]*/stat; do
		set -- "$1" $(cat $s 2>/dev/null || echo "0 (x) X 0 0")
		[ "$6" = "$1" ] && [ "$4" != Z ] && n=$((n + 1))
	done
	echo $n
}
# Waits (5 s at most) until the shell test $1 holds.
until_true() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -lt 100 ] || fail "timed out waiting for: $1"
		sleep 0.05
	done
}
# A copy on the new /tmp (the helper given may have been under the old one).
exec 9<"$H"
mount -t tmpfs tmpfs /tmp
cat <&9 >/tmp/helper
exec 9<&-
chmod 755 /tmp/helper
H=/tmp/helper
R=/tmp/kiln-processes

# 1. A reused group number is not signalled.
$H --process start -- sh -c "setsid sleep 5 & exit 0" >/dev/null
until_true "[ -s $R/p1/status ]"
pg=$(cut -d" " -f1 $R/p1/pid)
echo $((pg - 1)) >/proc/sys/kernel/ns_last_pid
setsid sleep 30 &
innocent=$!
until_true "[ \$(pgrp_of $innocent) = $innocent ]"
echo "p1 group $pg; the innocent new group: $innocent"
$H --process kill p1 TERM 500 >/tmp/kill1 || fail "kill p1: $(cat /tmp/kill1)"
sleep 0.1
kill -0 $innocent 2>/dev/null ||
	fail "process_kill p1 signalled pid $innocent, a new group that reused the number $pg"
grep -q "\"state\": \"exited\", \"exit_code\": 0" /tmp/kill1 ||
	fail "p1 after the kill: $(cat /tmp/kill1)"
kill $innocent

# 2. A running group is ended.
$H --process start -- sleep 30 >/dev/null
until_true "[ -s $R/p2/pid ]"
pg=$(cut -d" " -f1 $R/p2/pid)
$H --process kill p2 TERM 2000 >/tmp/kill2 || fail "kill p2: $(cat /tmp/kill2)"
grep -q "\"state\": \"killed\"" /tmp/kill2 || fail "p2 after the kill: $(cat /tmp/kill2)"
[ "$(running_in $pg)" = 0 ] || fail "p2 (group $pg) still runs"

# 3. The children of a command that exited are ended through its zombie.
$H --process start -- sh -c "sleep 30 & sleep 31 & exit 0" >/dev/null
until_true "[ -s $R/p3/status ]"
pg=$(cut -d" " -f1 $R/p3/pid)
[ "$(running_in $pg)" = 2 ] || fail "p3: two sleeps expected in group $pg"
$H --process kill p3 TERM 2000 >/tmp/kill3 || fail "kill p3: $(cat /tmp/kill3)"
[ "$(running_in $pg)" = 0 ] || fail "p3 (group $pg) still runs"
echo "ok"
' sh "$H"
